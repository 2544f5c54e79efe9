// Tiles in L1 and DRAM: header, exponent section, packed values and the face
// order of each data format (docs/data-formats.md, "Tile layout"; tiny tiles too).
#include "formats/formats.hpp"
#include "formats/scalar_codecs.hpp"

#include "support/cpu_features.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#include <stdexcept>
#include <string>
#include <vector>

namespace tessera::formats {
using namespace detail;
namespace {

// ---- tile layout ------------------------------------------------------------
constexpr size_t kExponentBytes = kTileValues / kBfpBlock;

// Bfp tiles carry the 64-byte exponent section. BUDA's size_lib gives Int8 none
// (1056-byte tiles); tessera::tileSizeBytes reserves one for Int8/UInt8, so
// follow whichever size the netlist library declares (section left zero).
bool hasExponentSection(DataFormat df) {
  if (isBfpFormat(df)) return true;
  if (df == DataFormat::Int8 || df == DataFormat::UInt8)
    return tessera::tileSizeBytes(df) >= kTileHeaderBytes + kExponentBytes + kTileValues;
  return false;
}

// Byte width of one value for the byte-aligned formats (Bfp4/Bfp2 are packed).
size_t valueBytes(DataFormat df) {
  switch (df) {
  case DataFormat::Float32: case DataFormat::Int32: case DataFormat::RawUInt32: return 4;
  case DataFormat::Float16: case DataFormat::Float16_b: case DataFormat::UInt16: case DataFormat::RawUInt16:
    return 2;
  default: return 1;
  }
}

// Row-major index of the i-th value in face order (f0 f1 / f2 f3, faces row-major).
constexpr std::array<uint16_t, kTileValues> makeFaceOrder() {
  std::array<uint16_t, kTileValues> order{};
  size_t i = 0;
  for (int face = 0; face < 4; ++face)
    for (int r = 0; r < kFaceDim; ++r)
      for (int c = 0; c < kFaceDim; ++c)
        order[i++] = static_cast<uint16_t>(((face / 2) * kFaceDim + r) * kTileDim + (face % 2) * kFaceDim + c);
  return order;
}
constexpr std::array<uint16_t, kTileValues> kFaceOrder = makeFaceOrder();

// BUDA stores the raw formats as one row-major "megarow", without faces.
constexpr std::array<uint16_t, kTileValues> makeRowOrder() {
  std::array<uint16_t, kTileValues> order{};
  for (size_t i = 0; i < kTileValues; ++i) order[i] = static_cast<uint16_t>(i);
  return order;
}
constexpr std::array<uint16_t, kTileValues> kRowOrder = makeRowOrder();
const std::array<uint16_t, kTileValues>& storageOrder(DataFormat df) {
  return isRawFormat(df) ? kRowOrder : kFaceOrder;
}

void putLE(uint8_t* p, uint32_t v, size_t bytes) {
  for (size_t b = 0; b < bytes; ++b) p[b] = static_cast<uint8_t>(v >> (8 * b));
}
uint32_t getLE(const uint8_t* p, size_t bytes) {
  uint32_t v = 0;
  for (size_t b = 0; b < bytes; ++b) v |= static_cast<uint32_t>(p[b]) << (8 * b);
  return v;
}

// Code of one value in a non-Bfp format (width valueBytes(df)).
uint32_t encodeScalar(DataFormat df, float v) {
  switch (df) {
  case DataFormat::Float32: return F32::encode(v);
  case DataFormat::Float16: return F16::encode(v);
  case DataFormat::Float16_b: return BF16::encode(v);
  case DataFormat::Lf8: return LF8::encode(v);
  case DataFormat::Fp8_e4m3: return FP8E4M3::encode(v);
  case DataFormat::Int8: {
    const int64_t n = toInt(v, -127, 127);
    return n < 0 ? 0x80u | static_cast<uint32_t>(-n) : static_cast<uint32_t>(n);
  }
  case DataFormat::Int32: {
    const int64_t n = toInt(v, intRange(df).lo, intRange(df).hi);
    return n < 0 ? 0x80000000u | static_cast<uint32_t>(-n) : static_cast<uint32_t>(n);
  }
  default: { // unsigned and raw formats
    const IntRange range = intRange(df);
    return static_cast<uint32_t>(toInt(v, range.lo, range.hi));
  }
  }
}

float decodeScalar(DataFormat df, uint32_t code) {
  switch (df) {
  case DataFormat::Float32: return F32::decode(code);
  case DataFormat::Float16: return F16::decode(code);
  case DataFormat::Float16_b: return BF16::decode(code);
  case DataFormat::Lf8: return LF8::decode(code);
  case DataFormat::Fp8_e4m3: return FP8E4M3::decode(code);
  case DataFormat::Int8: {
    const float mag = static_cast<float>(code & 0x7F);
    return (code & 0x80) && mag != 0.0f ? -mag : mag;
  }
  case DataFormat::Int32: {
    const auto mag = static_cast<float>(code & 0x7FFFFFFFu);
    return (code & 0x80000000u) && mag != 0.0f ? -mag : mag;
  }
  default: return static_cast<float>(code);
  }
}

// Codes of Width bytes, little-endian, in storage order.
template <size_t Width, class Encode>
void packValues(uint8_t* data, const std::array<uint16_t, kTileValues>& order, std::span<const float, kTileValues> rowMajor,
                Encode encode) {
  for (size_t v = 0; v < kTileValues; ++v) {
    const uint32_t code = encode(rowMajor[order[v]]);
    for (size_t b = 0; b < Width; ++b) data[v * Width + b] = static_cast<uint8_t>(code >> (8 * b));
  }
}
template <size_t Width, class Decode>
void unpackValues(const uint8_t* data, const std::array<uint16_t, kTileValues>& order, std::span<float, kTileValues> rowMajor,
                  Decode decode) {
  for (size_t v = 0; v < kTileValues; ++v) {
    uint32_t code = 0;
    for (size_t b = 0; b < Width; ++b) code |= static_cast<uint32_t>(data[v * Width + b]) << (8 * b);
    rowMajor[order[v]] = decode(code);
  }
}

// decodeBfpValue over a whole tile, the block's scale computed once: the
// value is mag x (2^(shared - bias) / 2^(MagBits-1)), that unit a power of
// two (normal or a float32 denormal, exact either way), so the product is
// exactly decodeBfpValue's, flushed the same way below FLT_MIN. The
// simulator unpacks every Bfp tile it reads through here.
template <int MagBits>
void unpackBfpValues(const BfpSpec& s, const uint8_t* exponents, const uint8_t* data,
                     std::span<float, kTileValues> rowMajor) {
  constexpr unsigned kBits = MagBits + 1, kPerByte = 8 / kBits, kCodeMask = (1u << kBits) - 1;
  constexpr unsigned kMagMaskBits = (1u << MagBits) - 1;
  constexpr float kPerUnit = 1.0f / static_cast<float>(1u << (MagBits - 1));
  // A block whose unit is normal and finite needs one multiply per value:
  // (-m) x unit is exactly -(m x unit), no product but 0 falls below
  // FLT_MIN, none is a NaN whose sign the negation would flip.
  for (size_t block = 0; block < kExponentBytes; ++block) {
    const float unit = floatOf(static_cast<uint32_t>(exponents[block] - s.expBias + 127) << 23) * kPerUnit;
    // A block is one face row: 16 consecutive values of the row-major tile.
    float* out = rowMajor.data() + kFaceOrder[block * kBfpBlock];
    if (unit >= std::numeric_limits<float>::min() && unit <= std::numeric_limits<float>::max()) {
      // The signed magnitude without the table (the sign bit or-ed onto
      // the magnitude's float, -0.0 included), through local copies in and
      // out (no aliasing for -O2's cost model to check at run time): the
      // loop vectorizes.
      uint8_t raw[kBfpBlock / kPerByte];
      std::memcpy(raw, data + block * kBfpBlock / kPerByte, sizeof raw);
      float values[kBfpBlock];
      for (size_t i = 0; i < kBfpBlock; ++i) {
        const uint32_t code = (raw[i / kPerByte] >> ((i % kPerByte) * kBits)) & kCodeMask;
        const uint32_t m = std::bit_cast<uint32_t>(static_cast<float>(static_cast<int32_t>(code & kMagMaskBits)));
        values[i] = std::bit_cast<float>(m | (((code >> MagBits) & 1u) << 31)) * unit;
      }
      std::memcpy(out, values, sizeof values);
      continue;
    }
    for (size_t i = 0; i < kBfpBlock; ++i) {
      const size_t v = block * kBfpBlock + i;
      const unsigned code = (data[v / kPerByte] >> ((v % kPerByte) * kBits)) & kCodeMask;
      float x = static_cast<float>(code & kMagMaskBits) * unit;
      if (x < std::numeric_limits<float>::min()) x = 0.0f;
      out[i] = (code >> MagBits) & 1u ? -x : x;
    }
  }
}

// encodeBfpBlock of one whole block (16 values) without data-dependent
// branches, so the 16 lanes vectorize (AVX2's per-lane shifts): the
// simulator packs every Bfp tile it writes through here, and the plain
// encoder's branches per value were a tenth of a training netlist's chip
// time. The same codes as encodeBfpBlock: a flushed lane or a shift past
// 24 rounds to 0 ((sig + 2^(shift-1)) >> shift is 0 for sig < 2^24 and
// shift >= 25, the clamp to 31 keeps the shift defined), a zero code loses
// its sign. test/unit/formats/reference_test.cpp checks the packer against
// quantize() and a plain double-arithmetic rounding.
template <int MagBits, int ExpMin, int ExpMax, int ExpBias>
[[gnu::always_inline]] inline uint8_t encodeBfpCodes(const float* values, uint8_t* codes) {
  constexpr uint32_t kMaxMag = (1u << MagBits) - 1;
  int32_t exps[kBfpBlock], sigs[kBfpBlock];
  uint32_t signs[kBfpBlock];
  const int32_t shared = bfpBlockLanes<ExpMin, ExpMax>(values, exps, sigs);
  for (size_t i = 0; i < kBfpBlock; ++i) signs[i] = (bitsOf(values[i]) >> 31) << MagBits;
  if (shared == kBfpDeadExponent) { // all zero: exponent byte 0, codes +0
    std::memset(codes, 0, kBfpBlock);
    return 0;
  }
  for (size_t i = 0; i < kBfpBlock; ++i) {
    int32_t shift = shared - exps[i] + (24 - MagBits);
    shift = shift < 31 ? shift : 31;
    uint32_t rounded = (static_cast<uint32_t>(sigs[i]) + (1u << (shift - 1))) >> shift;
    rounded = rounded < kMaxMag ? rounded : kMaxMag;
    codes[i] = static_cast<uint8_t>(rounded != 0 ? (signs[i] | rounded) : 0u);
  }
  return static_cast<uint8_t>(shared + ExpBias);
}

// A whole tile's blocks (face rows), the codes packed with the values per
// byte a compile-time constant, first value in the lowest bits of its byte.
template <int MagBits, int ExpMin, int ExpMax, int ExpBias>
[[gnu::always_inline]] inline void packBfpTile(const float* rowMajor, uint8_t* exponents, uint8_t* data) {
  constexpr unsigned kBits = MagBits + 1, kPerByte = 8 / kBits, kBlockBytes = kBfpBlock / kPerByte;
  for (size_t b = 0; b < kExponentBytes; ++b) {
    uint8_t codes[kBfpBlock];
    exponents[b] = encodeBfpCodes<MagBits, ExpMin, ExpMax, ExpBias>(rowMajor + kFaceOrder[b * kBfpBlock], codes);
    for (size_t i = 0; i < kBlockBytes; ++i) {
      unsigned byte = 0;
      for (size_t j = 0; j < kPerByte; ++j) byte |= static_cast<unsigned>(codes[i * kPerByte + j]) << (j * kBits);
      data[b * kBlockBytes + i] = static_cast<uint8_t>(byte);
    }
  }
}
#define TESSERA_BFP_PACK(name, magBits, expMin, expMax, expBias)                                  \
  TESSERA_SIMD_CLONES void name(const float* rowMajor, uint8_t* exponents, uint8_t* data) {      \
    packBfpTile<magBits, expMin, expMax, expBias>(rowMajor, exponents, data);                   \
  }
TESSERA_BFP_PACK(packBfp8bTile, 7, -126, 127, 127)
TESSERA_BFP_PACK(packBfp4bTile, 3, -126, 127, 127)
TESSERA_BFP_PACK(packBfp2bTile, 1, -126, 127, 127)
TESSERA_BFP_PACK(packBfp8Tile, 7, -15, 16, 15)
TESSERA_BFP_PACK(packBfp4Tile, 3, -15, 16, 15)
TESSERA_BFP_PACK(packBfp2Tile, 1, -15, 16, 15)
#undef TESSERA_BFP_PACK

#if defined(__x86_64__) && defined(__GNUC__)
#define TESSERA_BFP8B_PACK_AVX512 1
// packBfp8bTile in AVX-512 intrinsics, a block (16 values) per register:
// the simulator packs every Bfp8_b tile it writes (1.3 us a tile with the
// AVX2 clone: GCC's block maximum and byte packing were most of it). The
// same steps as encodeBfpCodes<7, -126, 127, 127>, lane for lane: a lane is
// live when its exponent field is not 0 (e >= -126), saturated when inf or
// NaN (e > 127 only there); reference_test.cpp checks the packer on this
// CPU against quantize() and a plain double-arithmetic rounding.
__attribute__((target("avx512f"))) void packBfp8bTileAvx512(const float* rowMajor, uint8_t* exponents, uint8_t* data) {
  constexpr int32_t kDead = -1024;
  const __m512i magMask = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000);
  const __m512i manMask = _mm512_set1_epi32(0x7FFFFF), implicit = _mm512_set1_epi32(0x800000);
  const __m512i one = _mm512_set1_epi32(1), zero = _mm512_setzero_si512();
  for (size_t b = 0; b < kExponentBytes; ++b) {
    const __m512i u = _mm512_loadu_si512(rowMajor + kFaceOrder[b * kBfpBlock]);
    const __m512i mag = _mm512_and_si512(u, magMask);
    const __m512i field = _mm512_srli_epi32(mag, 23);
    const __mmask16 special = _mm512_cmpge_epi32_mask(mag, inf);
    const __mmask16 live = special | _mm512_cmpneq_epi32_mask(field, zero);
    const __m512i sig = _mm512_mask_mov_epi32(_mm512_or_si512(_mm512_and_si512(mag, manMask), implicit), special,
                                              _mm512_set1_epi32(0xFFFFFF));
    __m512i exps = _mm512_mask_mov_epi32(_mm512_sub_epi32(field, _mm512_set1_epi32(127)), special, _mm512_set1_epi32(127));
    exps = _mm512_mask_mov_epi32(_mm512_set1_epi32(kDead), live, exps);
    const int32_t shared = _mm512_reduce_max_epi32(exps);
    if (shared == kDead) {  // all zero: exponent byte 0, codes +0 (packTile zeroed them)
      exponents[b] = 0;
      continue;
    }
    const __m512i shift = _mm512_min_epi32(
        _mm512_add_epi32(_mm512_sub_epi32(_mm512_set1_epi32(shared), exps), _mm512_set1_epi32(24 - 7)),
        _mm512_set1_epi32(31));
    const __m512i half = _mm512_sllv_epi32(one, _mm512_sub_epi32(shift, one));
    const __m512i rounded = _mm512_min_epu32(_mm512_srlv_epi32(_mm512_add_epi32(sig, half), shift), _mm512_set1_epi32(127));
    const __m512i sign = _mm512_slli_epi32(_mm512_srli_epi32(u, 31), 7);
    const __m512i code = _mm512_maskz_mov_epi32(_mm512_test_epi32_mask(rounded, rounded), _mm512_or_si512(sign, rounded));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(data + b * kBfpBlock), _mm512_cvtepi32_epi8(code));
    exponents[b] = static_cast<uint8_t>(shared + 127);
  }
}
#endif

void packBfp8bTileBest(const float* rowMajor, uint8_t* exponents, uint8_t* data) {
#ifdef TESSERA_BFP8B_PACK_AVX512
  if (cpuHasAvx512f()) return packBfp8bTileAvx512(rowMajor, exponents, data);
#endif
  packBfp8bTile(rowMajor, exponents, data);
}


void checkTileBuffer(DataFormat df, size_t have, const char* what) {
  if (have < tileBytes(df))
    throw std::invalid_argument(std::string(what) + ": buffer of " + std::to_string(have) + " bytes, a " +
                                std::string(dataFormatName(df)) + " tile needs " +
                                std::to_string(tileBytes(df)));
}

} // namespace

size_t tileBytes(DataFormat df) {
  // Header, optional exponent section, packed values, padded to 32 bytes.
  size_t data = 0;
  switch (df) {
  case DataFormat::Bfp4: case DataFormat::Bfp4_b: data = kTileValues / 2; break;
  case DataFormat::Bfp2: case DataFormat::Bfp2_b: data = kTileValues / 4; break;
  default: data = kTileValues * valueBytes(df); break;
  }
  const size_t raw = kTileHeaderBytes + (hasExponentSection(df) ? kExponentBytes : 0) + data;
  return (raw + 31) / 32 * 32;
}

TESSERA_WIDE_CLONES void packTile(DataFormat df, std::span<const float, kTileValues> rowMajor, std::span<uint8_t> out) {
  checkTileBuffer(df, out.size(), "packTile");
  const size_t total = tileBytes(df);
  uint8_t* p = out.data();
  std::memset(p, 0, total);
  putLE(p, static_cast<uint32_t>(total / 16), 4); // header word 0: tile size in 16-byte units
  uint8_t* exponents = p + kTileHeaderBytes;
  uint8_t* data = exponents + (hasExponentSection(df) ? kExponentBytes : 0);

  switch (df) {
  case DataFormat::Bfp8_b: return packBfp8bTileBest(rowMajor.data(), exponents, data);
  case DataFormat::Bfp4_b: return packBfp4bTile(rowMajor.data(), exponents, data);
  case DataFormat::Bfp2_b: return packBfp2bTile(rowMajor.data(), exponents, data);
  case DataFormat::Bfp8: return packBfp8Tile(rowMajor.data(), exponents, data);
  case DataFormat::Bfp4: return packBfp4Tile(rowMajor.data(), exponents, data);
  case DataFormat::Bfp2: return packBfp2Tile(rowMajor.data(), exponents, data);
  default: break;
  }
  const auto& order = storageOrder(df);
  // One loop per format (the switch once per tile, not per value): tiles are
  // packed and unpacked for every tile the simulator moves through L1.
  switch (df) {
  case DataFormat::Float32: return packValues<4>(data, order, rowMajor, [](float v) { return F32::encode(v); });
  case DataFormat::Float16: return packValues<2>(data, order, rowMajor, [](float v) { return F16::encode(v); });
  case DataFormat::Float16_b: {
    // BF16::encode per face row without branches (it vectorizes): the
    // rounded float's top half, the canonical NaN's included (0x7FC0).
    static_assert(std::endian::native == std::endian::little, "tile bytes are little-endian");
    for (size_t b = 0; b < kTileValues / kBfpBlock; ++b) {
      uint32_t bits[kBfpBlock];
      std::memcpy(bits, rowMajor.data() + order[b * kBfpBlock], sizeof bits);
      uint16_t codes[kBfpBlock];
      for (size_t i = 0; i < kBfpBlock; ++i) codes[i] = static_cast<uint16_t>(BF16::roundSelect(bits[i]) >> 16);
      std::memcpy(data + b * kBfpBlock * 2, codes, sizeof codes);
    }
    return;
  }
  default: break;
  }
  const size_t width = valueBytes(df);
  for (size_t v = 0; v < kTileValues; ++v) putLE(data + v * width, encodeScalar(df, rowMajor[order[v]]), width);
}

TESSERA_WIDE_CLONES void unpackTile(DataFormat df, std::span<const uint8_t> in, std::span<float, kTileValues> rowMajor) {
  checkTileBuffer(df, in.size(), "unpackTile");
  const uint8_t* exponents = in.data() + kTileHeaderBytes;
  const uint8_t* data = exponents + (hasExponentSection(df) ? kExponentBytes : 0);

  if (isBfpFormat(df)) {
    const BfpSpec s = bfpSpec(df);
    switch (s.magBits) {
    case 7: return unpackBfpValues<7>(s, exponents, data, rowMajor);
    case 3: return unpackBfpValues<3>(s, exponents, data, rowMajor);
    default: return unpackBfpValues<1>(s, exponents, data, rowMajor);
    }
  }
  const auto& order = storageOrder(df);
  switch (df) {
  case DataFormat::Float32: return unpackValues<4>(data, order, rowMajor, [](uint32_t c) { return F32::decode(c); });
  case DataFormat::Float16: return unpackValues<2>(data, order, rowMajor, [](uint32_t c) { return F16::decode(c); });
  case DataFormat::Float16_b: {
    // BF16::decode per face row (16 row-major values), without branches so
    // that it vectorizes: the code is the float's top half, but for zero
    // fields (signed zero) and NaN (the canonical quiet NaN).
    static_assert(std::endian::native == std::endian::little, "tile bytes are little-endian");
    for (size_t b = 0; b < kTileValues / kBfpBlock; ++b) {
      uint16_t codes[kBfpBlock];
      std::memcpy(codes, data + b * kBfpBlock * 2, sizeof codes);
      uint32_t bits[kBfpBlock];
      for (size_t i = 0; i < kBfpBlock; ++i) {
        const uint32_t c = codes[i], field = (c >> 7) & 0xFFu;
        uint32_t u = c << 16;
        u = field == 0 ? (u & kSignBit) : u;
        bits[i] = (field == 0xFFu && (c & 0x7Fu) != 0) ? kF32QuietNaN : u;
      }
      std::memcpy(rowMajor.data() + order[b * kBfpBlock], bits, sizeof bits);
    }
    return;
  }
  default: break;
  }
  const size_t width = valueBytes(df);
  for (size_t v = 0; v < kTileValues; ++v) rowMajor[order[v]] = decodeScalar(df, getLE(data + v * width, width));
}

// ---- tiny tiles ------------------------------------------------------------
namespace {

// Row-major (32x32 register view) index of each stored value of a tile shape.
std::vector<uint16_t> tinyStorageOrder(DataFormat df, TileShape s) {
  std::vector<uint16_t> order;
  order.reserve(s.values());
  if (isRawFormat(df)) {  // one row-major run, as for 32x32
    for (uint32_t r = 0; r < s.r; ++r)
      for (uint32_t c = 0; c < s.c; ++c) order.push_back(static_cast<uint16_t>(r * kTileDim + c));
    return order;
  }
  const uint32_t faceR = std::min<uint32_t>(s.r, kFaceDim), faceC = std::min<uint32_t>(s.c, kFaceDim);
  for (uint32_t fy = 0; fy < (s.r + kFaceDim - 1) / kFaceDim; ++fy)
    for (uint32_t fx = 0; fx < (s.c + kFaceDim - 1) / kFaceDim; ++fx)
      for (uint32_t r = 0; r < faceR; ++r)
        for (uint32_t c = 0; c < faceC; ++c)
          order.push_back(static_cast<uint16_t>((fy * kFaceDim + r) * kTileDim + fx * kFaceDim + c));
  return order;
}

// Exponent section bytes: one per 16 values, a partial-face tile's padded to 16.
size_t tinyExponentBytes(DataFormat df, TileShape s) {
  if (!hasExponentSection(df)) return 0;
  return s.r < kFaceDim ? kBfpBlock : s.values() / kBfpBlock;
}

size_t tinyDataBytes(DataFormat df, TileShape s) {
  switch (df) {
  case DataFormat::Bfp4: case DataFormat::Bfp4_b: return s.values() / 2;
  case DataFormat::Bfp2: case DataFormat::Bfp2_b: return s.values() / 4;
  default: return s.values() * valueBytes(df);
  }
}

void checkShape(TileShape s, const char* what) {
  if (!isSupportedTileShape(s))
    throw std::invalid_argument(std::string(what) + ": tile shape " + std::to_string(s.r) + "x" + std::to_string(s.c) +
                                " is not 32x32, 32x16 or 1/2/4/8/16x32");
}

} // namespace

bool isSupportedTileShape(TileShape s) {
  if (s.c == 32) return s.r == 1 || s.r == 2 || s.r == 4 || s.r == 8 || s.r == 16 || s.r == 32;
  return s.c == 16 && s.r == 32;
}

size_t tileBytes(DataFormat df, TileShape s) {
  if (s.full()) return tileBytes(df);
  // The 16 padding bytes after the values are dropped when the 16-byte
  // exponent section of a partial-face Bfp tile already aligns it (size_lib).
  const bool partialBfp = s.r < kFaceDim && hasExponentSection(df);
  return kTileHeaderBytes + tinyExponentBytes(df, s) + tinyDataBytes(df, s) + (partialBfp ? 0 : 16);
}

void packTile(DataFormat df, TileShape s, std::span<const float, kTileValues> rowMajor, std::span<uint8_t> out) {
  if (s.full()) return packTile(df, rowMajor, out);
  checkShape(s, "packTile");
  const size_t total = tileBytes(df, s);
  if (out.size() < total)
    throw std::invalid_argument("packTile: buffer of " + std::to_string(out.size()) + " bytes, the tile needs " +
                                std::to_string(total));
  uint8_t* p = out.data();
  std::memset(p, 0, total);
  putLE(p, static_cast<uint32_t>(total / 16), 4);
  uint8_t* exponents = p + kTileHeaderBytes;
  uint8_t* data = exponents + tinyExponentBytes(df, s);
  const std::vector<uint16_t> order = tinyStorageOrder(df, s);
  if (isBfpFormat(df)) {
    const BfpSpec spec = bfpSpec(df);
    const unsigned bits = static_cast<unsigned>(spec.magBits + 1), perByte = 8u / bits;
    std::array<float, kBfpBlock> block{};
    for (size_t b = 0; b < order.size() / kBfpBlock; ++b) {
      for (size_t i = 0; i < kBfpBlock; ++i) block[i] = rowMajor[order[b * kBfpBlock + i]];
      const BfpBlock enc = encodeBfpBlock(spec, block.data(), kBfpBlock);
      exponents[b] = enc.exponent;
      for (size_t i = 0; i < kBfpBlock; ++i) {
        const size_t v = b * kBfpBlock + i;
        data[v / perByte] = static_cast<uint8_t>(data[v / perByte] | (enc.codes[i] << ((v % perByte) * bits)));
      }
    }
    return;
  }
  const size_t width = valueBytes(df);
  for (size_t v = 0; v < order.size(); ++v) putLE(data + v * width, encodeScalar(df, rowMajor[order[v]]), width);
}

void unpackTile(DataFormat df, TileShape s, std::span<const uint8_t> in, std::span<float, kTileValues> rowMajor) {
  if (s.full()) return unpackTile(df, in, rowMajor);
  checkShape(s, "unpackTile");
  if (in.size() < tileBytes(df, s))
    throw std::invalid_argument("unpackTile: buffer of " + std::to_string(in.size()) + " bytes, the tile needs " +
                                std::to_string(tileBytes(df, s)));
  std::fill(rowMajor.begin(), rowMajor.end(), 0.0f);
  const uint8_t* exponents = in.data() + kTileHeaderBytes;
  const uint8_t* data = exponents + tinyExponentBytes(df, s);
  const std::vector<uint16_t> order = tinyStorageOrder(df, s);
  if (isBfpFormat(df)) {
    const BfpSpec spec = bfpSpec(df);
    const unsigned bits = static_cast<unsigned>(spec.magBits + 1), perByte = 8u / bits;
    for (size_t v = 0; v < order.size(); ++v) {
      const unsigned code = (data[v / perByte] >> ((v % perByte) * bits)) & ((1u << bits) - 1);
      rowMajor[order[v]] = decodeBfpValue(spec, exponents[v / kBfpBlock], static_cast<uint8_t>(code));
    }
    return;
  }
  const size_t width = valueBytes(df);
  for (size_t v = 0; v < order.size(); ++v) rowMajor[order[v]] = decodeScalar(df, getLE(data + v * width, width));
}

} // namespace tessera::formats
