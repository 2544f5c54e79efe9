// formats::PackedTensor: the layout each kind of value gets, the bytes it
// takes, and that unpacking gives back every bit (hand blocks, then random
// tensors quantized to every format).
#include "formats/formats.hpp"
#include "formats/packed.hpp"

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

bool sameBits(const Tensor& a, const Tensor& b) {
  return a.sameShape(b) && a.data.size() == b.data.size() &&
         std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)) == 0 && a.rawBits == b.rawBits;
}

Tensor tensorOf(std::vector<float> values) {
  Tensor t(1, 1, 1, static_cast<int64_t>(values.size()));
  t.data = std::move(values);
  return t;
}
} // namespace

TEST_CASE("packed tensor: Block8 for values on a 7-bit grid per 16", "[formats][packed]") {
  // Block of 16: the largest is 1.5 (exponent 0), so the grid is 2^-6: 1.5 =
  // 96/64, -0.25 = -16/64, 2^-6 = 1/64 (the smallest step), 1.984375 = 127/64.
  std::vector<float> v(16, 0.0f);
  v[0] = 1.5f, v[1] = -0.25f, v[2] = 0.015625f, v[3] = 1.984375f, v[4] = f(0x80000000u);  // -0 kept
  Tensor t = tensorOf(v);
  PackedTensor p = PackedTensor::pack(t);
  CHECK(p.layout() == PackedTensor::Layout::Block8);
  CHECK(p.bytes() == 17);  // one exponent byte + 16 codes
  CHECK(sameBits(p.unpack(), t));
  // A tail of 3 after the block: its own exponent (2^10 = 1024: 64 * 16).
  v.insert(v.end(), {1024.0f, -16.0f, 0.0f});
  t = tensorOf(v);
  p = PackedTensor::pack(t);
  CHECK(p.layout() == PackedTensor::Layout::Block8);
  CHECK(p.bytes() == 2 + 19);
  CHECK(sameBits(p.unpack(), t));
}

TEST_CASE("packed tensor: Bf16 and Float32 when Block8 cannot hold a value", "[formats][packed]") {
  // 1 + 2^-7 has 8 significant bits: a bfloat16 value, not on a 7-bit grid.
  Tensor bf = tensorOf({1.0f, f(0x3F810000u)});
  PackedTensor p = PackedTensor::pack(bf);
  CHECK(p.layout() == PackedTensor::Layout::Bf16);
  CHECK(p.bytes() == 4);
  CHECK(sameBits(p.unpack(), bf));
  // 2^-7 beside 1.0: 7 binades below the largest, off the block's grid (2^-6 steps).
  CHECK(PackedTensor::pack(tensorOf({1.0f, 0.0078125f})).layout() == PackedTensor::Layout::Bf16);
  // Denormals, infinities and NaNs never go to Block8.
  for (uint32_t bits : {0x00010000u, 0x7F800000u, 0x7FC00000u})
    CHECK(PackedTensor::pack(tensorOf({1.0f, f(bits)})).layout() == PackedTensor::Layout::Bf16);
  // Low 16 bits set: kept as floats.
  Tensor raw = tensorOf({1.0f, f(0x3F800001u), f(0x00000001u), f(0xFFC00001u)});
  p = PackedTensor::pack(raw);
  CHECK(p.layout() == PackedTensor::Layout::Float32);
  CHECK(p.bytes() == 16);
  CHECK(sameBits(p.unpack(), raw));
  // Exact RawUInt32 words travel along.
  raw.rawBits = {1, 2, 3, 0xFFFFFFFFu};
  CHECK(sameBits(PackedTensor::pack(raw).unpack(), raw));
}

TEST_CASE("packed tensor: every format's values round-trip, in the expected layout", "[formats][packed]") {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  struct Case {
    DataFormat df;
    PackedTensor::Layout layout;
  };
  const Case cases[] = {
      {DataFormat::Bfp8_b, PackedTensor::Layout::Block8}, {DataFormat::Bfp8, PackedTensor::Layout::Block8},
      {DataFormat::Bfp4_b, PackedTensor::Layout::Block8}, {DataFormat::Bfp2_b, PackedTensor::Layout::Block8},
      {DataFormat::Float16_b, PackedTensor::Layout::Bf16}, {DataFormat::Float16, PackedTensor::Layout::Float32},
      {DataFormat::Float32, PackedTensor::Layout::Float32}, {DataFormat::Int8, PackedTensor::Layout::Block8},
  };
  for (const Case& c : cases) {
    Tensor t(2, 1, 64, 64);
    for (float& x : t.data) x = normal(rng) * (c.df == DataFormat::Int8 ? 100.0f : 1.0f);
    quantize(c.df, t);
    const PackedTensor p = PackedTensor::pack(t);
    INFO("format " << static_cast<int>(c.df));
    CHECK(p.layout() == c.layout);
    CHECK(sameBits(p.unpack(), t));
  }
}

TEST_CASE("packed tensor: concatEntries stacks entries like the float one", "[formats][packed]") {
  Tensor a(1, 1, 32, 32, 0.5f), b(1, 1, 32, 32, f(0x3F810000u));
  std::vector<PackedTensor> parts{PackedTensor::pack(a), PackedTensor::pack(b)};
  Tensor all = concatEntries(parts, 1, 32, 32);
  REQUIRE(all.w == 2);
  CHECK(all.data[0] == 0.5f);
  CHECK(all.data[1024] == f(0x3F810000u));
  CHECK(all.rawBits.empty());
  CHECK(concatEntries(std::vector<PackedTensor>{}, 2, 32, 64).w == 0);
}
