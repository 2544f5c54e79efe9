// Internal to lib/golden (not part of its interface): the multiplier's
// fidelity phases and the operand pairs of a matmul product, shared by the
// dense matmul (ops.cpp) and the tile products of sparse matmul
// (special_ops.cpp) so both compute exactly the same sums.
#pragma once
#include "golden/ops.hpp"

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

namespace tessera::golden::detail {

// The Tensix multiplier takes 5 bits of the srcA operand (hidden bit + 4
// mantissa bits) and 7 of srcB (hidden bit + 6); each fidelity phase adds one
// cross product of the high/low halves:
//   phase 0 (LoFi)  A_hi*B_hi   phase 1 (HiFi2) A_lo*B_hi
//   phase 2 (HiFi3) A_hi*B_lo   phase 3 (HiFi4) A_lo*B_lo
constexpr int kSrcAHighBits = 4;
constexpr int kSrcBHighBits = 6;

// Drops mantissa bits below the top `bits` (truncation: the multiplier simply
// does not see them). Inf/NaN pass through.
inline float keepMantissaBits(float x, int bits) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const uint32_t kept = u & ~((uint32_t{1} << (23 - bits)) - 1u);
  return std::bit_cast<float>((u & 0x7F800000u) == 0x7F800000u ? u : kept); // a select: loops over it vectorize
}
inline float highA(float x) { return keepMantissaBits(x, kSrcAHighBits); }
inline float highB(float x) { return keepMantissaBits(x, kSrcBHighBits); }

struct Phases {
  bool aLowBHigh = false; // phase 1
  bool aHighBLow = false; // phase 2
  bool aLowBLow = false;  // phase 3
};

inline Phases phasesOf(MathFidelity f) {
  switch (f) {
  case MathFidelity::LoFi: return {};
  case MathFidelity::HiFi2:
  case MathFidelity::HiFi2_A: return {true, false, false};
  case MathFidelity::HiFi2_B: return {false, true, false};
  case MathFidelity::HiFi3: return {true, true, false};
  case MathFidelity::HiFi4: return {true, true, true};
  }
  return {true, true, true};
}

// The product C = In0 x In1 as a sum of operand pairs, each pair reduced to
// what its fidelity phases see. In0 (activations) sits in srcB and In1
// (weights) in srcA, the way the matmul unpacker loads them. The reduced
// operands are built one (w, t) slice at a time into buffers reused across
// slices: whole-tensor copies of a w-stacked weight input cost more in page
// faults than the product itself.
class ProductTerms {
public:
  ProductTerms(MathFidelity fidelity, bool exact) {
    const Phases p = phasesOf(fidelity);
    if (exact || (p.aLowBHigh && p.aHighBLow && p.aLowBLow)) {
      kind_ = Kind::Exact;
    } else if (p.aLowBHigh && p.aHighBLow) {
      kind_ = Kind::HiFi3; // A*B_hi + A_hi*B_lo, i.e. everything but A_lo*B_lo
    } else {
      kind_ = Kind::Reduced;
      reduceIn0_ = !p.aHighBLow; // in0 (srcB) keeps B_hi only
      reduceIn1_ = !p.aLowBHigh; // in1 (srcA) keeps A_hi only
    }
  }

  // dst[i] = fn(src[i]) in fixed runs of 16 through local copies: the form
  // -O2's vectorizer takes.
  template <class Fn> static void mapBits(float* dst, const float* src, size_t n, Fn fn) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
      float in[16], out[16];
      std::memcpy(in, src + i, sizeof in);
      for (size_t j = 0; j < 16; ++j) out[j] = fn(in[j]);
      std::memcpy(dst + i, out, sizeof out);
    }
    for (; i < n; ++i) dst[i] = fn(src[i]);
  }

  // The pairs (lhs, rhs) of one slice: lhs m x k, rhs k x n, row-major.
  // Valid until the next call. rhsAsBefore: in1 holds the values of the
  // previous call's in1 (a weight every entry shares), so its reduced copy
  // is kept.
  std::span<const std::pair<const float*, const float*>> slice(const float* in0, size_t in0Size, const float* in1,
                                                                size_t in1Size, bool rhsAsBefore = false) {
    pairs_.clear();
    const bool keepRhs = rhsAsBefore && rhsValid_ && rhs_.size() == in1Size;
    rhsValid_ = true;
    switch (kind_) {
    case Kind::Exact: pairs_.push_back({in0, in1}); break;
    case Kind::HiFi3: {
      lhsA_.resize(in0Size);
      lhsB_.resize(in0Size);
      rhs_.resize(in1Size);
      mapBits(lhsA_.data(), in0, in0Size, [](float x) { return highB(x); });
      mapBits(lhsB_.data(), in0, in0Size, [](float x) { return x - highB(x); });
      if (!keepRhs) mapBits(rhs_.data(), in1, in1Size, [](float x) { return highA(x); });
      pairs_.push_back({lhsA_.data(), in1});
      pairs_.push_back({lhsB_.data(), rhs_.data()});
      break;
    }
    case Kind::Reduced: {
      const float* lhs = in0;
      const float* rhs = in1;
      if (reduceIn0_) {
        lhsA_.resize(in0Size);
        mapBits(lhsA_.data(), in0, in0Size, [](float x) { return highB(x); });
        lhs = lhsA_.data();
      }
      if (reduceIn1_) {
        rhs_.resize(in1Size);
        if (!keepRhs) mapBits(rhs_.data(), in1, in1Size, [](float x) { return highA(x); });
        rhs = rhs_.data();
      }
      pairs_.push_back({lhs, rhs});
      break;
    }
    }
    return pairs_;
  }

private:
  enum class Kind { Exact, HiFi3, Reduced };
  Kind kind_ = Kind::Exact;
  bool reduceIn0_ = false, reduceIn1_ = false;
  bool rhsValid_ = false; // rhs_ holds the last call's reduced in1
  std::vector<float> lhsA_, lhsB_, rhs_;
  std::vector<std::pair<const float*, const float*>> pairs_;
};

// True when rounding `values` to `df` changes no bit (then an input needs no
// rounded copy). values.size() must suit the format (Bfp: multiples of 16).
bool representable(DataFormat df, std::span<const float> values);

// evalSparseMatmul for evalOp, which has already rounded the inputs to in_df
// (inputsRounded: skip the check).
Tensor evalSparseMatmul(const OpSpec& spec, std::span<const Tensor> inputs, bool inputsRounded);

// Makes glibc serve large tensors from the heap instead of one mmap each,
// and returns free heap memory to the system beyond 4 GB (see ops.cpp).
// Called by evalOp and evalFusedOp.
void preferHeapForLargeTensors();

} // namespace tessera::golden::detail
