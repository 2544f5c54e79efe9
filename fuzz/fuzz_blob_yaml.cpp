// libFuzzer target for the blob.yaml reader (lib/blob/blob_yaml_reader.cpp):
// the per-stream phase maps pipegen writes and blobgen reads (Tessera's and
// BUDA's pipegen2 output).
//
// One input is read twice: without a device (no worker checks) and against
// the grayskull 10x12 descriptor (multicast rectangles expand to workers).
// nullopt must come with an error, a model without one. A model is split by
// core as blobgen does; a core blob the encoder accepts (checkEncodable
// empty) must encode and decode back without error.
//
// Build and run: fuzz/run-fuzz.sh SECONDS blob-yaml (docs/fuzzing.md).
#include "blob/blob_binary.hpp"
#include "blob/blob_yaml_reader.hpp"
#include "fuzz_reader_common.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace {

using namespace tessera;

void readOnce(const SourceBuffer& source, const blob::BlobReadOptions& options) {
  DiagnosticEngine diags;
  blob::BlobYamlSourceMap map;
  auto yaml = blob::readBlobYaml(source, diags, options, &map);
  fuzz::checkDiagnostics("fuzz-blob-yaml", yaml.has_value(), source, diags);
  if (!yaml) return;
  for (const blob::CoreBlob& core : blob::splitByCore(*yaml, 1)) {
    if (!blob::checkEncodable(core).empty()) continue; // blobgen reports these
    std::vector<uint8_t> bytes = blob::wordsToBytes(blob::encodeCoreBlob(core));
    if (auto decoded = blob::decodeCoreBlob(bytes); !decoded)
      fuzz::invariantBroken("fuzz-blob-yaml", ("an encodable core blob does not decode: " + decoded.error()).c_str());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const SocDescriptor grayskull = loadBundledDescriptor("grayskull_10x12");
  SourceBuffer source("blob.yaml", std::string(reinterpret_cast<const char*>(data), size));
  readOnce(source, {});
  readOnce(source, {&grayskull});
  return 0;
}
