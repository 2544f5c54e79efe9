// Name tables of closed vocabularies: {spelling, value} pairs looked up both
// ways (the netlist format's enums, the data formats).
#pragma once
#include <array>
#include <optional>
#include <string_view>
#include <utility>

namespace tessera::support {

template <class E, size_t N>
std::optional<E> lookup(const std::array<std::pair<std::string_view, E>, N>& table, std::string_view s) {
  for (const auto& [name, value] : table)
    if (name == s) return value;
  return std::nullopt;
}

template <class E, size_t N>
std::string_view nameOf(const std::array<std::pair<std::string_view, E>, N>& table, E e) {
  for (const auto& [name, value] : table)
    if (value == e) return name;
  return "?";
}

} // namespace tessera::support
