// libFuzzer target for the pipegen.yaml reader
// (lib/pipegen/pipegen_yaml_reader.cpp): the `---`-separated buffer and pipe
// documents net2pipe writes and pipegen reads, in either dialect.
//
// One input: readPipegenYaml; nullopt must come with an error, a model
// without one; the diagnostics print. For a model that comes back the period
// helpers run on every buffer (they divide and multiply reader-checked fields).
//
// Build and run: fuzz/run-fuzz.sh SECONDS pipegen (docs/fuzzing.md).
#include "fuzz_reader_common.hpp"
#include "pipegen/pipegen_yaml_reader.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  SourceBuffer source("fuzz.yaml", std::string(reinterpret_cast<const char*>(data), size));
  DiagnosticEngine diags;
  auto yaml = pipegen::readPipegenYaml(source, diags, 3);
  fuzz::checkDiagnostics("fuzz-pipegen-yaml", yaml.has_value(), source, diags);
  if (yaml) {
    if (yaml->epoch != 3) fuzz::invariantBroken("fuzz-pipegen-yaml", "epoch not kept");
    for (const pipe::Buffer& b : yaml->buffers) {
      (void)pipegen::entryTiles(b, yaml->dialect);
      (void)pipegen::periodTiles(b, yaml->dialect);
      (void)pipegen::epochTotalTiles(b, yaml->dialect);
    }
  }
  return 0;
}
