#include "netlist/fused_buffer.hpp"

#include <string>
#include <utility>

namespace tessera::netlist {

BufName parseBufName(std::string_view s) {
  if (s == "dest") return {BufKind::Dest, -1};
  if (s == "output") return {BufKind::Output, -1};
  for (auto [prefix, kind] : {std::pair{std::string_view("intermed"), BufKind::Intermed},
                              std::pair{std::string_view("input"), BufKind::Input}}) {
    if (s.size() <= prefix.size() || s.substr(0, prefix.size()) != prefix) continue;
    std::string_view digits = s.substr(prefix.size());
    if (digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string_view::npos) return {};
    return {kind, std::stoll(std::string(digits))};
  }
  return {};
}

} // namespace tessera::netlist
