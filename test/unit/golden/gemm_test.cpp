// The fused per-tile matmul kernel (gemmTilesRounded) against hand-worked
// sums and, bit for bit, against the path it replaces: gemmAccumulate (Eigen)
// per term and inner tile on panels of 64 rows, the panel rounded to the dest
// format after each tile.
#include "golden/gemm.hpp"

#include "formats/formats.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

using namespace tessera;
using namespace tessera::golden;

namespace {

// What ops.cpp did before the fused kernel (and still does without it).
void referenceTiles(std::vector<float>& c, int64_t m, int64_t n, const std::vector<GemmTerm>& terms, int64_t lda,
                    int64_t ldb, int64_t tiles, DataFormat dest) {
  for (int64_t r0 = 0; r0 < m; r0 += kGemmPanelRows) {
    const int64_t rows = std::min(kGemmPanelRows, m - r0);
    float* part = c.data() + r0 * n;
    for (int64_t t = 0; t < tiles; ++t) {
      for (const GemmTerm& term : terms)
        gemmAccumulate(part, term.a + r0 * lda + t * 32, lda, term.b + t * 32 * ldb, ldb, rows, 32, n);
      formats::quantize(dest, std::span<float>(part, static_cast<size_t>(rows * n)));
    }
  }
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

} // namespace

TEST_CASE("gemm: Eigen sums a last group of 8 columns as even k plus odd k; the fused kernel too", "[golden][gemm]") {
  // A: 4 x 32, ones in k = 0..3. B: 32 x 32, rows 0..3 = 2^24, 1, -2^24, 1.
  // In k order with one rounding per step: 2^24, 2^24 + 1 -> 2^24 (ties to
  // even), 0, 1. As two chains: even k 2^24 - 2^24 = 0, odd k 1 + 1 = 2,
  // sum 2. A 32-column C is one cache block of Eigen's (every dimension < 48):
  // columns 0..23 form a 3-packet group (one chain), 24..31 the 1-packet
  // group (two chains).
  const int64_t m = 4, n = 32;
  std::vector<float> a(m * 32, 0.0f), b(32 * n, 0.0f);
  for (int64_t i = 0; i < m; ++i)
    for (int k = 0; k < 4; ++k) a[i * 32 + k] = 1.0f;
  const float rowValues[4] = {16777216.0f, 1.0f, -16777216.0f, 1.0f};
  for (int k = 0; k < 4; ++k)
    for (int64_t j = 0; j < n; ++j) b[k * n + j] = rowValues[k];

  std::vector<float> eigen(m * n, 0.0f);
  gemmAccumulate(eigen.data(), a.data(), 32, b.data(), n, m, 32, n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) CHECK(eigen[i * n + j] == (j < 24 ? 1.0f : 2.0f));

  std::vector<float> fused(m * n, 0.0f);
  const GemmTerm term{a.data(), b.data()};
  if (!gemmTilesRounded(fused.data(), m, n, std::span<const GemmTerm>(&term, 1), 32, n, 1, DataFormat::Float16_b)) {
    WARN("no fused kernel in this build (" << gemmIsa() << ")");
    return;
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) CHECK(fused[i * n + j] == (j < 24 ? 1.0f : 2.0f));
}

TEST_CASE("gemm: the fused kernel rounds C to Float16_b after every tile", "[golden][gemm]") {
  // A: 4 x 64, a[i][0] = a[i][32] = 1. B: 64 x 8, row 0 = +-(1 + 2^-8) or
  // 1 + 2^-9, row 32 = 2^-8. Tile 0: C = b[0][j], rounded to 8 significant
  // bits (step 2^-7 in [1, 2)), ties away: 1 + 2^-8 -> 1 + 2^-7 = 1.0078125,
  // -(1 + 2^-8) -> -1.0078125, 1 + 2^-9 -> 1. Tile 1 adds 2^-8:
  // 1.0078125 + 0.00390625 = 1 + 1.5 * 2^-7, a tie -> 1 + 2^-6 = 1.015625;
  // -1.0078125 + 0.00390625 = -(1 + 0.5 * 2^-7), a tie -> -1.0078125;
  // 1 + 2^-8 -> 1.0078125. (Rounding once at the end would give 1.0078125,
  // -1, 1.0078125.)
  const int64_t m = 4, n = 8, k = 64;
  std::vector<float> a(m * k, 0.0f), b(k * n, 0.0f);
  for (int64_t i = 0; i < m; ++i) a[i * k] = a[i * k + 32] = 1.0f;
  const float first[3] = {1.00390625f, -1.00390625f, 1.001953125f};
  for (int64_t j = 0; j < n; ++j) {
    b[j] = first[j % 3];
    b[32 * n + j] = 0.00390625f;
  }
  std::vector<float> c(m * n, 0.0f);
  const GemmTerm term{a.data(), b.data()};
  if (!gemmTilesRounded(c.data(), m, n, std::span<const GemmTerm>(&term, 1), k, n, 2, DataFormat::Float16_b)) {
    WARN("no fused kernel in this build (" << gemmIsa() << ")");
    return;
  }
  const float expected[3] = {1.015625f, -1.0078125f, 1.0078125f};
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) CHECK(c[i * n + j] == expected[j % 3]);
}

TEST_CASE("gemm: the fused kernel is bit-identical to per-tile Eigen products over many shapes", "[golden][gemm]") {
  std::mt19937 rng(20);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  std::uniform_int_distribution<int> rare(0, 999);
  const auto value = [&] {
    // Mixed magnitudes, so sums cancel and the order shows; a few specials.
    const int pick = rare(rng);
    if (pick == 0) return 0.0f;
    if (pick == 1) return std::ldexp(1.0f, -140); // float32 denormal
    if (pick == 2) return std::ldexp(1.5f, 125);  // overflows Float16_b sums
    return std::ldexp(normal(rng), exponent(rng));
  };
  for (const DataFormat dest : {DataFormat::Float16_b, DataFormat::Float16})
    for (const int64_t m : {4, 32, 64, 96, 128, 200})
      for (const int64_t n : {8, 32, 64, 96, 128, 256, 288, 512, 768, 1024, 3072})
        for (const int64_t tiles : {1, 3}) {
          const int64_t k = tiles * 32 + 32; // terms start one tile in: strides wider than the block
          std::vector<float> a0(m * k), a1(m * k), b0(k * n), b1(k * n), c0(m * n);
          for (auto* v : {&a0, &a1, &b0, &b1, &c0})
            for (float& x : *v) x = value();
          formats::quantize(dest, std::span<float>(c0));
          const std::vector<GemmTerm> terms{{a0.data() + 32, b0.data() + 32 * n}, {a1.data() + 32, b1.data() + 32 * n}};
          std::vector<float> expected = c0, fused = c0;
          referenceTiles(expected, m, n, terms, k, n, tiles, dest);
          if (!gemmTilesRounded(fused.data(), m, n, terms, k, n, tiles, dest)) {
            WARN("no fused kernel in this build (" << gemmIsa() << ")");
            return;
          }
          size_t differ = 0;
          for (size_t i = 0; i < fused.size(); ++i) differ += bits(fused[i]) != bits(expected[i]);
          INFO("dest " << netlist::dataFormatName(dest) << " m " << m << " n " << n << " tiles " << tiles);
          CHECK(differ == 0);
        }
}

TEST_CASE("gemm: the fused kernel declines shapes it does not reproduce", "[golden][gemm]") {
  std::vector<float> a(6 * 32, 1.0f), b(32 * 12, 1.0f), c(6 * 12, 0.0f);
  const GemmTerm term{a.data(), b.data()};
  CHECK_FALSE(gemmTilesRounded(c.data(), 6, 8, std::span<const GemmTerm>(&term, 1), 32, 8, 1, DataFormat::Float16_b));
  CHECK_FALSE(gemmTilesRounded(c.data(), 4, 12, std::span<const GemmTerm>(&term, 1), 32, 12, 1, DataFormat::Float16_b));
  for (float v : c) CHECK(v == 0.0f);
}

// scripts/bench-gemm.sh: the per-tile product of a HiFi3 matmul (two terms)
// with a Float16_b dest, bert-base shapes, through the path ops.cpp took
// before (Eigen per 64-row panel, term and tile, then rounding the panel) and
// through the fused kernel. Hidden: run by name only.
TEST_CASE("gemm: per-tile product speed", "[.bench]") {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  struct Shape { int64_t m, k, n; };
  for (const Shape s : {Shape{128, 768, 768}, Shape{128, 768, 3072}, Shape{128, 3072, 768}, Shape{128, 64, 128}}) {
    std::vector<float> a0(s.m * s.k), a1(s.m * s.k), b0(s.k * s.n), b1(s.k * s.n);
    for (auto* v : {&a0, &a1, &b0, &b1})
      for (float& x : *v) x = normal(rng);
    const std::vector<GemmTerm> terms{{a0.data(), b0.data()}, {a1.data(), b1.data()}};
    const double flop = 2.0 * 2.0 * static_cast<double>(s.m * s.k * s.n);
    const auto time = [&](const char* name, auto&& run) {
      std::vector<float> c(s.m * s.n, 0.0f);
      double best = 1e30;
      for (int rep = 0; rep < 5; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        run(c);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      std::printf("m %4lld k %4lld n %4lld  %-22s %8.3f ms  %6.1f GFLOP/s\n", static_cast<long long>(s.m),
                  static_cast<long long>(s.k), static_cast<long long>(s.n), name, best * 1e3, flop / best * 1e-9);
    };
    time("eigen per panel+tile", [&](std::vector<float>& c) {
      referenceTiles(c, s.m, s.n, terms, s.k, s.n, s.k / 32, DataFormat::Float16_b);
    });
    time("fused kernel", [&](std::vector<float>& c) {
      if (!gemmTilesRounded(c.data(), s.m, s.n, terms, s.k, s.n, s.k / 32, DataFormat::Float16_b))
        std::printf("(no fused kernel in this build)\n");
    });
    time("eigen, no tiles", [&](std::vector<float>& c) {
      for (const GemmTerm& t : terms) gemmAccumulate(c.data(), t.a, s.k, t.b, s.n, s.m, s.k, s.n);
    });
  }
}
