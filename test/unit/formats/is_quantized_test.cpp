// formats::isQuantized (a read-only "is this already in the format" pass) and
// quantize's store-only-on-change loop. Hand cases first, then agreement with
// quantize-and-compare on random data for every format.
#include "formats/formats.hpp"

#include <catch2/catch.hpp>

#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

using namespace tessera::formats;
using tessera::DataFormat;

namespace {
float f(uint32_t bits) { return std::bit_cast<float>(bits); }

// 40 values (two runs of 16 and a tail of 8) with one chosen value at `at`.
std::vector<float> withValueAt(float v, size_t at) {
  std::vector<float> values(40, 1.0f);
  values[at] = v;
  return values;
}
} // namespace

TEST_CASE("isQuantized on Float16_b: hand cases", "[formats][is-quantized]") {
  // 1.5 = 0x3FC00000: low 16 bits zero, a bfloat16 value.
  CHECK(isQuantized(DataFormat::Float16_b, withValueAt(1.5f, 3)));
  // 1 + 2^-10 = 0x3F802000: bit 13 set, below bfloat16's 7 mantissa bits.
  for (size_t at : {0u, 17u, 39u}) CHECK_FALSE(isQuantized(DataFormat::Float16_b, withValueAt(f(0x3F802000u), at)));
  // A float32 denormal (0x00010000: its low 16 bits are zero) is flushed.
  CHECK_FALSE(isQuantized(DataFormat::Float16_b, withValueAt(f(0x00010000u), 20)));
  // Zeros and infinities are kept; -0 too.
  CHECK(isQuantized(DataFormat::Float16_b, withValueAt(f(0x80000000u), 5)));
  CHECK(isQuantized(DataFormat::Float16_b, withValueAt(f(0xFF800000u), 38)));
  // NaN: only the canonical quiet NaN 0x7FC00000 stays as it is.
  CHECK(isQuantized(DataFormat::Float16_b, withValueAt(f(0x7FC00000u), 9)));
  CHECK_FALSE(isQuantized(DataFormat::Float16_b, withValueAt(f(0xFFC00000u), 9)));
  CHECK_FALSE(isQuantized(DataFormat::Float16_b, withValueAt(f(0x7F810000u), 9)));
  // Empty span: nothing to change.
  CHECK(isQuantized(DataFormat::Float16_b, std::span<const float>()));
}

TEST_CASE("isQuantized finds a change far into a long span", "[formats][is-quantized]") {
  // Past the first 1024-value check point, and in the last partial run.
  std::vector<float> values(5000, 0.25f);
  CHECK(isQuantized(DataFormat::Float16, values));
  values[3000] = f(0x3E800001u); // 0.25 + one float32 ulp
  CHECK_FALSE(isQuantized(DataFormat::Float16, values));
  values[3000] = 0.25f;
  values[4999] = f(0x3E800001u);
  CHECK_FALSE(isQuantized(DataFormat::Float16, values));
}

TEST_CASE("isQuantized agrees with quantize on random data, every format", "[formats][is-quantized]") {
  const DataFormat formats[] = {DataFormat::Float32, DataFormat::Float16, DataFormat::Float16_b, DataFormat::Lf8,
                                DataFormat::Fp8_e4m3, DataFormat::Bfp8_b, DataFormat::Bfp8, DataFormat::Bfp4_b,
                                DataFormat::Int8, DataFormat::Int32};
  std::mt19937 rng(20);
  std::uniform_int_distribution<uint32_t> any;
  for (DataFormat df : formats) {
    for (int round = 0; round < 50; ++round) {
      std::vector<float> values(2048 + 16 * (round % 3));
      for (float& v : values) v = std::bit_cast<float>(any(rng));
      quantize(df, values);
      // Rounded data is in the format: quantize again changes no bit.
      std::vector<float> again = values;
      quantize(df, again);
      REQUIRE(std::memcmp(again.data(), values.data(), values.size() * sizeof(float)) == 0);
      CHECK(isQuantized(df, values));
      // One value moved off the format's grid (a random float there is,
      // for every format here, almost surely not representable).
      const size_t at = any(rng) % values.size();
      values[at] = std::bit_cast<float>((any(rng) & 0x3FFFFFFFu) | 0x00100001u);
      std::vector<float> rounded = values;
      quantize(df, rounded);
      const bool same = std::memcmp(rounded.data(), values.data(), values.size() * sizeof(float)) == 0;
      CHECK(isQuantized(df, values) == same);
    }
  }
}

TEST_CASE("isQuantized on block formats: edge values agree with quantize-and-compare", "[formats][is-quantized]") {
  // Signed zeros, denormals, the range ends, inf and NaN, in whole blocks
  // (the per-block check) and in a span of 40 (not whole blocks: rejected as
  // quantize rejects it).
  const uint32_t edges[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu, 0x00800000u, 0x3F800000u,
                            0xBF800000u, 0x7F7FFFFFu, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x3F810000u,
                            0x3FC00000u, 0x3E000000u, 0x36000000u, 0x01000000u};
  const DataFormat formats[] = {DataFormat::Bfp8_b, DataFormat::Bfp4_b, DataFormat::Bfp2_b,
                                DataFormat::Bfp8, DataFormat::Bfp4, DataFormat::Bfp2};
  std::mt19937 rng(7);
  for (DataFormat df : formats) {
    for (int round = 0; round < 400; ++round) {
      std::vector<float> values(64);
      for (float& v : values) v = f(edges[rng() % std::size(edges)]);
      if (round % 2) quantize(df, values); // half the spans in the format (mostly)
      if (round % 5 == 0) values[rng() % values.size()] = f(edges[rng() % std::size(edges)]);
      std::vector<float> rounded = values;
      quantize(df, rounded);
      const bool same = std::memcmp(rounded.data(), values.data(), values.size() * sizeof(float)) == 0;
      CHECK(isQuantized(df, values) == same);
    }
    CHECK_THROWS(isQuantized(df, std::vector<float>(40, 1.0f)));
  }
}
