// libFuzzer target for the ELF32 reader (lib/elf/elf.cpp): what hlkc checks
// and the simulator loads.
//
// One input: parseElf32. A failure must come with a reason; an image's
// segments must be consistent (memSize >= file bytes, no address wrap).
//
// Build and run: fuzz/run-fuzz.sh SECONDS elf (docs/fuzzing.md).
#include "elf/elf.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <span>
#include <string>

namespace {
[[noreturn]] void invariantBroken(const char* what) {
  std::cerr << "fuzz-elf: invariant broken: " << what << "\n";
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto image = tessera::elf::parseElf32(std::span<const uint8_t>(data, size));
  if (!image) {
    if (image.error().empty()) invariantBroken("a failure without a reason");
    return 0;
  }
  for (const auto& seg : image->segments) {
    if (seg.memSize < seg.bytes.size()) invariantBroken("a segment's memSize is below its file bytes");
    if (uint64_t(seg.vaddr) + seg.memSize > (uint64_t(1) << 32)) invariantBroken("a segment wraps the address space");
  }
  return 0;
}
