// Special ops of the reference model. Each follows what BUDA's own golden
// model does for the op (docs/golden-special-ops.md): splice copies t slices
// or ublocks in [index, length, stride] rounds, depthwise is a matmul of
// diagonal blocks, embedding gathers table rows, tilizer copies the values through dest,
// topk runs the device's bitonic network, the quantization family computes
// x*scale+zp and (x-zp)*scale, and sparse matmul walks the strip encoding.
#include "golden/special_ops.hpp"

#include "formats/formats.hpp"
#include "golden/gemm.hpp"
#include "golden/product.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace tessera::golden {
namespace {

using netlist::OpAttributes;
using netlist::UblockOrder;

constexpr int64_t kTile = formats::kTileDim;

std::string str(int64_t v) { return std::to_string(v); }

std::string shapeText(const Tensor& t) {
  return "[w=" + str(t.w) + ", z=" + str(t.z) + ", " + str(t.r) + "x" + str(t.c) + "]";
}

// Same wording as ops.cpp so the loader's diagnostics read alike.
[[noreturn]] void fail(const OpSpec& spec, const std::string& message) {
  throw GoldenError("op '" + spec.name + "' (" + spec.type + "): " + message);
}

const OpAttributes& attrsOf(const OpSpec& spec) {
  static const OpAttributes kNone;
  return spec.attrs ? *spec.attrs : kNone;
}

// formats::quantize reports misuse with std::invalid_argument; callers of the
// model expect GoldenError only.
void roundTo(const OpSpec& spec, DataFormat df, Tensor& t) {
  try {
    formats::quantize(df, t);
  } catch (const std::invalid_argument& e) {
    fail(spec, e.what());
  }
}

// Copies of the inputs as the unpacker delivers them (rounded to in_df), after
// the checks every op here relies on. evalOp rounds too; rounding is idempotent
// and fused-op callers may not have rounded.
std::vector<Tensor> unpacked(const OpSpec& spec, std::span<const Tensor> inputs, size_t minCount, size_t maxCount) {
  if (inputs.size() < minCount || inputs.size() > maxCount) {
    const std::string want = minCount == maxCount ? str(static_cast<int64_t>(minCount))
                                                  : str(static_cast<int64_t>(minCount)) + " or " +
                                                        str(static_cast<int64_t>(maxCount));
    fail(spec, "needs " + want + " input(s), got " + str(static_cast<int64_t>(inputs.size())));
  }
  std::vector<Tensor> out(inputs.begin(), inputs.end());
  for (size_t i = 0; i < out.size(); ++i) {
    const Tensor& t = out[i];
    if (t.w != out[0].w)
      fail(spec, "inputs disagree on the number of entries: " + shapeText(out[0]) + " vs " + shapeText(t));
    if (t.r % kTile != 0 || t.c % kTile != 0) fail(spec, "input " + shapeText(t) + " is not whole tiles");
    if (spec.roundsInput(i)) roundTo(spec, spec.inDf[i], out[i]);
  }
  return out;
}

// unpacked() without copying inputs that are already in their in_df (the
// usual case: evalOp rounded them): view[i] is inputs[i] or its rounded copy.
struct UnpackedView {
  std::vector<Tensor> copies;
  std::vector<const Tensor*> view;
};
UnpackedView unpackedView(const OpSpec& spec, std::span<const Tensor> inputs, size_t minCount, size_t maxCount,
                          bool alreadyRounded = false) {
  if (inputs.size() < minCount || inputs.size() > maxCount) {
    const std::string want = minCount == maxCount ? str(static_cast<int64_t>(minCount))
                                                  : str(static_cast<int64_t>(minCount)) + " or " +
                                                        str(static_cast<int64_t>(maxCount));
    fail(spec, "needs " + want + " input(s), got " + str(static_cast<int64_t>(inputs.size())));
  }
  UnpackedView u;
  u.copies.reserve(inputs.size()); // pointers into it stay valid
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (t.w != inputs[0].w)
      fail(spec, "inputs disagree on the number of entries: " + shapeText(inputs[0]) + " vs " + shapeText(t));
    if (t.r % kTile != 0 || t.c % kTile != 0) fail(spec, "input " + shapeText(t) + " is not whole tiles");
    bool changes = false;
    if (spec.roundsInput(i) && !alreadyRounded) {
      try {
        changes = !detail::representable(spec.inDf[i], t.data);
      } catch (const GoldenError& e) {
        fail(spec, e.what());
      }
    }
    if (changes) {
      u.copies.push_back(t);
      roundTo(spec, spec.inDf[i], u.copies.back());
      u.view.push_back(&u.copies.back());
    } else {
      u.view.push_back(&t);
    }
  }
  return u;
}

void packOutput(const OpSpec& spec, Tensor& out) {
  if (spec.roundOutput) roundTo(spec, spec.outDf, out);
}

// Ops whose output shape follows from their inputs: it must be the blocking's.
void checkOutputShape(const OpSpec& spec, int64_t z, int64_t r, int64_t c) {
  if (z != spec.t || r != spec.rowTiles() * kTile || c != spec.colTiles() * kTile)
    fail(spec, "the inputs give an output of t=" + str(z) + ", " + str(r) + "x" + str(c) + ", the op's blocking is t=" +
                   str(spec.t) + ", " + str(spec.rowTiles() * kTile) + "x" + str(spec.colTiles() * kTile));
}

void copyTile(const Tensor& src, int64_t w, int64_t z, int64_t rt, int64_t ct, Tensor& dst, int64_t dz, int64_t drt,
              int64_t dct) {
  for (int64_t i = 0; i < kTile; ++i)
    std::copy_n(&src.data[src.index(w, z, rt * kTile + i, ct * kTile)], kTile,
                &dst.data[dst.index(w, dz, drt * kTile + i, dct * kTile)]);
}

// Values of a block of tiles in tile order (t slices, tile rows, tile columns,
// then each tile row-major): how BUDA flattens raw formats ("megarow").
template <class T>
std::vector<T> tileMajor(const Tensor& shape, std::span<const T> values, int64_t w, int64_t rt0, int64_t rts,
                         int64_t ct0, int64_t cts) {
  std::vector<T> out;
  out.reserve(static_cast<size_t>(shape.z * rts * cts * kTile * kTile));
  for (int64_t z = 0; z < shape.z; ++z)
    for (int64_t rt = rt0; rt < rt0 + rts; ++rt)
      for (int64_t ct = ct0; ct < ct0 + cts; ++ct)
        for (int64_t i = 0; i < kTile; ++i) {
          const size_t at = shape.index(w, z, rt * kTile + i, ct * kTile);
          out.insert(out.end(), values.begin() + static_cast<std::ptrdiff_t>(at),
                     values.begin() + static_cast<std::ptrdiff_t>(at + kTile));
        }
  return out;
}

// A matmul spec that reuses the matmul model's numerics (fidelity phases,
// integer exactness, intermediate rounding between m_k blocks) for the tile
// products of depthwise and sparse matmul. The result stays unrounded.
struct MatmulPart {
  OpAttributes attrs;
  OpSpec spec;

  MatmulPart(const OpSpec& op, int64_t t, int64_t rowTiles, int64_t mK, int64_t uKt) {
    const SourceLoc here = attrsOf(op).loc.valid() ? attrsOf(op).loc : SourceLoc{1, 1};
    attrs.loc = here;
    attrs.mK.set(mK, here);
    attrs.uKt.set(uKt, here);
    spec.name = op.name;
    spec.type = "matmul";
    spec.attrs = &attrs;
    spec.t = t;
    spec.mblock = {rowTiles, 1};
    spec.inDf.assign(op.inDf.begin(), op.inDf.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(2, op.inDf.size())));
    spec.inputRounded.assign(op.inputRounded.begin(),
                             op.inputRounded.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(2, op.inputRounded.size())));
    spec.outDf = op.outDf;
    spec.accDf = op.accDf;
    spec.intermedDf = op.intermedDf;
    spec.fidelity = op.fidelity;
    spec.arch = op.arch;
    spec.roundOutput = false;
  }
  MatmulPart(const MatmulPart&) = delete; // spec points into attrs
  MatmulPart& operator=(const MatmulPart&) = delete;
};

// Dest holds the accumulation in its format (destFormatOf(acc_df)) before
// the packer converts to out_df.
void packMatmulOutput(const OpSpec& spec, Tensor& out) {
  if (!spec.roundOutput) return;
  roundTo(spec, destFormatOf(spec.accDf), out);
  roundTo(spec, spec.outDf, out);
}

// ======================================================================== splice
struct SpliceRange {
  int64_t index = 0, length = 0, stride = 0;
};

std::string rangeText(size_t input, const SpliceRange& r) {
  return "input" + str(static_cast<int64_t>(input)) + " [index " + str(r.index) + ", length " + str(r.length) +
         ", stride " + str(r.stride) + "]";
}

std::vector<SpliceRange> spliceRanges(const OpSpec& spec, size_t inputCount) {
  const auto& given = attrsOf(spec).spliceInputs;
  for (const auto& [input, values] : given)
    if (input < 0 || static_cast<size_t>(input) >= inputCount)
      fail(spec, "attribute input" + str(input) + " names no input (the op has " +
                     str(static_cast<int64_t>(inputCount)) + ")");
  std::vector<SpliceRange> ranges;
  for (size_t i = 0; i < inputCount; ++i) {
    const auto it = given.find(static_cast<int>(i));
    if (it == given.end() || it->second.size() != 3)
      fail(spec, "needs attribute input" + str(static_cast<int64_t>(i)) + ": [index, length, stride]");
    const SpliceRange r{it->second[0], it->second[1], it->second[2]};
    if (r.index < 0 || r.length <= 0 || r.stride <= 0)
      fail(spec, rangeText(i, r) + ": index must be >= 0, length and stride > 0");
    ranges.push_back(r);
  }
  return ranges;
}

// BUDA's golden checks these so that each round drops `index` units, takes
// `length` and skips to `index + stride`, consuming every input whole.
void checkSpliceRange(const OpSpec& spec, size_t input, const SpliceRange& r, int64_t limit, const std::string& unit) {
  const std::string where = rangeText(input, r) + " over " + str(limit) + " " + unit + "s: ";
  if (r.index >= limit) fail(spec, where + "index must be below the count");
  if (r.index + r.length > limit) fail(spec, where + "index + length must not exceed the count");
  if (r.index + r.stride > limit) fail(spec, where + "index + stride must not exceed the count");
  if (limit % (r.index + r.stride) != 0) fail(spec, where + "index + stride must divide the count");
  if (r.stride < r.length) fail(spec, where + "stride must be >= length");
}

enum class SpliceMode { Ublock, T };

SpliceMode spliceMode(const OpSpec& spec) {
  const auto& g = attrsOf(spec).granularity;
  if (!g.present() || g.value == "ublock") return SpliceMode::Ublock;
  if (g.value == "t") return SpliceMode::T;
  fail(spec, "splice granularity must be 'ublock' (the default) or 't', got '" + g.value + "'");
}

[[noreturn]] void spliceOverrun(const OpSpec& spec, size_t input, const std::string& what) {
  fail(spec, "input" + str(static_cast<int64_t>(input)) + "'s round runs past the output's " + what +
                 " (the rounds must fill it exactly)");
}

[[noreturn]] void spliceLeftover(const OpSpec& spec, size_t input, int64_t used, int64_t limit, const std::string& unit) {
  fail(spec, "input" + str(static_cast<int64_t>(input)) + ": the rounds consume " + str(used) + " of its " + str(limit) +
                 " " + unit + "s; BUDA requires all of them (its input stream would hang)");
}

[[noreturn]] void spliceInputOverrun(const OpSpec& spec, size_t input, int64_t limit, const std::string& unit) {
  fail(spec, "input" + str(static_cast<int64_t>(input)) + "'s rounds run past its " + str(limit) + " " + unit +
                 "s before the output is full");
}

Tensor spliceT(const OpSpec& spec, const std::vector<Tensor>& in, const std::vector<SpliceRange>& ranges) {
  const int64_t rows = spec.rowTiles() * kTile, cols = spec.colTiles() * kTile;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].r != rows || in[i].c != cols)
      fail(spec, "t granularity needs every input to have the output's " + str(rows) + "x" + str(cols) + " values, input" +
                     str(static_cast<int64_t>(i)) + " is " + shapeText(in[i]));
    checkSpliceRange(spec, i, ranges[i], in[i].z, "t slice");
  }
  const int64_t w = in[0].w;
  const size_t plane = static_cast<size_t>(rows * cols);
  Tensor out(w, spec.t, rows, cols);
  for (int64_t wi = 0; wi < w; ++wi) {
    int64_t outZ = 0;
    std::vector<int64_t> next(in.size(), 0);
    while (outZ < spec.t) {
      for (size_t i = 0; i < in.size(); ++i) {
        const SpliceRange& r = ranges[i];
        next[i] += r.index;
        for (int64_t l = 0; l < r.length; ++l) {
          if (outZ + l >= spec.t) spliceOverrun(spec, i, "t=" + str(spec.t));
          if (next[i] + l >= in[i].z) spliceInputOverrun(spec, i, in[i].z, "t slice");
          std::copy_n(in[i].matrix(wi, next[i] + l), plane, out.matrix(wi, outZ + l));
        }
        next[i] += r.stride;
        outZ += r.length;
      }
    }
    for (size_t i = 0; i < in.size(); ++i)
      if (next[i] != in[i].z) spliceLeftover(spec, i, next[i], in[i].z, "t slice");
  }
  return out;
}

// Tile offset of the ublock at `offset` in an mblock walked in `order`.
std::pair<int64_t, int64_t> ublockOrigin(netlist::Dim2 mblock, netlist::Dim2 ublock, UblockOrder order, int64_t offset) {
  const int64_t r = order == UblockOrder::R ? offset / mblock.c : offset % mblock.r;
  const int64_t c = order == UblockOrder::R ? offset % mblock.c : offset / mblock.r;
  return {r * ublock.r, c * ublock.c};
}

Tensor spliceUblock(const OpSpec& spec, const std::vector<Tensor>& in, const std::vector<SpliceRange>& ranges,
                    UblockOrder order) {
  const netlist::Dim2 grid = spec.grid, ub = spec.ublock, outMb = spec.mblock;
  if (grid.r < 1 || grid.c < 1 || ub.r < 1 || ub.c < 1 || outMb.r < 1 || outMb.c < 1)
    fail(spec, "grid, mblock and ublock must be positive");

  // Each core splices its own share of every input, seen in the op's ublocks.
  std::vector<netlist::Dim2> inMb(in.size()), perCore(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const std::string name = "input" + str(static_cast<int64_t>(i));
    if (in[i].z != spec.t)
      fail(spec, "ublock granularity keeps t: " + name + " has t=" + str(in[i].z) + ", the op t=" + str(spec.t));
    const int64_t rt = in[i].r / kTile, ct = in[i].c / kTile;
    if (rt % grid.r != 0 || ct % grid.c != 0)
      fail(spec, name + " (" + str(rt) + "x" + str(ct) + " tiles) does not split evenly over the " + str(grid.r) + "x" +
                     str(grid.c) + " grid");
    perCore[i] = {rt / grid.r, ct / grid.c};
    if (perCore[i].r % ub.r != 0 || perCore[i].c % ub.c != 0)
      fail(spec, name + "'s per-core block of " + str(perCore[i].r) + "x" + str(perCore[i].c) +
                     " tiles is not whole " + str(ub.r) + "x" + str(ub.c) + " ublocks");
    inMb[i] = {perCore[i].r / ub.r, perCore[i].c / ub.c};
    checkSpliceRange(spec, i, ranges[i], inMb[i].r * inMb[i].c, "ublock");
  }

  const int64_t outVol = outMb.r * outMb.c;
  const int64_t coreRows = outMb.r * ub.r, coreCols = outMb.c * ub.c;
  const int64_t w = in[0].w;
  Tensor out(w, spec.t, spec.rowTiles() * kTile, spec.colTiles() * kTile);
  for (int64_t wi = 0; wi < w; ++wi)
    for (int64_t z = 0; z < spec.t; ++z)
      for (int64_t cr = 0; cr < grid.r; ++cr)
        for (int64_t cc = 0; cc < grid.c; ++cc) {
          int64_t outUb = 0;
          std::vector<int64_t> next(in.size(), 0);
          while (outUb < outVol) {
            for (size_t i = 0; i < in.size(); ++i) {
              const SpliceRange& r = ranges[i];
              const int64_t limit = inMb[i].r * inMb[i].c;
              next[i] += r.index;
              for (int64_t l = 0; l < r.length; ++l) {
                if (outUb + l >= outVol) spliceOverrun(spec, i, "mblock of " + str(outVol) + " ublocks");
                if (next[i] + l >= limit) spliceInputOverrun(spec, i, limit, "ublock");
                const auto [sr, sc] = ublockOrigin(inMb[i], ub, order, next[i] + l);
                const auto [dr, dc] = ublockOrigin(outMb, ub, order, outUb + l);
                for (int64_t a = 0; a < ub.r; ++a)
                  for (int64_t b = 0; b < ub.c; ++b)
                    copyTile(in[i], wi, z, cr * perCore[i].r + sr + a, cc * perCore[i].c + sc + b, out, z,
                             cr * coreRows + dr + a, cc * coreCols + dc + b);
              }
              next[i] += r.stride;
              outUb += r.length;
            }
          }
          for (size_t i = 0; i < in.size(); ++i)
            if (next[i] != inMb[i].r * inMb[i].c) spliceLeftover(spec, i, next[i], inMb[i].r * inMb[i].c, "ublock");
        }
  return out;
}

Tensor splice(const OpSpec& spec, std::span<const Tensor> inputs, UblockOrder order) {
  std::vector<Tensor> in = unpacked(spec, inputs, 1, std::max<size_t>(1, inputs.size()));
  const std::vector<SpliceRange> ranges = spliceRanges(spec, in.size());
  Tensor out = spliceMode(spec) == SpliceMode::T ? spliceT(spec, in, ranges) : spliceUblock(spec, in, ranges, order);
  packOutput(spec, out);
  return out;
}

// ======================================================================== topk
struct Entry {
  float value = 0.0f;
  float index = 0.0f;
};

// One compare-exchange of the device network. Equal values still swap when
// both are negative (descending) or both non-negative (ascending), which moves
// their indices; forceSwap undoes/reverses the result as the device does for
// some k >= 64 phases.
void compareExchange(std::vector<Entry>& a, size_t lo, size_t hi, bool descending, bool forceSwap) {
  const float l = a[lo].value, h = a[hi].value;
  const bool swap = descending ? (h > l || (h == l && h < 0.0f && l < 0.0f)) : (h < l || (h == l && h >= 0.0f && l >= 0.0f));
  if (swap != forceSwap) std::swap(a[lo], a[hi]);
}

// Bitonic merge of a[base, base+len) with halving compare distances.
void bitonicMerge(std::vector<Entry>& a, size_t base, size_t len, bool descending, bool forceSwap) {
  for (size_t dist = len / 2; dist >= 1; dist /= 2)
    for (size_t start = base; start < base + len; start += 2 * dist)
      for (size_t j = 0; j < dist; ++j) compareExchange(a, start + j, start + j + dist, descending, forceSwap);
}

// BUDA's topk network over one core's row: sort k-sequences in alternating
// directions (kreduce inputs arrive sorted; k > 16 re-sorts them), then merge
// pairs of sequences keeping the larger halves until one sequence is left.
void topkNetwork(std::vector<Entry>& a, size_t k, bool kreduce) {
  const size_t n = a.size();
  if (!kreduce) {
    for (size_t len = 2, phase = 0; len <= k; len *= 2, ++phase) {
      bool descending = true;
      for (size_t base = 0; base < n; base += len) {
        const bool force = k >= 64 && phase >= 3 && phase < 5 && base % 128 >= 64;
        bitonicMerge(a, base, len, descending, force);
        descending = !descending;
      }
    }
  } else if (k > 16) {
    bool descending = true;
    for (size_t base = 0; base < n; base += k) {
      bitonicMerge(a, base, k, descending, false);
      descending = !descending;
    }
  }
  size_t sequences = n / k;
  for (size_t dist = k; sequences > 1; dist *= 2) {
    for (size_t i = 0; i < sequences / 2; ++i)
      for (size_t j = 0; j < k; ++j) compareExchange(a, i * 2 * dist + j, i * 2 * dist + j + dist, true, false);
    sequences /= 2;
    bool descending = true;
    for (size_t s = 0; s < sequences; ++s) {
      bitonicMerge(a, s * 2 * dist, k, descending, false);
      descending = !descending;
    }
  }
}

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// ======================================================================== quantization
float zeroPointOf(const OpSpec& spec) {
  const auto& zp = attrsOf(spec).zeroPoint;
  return zp.present() ? static_cast<float>(zp.value) : 0.0f;
}

// quantization and requantization: x * scale + zero_point, packed as Int8.
Tensor scaleAndShift(const OpSpec& spec, std::span<const Tensor> inputs) {
  std::vector<Tensor> in = unpacked(spec, inputs, 2, 2);
  const Tensor& value = in[0];
  const Tensor& scale = in[1];
  if (!value.sameShape(scale)) fail(spec, "input shapes differ: " + shapeText(value) + " vs " + shapeText(scale));
  checkOutputShape(spec, value.z, value.r, value.c);
  const float zp = zeroPointOf(spec);
  Tensor out = value;
  for (size_t i = 0; i < out.data.size(); ++i) {
    const float product = value.data[i] * scale.data[i];
    out.data[i] = product + zp;
  }
  // Inside fused ops BUDA still rounds these results to Int8 in dest.
  roundTo(spec, spec.roundOutput ? spec.outDf : DataFormat::Int8, out);
  return out;
}

// ======================================================================== sparse matmul
// Bit width BUDA gives u_kt in the tile index: at least 1.
int bitWidth(int64_t v) {
  int bits = 1;
  while (((v - 1) >> bits) > 0) ++bits;
  return bits;
}

struct TileRef {
  int64_t z, rt, ct;
};

// The encoding's bit fields, from the attributes, with BUDA's defaults:
// sparse_tile_ptr_bits absent is 0 (tt_op_attributes' default; older netlists
// such as op_tests/pytorch_bin/matmul_ident omit it), sparse_ublock_idx_bits
// absent or <= 0 is sparse_tile_ptr_bits (netlist_utils' create_op). Checked
// before any encoding word is read, with BUDA golden's capacity checks.
struct SparseFields {
  int64_t fracture = 1, uKt = 1;
  int ptrBits = 0, ublockIdxBits = 0, innerDBits = 1, tileIndexBits = 16;
};

SparseFields sparseFields(const OpSpec& spec) {
  const OpAttributes& attrs = attrsOf(spec);
  SparseFields f;
  f.fracture = attrs.fractureFactor.present() ? attrs.fractureFactor.value : 1;
  const int64_t ptrBits = attrs.sparseTilePtrBits.present() ? attrs.sparseTilePtrBits.value : 0;
  if (ptrBits < 0 || ptrBits > 15) fail(spec, "sparse_tile_ptr_bits must be in 0..15, got " + str(ptrBits));
  if (!attrs.uKt.present() || attrs.uKt.value < 1) fail(spec, "sparse matmul needs u_kt >= 1");
  const bool ownUblockBits = attrs.sparseUblockIdxBits.present() && attrs.sparseUblockIdxBits.value > 0;
  if (ownUblockBits && attrs.sparseUblockIdxBits.value > 15) fail(spec, "sparse_ublock_idx_bits must be below 16");
  f.ptrBits = static_cast<int>(ptrBits);
  f.ublockIdxBits = ownUblockBits ? static_cast<int>(attrs.sparseUblockIdxBits.value) : f.ptrBits;
  f.uKt = attrs.uKt.value;
  f.innerDBits = bitWidth(f.uKt);
  f.tileIndexBits = 16 - f.ptrBits;
  const int innerRBits = f.tileIndexBits - f.innerDBits;
  if (innerRBits < 0 || (int64_t{1} << innerRBits) < spec.ublock.r)
    fail(spec, "16 - sparse_tile_ptr_bits leaves too few bits for ublock rows and u_kt in the tile index");
  if ((int64_t{1} << f.ublockIdxBits) < spec.mblock.r) {
    const std::string from = ownUblockBits                       ? "sparse_ublock_idx_bits " + str(f.ublockIdxBits)
                             : attrs.sparseTilePtrBits.present() ? "sparse_ublock_idx_bits (absent: sparse_tile_ptr_bits " +
                                                                       str(f.ptrBits) + ")"
                                                                 : "sparse_ublock_idx_bits (absent: sparse_tile_ptr_bits, "
                                                                   "absent: 0, as in BUDA)";
    fail(spec, from + " can index " + str(int64_t{1} << f.ublockIdxBits) + " ublock row(s), the mblock has " +
                   str(spec.mblock.r));
  }
  if (f.fracture < 1 || spec.grid.c % f.fracture != 0)
    fail(spec, "fracture_factor " + str(f.fracture) + " must divide the grid's " + str(spec.grid.c) + " columns");
  return f;
}

Tensor sparseMatmul(const OpSpec& spec, std::span<const Tensor* const> in, std::span<const uint32_t> codes) {
  const OpAttributes& attrs = attrsOf(spec);
  const Tensor& sparse = *in[0];
  const Tensor& act = *in[1];
  const Tensor& enc = *in[2];
  if (codes.size() != enc.data.size())
    fail(spec, "got " + str(static_cast<int64_t>(codes.size())) + " encoding codes for the encoding input " +
                   shapeText(enc));

  const SparseFields fields = sparseFields(spec);
  const int64_t fracture = fields.fracture, uKt = fields.uKt;
  const int ublockIdxBits = fields.ublockIdxBits, innerDBits = fields.innerDBits;
  const int tileIndexBits = fields.tileIndexBits, tilesInUblockBits = 16 - ublockIdxBits;
  const netlist::Dim2 grid = spec.grid, inner = spec.ublock, outer = spec.mblock;

  const int64_t sRt = sparse.r / kTile, sCt = sparse.c / kTile, eRt = enc.r / kTile, eCt = enc.c / kTile;
  const int64_t aCt = act.c / kTile, aRt = act.r / kTile;
  if (sRt % grid.r != 0 || sCt % fracture != 0)
    fail(spec, "sparse input " + shapeText(sparse) + " does not split over grid rows and fracture_factor");
  if (eRt % grid.r != 0 || eCt % fracture != 0)
    fail(spec, "encoding input " + shapeText(enc) + " does not split over grid rows and fracture_factor");
  if (aCt % grid.c != 0) fail(spec, "activations " + shapeText(act) + " do not split over the grid's columns");
  const int64_t sRtCore = sRt / grid.r, sCtCore = sCt / fracture, eRtCore = eRt / grid.r, eCtCore = eCt / fracture;
  const int64_t aCtCore = aCt / grid.c;
  const int64_t coresPerFracture = grid.c / fracture;
  const int64_t outRowsCore = outer.r * inner.r, outColsCore = outer.c * inner.c;

  const uint16_t ublockMask = static_cast<uint16_t>((1u << ublockIdxBits) - 1);
  const uint16_t tileIndexMask = static_cast<uint16_t>((1u << tileIndexBits) - 1);
  const uint16_t innerDMask = static_cast<uint16_t>((1u << innerDBits) - 1);
  constexpr size_t kTileHalves = 2 * formats::kTileValues; // one encoding tile in 16-bit units

  // The tile products' operands, as the matmul model forms them (integer
  // inputs or intermediates make the product exact).
  bool integer = netlist::isIntegerFormat(spec.intermedDf);
  for (size_t i = 0; i < 2 && i < spec.inDf.size(); ++i) integer = integer || netlist::isIntegerFormat(spec.inDf[i]);
  detail::ProductTerms terms(spec.fidelity, integer);
  std::vector<float> lhs, rhs, tile(static_cast<size_t>(kTile * kTile));
  const DataFormat dest = destFormatOf(spec.accDf);
  const bool perTile = spec.roundOutput && !integer && dest != DataFormat::Float32;

  Tensor out(sparse.w, spec.t, spec.rowTiles() * kTile, spec.colTiles() * kTile);
  for (int64_t w = 0; w < sparse.w; ++w)
    for (int64_t cr = 0; cr < grid.r; ++cr)
      for (int64_t cc = 0; cc < grid.c; ++cc) {
        const int64_t f = cc / coresPerFracture;
        const std::vector<uint32_t> words =
            tileMajor<uint32_t>(enc, codes, w, cr * eRtCore, eRtCore, f * eCtCore, eCtCore);
        const size_t halves = 2 * words.size();
        // The encoding is read as little-endian 16-bit fields.
        auto half = [&](size_t i) -> uint16_t {
          if (i >= halves)
            fail(spec, "the encoding of core (" + str(cr) + ", " + str(cc) + ") ends before all " + str(spec.t) +
                           " output t slices are complete");
          const uint32_t word = words[i / 2];
          return static_cast<uint16_t>(i % 2 == 0 ? word & 0xFFFFu : word >> 16);
        };

        // Products per output tile (z, row, col), in encoding order.
        std::map<std::tuple<int64_t, int64_t, int64_t>, std::vector<std::pair<TileRef, TileRef>>> products;
        size_t base = 0, tileBase = 0;
        int64_t batch = 0;
        while (batch < spec.t) {
          const uint16_t enc0 = half(base), enc1 = half(base + 1), nzUblocks = half(base + 2);
          const size_t idx0 = base + 3;
          const uint32_t strip = ((uint32_t{enc1} << 16) | enc0) & ((1u << 30) - 1);
          const bool lastInRow = (enc1 & (1u << 14)) != 0;
          const bool lastInTile = (enc1 & (1u << 15)) != 0;
          auto tilesOf = [&](uint16_t header) {
            const size_t tiles = header >> ublockIdxBits;
            return tiles != 0 ? tiles : size_t{1} << tilesInUblockBits;
          };
          size_t indexHalves = 0;
          for (unsigned u = 0; u < nzUblocks; ++u) indexHalves += tilesOf(half(idx0 + indexHalves)) + 1;

          size_t cur = 0;
          unsigned seen = 0;
          for (int64_t outR = 0; outR < outer.r; ++outR) {
            const size_t ublockStart = cur;
            if (seen >= nzUblocks) continue;
            if ((half(idx0 + cur) & ublockMask) != outR) continue; // zero ublock: no entry
            ++seen;
            for (int64_t outC = 0; outC < outer.c; ++outC) {
              cur = ublockStart;
              const size_t tiles = tilesOf(half(idx0 + cur++));
              const size_t first = cur;
              bool exhausted = false;
              for (int64_t inR = 0; inR < inner.r; ++inR)
                for (int64_t inD = 0; inD < uKt; ++inD) {
                  if (exhausted) continue;
                  const uint16_t entry = half(idx0 + cur);
                  const uint16_t local = entry & tileIndexMask;
                  if ((local >> innerDBits) * uKt + (local & innerDMask) != inR * uKt + inD) continue;
                  ++cur;
                  const int64_t sparseIndex = entry >> tileIndexBits;
                  if (sparseIndex >= sCtCore)
                    fail(spec, "encoding names sparse tile " + str(sparseIndex) + ", the core's sparse input has " +
                                   str(sCtCore));
                  const int64_t actRow = static_cast<int64_t>(strip) * uKt + inD;
                  const int64_t actZ = actRow / aRt;
                  if (actZ >= act.z)
                    fail(spec, "strip " + str(strip) + " reads activation tile row " + str(actRow) +
                                   ", beyond the activations " + shapeText(act));
                  for (int64_t inC = 0; inC < inner.c; ++inC) {
                    const TileRef s{0, cr * sRtCore, f * sCtCore + sparseIndex};
                    const TileRef a{actZ, actRow % aRt, cc * aCtCore + outC * inner.c + inC};
                    products[{batch, cr * outRowsCore + outR * inner.r + inR,
                              cc * outColsCore + outC * inner.c + inC}]
                        .push_back({s, a});
                  }
                  if (cur - first == tiles) exhausted = true;
                }
            }
          }

          size_t next = idx0 + indexHalves;
          if (lastInTile) {
            tileBase += kTileHalves;
            next = tileBase;
          }
          if (next <= base) fail(spec, "the encoding's strips do not advance (malformed encoding)");
          base = next;
          batch += lastInRow ? 1 : 0;
        }

        // Each output tile is one matmul of its sparse tiles (a row, input0
        // of the product: srcB) by the matching activation tiles (a column,
        // input1: srcA), in one block of n tiles: the product the matmul
        // model computes for m_k 1, u_kt n. With a 16-bit dest the device
        // adds one tile product per MATMUL and rounds dest after each, in
        // encoding order: so does this (gemmTilesRounded, the dense matmul's
        // per-tile kernel). Between strips the kernel spills partial sums in
        // the dest format (docs/net2hlks.md), which reloads them exactly, so
        // a strip boundary rounds nothing. A Float32 dest: one float32 sum.
        for (const auto& [key, list] : products) {
          const auto [z, rt, ct] = key;
          const int64_t n = static_cast<int64_t>(list.size());
          lhs.resize(static_cast<size_t>(kTile * n * kTile));
          rhs.resize(static_cast<size_t>(n * kTile * kTile));
          for (int64_t k = 0; k < n; ++k) {
            const auto& [s, a] = list[static_cast<size_t>(k)];
            for (int64_t i = 0; i < kTile; ++i) {
              std::copy_n(&sparse.data[sparse.index(w, s.z, s.rt * kTile + i, s.ct * kTile)], kTile,
                          &lhs[static_cast<size_t>(i * n * kTile + k * kTile)]);
              std::copy_n(&act.data[act.index(w, a.z, a.rt * kTile + i, a.ct * kTile)], kTile,
                          &rhs[static_cast<size_t>((k * kTile + i) * kTile)]);
            }
          }
          std::fill(tile.begin(), tile.end(), 0.0f);
          const auto pairs = terms.slice(lhs.data(), lhs.size(), rhs.data(), rhs.size());
          if (perTile) {
            GemmTerm all[2];
            size_t count = 0;
            for (const auto& [l, r] : pairs) all[count++] = {l, r};
            gemmTilesRounded(tile.data(), kTile, kTile, std::span<const GemmTerm>(all, count), n * kTile, kTile, n, dest);
          } else {
            for (const auto& [l, r] : pairs) gemmAccumulate(tile.data(), l, n * kTile, r, kTile, kTile, n * kTile, kTile);
          }
          for (int64_t i = 0; i < kTile; ++i)
            for (int64_t j = 0; j < kTile; ++j)
              out.at(w, z, rt * kTile + i, ct * kTile + j) += tile[static_cast<size_t>(i * kTile + j)];
        }
      }

  if (attrs.bias.value) {
    const Tensor& bias = *in[3];
    if (!bias.sameShape(out)) fail(spec, "bias " + shapeText(bias) + " must match the output " + shapeText(out));
    for (size_t i = 0; i < out.data.size(); ++i) out.data[i] += bias.data[i];
  }
  packMatmulOutput(spec, out);
  return out;
}

} // namespace

// ======================================================================== public API
Tensor evalSplice(const OpSpec& spec, std::span<const Tensor> inputs) { return splice(spec, inputs, spec.ublockOrder); }

Tensor evalSplice(const OpSpec& spec, std::span<const Tensor> inputs, UblockOrder order) {
  return splice(spec, inputs, order);
}

Tensor evalDepthwise(const OpSpec& spec, std::span<const Tensor> inputs) {
  const OpAttributes& attrs = attrsOf(spec);
  const bool bias = attrs.bias.value;
  std::vector<Tensor> in = unpacked(spec, inputs, bias ? 3 : 2, bias ? 3 : 2);
  if (!attrs.mK.present() || attrs.mK.value < 1) fail(spec, "depthwise needs m_k >= 1 (its number of blocks)");
  if (attrs.uKt.present() && attrs.uKt.value != 1) fail(spec, "depthwise needs u_kt = 1, got " + str(attrs.uKt.value));
  const int64_t mK = attrs.mK.value;
  const Tensor& a = in[0];
  const Tensor& b = in[1];
  const int64_t aCt = a.c / kTile, aRt = a.r / kTile;
  if (aCt % mK != 0) fail(spec, "input0 has " + str(aCt) + " tile columns, not a multiple of m_k=" + str(mK));
  const int64_t outCt = aCt / mK;
  if (b.z != a.z || b.r != mK * kTile || b.c != outCt * kTile)
    fail(spec, "input1 must be m_k x (input0 tile columns / m_k) = " + str(mK) + "x" + str(outCt) +
                   " tiles with input0's t, got " + shapeText(b));
  checkOutputShape(spec, a.z, a.r, outCt * kTile);

  // Output tile column c sums input0 tile column c + b*outCt times input1 tile
  // (b, c) over the m_k blocks: a matmul of m_k blocks with u_kt = 1.
  Tensor out(a.w, a.z, a.r, outCt * kTile);
  const MatmulPart part(spec, a.z, aRt, mK, 1);
  for (int64_t c = 0; c < outCt; ++c) {
    Tensor pair[] = {Tensor(a.w, a.z, a.r, mK * kTile), Tensor(a.w, a.z, mK * kTile, kTile)};
    for (int64_t w = 0; w < a.w; ++w)
      for (int64_t z = 0; z < a.z; ++z)
        for (int64_t blk = 0; blk < mK; ++blk) {
          for (int64_t rt = 0; rt < aRt; ++rt) copyTile(a, w, z, rt, c + blk * outCt, pair[0], z, rt, blk);
          copyTile(b, w, z, blk, c, pair[1], z, blk, 0);
        }
    const Tensor column = evalOp(part.spec, pair);
    for (int64_t w = 0; w < a.w; ++w)
      for (int64_t z = 0; z < a.z; ++z)
        for (int64_t r = 0; r < a.r; ++r)
          std::copy_n(&column.data[column.index(w, z, r, 0)], kTile, &out.data[out.index(w, z, r, c * kTile)]);
  }

  if (bias) {
    // BUDA adds the first row of each bias tile to every row of the tile.
    const Tensor& bi = in[2];
    if (!bi.sameShape(out)) fail(spec, "bias " + shapeText(bi) + " must match the output " + shapeText(out));
    for (int64_t w = 0; w < out.w; ++w)
      for (int64_t z = 0; z < out.z; ++z)
        for (int64_t r = 0; r < out.r; ++r)
          for (int64_t c = 0; c < out.c; ++c) out.at(w, z, r, c) += bi.at(w, z, r / kTile * kTile, c);
  }
  packMatmulOutput(spec, out);
  return out;
}

Tensor evalEmbedding(const OpSpec& spec, std::span<const Tensor> inputs) {
  std::vector<Tensor> in = unpacked(spec, inputs, 2, 2);
  const Tensor& table = in[0];
  const Tensor& indices = in[1];
  const OpAttributes& attrs = attrsOf(spec);
  // BUDA reads the index input's words as unsigned row numbers and flattens it
  // tile by tile, which it does for raw formats only.
  if (spec.inDf.size() > 1 && spec.inDf[1] != DataFormat::RawUInt32)
    fail(spec, "embedding indices must be RawUInt32, in_df[1] is " + std::string(netlist::dataFormatName(spec.inDf[1])));
  if (!attrs.numIndices.present() || attrs.numIndices.value < 1) fail(spec, "embedding needs num_indices >= 1");
  const int64_t count = attrs.numIndices.value;
  const int64_t rowTilesCore = spec.mblock.r * spec.ublock.r;
  if ((count + kTile - 1) / kTile != rowTilesCore)
    fail(spec, "num_indices " + str(count) + " fills " + str((count + kTile - 1) / kTile) +
                   " tile row(s) per core, the op has " + str(rowTilesCore) + " (mblock rows x ublock rows)");
  const int64_t width = spec.colTiles() * kTile;
  if (table.c != width)
    fail(spec, "table rows are " + str(table.c) + " values wide, the output rows " + str(width));
  const int64_t idxRt = indices.r / kTile;
  if (idxRt % spec.grid.r != 0)
    fail(spec, "indices " + shapeText(indices) + " do not split over the grid's " + str(spec.grid.r) + " rows");
  const int64_t idxRtCore = idxRt / spec.grid.r;
  const int64_t tableRows = table.z * table.r;

  Tensor out(table.w, spec.t, spec.rowTiles() * kTile, width);
  for (int64_t w = 0; w < out.w; ++w)
    for (int64_t cr = 0; cr < spec.grid.r; ++cr) {
      const std::vector<float> flat = tileMajor<float>(indices, indices.data, w, cr * idxRtCore, idxRtCore, 0,
                                                       indices.c / kTile);
      if (static_cast<int64_t>(flat.size()) < count)
        fail(spec, "core row " + str(cr) + " holds " + str(static_cast<int64_t>(flat.size())) +
                       " indices, num_indices is " + str(count));
      for (int64_t j = 0; j < count; ++j) {
        const float v = flat[static_cast<size_t>(j)];
        // 0xffffffff marks padding: the row stays zero.
        if (static_cast<double>(v) >= 4294967295.0) continue;
        if (!(v >= 0.0f) || v != std::floor(v))
          fail(spec, "index " + std::to_string(v) + " (core row " + str(cr) + ", position " + str(j) +
                         ") is not a row number");
        const int64_t row = static_cast<int64_t>(v);
        if (row >= tableRows)
          fail(spec, "index " + str(row) + " is outside the table of " + str(tableRows) + " rows");
        const float* src = &table.data[table.index(w, row / table.r, row % table.r, 0)];
        for (int64_t z = 0; z < out.z; ++z)
          std::copy_n(src, width, &out.data[out.index(w, z, cr * rowTilesCore * kTile + j, 0)]);
      }
    }
  packOutput(spec, out);
  return out;
}

Tensor evalTilizer(const OpSpec& spec, std::span<const Tensor> inputs) {
  std::vector<Tensor> in = unpacked(spec, inputs, 1, 1);
  checkOutputShape(spec, in[0].z, in[0].r, in[0].c);
  Tensor out = std::move(in[0]);
  // The kernel copies the tiles through dest, as a datacopy does: a
  // Float16_b acc_df rounds Float16 values there before the packer.
  if (spec.roundOutput) roundTo(spec, destFormatOf(spec.accDf), out);
  packOutput(spec, out);
  return out;
}

Tensor evalTopk(const OpSpec& spec, std::span<const Tensor> inputs) {
  std::vector<Tensor> in = unpacked(spec, inputs, 2, 2);
  const Tensor& values = in[0];
  const Tensor& indices = in[1];
  const OpAttributes& attrs = attrsOf(spec);
  if (!values.sameShape(indices))
    fail(spec, "values " + shapeText(values) + " and indices " + shapeText(indices) + " differ in shape");
  if (!attrs.sort.present() || (attrs.sort.value != "max" && attrs.sort.value != "argmax"))
    fail(spec, "topk needs sort: max or argmax");
  const bool outputValues = attrs.sort.value == "max";
  if (!attrs.k.present() || !isPowerOfTwo(attrs.k.value)) fail(spec, "topk needs k, a power of two");
  const int64_t k = attrs.k.value;
  const int64_t cores = spec.grid.c;
  const int64_t ct = values.c / kTile;
  if (cores < 1 || ct % cores != 0)
    fail(spec, "values of " + str(ct) + " tile columns do not split over the grid's " + str(cores) + " columns");
  const int64_t n = ct / cores * kTile;
  if (n % k != 0 || !isPowerOfTwo(n / k))
    fail(spec, "each core sorts rows of " + str(n) + " values: that must be k=" + str(k) +
                   " times a power of two");
  const int64_t outCols = (k + kTile - 1) / kTile * kTile;
  checkOutputShape(spec, values.z, values.r, cores * outCols);

  Tensor out(values.w, values.z, values.r, cores * outCols);
  std::vector<Entry> row(static_cast<size_t>(n));
  for (int64_t w = 0; w < values.w; ++w)
    for (int64_t z = 0; z < values.z; ++z)
      for (int64_t r = 0; r < values.r; ++r)
        for (int64_t core = 0; core < cores; ++core) {
          for (int64_t i = 0; i < n; ++i)
            row[static_cast<size_t>(i)] = {values.at(w, z, r, core * n + i), indices.at(w, z, r, core * n + i)};
          topkNetwork(row, static_cast<size_t>(k), attrs.kreduce.value);
          for (int64_t i = 0; i < k; ++i) {
            const Entry& e = row[static_cast<size_t>(i)];
            out.at(w, z, r, core * outCols + i) = outputValues ? e.value : e.index;
          }
        }
  packOutput(spec, out);
  return out;
}

Tensor evalQuantization(const OpSpec& spec, std::span<const Tensor> inputs) { return scaleAndShift(spec, inputs); }

Tensor evalRequantization(const OpSpec& spec, std::span<const Tensor> inputs) { return scaleAndShift(spec, inputs); }

Tensor evalDequantization(const OpSpec& spec, std::span<const Tensor> inputs) {
  return evalDequantization(spec, inputs, 0);
}

Tensor evalDequantization(const OpSpec& spec, std::span<const Tensor> inputs, int valueInput) {
  std::vector<Tensor> in = unpacked(spec, inputs, 2, 2);
  if (valueInput != 0 && valueInput != 1) fail(spec, "the dequantized value must be input 0 or 1");
  const Tensor& value = in[static_cast<size_t>(valueInput)];
  const Tensor& scale = in[static_cast<size_t>(1 - valueInput)];
  if (!value.sameShape(scale)) fail(spec, "input shapes differ: " + shapeText(value) + " vs " + shapeText(scale));
  checkOutputShape(spec, value.z, value.r, value.c);
  // BUDA adds the negated zero point, then multiplies by the scale.
  const float negZp = -zeroPointOf(spec);
  Tensor out = value;
  for (size_t i = 0; i < out.data.size(); ++i) {
    const float shifted = value.data[i] + negZp;
    out.data[i] = shifted * scale.data[i];
  }
  packOutput(spec, out);
  return out;
}

Tensor evalSparseMatmul(const OpSpec& spec, std::span<const Tensor> inputs) {
  return detail::evalSparseMatmul(spec, inputs, false);
}

Tensor detail::evalSparseMatmul(const OpSpec& spec, std::span<const Tensor> inputs, bool inputsRounded) {
  const size_t count = attrsOf(spec).bias.value ? 4 : 3;
  const UnpackedView in = unpackedView(spec, inputs, count, count, inputsRounded);
  sparseFields(spec); // attribute errors before encoding errors
  if (inputs[2].rawBits.size() == inputs[2].data.size()) return sparseMatmul(spec, in.view, inputs[2].rawBits);
  const Tensor& enc = *in.view[2];
  std::vector<uint32_t> codes(enc.data.size());
  for (size_t i = 0; i < codes.size(); ++i) {
    const float v = enc.data[i];
    // Floats hold every integer up to 2^24 exactly; above it a RawUInt32 value
    // may already have lost low bits, and strip flags sit in bits 30 and 31.
    if (!(v >= 0.0f && v <= 16777216.0f) || v != std::floor(v))
      fail(spec, "encoding value " + std::to_string(v) + " (position " + str(static_cast<int64_t>(i)) +
                     ") is not an exact 32-bit code: formats::Tensor holds RawUInt32 as floats, exact only up to "
                     "2^24, and the strip encoding uses bits 30-31; pass the raw words (evalSparseMatmulCodes)");
    codes[i] = static_cast<uint32_t>(v);
  }
  return sparseMatmul(spec, in.view, codes);
}

Tensor evalSparseMatmulCodes(const OpSpec& spec, std::span<const Tensor> inputs, std::span<const uint32_t> encodingCodes) {
  const size_t count = attrsOf(spec).bias.value ? 4 : 3;
  const UnpackedView in = unpackedView(spec, inputs, count, count);
  return sparseMatmul(spec, in.view, encodingCodes);
}

} // namespace tessera::golden
