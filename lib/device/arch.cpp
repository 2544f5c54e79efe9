#include "device/arch.hpp"

#include <array>
#include <string>

namespace tessera {

namespace {

struct ArchSpelling {
  std::string_view name; // lower case
  Arch arch;
};

// `wormhole_b` is the netlist spec's spelling of wormhole_b0 (see seeds/netlist-spec.md).
constexpr std::array<ArchSpelling, 5> kSpellings{{
    {"grayskull", Arch::Grayskull},
    {"wormhole", Arch::Wormhole},
    {"wormhole_b0", Arch::WormholeB0},
    {"wormhole_b", Arch::WormholeB0},
    {"blackhole", Arch::Blackhole},
}};

char toLowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

} // namespace

std::optional<Arch> parseArch(std::string_view s) {
  // ASCII-only folding: std::tolower depends on the C locale, which tools must not.
  std::string lower(s);
  for (char& c : lower) c = toLowerAscii(c);
  for (const ArchSpelling& sp : kSpellings)
    if (lower == sp.name) return sp.arch;
  return std::nullopt;
}

std::string_view archName(Arch a) {
  switch (a) {
  case Arch::Grayskull: return "grayskull";
  case Arch::Wormhole: return "wormhole";
  case Arch::WormholeB0: return "wormhole_b0";
  case Arch::Blackhole: return "blackhole";
  }
  return "unknown"; // unreachable for valid enumerators
}

} // namespace tessera
