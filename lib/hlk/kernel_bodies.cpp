#include "hlk/kernel_bodies.hpp"

#include <stdexcept>
#include <string>

namespace tessera::hlk {

std::string_view kernelBody(std::string_view name) {
  for (size_t i = 0; i < detail::kKernelBodyCount; ++i) {
    const detail::EmbeddedFile& f = detail::kKernelBodies[i];
    if (name == f.name) return {reinterpret_cast<const char*>(f.data), f.size};
  }
  throw std::logic_error("no kernel body lib/kernels/bodies/" + std::string(name) + ".h in this build");
}

} // namespace tessera::hlk
