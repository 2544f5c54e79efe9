// The coprocessor's tile product (lib/sim/tile_product.cpp): whichever vector
// variant this CPU picks must give the bits of the plain float loop.
#include "sim/tile_product.hpp"

#include <catch2/catch.hpp>

#include <bit>
#include <cstdint>
#include <random>

using tessera::sim::copmath::addProduct;
using tessera::sim::copmath::addProductReference;
using tessera::sim::copmath::kDim;
using tessera::sim::copmath::kValues;
using tessera::sim::copmath::Tile;

namespace {

// The definition, written out again here: per output, a float sum from 0 with
// k ascending, then added to acc. (This file is built for the baseline
// x86-64 ISA, which has no FMA, so nothing here is contracted.)
void definition(const Tile& lhs, const Tile& rhs, Tile& acc) {
  for (size_t i = 0; i < kDim; ++i)
    for (size_t j = 0; j < kDim; ++j) {
      float dot = 0.0f;
      for (size_t k = 0; k < kDim; ++k) dot = dot + lhs[i * kDim + k] * rhs[k * kDim + j];
      acc[i * kDim + j] = acc[i * kDim + j] + dot;
    }
}

size_t differingBits(const Tile& a, const Tile& b) {
  size_t n = 0;
  for (size_t i = 0; i < kValues; ++i) n += std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i]);
  return n;
}

} // namespace

TEST_CASE("tile product: identity times a tile adds the tile", "[sim][tile_product]") {
  Tile eye{}, rhs{}, acc{};
  for (size_t i = 0; i < kDim; ++i) eye[i * kDim + i] = 1.0f;
  for (size_t v = 0; v < kValues; ++v) {
    rhs[v] = static_cast<float>(v) * 0.25f;
    acc[v] = 1.0f;
  }
  addProduct(eye, rhs, acc);
  CHECK(acc[0] == 1.0f);
  CHECK(acc[1] == 1.25f);
  CHECK(acc[33] == 1.0f + 33 * 0.25f);
  CHECK(acc[1023] == 1.0f + 1023 * 0.25f);
}

TEST_CASE("tile product: rounds after every multiply and add (no FMA)", "[sim][tile_product]") {
  // Output (0,0) sums two terms: 1 * -(1 + 2^-11), exact, then
  // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24, which rounds (a tie, to even) to
  // 1 + 2^-11: the sum is 0. An FMA would add the unrounded product and
  // leave 2^-24.
  Tile lhs{}, rhs{}, acc{};
  lhs[0] = 1.0f;
  lhs[1] = 1.0f + 0x1p-12f;
  rhs[0 * kDim] = -(1.0f + 0x1p-11f);
  rhs[1 * kDim] = 1.0f + 0x1p-12f;
  addProduct(lhs, rhs, acc);
  CHECK(acc[0] == 0.0f);
}

TEST_CASE("tile product: every variant gives the plain loop's bits", "[sim][tile_product]") {
  std::mt19937 gen(20261128);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  std::uniform_int_distribution<int> pick(0, 15);
  for (int round = 0; round < 50; ++round) {
    Tile lhs, rhs, acc;
    for (size_t v = 0; v < kValues; ++v) {
      // Mostly ordinary values, some zeros, huge and tiny ones (sums that
      // cancel, lose bits or reach denormals).
      auto value = [&] {
        switch (pick(gen)) {
        case 0: return 0.0f;
        case 1: return uniform(gen) * 1e30f;
        case 2: return uniform(gen) * 1e-30f;
        default: return uniform(gen);
        }
      };
      lhs[v] = value();
      rhs[v] = value();
      acc[v] = value();
    }
    Tile fast = acc, plain = acc, written = acc;
    for (int term = 0; term < 3; ++term) {  // a few terms accumulated, as HiFi3 and u_kt do
      addProduct(lhs, rhs, fast);
      addProductReference(lhs, rhs, plain);
      definition(lhs, rhs, written);
    }
    INFO("round " << round);
    CHECK(differingBits(fast, written) == 0);
    CHECK(differingBits(plain, written) == 0);
  }
}
