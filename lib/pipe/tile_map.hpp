// Tile maps: which producer tile each tile of an op operand is, through the
// operand's unpad, TMs and pad (docs/net2pipe.md "Tile maps"); where a tile
// of a blocked tensor lives (core and position in the core's stream); and
// the tiles a consumer core needs in the order its kernel reads them.
//
// Shapes and TM semantics are netlist::applyTms's and the golden model's
// (lib/golden/tm.cpp): the unit tests check every map against it.
#pragma once
#include "formats/blocking.hpp"
#include "netlist/model.hpp"
#include "netlist/shape.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessera::pipe {

using netlist::TensorShape;

// One tile of one tensor entry: t slice, tile row, tile column.
struct TileRef {
  int64_t t = 0, r = 0, c = 0;
  friend bool operator==(const TileRef&, const TileRef&) = default;
};

// What an operand tile reads: a producer tile, or a constant padding tile.
struct TileSource {
  bool padding = false;
  double padValue = 0.0; // padding only
  TileRef tile;          // producer tile (not padding)
};

// The chain producer tensor -> unpad -> TMs -> pad -> operand tensor.
class OperandMap {
public:
  // nullopt (and `why`) when a step does not apply to the shape it meets.
  static std::optional<OperandMap> build(TensorShape producer, const std::optional<netlist::Pad>& unpad,
                                         const std::vector<netlist::Tm>& tms, const std::optional<netlist::Pad>& pad,
                                         std::string* why = nullptr);

  const TensorShape& producerShape() const { return producer_; }
  const TensorShape& operandShape() const { return operand_; }
  bool identity() const { return steps_.empty(); }
  // The source of operand tile `at` (which must lie inside operandShape()).
  TileSource source(TileRef at) const;

private:
  enum class Kind { BcastR, BcastC, BcastZ, Hslice, Hstack, Vslice, Vstack, Transpose, Pad, Unpad };
  struct Step {
    Kind kind;
    int64_t factor = 1;
    double padValue = 0.0;
    TensorShape in, out; // shapes before and after the step
  };
  TensorShape producer_, operand_;
  std::vector<Step> steps_;
};

// Where a tile of a blocked tensor lives.
struct TileLocation {
  int64_t coreR = 0, coreC = 0; // grid cell (op core or queue buffer), logical
  int64_t index = 0;            // position in the cell's per-entry stream (coreTileOrder)
  friend bool operator==(const TileLocation&, const TileLocation&) = default;
};
// The inverse of formats::coreTileOrder: the cell holding `tile` and its index there.
TileLocation locateTile(const formats::Blocking& b, TileRef tile);

// The tiles a consumer core reads per entry, in kernel order: per t slice,
// the ublocks of `mblock` in `order`, each ublock row-major, starting at
// tile (rowOrigin, colOrigin) of the operand (coreTileOrder of a one-core
// blocking, shifted).
struct KernelLayout {
  int64_t t = 1;
  netlist::Dim2 mblock{1, 1}, ublock{1, 1};
  netlist::UblockOrder order = netlist::UblockOrder::R;
  int64_t rowTiles() const { return mblock.r * ublock.r; }
  int64_t colTiles() const { return mblock.c * ublock.c; }
  int64_t tiles() const { return t * rowTiles() * colTiles(); }
};
std::vector<TileRef> consumerTiles(const KernelLayout& layout, int64_t rowOrigin, int64_t colOrigin);

// Which part of the operand a core of a `gridR x gridC` consumer grid reads:
// along each dimension either its share (extent * grid == operand extent:
// origin = core * extent) or all of it (extent == operand extent, the same
// for every core of that grid dimension, e.g. matmul inputs). nullopt (and
// `why`) when the layout fits neither.
struct Origin {
  int64_t row = 0, col = 0;
};
std::optional<Origin> coreOrigin(const KernelLayout& layout, const TensorShape& operand, int64_t gridR, int64_t gridC,
                                 int64_t coreR, int64_t coreC, std::string* why = nullptr);

// A run of consecutive tiles of one source buffer.
struct Run {
  uint32_t source = 0; // caller's buffer index
  int64_t start = 0;
  int64_t length = 0;
  friend bool operator==(const Run&, const Run&) = default;
};
struct SourceTile {
  uint32_t source = 0;
  int64_t index = 0;
  friend bool operator==(const SourceTile&, const SourceTile&) = default;
  friend auto operator<=>(const SourceTile&, const SourceTile&) = default;
};
// Maximal runs: a new run starts where the source changes or the index is
// not the previous one plus one.
std::vector<Run> toRuns(const std::vector<SourceTile>& tiles);

// The smallest period p of `v` (v[i] == v[i % p] for all i, p divides the
// size); v.size() when none is shorter. 0 for an empty vector.
template <class T> size_t smallestPeriod(const std::vector<T>& v) {
  const size_t n = v.size();
  for (size_t p = 1; p < n; ++p) {
    if (n % p != 0) continue;
    bool ok = true;
    for (size_t i = p; i < n && ok; ++i) ok = v[i] == v[i - p];
    if (ok) return p;
  }
  return n;
}

// Out-of-order window of a producer stream read in `order` (indices into the
// producer's per-entry stream, repeated for every entry): the fewest slots a
// FIFO buffer freed in order must have so the reader never waits for a tile
// that cannot be produced yet. A reader in stream order needs 1.
int64_t reorderWindow(const std::vector<int64_t>& order);

} // namespace tessera::pipe
