// Tilize/untilize between row-major tensor entries and per-core tile streams.
#include "formats/blocking.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

namespace tessera::formats {
namespace {

void checkBlocking(const Blocking& b) {
  if (b.gridR < 1 || b.gridC < 1 || b.t < 1 || b.mblockR < 1 || b.mblockC < 1 || b.ublockR < 1 || b.ublockC < 1)
    throw std::invalid_argument("blocking: grid, t, mblock and ublock dimensions must all be positive");
  if (!isSupportedTileShape(b.tile))
    throw std::invalid_argument("blocking: tile shape " + std::to_string(b.tile.r) + "x" + std::to_string(b.tile.c) +
                                " is not supported");
}

std::string shapeText(int64_t z, int64_t r, int64_t c) {
  return "[z=" + std::to_string(z) + ", r=" + std::to_string(r) + ", c=" + std::to_string(c) + "]";
}

// The entry shape a blocking implies must match the tensor's.
void checkEntry(const Tensor& t, int64_t w, const Blocking& b, const char* what) {
  checkBlocking(b);
  if (w < 0 || w >= t.w)
    throw std::invalid_argument(std::string(what) + ": entry " + std::to_string(w) + " out of range (tensor has " +
                                std::to_string(t.w) + " entries)");
  const int64_t r = b.rowTiles() * kTileDim, c = b.colTiles() * kTileDim;
  if (t.z != b.t || t.r != r || t.c != c)
    throw std::invalid_argument(std::string(what) + ": tensor entry is " + shapeText(t.z, t.r, t.c) +
                                " but the blocking (grid, t, mblock, ublock) implies " + shapeText(b.t, r, c));
}

} // namespace

std::vector<TileCoord> coreTileOrder(const Blocking& b, int64_t coreR, int64_t coreC) {
  checkBlocking(b);
  if (coreR < 0 || coreR >= b.gridR || coreC < 0 || coreC >= b.gridC)
    throw std::invalid_argument("coreTileOrder: core (" + std::to_string(coreR) + ", " + std::to_string(coreC) +
                                ") outside a " + std::to_string(b.gridR) + "x" + std::to_string(b.gridC) + " grid");
  std::vector<TileCoord> order;
  order.reserve(static_cast<size_t>(b.tilesPerCore()));
  const int64_t rowBase = coreR * b.mblockR * b.ublockR, colBase = coreC * b.mblockC * b.ublockC;
  const bool rowMajorUblocks = b.order == UblockOrder::R;
  const int64_t outer = rowMajorUblocks ? b.mblockR : b.mblockC, inner = rowMajorUblocks ? b.mblockC : b.mblockR;
  for (int64_t t = 0; t < b.t; ++t)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t ubR = rowMajorUblocks ? o : i, ubC = rowMajorUblocks ? i : o;
        for (int64_t tr = 0; tr < b.ublockR; ++tr)
          for (int64_t tc = 0; tc < b.ublockC; ++tc)
            order.push_back({t, rowBase + ubR * b.ublockR + tr, colBase + ubC * b.ublockC + tc});
      }
  return order;
}

std::vector<std::vector<uint8_t>> tilize(const Tensor& tensor, int64_t w, const Blocking& b, DataFormat df) {
  checkEntry(tensor, w, b, "tilize");
  const size_t bytes = tileBytes(df, b.tile);
  std::vector<std::vector<uint8_t>> cores;
  cores.reserve(static_cast<size_t>(b.gridR * b.gridC));
  std::array<float, kTileValues> tile{};
  // RawUInt32 words above 2^24 do not survive a float (sparse-matmul
  // encodings use all 32 bits): write the exact words when the tensor has them.
  const bool exactWords = df == DataFormat::RawUInt32 && tensor.rawBits.size() == tensor.data.size();
  for (int64_t cr = 0; cr < b.gridR; ++cr)
    for (int64_t cc = 0; cc < b.gridC; ++cc) {
      const std::vector<TileCoord> order = coreTileOrder(b, cr, cc);
      std::vector<uint8_t>& buf = cores.emplace_back(order.size() * bytes);
      for (size_t k = 0; k < order.size(); ++k) {
        const TileCoord& tc = order[k];
        for (int64_t r = 0; r < kTileDim; ++r) {
          const float* src = tensor.data.data() + tensor.index(w, tc.t, tc.rt * kTileDim + r, tc.ct * kTileDim);
          std::copy(src, src + kTileDim, tile.begin() + r * kTileDim);
        }
        packTile(df, b.tile, tile, std::span<uint8_t>(buf.data() + k * bytes, bytes));
        if (exactWords) // raw tiles hold their values row-major after the header
          for (int64_t r = 0; r < b.tile.r; ++r)
            for (int64_t c = 0; c < b.tile.c; ++c) {
              const uint32_t word = tensor.rawBits[tensor.index(w, tc.t, tc.rt * kTileDim + r, tc.ct * kTileDim + c)];
              uint8_t* at = buf.data() + k * bytes + kTileHeaderBytes + static_cast<size_t>(r * b.tile.c + c) * 4;
              for (int byte = 0; byte < 4; ++byte) at[byte] = static_cast<uint8_t>(word >> (8 * byte)); // little-endian
            }
      }
    }
  return cores;
}

void untilize(const std::vector<std::vector<uint8_t>>& cores, const Blocking& b, DataFormat df, Tensor& into,
              int64_t w) {
  checkEntry(into, w, b, "untilize");
  if (static_cast<int64_t>(cores.size()) != b.gridR * b.gridC)
    throw std::invalid_argument("untilize: " + std::to_string(cores.size()) + " core buffers for a " +
                                std::to_string(b.gridR) + "x" + std::to_string(b.gridC) + " grid");
  const size_t bytes = tileBytes(df, b.tile);
  const size_t need = static_cast<size_t>(b.tilesPerCore()) * bytes;
  std::array<float, kTileValues> tile{};
  for (int64_t cr = 0; cr < b.gridR; ++cr)
    for (int64_t cc = 0; cc < b.gridC; ++cc) {
      const std::vector<uint8_t>& buf = cores[static_cast<size_t>(cr * b.gridC + cc)];
      if (buf.size() < need)
        throw std::invalid_argument("untilize: core (" + std::to_string(cr) + ", " + std::to_string(cc) + ") has " +
                                    std::to_string(buf.size()) + " bytes, needs " + std::to_string(need));
      const std::vector<TileCoord> order = coreTileOrder(b, cr, cc);
      for (size_t k = 0; k < order.size(); ++k) {
        unpackTile(df, b.tile, std::span<const uint8_t>(buf.data() + k * bytes, bytes), tile);
        const TileCoord& tc = order[k];
        for (int64_t r = 0; r < kTileDim; ++r)
          std::copy(tile.begin() + r * kTileDim, tile.begin() + (r + 1) * kTileDim,
                    into.data.begin() + static_cast<std::ptrdiff_t>(into.index(w, tc.t, tc.rt * kTileDim + r, tc.ct * kTileDim)));
      }
    }
}

void maskToTileShape(Tensor& t, TileShape shape) {
  if (shape.full()) return;
  for (int64_t w = 0; w < t.w; ++w)
    for (int64_t z = 0; z < t.z; ++z)
      for (int64_t r = 0; r < t.r; ++r) {
        float* row = t.data.data() + t.index(w, z, r, 0);
        if (r % kTileDim >= shape.r) {
          std::fill(row, row + t.c, 0.0f);
          continue;
        }
        for (int64_t c = 0; c < t.c; ++c)
          if (c % kTileDim >= shape.c) row[c] = 0.0f;
      }
}

} // namespace tessera::formats
