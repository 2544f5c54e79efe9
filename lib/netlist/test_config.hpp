// Reading the untyped fields of a netlist's test-config (stimulus and
// comparison share them), so both libraries interpret them one way.
#pragma once
#include "netlist/model.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tessera::netlist {

// The field `key` of `extra`; YAML duplicates: the later key wins, as in BUDA.
const ExtraField* findExtra(const std::vector<ExtraField>& extra, const std::string& key);

// A tile row/col range `[lo, hi]`, 1-based inclusive within a 32-value tile,
// as [lo-1, hi). Throws std::invalid_argument naming `section` and the key.
std::pair<int64_t, int64_t> parseTileRange(const ExtraField& f, const std::string& section);

} // namespace tessera::netlist
