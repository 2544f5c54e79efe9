// Reading RV32 ELF executables: what hlkc checks (sizes per region) and what
// the simulator loads (segments, entry point). Little-endian ELF32 only.
#pragma once
#include "support/expected.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tessera::elf {

struct Segment {
  uint32_t vaddr = 0;               // load address
  uint32_t memSize = 0;             // bytes in memory (>= bytes.size(); the rest is zero, .bss)
  std::vector<uint8_t> bytes;       // file contents of the segment
  bool executable = false;
  bool writable = false;
};

struct Image {
  uint32_t entry = 0;
  uint16_t machine = 0;                  // e_machine: 243 = RISC-V
  std::vector<Segment> segments;         // PT_LOAD segments in file order
  std::map<std::string, uint32_t> symbols;  // defined symbols of .symtab (name -> value)
};

// Parses `bytes` as an ELF32 little-endian executable. On malformed input
// returns a Failure with a one-line reason (never throws, never reads out of
// bounds).
Expected<Image> parseElf32(std::span<const uint8_t> bytes);

} // namespace tessera::elf
