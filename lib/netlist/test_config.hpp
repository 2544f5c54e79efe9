// Reading the untyped fields of a netlist's test-config (stimulus and
// comparison share them), so both libraries interpret them one way.
#pragma once
#include "netlist/model.hpp"

#include <cstdint>
#include <regex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tessera::netlist {

// The field `key` of `extra`; YAML duplicates: the later key wins, as in BUDA.
const ExtraField* findExtra(const std::vector<ExtraField>& extra, const std::string& key);

// A tile row/col range `[lo, hi]`, 1-based inclusive within a 32-value tile,
// as [lo-1, hi). Throws std::invalid_argument naming `section` and the key.
std::pair<int64_t, int64_t> parseTileRange(const ExtraField& f, const std::string& section);

// The override of a stimulus or comparison config for `queue`: BUDA looks the
// exact name up first, then tries the patterns (whole-name regex match); with
// several matching patterns its choice depends on hash order, ours is source
// order. A bad regex throws std::invalid_argument naming `section`.
template <class Config>
const Config* overrideFor(const Config& cfg, const std::string& queue, const std::string& section) {
  for (const auto& [pattern, o] : cfg.overrides)
    if (pattern == queue) return &o;
  for (const auto& [pattern, o] : cfg.overrides) {
    try {
      if (std::regex_match(queue, std::regex(pattern))) return &o;
    } catch (const std::regex_error& e) {
      throw std::invalid_argument(section + ": overrides: '" + pattern + "' is not a valid regex: " + e.what());
    }
  }
  return nullptr;
}

} // namespace tessera::netlist
