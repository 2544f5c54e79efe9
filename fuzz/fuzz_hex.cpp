// libFuzzer target for the .hex reader on its own (lib/blob/blob_binary.cpp
// readHex): the blobs blobgen writes and the simulator and `blobgen dump`
// read. fuzz-blob also feeds its bytes to readHex, but with a binary corpus;
// this target has text seeds and a .hex dictionary.
//
// One input: readHex; a failure must come with "line N: ..."; segments that
// read must survive writeHex/readHex unchanged.
//
// Build and run: fuzz/run-fuzz.sh SECONDS hex (docs/fuzzing.md).
#include "blob/blob_binary.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

namespace {
[[noreturn]] void invariantBroken(const char* what) {
  std::cerr << "fuzz-hex: invariant broken: " << what << "\n";
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::blob;
  std::string text(reinterpret_cast<const char*>(data), size);
  auto segments = readHex(text);
  if (!segments) {
    if (segments.error().rfind("line ", 0) != 0) invariantBroken("error without 'line N:'");
    return 0;
  }
  std::string written = writeHex(*segments);
  auto back = readHex(written);
  if (!back || back->size() != segments->size()) invariantBroken("writeHex output does not read back");
  for (size_t i = 0; i < back->size(); ++i)
    if ((*back)[i].wordAddress != (*segments)[i].wordAddress || (*back)[i].words != (*segments)[i].words)
      invariantBroken("writeHex/readHex round trip changed a segment");
  return 0;
}
