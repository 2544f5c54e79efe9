// Tilize/untilize: between a row-major tensor entry and the tiles each core of
// a grid holds, in the order the core streams them (t, then the mblock's
// ublocks in ublock_order, then the ublock's tiles row-major).
#pragma once
#include "formats/formats.hpp"

#include <cstdint>
#include <vector>

namespace tessera::formats {

struct Blocking {
  int64_t gridR = 1, gridC = 1, t = 1;
  int64_t mblockR = 1, mblockC = 1, ublockR = 1, ublockC = 1;
  UblockOrder order = UblockOrder::R;
  // tile_dim. Tensors keep the 32x32 register view of every tile (entry
  // rowTiles*32 x colTiles*32): a smaller tile is its top-left tile.r x
  // tile.c corner, the rest zero (docs/data-formats.md "Tiny tiles").
  TileShape tile;

  int64_t rowTiles() const { return gridR * mblockR * ublockR; }
  int64_t colTiles() const { return gridC * mblockC * ublockC; }
  int64_t tilesPerCore() const { return t * mblockR * mblockC * ublockR * ublockC; }
};

struct TileCoord {
  int64_t t = 0, rt = 0, ct = 0; // t index, tile row and tile col within the whole entry
};
// The tiles of core (coreR, coreC) in stream order.
std::vector<TileCoord> coreTileOrder(const Blocking& b, int64_t coreR, int64_t coreC);

// Entry `w` of `tensor` (z == b.t, r == rowTiles*32, c == colTiles*32) into one
// byte buffer per core, cores row-major; each buffer holds tilesPerCore tiles.
std::vector<std::vector<uint8_t>> tilize(const Tensor& tensor, int64_t w, const Blocking& b, DataFormat df);
// Zeros every value outside the top-left shape.r x shape.c corner of each
// 32x32 tile of `t` (all entries): what a packer writing `shape` tiles keeps.
void maskToTileShape(Tensor& t, TileShape shape);
// The inverse: fills entry `w` of `into` (which must have the entry's shape).
void untilize(const std::vector<std::vector<uint8_t>>& cores, const Blocking& b, DataFormat df, Tensor& into, int64_t w);

} // namespace tessera::formats
