// Bit-exact rounding to data formats: see formats.hpp and docs/data-formats.md for the
// decisions (ties away from zero, flush-to-zero, saturation). The tile layout is in tile_codec.cpp.
#include "formats/formats.hpp"
#include "formats/scalar_codecs.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <string>

namespace tessera::formats {
using namespace detail;
namespace {


// encodeBfpBlock + decodeBfpValue of one whole block, without the codes,
// written without data-dependent branches so the compiler vectorizes the 16
// lanes even for SSE2 (the reference model rounds every matmul partial sum
// this way; the plain path costs ~10-18 ns per value). The magnitude rounding
// (sig + half) >> shift is done in float, exactly: sig * 2^-shift is exact
// (24-bit integer times a power of two), so are its truncation and the
// fraction x - trunc(x), and ties-away is `frac >= 0.5`. Must stay
// bit-identical to the plain path: test/unit/formats/reference_test.cpp
// compares both on random and edge-case blocks.
template <int MagBits, int ExpMin, int ExpMax>
[[gnu::always_inline]] inline void quantizeBfpBlock(const float* values, float* out) {
  constexpr int32_t kMaxMag = (1 << MagBits) - 1;
  constexpr float kStepUnit = 1.0f / static_cast<float>(1u << (MagBits - 1));
  int32_t exps[kBfpBlock], sigs[kBfpBlock];
  uint32_t signs[kBfpBlock];
  const int32_t shared = bfpBlockLanes<ExpMin, ExpMax>(values, exps, sigs);
  for (size_t i = 0; i < kBfpBlock; ++i) signs[i] = bitsOf(values[i]) & kSignBit;
  if (shared == kBfpDeadExponent) { // all zero: +0 everywhere
    for (size_t i = 0; i < kBfpBlock; ++i) out[i] = 0.0f;
    return;
  }
  const float scale = floatOf(static_cast<uint32_t>(shared + 127) << 23);
  for (size_t i = 0; i < kBfpBlock; ++i) {
    // Shifts past 24 round every significand (< 2^24) to 0; a dead lane's
    // shift (~1000) is clamped so 2^-shift stays a normal float.
    int32_t shift = shared - exps[i] + (24 - MagBits);
    shift = shift < 31 ? shift : 31;
    const float x = static_cast<float>(sigs[i]) * floatOf(static_cast<uint32_t>(127 - shift) << 23);
    const auto whole = static_cast<int32_t>(x); // truncation, x < 2^8
    const float frac = x - static_cast<float>(whole);
    int32_t rounded = whole + (frac >= 0.5f ? 1 : 0);
    rounded = rounded < kMaxMag ? rounded : kMaxMag;
    float v = static_cast<float>(rounded) * kStepUnit * scale;
    v = v < std::numeric_limits<float>::min() ? 0.0f : v; // denormal product: flushed (also rounded == 0)
    // The sign is kept on a non-zero code (a flushed denormal product stays
    // signed); a zero code is +0.
    out[i] = floatOf(bitsOf(v) | (rounded != 0 ? signs[i] : 0u));
  }
}

// isQuantized of whole blocks without a copy: each block rounded into a
// local array and compared bit for bit (what quantize-and-memcmp compared).
template <int MagBits, int ExpMin, int ExpMax>
[[gnu::always_inline]] inline bool bfpBlocksRounded(const float* values, size_t blocks) {
  for (size_t b = 0; b < blocks; ++b) {
    float rounded[kBfpBlock];
    quantizeBfpBlock<MagBits, ExpMin, ExpMax>(values + b * kBfpBlock, rounded);
    uint32_t diff = 0;
    for (size_t i = 0; i < kBfpBlock; ++i) diff |= bitsOf(rounded[i]) ^ bitsOf(values[b * kBfpBlock + i]);
    if (diff != 0) return false;
  }
  return true;
}

// Built twice where the compiler can (GCC/Clang ifunc clones): for AVX2 and
// for the baseline, picked at load time by the CPU, so binaries stay portable.
// The kernel is integer work and exact float products: both clones give the
// same bits (the reference tests run whichever this CPU picks). (The
// small-float loops below gain nothing from AVX2: they are memory-bound.)
#define TESSERA_BFP_BLOCKS(name, magBits, expMin, expMax)                                                            \
  TESSERA_SIMD_CLONES void name(float* values, size_t blocks) {                                                      \
    for (size_t b = 0; b < blocks; ++b)                                                                              \
      quantizeBfpBlock<magBits, expMin, expMax>(values + b * kBfpBlock, values + b * kBfpBlock);                     \
  }                                                                                                                  \
  TESSERA_SIMD_CLONES bool name##Rounded(const float* values, size_t blocks) {                                       \
    return bfpBlocksRounded<magBits, expMin, expMax>(values, blocks);                                                \
  }
TESSERA_BFP_BLOCKS(quantizeBfp8bBlocks, 7, -126, 127)
TESSERA_BFP_BLOCKS(quantizeBfp4bBlocks, 3, -126, 127)
TESSERA_BFP_BLOCKS(quantizeBfp2bBlocks, 1, -126, 127)
TESSERA_BFP_BLOCKS(quantizeBfp8Blocks, 7, -15, 16)
TESSERA_BFP_BLOCKS(quantizeBfp4Blocks, 3, -15, 16)
TESSERA_BFP_BLOCKS(quantizeBfp2Blocks, 1, -15, 16)
#undef TESSERA_BFP_BLOCKS


// The small-float roundings, integer selects only: also built for AVX-512
// and AVX2 (16 or 8 lanes instead of SSE2's 4), the same bits on each. The
// simulator rounds every tile it writes to dest through here (a dest tile
// is in L1 cache: the width pays there, unlike on whole golden tensors).
#define TESSERA_QUANTIZE_SMALL(name, Format) \
  TESSERA_WIDE_CLONES void name(float* values, size_t n) { Format::quantizeAll(std::span<float>(values, n)); }
TESSERA_QUANTIZE_SMALL(quantizeF32, F32)
TESSERA_QUANTIZE_SMALL(quantizeF16, F16)
TESSERA_QUANTIZE_SMALL(quantizeBF16, BF16)
TESSERA_QUANTIZE_SMALL(quantizeLF8, LF8)
TESSERA_QUANTIZE_SMALL(quantizeFP8E4M3, FP8E4M3)
#undef TESSERA_QUANTIZE_SMALL

void quantizeBfp(DataFormat df, float* values, size_t n) {
  const BfpSpec s = bfpSpec(df);
  const size_t whole = n / kBfpBlock;
  switch (df) {
  case DataFormat::Bfp8_b: quantizeBfp8bBlocks(values, whole); break;
  case DataFormat::Bfp4_b: quantizeBfp4bBlocks(values, whole); break;
  case DataFormat::Bfp2_b: quantizeBfp2bBlocks(values, whole); break;
  case DataFormat::Bfp8: quantizeBfp8Blocks(values, whole); break;
  case DataFormat::Bfp4: quantizeBfp4Blocks(values, whole); break;
  case DataFormat::Bfp2: quantizeBfp2Blocks(values, whole); break;
  default: throw std::invalid_argument("quantizeBfp: not a block format");
  }
  // A partial last block (roundToFormat's block of one) takes the plain path.
  for (size_t base = whole * kBfpBlock; base < n; base += kBfpBlock) {
    const size_t len = std::min(kBfpBlock, n - base);
    const BfpBlock b = encodeBfpBlock(s, values + base, len);
    for (size_t i = 0; i < len; ++i) values[base + i] = decodeBfpValue(s, b.exponent, b.codes[i]);
  }
}

template <class Fn> void applyAll(std::span<float> values, Fn fn) {
  for (float& v : values) v = fn(v);
}

} // namespace

uint16_t float32ToFloat16(float v) { return static_cast<uint16_t>(F16::encode(v)); }
float float16ToFloat32(uint16_t bits) { return F16::decode(bits); }
uint16_t float32ToFloat16b(float v) { return static_cast<uint16_t>(BF16::encode(v)); }
float float16bToFloat32(uint16_t bits) { return BF16::decode(bits); }

float roundToFormat(DataFormat df, float v) {
  if (isBfpFormat(df)) {
    quantizeBfp(df, &v, 1);
    return v;
  }
  std::span<float> one(&v, 1);
  quantize(df, one);
  return v;
}

TESSERA_SIMD_CLONES void quantize(DataFormat df, std::span<float> values) {
  if (isBfpFormat(df)) {
    if (values.size() % kBfpBlock != 0)
      throw std::invalid_argument("quantize: " + std::string(dataFormatName(df)) + " needs a multiple of " +
                                  std::to_string(kBfpBlock) + " values, got " + std::to_string(values.size()));
    quantizeBfp(df, values.data(), values.size());
    return;
  }
  switch (df) {
  case DataFormat::Float32: quantizeF32(values.data(), values.size()); return;
  case DataFormat::Float16: quantizeF16(values.data(), values.size()); return;
  case DataFormat::Float16_b: quantizeBF16(values.data(), values.size()); return;
  case DataFormat::Lf8: quantizeLF8(values.data(), values.size()); return;
  case DataFormat::Fp8_e4m3: quantizeFP8E4M3(values.data(), values.size()); return;
  default: break;
  }
  if (isIntLike(df)) {
    const IntRange range = intRange(df);
    // The float of a saturated Int32/RawUInt32 is what unpacking gives too.
    applyAll(values, [range](float v) { return static_cast<float>(toInt(v, range.lo, range.hi)); });
    return;
  }
  throw std::invalid_argument("quantize: unknown data format");
}

// The float-format loops are integer selects: an AVX2 clone runs twice the
// lanes per instruction with the same bits (where the data is in cache; a
// whole-tensor pass is memory-bound either way).
TESSERA_SIMD_CLONES bool isQuantized(DataFormat df, std::span<const float> values) {
  switch (df) {
  case DataFormat::Float32: return F32::allRounded(values);
  case DataFormat::Float16: return F16::allRounded(values);
  case DataFormat::Float16_b: return BF16::allRounded(values);
  case DataFormat::Lf8: return LF8::allRounded(values);
  case DataFormat::Fp8_e4m3: return FP8E4M3::allRounded(values);
  default: break;
  }
  if (values.size() % kBfpBlock == 0) {
    const size_t blocks = values.size() / kBfpBlock;
    switch (df) {
    case DataFormat::Bfp8_b: return quantizeBfp8bBlocksRounded(values.data(), blocks);
    case DataFormat::Bfp4_b: return quantizeBfp4bBlocksRounded(values.data(), blocks);
    case DataFormat::Bfp2_b: return quantizeBfp2bBlocksRounded(values.data(), blocks);
    case DataFormat::Bfp8: return quantizeBfp8BlocksRounded(values.data(), blocks);
    case DataFormat::Bfp4: return quantizeBfp4BlocksRounded(values.data(), blocks);
    case DataFormat::Bfp2: return quantizeBfp2BlocksRounded(values.data(), blocks);
    default: break;
    }
  }
  // Block and integer formats: round a chunk at a time in a small buffer and
  // compare. Chunks start at multiples of 1024 values, so Bfp blocks (16
  // values) are the ones rounding the whole span would use.
  constexpr size_t kChunk = 1024;
  std::array<float, kChunk> buf;
  for (size_t at = 0; at < values.size(); at += kChunk) {
    const size_t n = std::min(kChunk, values.size() - at);
    std::copy_n(values.data() + at, n, buf.data());
    quantize(df, std::span<float>(buf.data(), n));
    if (std::memcmp(buf.data(), values.data() + at, n * sizeof(float)) != 0) return false;
  }
  return true;
}

void quantize(DataFormat df, Tensor& t) {
  if (isBfpFormat(df) && t.c % static_cast<int64_t>(kBfpBlock) != 0)
    throw std::invalid_argument("quantize: " + std::string(dataFormatName(df)) +
                                " tensor needs a column count that is a multiple of 16, got " + std::to_string(t.c));
  quantize(df, std::span<float>(t.data));
}

} // namespace tessera::formats
