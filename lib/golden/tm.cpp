// TMs in value space. Each one is the whole-tensor effect of what BUDA does
// in two places (pipes reorder tiles, the unpacker transposes/broadcasts
// within a tile); docs/golden-model.md gives the index mapping of each.
#include "golden/tm.hpp"

#include "golden/ops.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

namespace tessera::golden {
namespace {

constexpr int64_t kTile = formats::kTileDim;

// Tensor::at on a const tensor returns a value; row copies need the address.
const float* valuePtr(const Tensor& t, int64_t w, int64_t z, int64_t r, int64_t c) {
  return t.data.data() + t.index(w, z, r, c);
}

std::string shapeText(const Tensor& t) {
  return "[w=" + std::to_string(t.w) + ", z=" + std::to_string(t.z) + ", " + std::to_string(t.r) + "x" +
         std::to_string(t.c) + "]";
}

[[noreturn]] void fail(const netlist::Tm& tm, const std::string& message) {
  throw GoldenError(std::string(netlist::tmKindName(tm.kind)) + ": " + message);
}

void requireWholeTiles(const Tensor& in, const char* what) {
  if (in.r % kTile != 0 || in.c % kTile != 0)
    throw GoldenError(std::string(what) + ": tensor " + shapeText(in) + " is not whole tiles");
}

// Tile counts must divide: slicing never splits a tile.
void requireFactor(const netlist::Tm& tm, int64_t extent, const char* dimName) {
  if (tm.factor < 1) fail(tm, "factor must be at least 1, got " + std::to_string(tm.factor));
  if (extent % tm.factor != 0)
    fail(tm, std::string(dimName) + " " + std::to_string(extent) + " is not divisible by " + std::to_string(tm.factor));
}

// Replicates whole tiles (pipes re-send them): output index i reads i % size.
Tensor broadcast(const Tensor& in, const netlist::Tm& tm) {
  if (tm.factor < 1) fail(tm, "factor must be at least 1, got " + std::to_string(tm.factor));
  const int64_t f = tm.factor;
  switch (tm.dim) {
  case 'z': {
    Tensor out(in.w, in.z * f, in.r, in.c);
    const size_t plane = static_cast<size_t>(in.r * in.c);
    for (int64_t w = 0; w < in.w; ++w)
      for (int64_t z = 0; z < out.z; ++z) std::copy_n(in.matrix(w, z % in.z), plane, out.matrix(w, z));
    return out;
  }
  case 'r': {
    Tensor out(in.w, in.z, in.r * f, in.c);
    for (int64_t w = 0; w < in.w; ++w)
      for (int64_t z = 0; z < in.z; ++z)
        for (int64_t r = 0; r < out.r; ++r) std::copy_n(valuePtr(in, w, z, r % in.r, 0), in.c, &out.at(w, z, r, 0));
    return out;
  }
  case 'c': {
    Tensor out(in.w, in.z, in.r, in.c * f);
    for (int64_t w = 0; w < in.w; ++w)
      for (int64_t z = 0; z < in.z; ++z)
        for (int64_t r = 0; r < in.r; ++r)
          for (int64_t copy = 0; copy < f; ++copy)
            std::copy_n(valuePtr(in, w, z, r, 0), in.c, &out.at(w, z, r, copy * in.c));
    return out;
  }
  default: fail(tm, std::string("unknown dimension '") + tm.dim + "'");
  }
}

// Within every tile, row 0 (r) or column 0 (c) fills the whole tile.
Tensor tileBroadcast(const Tensor& in, const netlist::Tm& tm) {
  if (tm.dim != 'r' && tm.dim != 'c') fail(tm, std::string("dimension must be r or c, got '") + tm.dim + "'");
  Tensor out(in.w, in.z, in.r, in.c);
  for (int64_t w = 0; w < in.w; ++w)
    for (int64_t z = 0; z < in.z; ++z)
      for (int64_t r = 0; r < in.r; ++r) {
        if (tm.dim == 'r') {
          std::copy_n(valuePtr(in, w, z, r - r % kTile, 0), in.c, &out.at(w, z, r, 0));
        } else {
          for (int64_t c = 0; c < in.c; ++c) out.at(w, z, r, c) = in.at(w, z, r, c - c % kTile);
        }
      }
  return out;
}

// hslice n: column block s of slice z becomes slice z*n + s.
Tensor hslice(const Tensor& in, const netlist::Tm& tm) {
  requireFactor(tm, in.c / kTile, "column tiles");
  const int64_t n = tm.factor, cols = in.c / n;
  Tensor out(in.w, in.z * n, in.r, cols);
  for (int64_t w = 0; w < in.w; ++w)
    for (int64_t z = 0; z < in.z; ++z)
      for (int64_t s = 0; s < n; ++s)
        for (int64_t r = 0; r < in.r; ++r) std::copy_n(valuePtr(in, w, z, r, s * cols), cols, &out.at(w, z * n + s, r, 0));
  return out;
}

// hstack n: slices z*n .. z*n+n-1 are placed side by side, left to right.
Tensor hstack(const Tensor& in, const netlist::Tm& tm) {
  requireFactor(tm, in.z, "t");
  const int64_t n = tm.factor;
  Tensor out(in.w, in.z / n, in.r, in.c * n);
  for (int64_t w = 0; w < in.w; ++w)
    for (int64_t z = 0; z < out.z; ++z)
      for (int64_t s = 0; s < n; ++s)
        for (int64_t r = 0; r < in.r; ++r) std::copy_n(valuePtr(in, w, z * n + s, r, 0), in.c, &out.at(w, z, r, s * in.c));
  return out;
}

// vslice n: row block s of slice z becomes slice z*n + s.
Tensor vslice(const Tensor& in, const netlist::Tm& tm) {
  requireFactor(tm, in.r / kTile, "row tiles");
  const int64_t n = tm.factor, rows = in.r / n;
  Tensor out(in.w, in.z * n, rows, in.c);
  const size_t block = static_cast<size_t>(rows * in.c);
  for (int64_t w = 0; w < in.w; ++w)
    for (int64_t z = 0; z < in.z; ++z)
      for (int64_t s = 0; s < n; ++s) std::copy_n(valuePtr(in, w, z, s * rows, 0), block, out.matrix(w, z * n + s));
  return out;
}

// vstack n: slices z*n .. z*n+n-1 are placed on top of each other.
Tensor vstack(const Tensor& in, const netlist::Tm& tm) {
  requireFactor(tm, in.z, "t");
  const int64_t n = tm.factor;
  Tensor out(in.w, in.z / n, in.r * n, in.c);
  const size_t block = static_cast<size_t>(in.r * in.c);
  for (int64_t w = 0; w < in.w; ++w)
    for (int64_t z = 0; z < out.z; ++z)
      for (int64_t s = 0; s < n; ++s) std::copy_n(in.matrix(w, z * n + s), block, &out.at(w, z, s * in.r, 0));
  return out;
}

// Value transpose of each slice (tiles move and each tile is transposed).
Tensor transpose(const Tensor& in) {
  Tensor out(in.w, in.z, in.c, in.r);
  for (int64_t w = 0; w < in.w; ++w)
    for (int64_t z = 0; z < in.z; ++z) {
      const float* src = in.matrix(w, z);
      float* dst = out.matrix(w, z);
      // Tile-sized blocks keep both sides in cache.
      for (int64_t r0 = 0; r0 < in.r; r0 += kTile)
        for (int64_t c0 = 0; c0 < in.c; c0 += kTile)
          for (int64_t r = r0; r < std::min(r0 + kTile, in.r); ++r)
            for (int64_t c = c0; c < std::min(c0 + kTile, in.c); ++c) dst[c * in.r + r] = src[r * in.c + c];
    }
  return out;
}

} // namespace

Tensor padTiles(const Tensor& in, const netlist::Pad& pad) {
  requireWholeTiles(in, "pad");
  if (pad.rt < 0 || pad.ct < 0) throw GoldenError("pad: tile counts must not be negative");
  Tensor out(in.w, in.z, in.r + pad.rt * kTile, in.c + pad.ct * kTile, static_cast<float>(pad.padValue));
  for (int64_t w = 0; w < in.w; ++w)
    for (int64_t z = 0; z < in.z; ++z)
      for (int64_t r = 0; r < in.r; ++r) std::copy_n(valuePtr(in, w, z, r, 0), in.c, &out.at(w, z, r, 0));
  return out;
}

Tensor unpadTiles(const Tensor& in, const netlist::Pad& unpad) {
  requireWholeTiles(in, "unpad");
  const int64_t rows = in.r - unpad.rt * kTile, cols = in.c - unpad.ct * kTile;
  if (unpad.rt < 0 || unpad.ct < 0 || rows < kTile || cols < kTile)
    throw GoldenError("unpad: cannot remove " + std::to_string(unpad.rt) + "x" + std::to_string(unpad.ct) +
                      " tiles from " + shapeText(in) + " (at least one tile must remain)");
  Tensor out(in.w, in.z, rows, cols);
  for (int64_t w = 0; w < in.w; ++w)
    for (int64_t z = 0; z < in.z; ++z)
      for (int64_t r = 0; r < rows; ++r) std::copy_n(valuePtr(in, w, z, r, 0), cols, &out.at(w, z, r, 0));
  return out;
}

Tensor applyTm(const Tensor& in, const netlist::Tm& tm) {
  requireWholeTiles(in, std::string(netlist::tmKindName(tm.kind)).c_str());
  switch (tm.kind) {
  case netlist::TmKind::Broadcast: return broadcast(in, tm);
  case netlist::TmKind::TileBroadcast: return tileBroadcast(in, tm);
  case netlist::TmKind::Hslice: return hslice(in, tm);
  case netlist::TmKind::Hstack: return hstack(in, tm);
  case netlist::TmKind::Vslice: return vslice(in, tm);
  case netlist::TmKind::Vstack: return vstack(in, tm);
  case netlist::TmKind::Transpose: return transpose(in);
  case netlist::TmKind::Pad: return padTiles(in, tm.pad);
  }
  fail(tm, "unknown TM");
}

Tensor applyTms(Tensor in, const std::vector<netlist::Tm>& tms) {
  if (tms.empty()) return in;
  std::vector<uint32_t> bits = std::move(in.rawBits);
  in.rawBits.clear();
  // Exact RawUInt32 words move like the values: TMs only copy data, so the
  // words ride through the same TMs as float bit patterns (copies keep bits).
  std::optional<Tensor> carrier;
  if (!bits.empty() && bits.size() == in.data.size()) {
    carrier = Tensor(in.w, in.z, in.r, in.c);
    std::memcpy(carrier->data.data(), bits.data(), bits.size() * sizeof(uint32_t));
  }
  for (const netlist::Tm& tm : tms) {
    in = applyTm(in, tm);
    if (carrier) carrier = applyTm(*carrier, tm);
  }
  if (carrier) {
    in.rawBits.resize(carrier->data.size());
    std::memcpy(in.rawBits.data(), carrier->data.data(), carrier->data.size() * sizeof(uint32_t));
  }
  return in;
}

} // namespace tessera::golden
