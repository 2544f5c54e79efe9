// Comparing an output tensor with its reference: Exact, AllClose and
// AllCloseHw as the netlist's comparison-config names them, with per-queue
// overrides. Reports what an engineer needs to judge a mismatch: max abs
// error, PCC, the share of values within tolerance and the first mismatches.
#pragma once
#include "formats/tensor.hpp"
#include "netlist/model.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessera::compare {

using formats::Tensor;

enum class Method { Exact, AllClose, AllCloseHw };

struct Config {
  Method method = Method::AllCloseHw;
  double atol = 0.01, rtol = 0.15;
  double checkPct = 0.5, checkPcc = 0.99;
  // Only these value rows/cols of each tile are compared ([lo, hi), in values),
  // from check_tile_rows_range / check_tile_cols_range (1-based, inclusive).
  std::optional<std::pair<int64_t, int64_t>> tileRows, tileCols;
};

// The config for `queue`: the first override whose regex matches the whole
// queue name, else the base config; fields missing in an override come from the base.
// Fields the netlist leaves out take BUDA's defaults (atol 1e-3, rtol 1e-4,
// check_pct 1.0, check_pcc 0.999; see docs/comparison.md).
// Throws std::invalid_argument for an unknown type, a bad tile range or regex.
Config configFor(const netlist::ComparisonConfig& cfg, const std::string& queue);

struct Mismatch {
  int64_t w = 0, z = 0, r = 0, c = 0;
  float expected = 0, actual = 0;
};

struct Result {
  bool pass = false;
  double maxAbsError = 0;
  double pcc = 1;
  double pctWithin = 1;      // share of compared values within atol + rtol*max(|expected|, |actual|)
  int64_t compared = 0, mismatches = 0;
  // AllClose/AllCloseHw judge each 32x32 tile on its own, as BUDA does.
  int64_t tiles = 0, failedTiles = 0;
  double minTilePct = 1, minTilePcc = 1; // the worst tile's figures
  std::vector<Mismatch> first; // up to 8, in row-major order
  std::string reason;          // why it failed ("pcc 0.83 < 0.99", "shape [..] vs [..]")
};

Result compareTensors(const Tensor& expected, const Tensor& actual, const Config& cfg);
// One line: "<queue>: PASS|FAIL max_abs=.. pcc=.. within=..%" (on failure
// followed by " (<reason>)"); then up to 8 "  mismatch at [w,z,r,c]: expected ..
// got .." lines on failure. Every line ends in '\n'.
std::string formatResult(const std::string& queue, const Result& r);

// One checked queue of a run.
struct QueueCheck {
  std::string queue;
  int64_t entries = 0; // entries the run wrote
  Result result;
  std::optional<int64_t> chip; // several chips: the queue's target_device (the table gets a chip column)
};
// The per-queue table `loader run` prints: a header, one row per queue
// (entries, PASS/FAIL, max_abs, pcc, within), a failed row followed by its
// reason and first mismatches, then "checked N queues: P passed, F failed".
std::string formatCheckTable(const std::vector<QueueCheck>& checks);

} // namespace tessera::compare
