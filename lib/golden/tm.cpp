// TMs in value space. Each one is the whole-tensor effect of what BUDA does
// in two places (pipes reorder tiles, the unpacker transposes/broadcasts
// within a tile); docs/golden-model.md gives the index mapping of each.
#include "golden/tm.hpp"

#include "golden/ops.hpp"
#include "formats/formats.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

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

// A TM output built by appending its values in row-major order: no zero fill
// first (these outputs are hundreds of MB for w-stacked inputs, and every value
// is written once).
class Appender {
public:
  Appender(int64_t w, int64_t z, int64_t r, int64_t c) {
    t_.w = w, t_.z = z, t_.r = r, t_.c = c;
    t_.data.reserve(static_cast<size_t>(w * z * r * c));
  }
  void append(const float* p, int64_t n) { t_.data.insert(t_.data.end(), p, p + n); }
  Tensor done() {
    if (t_.data.size() != static_cast<size_t>(t_.w * t_.z * t_.r * t_.c))
      throw GoldenError("internal: TM output of " + std::to_string(t_.data.size()) + " values for " + shapeText(t_));
    return std::move(t_);
  }

private:
  Tensor t_;
};

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
    Appender out(in.w, in.z * f, in.r, in.c);
    for (int64_t w = 0; w < in.w; ++w)
      for (int64_t z = 0; z < in.z * f; ++z) out.append(in.matrix(w, z % in.z), in.r * in.c);
    return out.done();
  }
  case 'r': {
    Appender out(in.w, in.z, in.r * f, in.c);
    for (int64_t w = 0; w < in.w; ++w)
      for (int64_t z = 0; z < in.z; ++z)
        for (int64_t r = 0; r < in.r * f; ++r) out.append(valuePtr(in, w, z, r % in.r, 0), in.c);
    return out.done();
  }
  case 'c': {
    Appender out(in.w, in.z, in.r, in.c * f);
    for (int64_t w = 0; w < in.w; ++w)
      for (int64_t z = 0; z < in.z; ++z)
        for (int64_t r = 0; r < in.r; ++r)
          for (int64_t copy = 0; copy < f; ++copy) out.append(valuePtr(in, w, z, r, 0), in.c);
    return out.done();
  }
  default: fail(tm, std::string("unknown dimension '") + tm.dim + "'");
  }
}

// Within every tile, row 0 (r) or column 0 (c) fills the whole tile.
Tensor tileBroadcast(const Tensor& in, const netlist::Tm& tm) {
  if (tm.dim != 'r' && tm.dim != 'c') fail(tm, std::string("dimension must be r or c, got '") + tm.dim + "'");
  Appender out(in.w, in.z, in.r, in.c);
  std::vector<float> row(static_cast<size_t>(in.c));
  for (int64_t w = 0; w < in.w; ++w)
    for (int64_t z = 0; z < in.z; ++z)
      for (int64_t r = 0; r < in.r; ++r) {
        if (tm.dim == 'r') {
          out.append(valuePtr(in, w, z, r - r % kTile, 0), in.c);
        } else {
          for (int64_t c = 0; c < in.c; ++c) row[static_cast<size_t>(c)] = in.at(w, z, r, c - c % kTile);
          out.append(row.data(), in.c);
        }
      }
  return out.done();
}

// hslice n: column block s of slice z becomes slice z*n + s.
Tensor hslice(const Tensor& in, const netlist::Tm& tm) {
  requireFactor(tm, in.c / kTile, "column tiles");
  const int64_t n = tm.factor, cols = in.c / n;
  Appender out(in.w, in.z * n, in.r, cols);
  for (int64_t w = 0; w < in.w; ++w)
    for (int64_t z = 0; z < in.z; ++z)
      for (int64_t s = 0; s < n; ++s)
        for (int64_t r = 0; r < in.r; ++r) out.append(valuePtr(in, w, z, r, s * cols), cols);
  return out.done();
}

// hstack n: slices z*n .. z*n+n-1 are placed side by side, left to right.
Tensor hstack(const Tensor& in, const netlist::Tm& tm) {
  requireFactor(tm, in.z, "t");
  const int64_t n = tm.factor;
  Appender out(in.w, in.z / n, in.r, in.c * n);
  for (int64_t w = 0; w < in.w; ++w)
    for (int64_t z = 0; z < in.z / n; ++z)
      for (int64_t r = 0; r < in.r; ++r)
        for (int64_t s = 0; s < n; ++s) out.append(valuePtr(in, w, z * n + s, r, 0), in.c);
  return out.done();
}

// vslice n: row block s of slice z becomes slice z*n + s.
Tensor vslice(const Tensor& in, const netlist::Tm& tm) {
  requireFactor(tm, in.r / kTile, "row tiles");
  const int64_t n = tm.factor, rows = in.r / n;
  Appender out(in.w, in.z * n, rows, in.c);
  for (int64_t w = 0; w < in.w; ++w)
    for (int64_t z = 0; z < in.z; ++z)
      for (int64_t s = 0; s < n; ++s) out.append(valuePtr(in, w, z, s * rows, 0), rows * in.c);
  return out.done();
}

// vstack n: slices z*n .. z*n+n-1 are placed on top of each other.
Tensor vstack(const Tensor& in, const netlist::Tm& tm) {
  requireFactor(tm, in.z, "t");
  const int64_t n = tm.factor;
  Appender out(in.w, in.z / n, in.r * n, in.c);
  for (int64_t w = 0; w < in.w; ++w)
    for (int64_t z = 0; z < in.z / n; ++z)
      for (int64_t s = 0; s < n; ++s) out.append(in.matrix(w, z * n + s), in.r * in.c);
  return out.done();
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

// ---------------------------------------------------------------- chains
// broadcast, hslice/hstack and vslice/vstack only move runs of values within
// rows: every output row is a few column runs of input rows. A chain of them
// is applied in one pass (each output row gathered from the chain's input
// through the inverse index maps of docs/golden-model.md, last TM first)
// instead of one whole-tensor copy per TM; the values are the same copies.
bool movesRows(const netlist::Tm& tm) {
  switch (tm.kind) {
  case netlist::TmKind::Broadcast:
  case netlist::TmKind::Hslice:
  case netlist::TmKind::Hstack:
  case netlist::TmKind::Vslice:
  case netlist::TmKind::Vstack: return true;
  default: return false;
  }
}

struct Shape {
  int64_t w, z, r, c;
};

// The output shape of a row-moving TM, with the checks the TM itself makes
// (same messages: the data is never built when the shapes do not fit).
Shape shapeAfter(const Shape& in, const netlist::Tm& tm) {
  const Tensor probe = [&] { Tensor t; t.w = in.w, t.z = in.z, t.r = in.r, t.c = in.c; return t; }();
  requireWholeTiles(probe, std::string(netlist::tmKindName(tm.kind)).c_str());
  switch (tm.kind) {
  case netlist::TmKind::Broadcast:
    if (tm.factor < 1) fail(tm, "factor must be at least 1, got " + std::to_string(tm.factor));
    if (tm.dim == 'z') return {in.w, in.z * tm.factor, in.r, in.c};
    if (tm.dim == 'r') return {in.w, in.z, in.r * tm.factor, in.c};
    if (tm.dim == 'c') return {in.w, in.z, in.r, in.c * tm.factor};
    fail(tm, std::string("unknown dimension '") + tm.dim + "'");
  case netlist::TmKind::Hslice:
    requireFactor(tm, in.c / kTile, "column tiles");
    return {in.w, in.z * tm.factor, in.r, in.c / tm.factor};
  case netlist::TmKind::Hstack:
    requireFactor(tm, in.z, "t");
    return {in.w, in.z / tm.factor, in.r, in.c * tm.factor};
  case netlist::TmKind::Vslice:
    requireFactor(tm, in.r / kTile, "row tiles");
    return {in.w, in.z * tm.factor, in.r / tm.factor, in.c};
  case netlist::TmKind::Vstack:
    requireFactor(tm, in.z, "t");
    return {in.w, in.z / tm.factor, in.r * tm.factor, in.c};
  default: fail(tm, "not a row-moving TM");
  }
}

// A run of `len` values of row (z, r) starting at column c.
struct Run {
  int64_t z, r, c, len;
};

// The runs of the TM's input that make up `out` (a run of its output, whose
// input has shape `in`), appended to `into`.
void runsBefore(const netlist::Tm& tm, const Shape& in, const Run& out, std::vector<Run>& into) {
  const int64_t n = tm.factor;
  switch (tm.kind) {
  case netlist::TmKind::Broadcast:
    if (tm.dim == 'z') {
      into.push_back({out.z % in.z, out.r, out.c, out.len});
    } else if (tm.dim == 'r') {
      into.push_back({out.z, out.r % in.r, out.c, out.len});
    } else { // 'c': the run may cross copies of the input row
      for (int64_t c = out.c, end = out.c + out.len; c < end;) {
        const int64_t at = c % in.c, len = std::min(end - c, in.c - at);
        into.push_back({out.z, out.r, at, len});
        c += len;
      }
    }
    return;
  case netlist::TmKind::Hslice: // out slice z*n+s, col c <- in slice z, col s*(C/n)+c
    into.push_back({out.z / n, out.r, (out.z % n) * (in.c / n) + out.c, out.len});
    return;
  case netlist::TmKind::Hstack: // out slice z, col c <- in slice z*n + c/C, col c%C
    for (int64_t c = out.c, end = out.c + out.len; c < end;) {
      const int64_t at = c % in.c, len = std::min(end - c, in.c - at);
      into.push_back({out.z * n + c / in.c, out.r, at, len});
      c += len;
    }
    return;
  case netlist::TmKind::Vslice: // out slice z*n+s, row r <- in slice z, row s*(R/n)+r
    into.push_back({out.z / n, (out.z % n) * (in.r / n) + out.r, out.c, out.len});
    return;
  case netlist::TmKind::Vstack: // out slice z, row r <- in slice z*n + r/R, row r%R
    into.push_back({out.z * n + out.r / in.r, out.r % in.r, out.c, out.len});
    return;
  default: fail(tm, "not a row-moving TM");
  }
}

Tensor applyRowMoves(const Tensor& in, std::span<const netlist::Tm> chain) {
  std::vector<Shape> shapes{{in.w, in.z, in.r, in.c}}; // shapes[i]: input of chain[i]
  for (const netlist::Tm& tm : chain) shapes.push_back(shapeAfter(shapes.back(), tm));
  const Shape& outShape = shapes.back();
  Appender out(outShape.w, outShape.z, outShape.r, outShape.c);
  std::vector<Run> runs, earlier;
  for (int64_t w = 0; w < outShape.w; ++w)
    for (int64_t z = 0; z < outShape.z; ++z)
      for (int64_t r = 0; r < outShape.r; ++r) {
        runs.assign(1, Run{z, r, 0, outShape.c});
        for (size_t i = chain.size(); i-- > 0;) {
          earlier.clear();
          for (const Run& run : runs) runsBefore(chain[i], shapes[i], run, earlier);
          std::swap(runs, earlier);
        }
        for (const Run& run : runs) out.append(valuePtr(in, w, run.z, run.r, run.c), run.len);
      }
  return out.done();
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
  Appender out(in.w, in.z, rows, cols);
  for (int64_t w = 0; w < in.w; ++w)
    for (int64_t z = 0; z < in.z; ++z)
      for (int64_t r = 0; r < rows; ++r) out.append(valuePtr(in, w, z, r, 0), cols);
  return out.done();
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
  for (size_t i = 0; i < tms.size();) {
    // Two or more row-moving TMs in a row: one pass.
    size_t j = i;
    while (j < tms.size() && movesRows(tms[j])) ++j;
    if (j - i >= 2) {
      const std::span<const netlist::Tm> chain(tms.data() + i, j - i);
      in = applyRowMoves(in, chain);
      if (carrier) carrier = applyRowMoves(*carrier, chain);
      i = j;
      continue;
    }
    in = applyTm(in, tms[i]);
    if (carrier) carrier = applyTm(*carrier, tms[i]);
    ++i;
  }
  if (carrier) {
    in.rawBits.resize(carrier->data.size());
    std::memcpy(in.rawBits.data(), carrier->data.data(), carrier->data.size() * sizeof(uint32_t));
  }
  return in;
}

Tensor unpackedOperand(Tensor in, const netlist::Operand& operand, std::optional<netlist::DataFormat> inDf,
                       bool& rounded) {
  rounded = inDf && netlist::isBfpFormat(*inDf) &&
            std::any_of(operand.tms.begin(), operand.tms.end(),
                        [](const netlist::Tm& tm) { return tm.kind == netlist::TmKind::Transpose; });
  if (operand.unpad) in = unpadTiles(in, *operand.unpad);
  if (!rounded) {
    in = applyTms(std::move(in), operand.tms);
    if (operand.pad) return padTiles(in, *operand.pad);
    return in; // moved, not copied (a ?: with `in` would copy)
  }
  // A padded tile is one value throughout: its blocks round like the value alone.
  const auto roundedPad = [&](netlist::Pad pad) {
    pad.padValue = formats::roundToFormat(*inDf, static_cast<float>(pad.padValue));
    return pad;
  };
  try {
    formats::quantize(*inDf, in);
  } catch (const std::invalid_argument& e) {
    throw GoldenError(e.what());
  }
  std::vector<netlist::Tm> tms = operand.tms;
  for (netlist::Tm& tm : tms)
    if (tm.kind == netlist::TmKind::Pad) tm.pad = roundedPad(tm.pad);
  in = applyTms(std::move(in), tms);
  if (operand.pad) return padTiles(in, roundedPad(*operand.pad));
  return in;
}

} // namespace tessera::golden
