// The kernel templates (lib/kernels/bodies) as the build embeds them: the
// expected text is the source file itself, read from the tree.
#include "hlk/kernel_bodies.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

using tessera::hlk::kernelBody;

#ifndef TESSERA_SOURCE_DIR
#error "TESSERA_SOURCE_DIR must name the source tree"
#endif

namespace {
std::string readSource(const std::string& name) {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/lib/kernels/bodies/" + name + ".h", std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
} // namespace

TEST_CASE("every kernel template is embedded byte for byte", "[hlk][bodies]") {
  for (const char* name : {"prelude", "unary", "binary", "matmul", "sparse_matmul", "reduce", "splice", "depthwise",
                           "quant", "topk", "embedding"}) {
    INFO(name);
    std::string source = readSource(name);
    REQUIRE_FALSE(source.empty());
    CHECK(std::string(kernelBody(name)) == source);
  }
  // The prelude includes the API and the generated constants; the matmul
  // body defines the kernel's entry point.
  CHECK(kernelBody("prelude").find("#include \"hlk_args.h\"") != std::string_view::npos);
  CHECK(kernelBody("matmul").find("void hlk_main()") != std::string_view::npos);
}

TEST_CASE("an unknown kernel template is a build defect", "[hlk][bodies]") {
  CHECK_THROWS_AS(kernelBody("no_such_family"), std::logic_error);
}
