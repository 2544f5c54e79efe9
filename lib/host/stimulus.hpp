// Host input generation from a netlist's stimulus-config: Uniform, Normal,
// Constant, Step, StepRowwise, DebugTileId, sparse, sparse_encoding (and
// per-queue overrides).
// Deterministic: an entry depends only on the seed, the queue name and the
// entry index, never on the order queues are filled in.
#pragma once
#include "formats/tensor.hpp"
#include "host/sparse_stimulus.hpp"
#include "netlist/model.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace tessera::host {

using formats::Tensor;

enum class StimulusKind { Uniform, Normal, Constant, Step, StepRowwise, DebugTileId, SparseTiles, SparseEncoding };

struct Stimulus {
  StimulusKind kind = StimulusKind::Uniform;
  double lower = -1.0, upper = 1.0; // Uniform (BUDA default range)
  double mean = 0.0, stddev = 0.25; // Normal
  double constant = 1.0;            // Constant
  double stepStart = 0.0, stepIncrement = 1.0;
  double tileIdBase = 0.0, tileIdStep = 1.0;
  // set_tile_rows/cols: only these value rows/cols of each tile are filled
  // ([lo, hi) in values), the rest are zero.
  std::optional<std::pair<int64_t, int64_t>> tileRows, tileCols;
  // sparse / sparse_encoding: the identity matmul they feed (bindSparse
  // resolves it into `sparseOp`) and the encoding's zero frequencies.
  std::string matmulIdentName;
  std::optional<SparseOpShape> sparseOp;
  EncodingFrequencies encoding;
  bool adaptiveEncoding = false; // chosen by bindSparse, not by the netlist: may add zeros to fit
};

// The stimulus for `queue` (overrides are regexes over the whole name).
// Throws std::invalid_argument naming the field for an unknown type.
// Also for an unsupported one (sparse_encoding_nz_counts), a bad
// set_tile_rows/cols range, bounds or regex. A null config gives Uniform[-1, 1]
// (what BUDA's tests use without one).
Stimulus stimulusFor(const netlist::StimulusConfig* cfg, const std::string& queue);

// Resolves the identity matmul of a sparse stimulus (std::invalid_argument
// when it is missing or lacks attributes). A queue that is an identity
// matmul's input 0 or 2 without a sparse stimulus gets one anyway: random
// floats are no valid encoding. Call before generateEntry.
void bindSparse(Stimulus& s, const netlist::Netlist& nl, const std::string& queue);

// The seed of entry `entry` of `queue`'s generator (std::mt19937_64):
// splitmix64(splitmix64(splitmix64(seed) ^ fnv1a64(queue)) ^ entry), where
// splitmix64(x) is the first output of a SplitMix64 generator in state x.
// Exposed so tests can pin the algorithm.
uint64_t entrySeed(uint64_t seed, const std::string& queue, int64_t entry);

// One entry [1][t][rows][cols] (values, tiles*32) for entry number `entry`.
Tensor generateEntry(const Stimulus& s, int64_t t, int64_t rows, int64_t cols, uint64_t seed,
                     const std::string& queue, int64_t entry);

} // namespace tessera::host
