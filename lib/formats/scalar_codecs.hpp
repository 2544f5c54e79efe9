// Scalar codecs shared by the rounding (formats.cpp) and the tile packing
// (tile_codec.cpp): small floats, Bfp blocks and integers, bit for bit as
// docs/data-formats.md describes them. Private to lib/formats.
#pragma once

#include "formats/formats.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>

// Functions built several times (GCC/Clang ifunc clones) and picked at load
// time by the CPU, so binaries stay portable; every clone gives the same bits.
#if defined(__x86_64__) && defined(__GNUC__) && defined(__gnu_linux__)
#define TESSERA_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TESSERA_SIMD_CLONES
#endif
#if defined(__x86_64__) && defined(__GNUC__) && defined(__gnu_linux__)
#define TESSERA_WIDE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TESSERA_WIDE_CLONES
#endif

namespace tessera::formats::detail {


inline constexpr uint32_t kSignBit = 0x80000000u;
inline constexpr uint32_t kMagMask = 0x7FFFFFFFu;
inline constexpr uint32_t kF32Inf = 0x7F800000u;
inline constexpr uint32_t kF32MinNormal = 0x00800000u;
inline constexpr uint32_t kF32QuietNaN = 0x7FC00000u;

inline uint32_t bitsOf(float v) { return std::bit_cast<uint32_t>(v); }
inline float floatOf(uint32_t b) { return std::bit_cast<float>(b); }

// ---- small floats (Float32, Float16, Float16_b, Lf8, Fp8_e4m3) ------------
// How a format spends its top exponent field.
enum class Specials {
  Ieee,    // all-ones exponent: inf (mantissa 0) or NaN; overflow -> inf
  NanOnly, // OCP E4M3: only S.1111.111 is NaN, no inf; overflow saturates
  None,    // BUDA Lf8: every encoding is a number; overflow and NaN saturate
};

template <int ExpBits, int ManBits, int Bias, Specials Kind> struct MiniFloat {
  static constexpr bool IeeeSpecials = Kind == Specials::Ieee;
  static constexpr int kMaxField = (1 << ExpBits) - 1;
  static constexpr int kMaxFiniteField = IeeeSpecials ? kMaxField - 1 : kMaxField;
  static constexpr uint32_t kManMask = (1u << ManBits) - 1;
  // The largest finite value's mantissa: all ones, except E4M3 where all-ones
  // mantissa with the top exponent is NaN.
  static constexpr uint32_t kMaxFiniteMan = Kind == Specials::NanOnly ? kManMask - 1 : kManMask;
  static constexpr uint32_t kMaxFiniteMag =
      (static_cast<uint32_t>(kMaxFiniteField - Bias + 127) << 23) | (kMaxFiniteMan << (23 - ManBits));
  static constexpr uint32_t kMinNormalMag = static_cast<uint32_t>(1 - Bias + 127) << 23;
  static constexpr uint32_t kSignCode = 1u << (ExpBits + ManBits);
  static constexpr uint32_t kNaNCode =
      IeeeSpecials ? ((static_cast<uint32_t>(kMaxField) << ManBits) | (1u << (ManBits - 1)))
                   : ((static_cast<uint32_t>(kMaxField) << ManBits) | kManMask);
  static constexpr uint32_t kInfCode = static_cast<uint32_t>(kMaxField) << ManBits;

  // Float32 bits of the nearest representable value (ties away, FTZ).
  static uint32_t round(uint32_t u) {
    const uint32_t sign = u & kSignBit;
    uint32_t mag = u & kMagMask;
    if (mag > kF32Inf) return Kind == Specials::None ? sign | kMaxFiniteMag : kF32QuietNaN;
    if (mag == kF32Inf) return sign | (IeeeSpecials ? kF32Inf : kMaxFiniteMag);
    if (mag < kF32MinNormal) return sign; // zero or float32 denormal
    if constexpr (ManBits < 23) {
      // Sign-magnitude ties away: add half an ULP, truncate. A carry moves
      // into the exponent field, which is exactly the round-up we want.
      mag += 1u << (22 - ManBits);
      mag &= ~((1u << (23 - ManBits)) - 1);
    }
    if (mag > kMaxFiniteMag) return sign | (IeeeSpecials ? kF32Inf : kMaxFiniteMag);
    if (mag < kMinNormalMag) return sign; // result would be a denormal: flush
    return sign | mag;
  }
  // `r` must come from round().
  static uint32_t encodeRounded(uint32_t r) {
    const uint32_t sign = (r & kSignBit) ? kSignCode : 0;
    const uint32_t mag = r & kMagMask;
    if (mag > kF32Inf) return kNaNCode;
    if (mag == kF32Inf) return sign | kInfCode;
    if (mag == 0) return sign;
    const uint32_t field = (mag >> 23) - 127 + Bias;
    return sign | (field << ManBits) | ((mag >> (23 - ManBits)) & kManMask);
  }
  static uint32_t encode(float v) { return encodeRounded(round(bitsOf(v))); }
  static float decode(uint32_t code) {
    const uint32_t sign = (code & kSignCode) ? kSignBit : 0;
    const uint32_t field = (code >> ManBits) & static_cast<uint32_t>(kMaxField);
    const uint32_t man = code & kManMask;
    if (field == 0) return floatOf(sign); // denormal encodings read as zero (FTZ)
    if constexpr (Kind == Specials::Ieee) {
      if (field == static_cast<uint32_t>(kMaxField)) return man ? floatOf(kF32QuietNaN) : floatOf(sign | kF32Inf);
    } else if constexpr (Kind == Specials::NanOnly) {
      if (field == static_cast<uint32_t>(kMaxField) && man == kManMask) return floatOf(kF32QuietNaN);
    }
    return floatOf(sign | ((field - Bias + 127) << 23) | (man << (23 - ManBits)));
  }
  static float quantize(float v) { return floatOf(round(bitsOf(v))); }
  // round() without branches, for loops over many values (the compiler
  // vectorizes it; the branchy form costs ~1 ns per value). Same result for
  // every input: test/unit/formats/reference_test.cpp compares the two.
  [[gnu::always_inline]] static uint32_t roundSelect(uint32_t u) {
    // Magnitudes are below 2^31: signed compares (what SSE2 has) are exact,
    // and selects are masks.
    auto pick = [](bool c, int32_t a, int32_t b) { const int32_t m = -static_cast<int32_t>(c); return (a & m) | (b & ~m); };
    const auto sign = static_cast<int32_t>(u & kSignBit);
    const auto mag = static_cast<int32_t>(u & kMagMask);
    int32_t r = mag;
    if constexpr (ManBits < 23)
      r = (mag + static_cast<int32_t>(1u << (22 - ManBits))) & ~static_cast<int32_t>((1u << (23 - ManBits)) - 1);
    constexpr auto kOverflow = static_cast<int32_t>(IeeeSpecials ? kF32Inf : kMaxFiniteMag);
    constexpr auto kNan = static_cast<int32_t>(Kind == Specials::None ? kMaxFiniteMag : kF32QuietNaN);
    constexpr auto kInf = static_cast<int32_t>(kF32Inf);
    r = pick(r > static_cast<int32_t>(kMaxFiniteMag), kOverflow, r);
    r = pick(r < static_cast<int32_t>(kMinNormalMag), 0, r);         // result would be a denormal: flush
    r = pick(mag < static_cast<int32_t>(kF32MinNormal), 0, r);       // zero or float32 denormal
    r = pick(mag == kInf, kOverflow, r);                              // inf: inf, or the largest finite value
    // NaN: the canonical quiet NaN, or (no NaN in the format) the signed largest value.
    const int32_t nan = Kind == Specials::None ? (sign | kNan) : kNan;
    return static_cast<uint32_t>(pick(mag > kInf, nan, sign | r));
  }
  [[gnu::always_inline]] static void quantizeAll(std::span<float> values) {
    float* p = values.data();
    const size_t n = values.size(), whole = n - n % 16;
    // Fixed-length inner loops over integer copies: what -O2's cost model
    // vectorizes (for every format). A run of 16 is stored only when a value
    // changed: most calls round values already in the format (a queue in its
    // producer's out_df, dest then out_df of the same format), and then no
    // cache line is dirtied.
    // Both loops read the values where they are: a copy into a stack array
    // was made with 16-byte stores and read back with wider loads, which
    // store forwarding cannot serve (about 1 ns per value).
    // Each run is rounded once, into registers (r), and stored from there.
    for (size_t base = 0; base < whole; base += 16) {
      uint32_t diff = 0, r[16];
      for (size_t j = 0; j < 16; ++j) {
        uint32_t u;
        std::memcpy(&u, p + base + j, sizeof u);
        r[j] = roundSelect(u);
        diff |= r[j] ^ u;
      }
      if (diff != 0) std::memcpy(p + base, r, sizeof r);
    }
    for (size_t i = whole; i < n; ++i) p[i] = floatOf(roundSelect(bitsOf(p[i])));
  }
  // True when quantizeAll would change no bit; reads only.
  [[gnu::always_inline]] static bool allRounded(std::span<const float> values) {
    const float* p = values.data();
    const size_t n = values.size(), whole = n - n % 16;
    constexpr size_t kCheckEvery = 1024; // stop early, but not per run of 16
    // Differences are collected per lane (a vector register) and folded only
    // every kCheckEvery values.
    uint32_t lanes[16] = {};
    for (size_t base = 0; base < whole; base += 16) {
      for (size_t j = 0; j < 16; ++j) {  // in place: see quantizeAll
        uint32_t u;
        std::memcpy(&u, p + base + j, sizeof u);
        lanes[j] |= roundSelect(u) ^ u;
      }
      if ((base + 16) % kCheckEvery == 0) {
        uint32_t any = 0;
        for (uint32_t l : lanes) any |= l;
        if (any != 0) return false;
      }
    }
    uint32_t diff = 0;
    for (uint32_t l : lanes) diff |= l;
    for (size_t i = whole; i < n; ++i) diff |= roundSelect(bitsOf(p[i])) ^ bitsOf(p[i]);
    return diff == 0;
  }
};

using F32 = MiniFloat<8, 23, 127, Specials::Ieee>;
using F16 = MiniFloat<5, 10, 15, Specials::Ieee>;
using BF16 = MiniFloat<8, 7, 127, Specials::Ieee>;
using LF8 = MiniFloat<5, 2, 15, Specials::None>;        // BUDA LF8: 1/5/2, no inf, max 1.75 * 2^16
using FP8E4M3 = MiniFloat<4, 3, 7, Specials::NanOnly>;  // OCP E4M3: bias 7, max 448

// ---- block floating point -------------------------------------------------
struct BfpSpec {
  int magBits;  // magnitude bits per value (7, 3, 1); one more bit holds the sign
  int expMin;   // unbiased exponent range of the base format
  int expMax;
  int expBias;  // the shared exponent byte holds exponent + bias
};

// _b family: the bfloat16 (= float32) normal range. Bfp8/4/2: the 5-bit field
// bias 15 with all 32 values usable (no inf in a block), e in [-15, 16], as
// BUDA's host tilizer rebiases and clamps.
inline BfpSpec bfpSpec(DataFormat df) {
  const int magBits = (df == DataFormat::Bfp8 || df == DataFormat::Bfp8_b)   ? 7
                      : (df == DataFormat::Bfp4 || df == DataFormat::Bfp4_b) ? 3
                                                                             : 1;
  return isExponentBFormat(df) ? BfpSpec{magBits, -126, 127, 127} : BfpSpec{magBits, -15, 16, 15};
}

// One encoded block: shared exponent byte and sign|magnitude code per value
// (sign at bit magBits; cleared when the magnitude is 0, so zero is +0).
struct BfpBlock {
  uint8_t exponent = 0;
  std::array<uint8_t, kBfpBlock> codes{};
};

inline BfpBlock encodeBfpBlock(const BfpSpec& s, const float* values, size_t n) {
  std::array<int, kBfpBlock> exps{};
  std::array<uint32_t, kBfpBlock> sigs{}; // 24-bit significands, 0 for zero
  BfpBlock block;
  int shared = std::numeric_limits<int>::min();
  for (size_t i = 0; i < n; ++i) {
    const uint32_t u = bitsOf(values[i]);
    const uint32_t mag = u & kMagMask;
    int e;
    uint32_t sig;
    if (mag >= kF32Inf) { // inf and NaN have no encoding: saturate
      e = s.expMax;
      sig = 0xFFFFFF;
    } else {
      e = static_cast<int>(mag >> 23) - 127;
      if ((mag >> 23) == 0 || e < s.expMin) continue; // zero, denormal, below range: flush
      sig = (mag & 0x7FFFFF) | 0x800000;
      if (e > s.expMax) { // above range: saturate
        e = s.expMax;
        sig = 0xFFFFFF;
      }
    }
    exps[i] = e;
    sigs[i] = sig;
    shared = std::max(shared, e);
  }
  if (shared == std::numeric_limits<int>::min()) return block; // all zero: exponent byte 0
  block.exponent = static_cast<uint8_t>(shared + s.expBias);
  const uint32_t maxMag = (1u << s.magBits) - 1;
  for (size_t i = 0; i < n; ++i) {
    if (sigs[i] == 0) continue;
    // The hidden bit (bit 23) lands on magnitude bit magBits-1 when e == shared.
    const int shift = (shared - exps[i]) + (24 - s.magBits);
    if (shift > 24) continue; // below half the smallest step: rounds to +0
    const uint32_t rounded = std::min((sigs[i] + (1u << (shift - 1))) >> shift, maxMag);
    if (rounded == 0) continue;
    const uint32_t sign = (bitsOf(values[i]) & kSignBit) ? 1u << s.magBits : 0;
    block.codes[i] = static_cast<uint8_t>(sign | rounded);
  }
  return block;
}

inline float decodeBfpValue(const BfpSpec& s, uint8_t exponent, uint8_t code) {
  const bool negative = (code >> s.magBits) & 1u;
  const uint32_t mag = code & ((1u << s.magBits) - 1);
  const float zero = negative ? -0.0f : 0.0f;
  if (mag == 0) return zero;
  // mag * 2^(shared - (magBits-1)); both factors exact, the product exact unless
  // it is a float32 denormal, which is flushed.
  const float step = static_cast<float>(mag) / static_cast<float>(1u << (s.magBits - 1));
  // _b exponent byte 0 gives scale 0 (all values would be float32 denormals).
  const float scale = floatOf(static_cast<uint32_t>(exponent - s.expBias + 127) << 23);
  const float v = step * scale;
  if (v < std::numeric_limits<float>::min()) return zero;
  return negative ? -v : v;
}

// ---- integers -------------------------------------------------------------
// Ties away (std::round), saturating, NaN -> 0, no negative zero.
inline int64_t toInt(float v, int64_t lo, int64_t hi) {
  if (std::isnan(v)) return 0;
  const double r = std::round(static_cast<double>(v));
  if (r <= static_cast<double>(lo)) return lo;
  if (r >= static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(r);
}

struct IntRange {
  int64_t lo, hi;
};
inline IntRange intRange(DataFormat df) {
  switch (df) {
  case DataFormat::Int8: return {-127, 127}; // sign-magnitude byte
  case DataFormat::Int32: return {-2147483647LL, 2147483647LL}; // sign + 31-bit magnitude
  case DataFormat::UInt8: case DataFormat::RawUInt8: return {0, 255};
  case DataFormat::UInt16: case DataFormat::RawUInt16: return {0, 65535};
  case DataFormat::RawUInt32: return {0, 4294967295LL};
  default: return {0, 0};
  }
}

inline bool isIntLike(DataFormat df) { return isIntegerFormat(df) || isRawFormat(df); }

// The branch-free first half of a Bfp block's encoding, shared by the
// rounding (quantizeBfpBlock) and the packer (encodeBfpCodes) so the 16 lanes
// vectorize: each value's exponent (kBfpDeadExponent when it is flushed:
// zero, denormal, below ExpMin) and 24-bit significand (all ones when it
// saturates: inf, NaN, above ExpMax). Returns the block's shared (largest)
// exponent, kBfpDeadExponent when every value is flushed.
inline constexpr int32_t kBfpDeadExponent = -1024; // never the maximum of a live block
template <int ExpMin, int ExpMax>
[[gnu::always_inline]] inline int32_t bfpBlockLanes(const float* values, int32_t* exps, int32_t* sigs) {
  constexpr int32_t kInfBits = static_cast<int32_t>(kF32Inf);
  int32_t shared = kBfpDeadExponent;
  for (size_t i = 0; i < kBfpBlock; ++i) {
    const auto mag = static_cast<int32_t>(bitsOf(values[i]) & kMagMask);
    const int32_t field = mag >> 23;
    const int32_t e = field - 127;
    const bool special = mag >= kInfBits;         // inf, NaN: saturate
    const bool saturate = special | (e > ExpMax); // above range: saturate
    const bool live = special | ((field != 0) & (e >= ExpMin));
    sigs[i] = saturate ? 0xFFFFFF : ((mag & 0x7FFFFF) | 0x800000);
    exps[i] = live ? (saturate ? ExpMax : e) : kBfpDeadExponent;
    shared = exps[i] > shared ? exps[i] : shared;
  }
  return shared;
}

} // namespace tessera::formats::detail
