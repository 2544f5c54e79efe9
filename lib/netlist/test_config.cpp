#include "netlist/test_config.hpp"

#include <cmath>
#include <stdexcept>

namespace tessera::netlist {

const ExtraField* findExtra(const std::vector<ExtraField>& extra, const std::string& key) {
  const ExtraField* found = nullptr;
  for (const auto& f : extra)
    if (f.key == key) found = &f;
  return found;
}

std::pair<int64_t, int64_t> parseTileRange(const ExtraField& f, const std::string& section) {
  constexpr int64_t kTile = 32;
  const auto& v = f.value;
  auto bad = [&]() {
    return std::invalid_argument(section + ": " + f.key + ": expected [lo, hi] with 1 <= lo <= hi <= 32, got " +
                                 v.dump());
  };
  if (!v.is_array() || v.size() != 2) throw bad();
  int64_t b[2];
  for (size_t i = 0; i < 2; ++i) {
    if (v[i].is_number_integer()) b[i] = v[i].get<int64_t>();
    else if (v[i].is_number_float() && std::floor(v[i].get<double>()) == v[i].get<double>() &&
             std::fabs(v[i].get<double>()) <= 64)
      b[i] = static_cast<int64_t>(v[i].get<double>());
    else throw bad();
  }
  if (b[0] < 1 || b[0] > b[1] || b[1] > kTile) throw bad();
  return {b[0] - 1, b[1]};
}

} // namespace tessera::netlist
