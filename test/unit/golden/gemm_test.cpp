// The per-tile matmul kernel of a 16-bit dest (gemmTilesRounded) against
// hand-worked sums and, bit for bit, against the device's order written as
// plain loops here: per tile, each value's dot product summed in float from 0
// with k ascending (multiply, then add), added to C, C rounded to the dest
// format (docs/device-model.md, MATMUL; lib/sim/tile_product.cpp).
#include "golden/gemm.hpp"

#include "formats/formats.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <limits>
#include <random>
#include <vector>

using namespace tessera;
using namespace tessera::golden;

namespace {

// The device's order, one value at a time. (This file is not built with
// -mfma: nothing here is contracted to a fused multiply-add.)
void deviceOrderTiles(std::vector<float>& c, int64_t m, int64_t n, const std::vector<GemmTerm>& terms, int64_t lda,
                      int64_t ldb, int64_t tiles, DataFormat dest) {
  for (int64_t t = 0; t < tiles; ++t) {
    for (const GemmTerm& term : terms)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          float dot = 0.0f;
          for (int64_t k = 0; k < 32; ++k) {
            const float product = term.a[i * lda + t * 32 + k] * term.b[(t * 32 + k) * ldb + j];
            dot = dot + product;
          }
          c[i * n + j] = c[i * n + j] + dot;
        }
    formats::quantize(dest, std::span<float>(c));
  }
}

// What ops.cpp did before the per-tile kernel: Eigen per 64-row panel, term
// and tile, then the panel rounded (the speed benchmark's yardstick).
void eigenTiles(std::vector<float>& c, int64_t m, int64_t n, const std::vector<GemmTerm>& terms, int64_t lda,
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

double threadSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

} // namespace

TEST_CASE("gemm: every column is one chain in k order (no even/odd split, no FMA)", "[golden][gemm]") {
  // A: 4 x 32, ones in k = 0..3. B: 32 x 32, rows 0..3 = 2^24, 1, -2^24, 1.
  // In k order with one rounding per step: 2^24, 2^24 + 1 -> 2^24 (ties to
  // even), 0, 1. Summed as two chains (even k, odd k: what Eigen's AVX2
  // GEBP does for the last 8 of 32 columns, and the kernel did before) it
  // would be 0 + 2 = 2 there.
  const int64_t m = 4, n = 32;
  std::vector<float> a(m * 32, 0.0f), b(32 * n, 0.0f);
  for (int64_t i = 0; i < m; ++i)
    for (int k = 0; k < 4; ++k) a[i * 32 + k] = 1.0f;
  const float rowValues[4] = {16777216.0f, 1.0f, -16777216.0f, 1.0f};
  for (int k = 0; k < 4; ++k)
    for (int64_t j = 0; j < n; ++j) b[k * n + j] = rowValues[k];
  std::vector<float> c(m * n, 0.0f);
  const GemmTerm term{a.data(), b.data()};
  REQUIRE(gemmTilesRounded(c.data(), m, n, std::span<const GemmTerm>(&term, 1), 32, n, 1, DataFormat::Float16_b));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) CHECK(c[i * n + j] == 1.0f);
}

TEST_CASE("gemm: a sum that overflows in k order stays inf in every column", "[golden][gemm]") {
  // The netlist_encoder_device_tilize mismatch, reduced: B rows 0..3 = x, x,
  // -x, -x with x = 1.5 * 2^127. In k order x + x overflows to +inf and stays
  // there (inf - x = inf): every column is +inf, which a Bfp8_b pack
  // saturates to +max. As even and odd chains both give x - x = 0; with other
  // values one chain reaches +inf and the other -inf, whose sum is NaN (which
  // the pack turned into the opposite sign of the device's).
  const int64_t m = 4, n = 32;
  const float x = std::ldexp(1.5f, 127);
  std::vector<float> a(m * 32, 0.0f), b(32 * n, 0.0f);
  for (int64_t i = 0; i < m; ++i)
    for (int k = 0; k < 4; ++k) a[i * 32 + k] = 1.0f;
  const float rowValues[4] = {x, x, -x, -x};
  for (int k = 0; k < 4; ++k)
    for (int64_t j = 0; j < n; ++j) b[k * n + j] = rowValues[k];
  std::vector<float> c(m * n, 0.0f);
  const GemmTerm term{a.data(), b.data()};
  REQUIRE(gemmTilesRounded(c.data(), m, n, std::span<const GemmTerm>(&term, 1), 32, n, 1, DataFormat::Float16_b));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) CHECK(c[i * n + j] == std::numeric_limits<float>::infinity());
  // The same rows negated: -inf everywhere.
  for (float& v : b) v = -v;
  std::fill(c.begin(), c.end(), 0.0f);
  REQUIRE(gemmTilesRounded(c.data(), m, n, std::span<const GemmTerm>(&term, 1), 32, n, 1, DataFormat::Float16_b));
  for (float v : c) CHECK(v == -std::numeric_limits<float>::infinity());
}

TEST_CASE("gemm: the per-tile kernel rounds C to Float16_b after every tile", "[golden][gemm]") {
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
  REQUIRE(gemmTilesRounded(c.data(), m, n, std::span<const GemmTerm>(&term, 1), k, n, 2, DataFormat::Float16_b));
  const float expected[3] = {1.015625f, -1.0078125f, 1.0078125f};
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) CHECK(c[i * n + j] == expected[j % 3]);
}

TEST_CASE("gemm: the per-tile kernel is bit-identical to the device order over many shapes", "[golden][gemm]") {
  std::mt19937 rng(20);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  std::uniform_int_distribution<int> rare(0, 999);
  const auto value = [&] {
    // Mixed magnitudes, so sums cancel and the order shows; a few specials.
    const int pick = rare(rng);
    if (pick == 0) return 0.0f;
    if (pick == 1) return std::ldexp(1.0f, -140); // float32 denormal
    if (pick < 12) return std::ldexp(pick % 2 ? 1.5f : -1.5f, 125); // overflows Float16_b sums: inf, NaN
    return std::ldexp(normal(rng), exponent(rng));
  };
  for (const DataFormat dest : {DataFormat::Float16_b, DataFormat::Float16})
    for (const int64_t m : {1, 4, 6, 32, 64, 96, 128, 200})
      for (const int64_t n : {8, 12, 32, 40, 64, 96, 288, 768, 1024})
        for (const int64_t tiles : {1, 3}) {
          const int64_t k = tiles * 32 + 32; // terms start one tile in: strides wider than the block
          std::vector<float> a0(m * k), a1(m * k), b0(k * n), b1(k * n), c0(m * n);
          for (auto* v : {&a0, &a1, &b0, &b1, &c0})
            for (float& x : *v) x = value();
          formats::quantize(dest, std::span<float>(c0));
          const std::vector<GemmTerm> terms{{a0.data() + 32, b0.data() + 32 * n}, {a1.data() + 32, b1.data() + 32 * n}};
          std::vector<float> expected = c0, kernel = c0;
          deviceOrderTiles(expected, m, n, terms, k, n, tiles, dest);
          REQUIRE(gemmTilesRounded(kernel.data(), m, n, terms, k, n, tiles, dest));
          size_t differ = 0;
          for (size_t i = 0; i < kernel.size(); ++i) differ += bits(kernel[i]) != bits(expected[i]);
          INFO("dest " << netlist::dataFormatName(dest) << " m " << m << " n " << n << " tiles " << tiles);
          CHECK(differ == 0);
        }
}

TEST_CASE("gemm: the per-tile kernel declines only an empty product", "[golden][gemm]") {
  std::vector<float> a(6 * 32, 1.0f), b(32 * 12, 1.0f), c(6 * 12, 0.0f);
  const GemmTerm term{a.data(), b.data()};
  CHECK_FALSE(gemmTilesRounded(c.data(), 0, 8, std::span<const GemmTerm>(&term, 1), 32, 8, 1, DataFormat::Float16_b));
  CHECK_FALSE(gemmTilesRounded(c.data(), 6, 12, std::span<const GemmTerm>(&term, 1), 32, 12, 0, DataFormat::Float16_b));
  for (float v : c) CHECK(v == 0.0f);
}

TEST_CASE("gemm: B packed once, tiles [tile0, tile0 + tiles) of it, bit-identical to the device order",
          "[golden][gemm]") {
  // The matmul's use: one packing of B (whole depth) for several entries' A
  // and for each m_k block. Deep products (more tiles than one chunk of the
  // kernel: 16 for two terms, 32 for one), 1-3 terms, rows and columns that
  // are not multiples of the 8 x 32 kernel, both 16-bit dests.
  std::mt19937 rng(8);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  std::uniform_int_distribution<int> rare(0, 999);
  const auto value = [&] {
    const int pick = rare(rng);
    if (pick == 0) return 0.0f;
    if (pick == 1) return std::ldexp(1.0f, -140);
    if (pick < 8) return std::ldexp(pick % 2 ? 1.5f : -1.5f, 125);
    return std::ldexp(normal(rng), exponent(rng));
  };
  struct Shape { int64_t m, n, depthTiles, tile0, tiles, terms; };
  for (const DataFormat dest : {DataFormat::Float16_b, DataFormat::Float16})
    for (const Shape s : {Shape{8, 32, 1, 0, 1, 1}, Shape{16, 64, 4, 1, 2, 2}, Shape{13, 100, 3, 0, 3, 2},
                          Shape{24, 96, 40, 0, 40, 2}, Shape{8, 64, 40, 3, 35, 1}, Shape{40, 160, 20, 5, 15, 3},
                          Shape{7, 31, 2, 1, 1, 2}, Shape{64, 768, 24, 0, 24, 2}}) {
      const int64_t k = s.depthTiles * 32 + 32; // B starts one tile in: ldb rows wider than the packed depth
      std::vector<std::vector<float>> as(static_cast<size_t>(s.terms)), bs(static_cast<size_t>(s.terms));
      for (auto& a : as) {
        a.resize(static_cast<size_t>(2 * s.m * k)); // two entries' A, stacked
        for (float& x : a) x = value();
      }
      for (auto& b : bs) {
        b.resize(static_cast<size_t>(k * s.n));
        for (float& x : b) x = value();
      }
      std::vector<const float*> bPtrs;
      for (const auto& b : bs) bPtrs.push_back(b.data() + 32 * s.n);
      PackedTerms packed;
      packed.pack(bPtrs, s.n, s.depthTiles * 32, s.n);
      for (int64_t entry = 0; entry < 2; ++entry) {
        std::vector<float> c0(static_cast<size_t>(s.m * s.n));
        for (float& x : c0) x = value();
        formats::quantize(dest, std::span<float>(c0));
        std::vector<GemmTerm> terms;
        std::vector<const float*> aPtrs;
        for (int64_t ti = 0; ti < s.terms; ++ti) {
          const float* a = as[static_cast<size_t>(ti)].data() + entry * s.m * k + 32; // A at inner index 0
          aPtrs.push_back(a);
          terms.push_back({a + s.tile0 * 32, bPtrs[static_cast<size_t>(ti)] + s.tile0 * 32 * s.n});
        }
        std::vector<float> expected = c0, kernel = c0;
        deviceOrderTiles(expected, s.m, s.n, terms, k, s.n, s.tiles, dest);
        REQUIRE(gemmTilesPacked(kernel.data(), s.m, aPtrs, k, packed, s.tile0, s.tiles, dest));
        size_t differ = 0;
        for (size_t i = 0; i < kernel.size(); ++i) differ += bits(kernel[i]) != bits(expected[i]);
        INFO("dest " << netlist::dataFormatName(dest) << " m " << s.m << " n " << s.n << " tile0 " << s.tile0
                     << " tiles " << s.tiles << " terms " << s.terms << " entry " << entry);
        CHECK(differ == 0);
      }
      // Beyond the packed depth, or A for another number of terms: declined.
      std::vector<float> c(static_cast<size_t>(s.m * s.n), 0.0f);
      std::vector<const float*> aPtrs(static_cast<size_t>(s.terms), as[0].data());
      CHECK_FALSE(gemmTilesPacked(c.data(), s.m, aPtrs, k, packed, s.tile0, s.depthTiles - s.tile0 + 1, dest));
      aPtrs.push_back(as[0].data());
      CHECK_FALSE(gemmTilesPacked(c.data(), s.m, aPtrs, k, packed, 0, 1, dest));
    }
}

TEST_CASE("gemm: the kernel's Float16_b rounding of every kind of value matches formats::quantize",
          "[golden][gemm]") {
  // A of zeros: each tile adds +0 to C, so C comes back as C rounded to
  // Float16_b: random bit patterns (NaN payloads, denormals, values that
  // round up to inf or to the smallest normal, ties) through the kernel's
  // in-register rounding against quantize.
  std::mt19937 rng(16);
  std::uniform_int_distribution<uint32_t> any;
  const uint32_t edges[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x007FFFFFu, 0x007F8000u, 0x00800000u,
                            0x807FFFFFu, 0x7F7F7FFFu, 0x7F7F8000u, 0xFF7F8000u, 0x7F7FFFFFu, 0x7F800000u,
                            0xFF800000u, 0x7F800001u, 0xFFC00001u, 0x7FFFFFFFu, 0x3F808000u, 0x3F818000u};
  const int64_t m = 16, n = 64;
  std::vector<float> a(m * 32, 0.0f), b(32 * n, 1.0f), c(m * n);
  for (size_t i = 0; i < c.size(); ++i) {
    const uint32_t u = i < std::size(edges) * 8 ? edges[i % std::size(edges)] ^ (i & 8 ? 0x80000000u : 0u) : any(rng);
    std::memcpy(&c[i], &u, sizeof u);
  }
  std::vector<float> expected = c;
  for (float& x : expected) x = x + 0.0f; // what the tile adds
  formats::quantize(DataFormat::Float16_b, std::span<float>(expected));
  const GemmTerm term{a.data(), b.data()};
  REQUIRE(gemmTilesRounded(c.data(), m, n, std::span<const GemmTerm>(&term, 1), 32, n, 1, DataFormat::Float16_b));
  for (size_t i = 0; i < c.size(); ++i) {
    INFO("value " << i << " bits " << std::hex << bits(expected[i]) << " got " << bits(c[i]));
    CHECK(bits(c[i]) == bits(expected[i]));
  }
}

// scripts/bench-gemm.sh: the per-tile product of a HiFi3 matmul (two terms)
// with a Float16_b dest, bert-base shapes, through the path ops.cpp took
// before (Eigen per 64-row panel, term and tile, then rounding the panel) and
// through the per-tile kernel. Hidden: run by name only.
TEST_CASE("gemm: per-tile product speed", "[.bench]") {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  struct Shape { int64_t m, k, n; };
  for (const Shape s : {Shape{128, 768, 768}, Shape{128, 768, 3072}, Shape{128, 3072, 768}, Shape{128, 64, 128},
                        Shape{128, 768, 32}}) {
    std::vector<float> a0(s.m * s.k), a1(s.m * s.k), b0(s.k * s.n), b1(s.k * s.n);
    for (auto* v : {&a0, &a1, &b0, &b1})
      for (float& x : *v) x = normal(rng);
    const std::vector<GemmTerm> terms{{a0.data(), b0.data()}, {a1.data(), b1.data()}};
    const double flop = 2.0 * 2.0 * static_cast<double>(s.m * s.k * s.n);
    const auto time = [&](const char* name, auto&& run) {
      std::vector<float> c(s.m * s.n, 0.0f);
      double best = 1e30;
      for (int rep = 0; rep < 5; ++rep) {
        // Thread CPU time: the machine is shared, wall time counts the others.
        const double t0 = threadSeconds();
        run(c);
        best = std::min(best, threadSeconds() - t0);
      }
      std::printf("m %4lld k %4lld n %4lld  %-22s %8.3f ms  %6.1f GFLOP/s\n", static_cast<long long>(s.m),
                  static_cast<long long>(s.k), static_cast<long long>(s.n), name, best * 1e3, flop / best * 1e-9);
    };
    time("eigen per panel+tile", [&](std::vector<float>& c) {
      eigenTiles(c, s.m, s.n, terms, s.k, s.n, s.k / 32, DataFormat::Float16_b);
    });
    time("per-tile kernel", [&](std::vector<float>& c) {
      if (!gemmTilesRounded(c.data(), s.m, s.n, terms, s.k, s.n, s.k / 32, DataFormat::Float16_b))
        std::printf("(per-tile kernel declined)\n");
    });
    PackedTerms packed;
    const std::vector<const float*> aPtrs{a0.data(), a1.data()}, bPtrs{b0.data(), b1.data()};
    packed.pack(bPtrs, s.n, s.k, s.n);
    time("packed once", [&](std::vector<float>& c) {
      if (!gemmTilesPacked(c.data(), s.m, aPtrs, s.k, packed, 0, s.k / 32, DataFormat::Float16_b))
        std::printf("(packed kernel declined)\n");
    });
    time("eigen, no tiles", [&](std::vector<float>& c) {
      for (const GemmTerm& t : terms) gemmAccumulate(c.data(), t.a, s.k, t.b, s.n, s.m, s.k, s.n);
    });
  }
}
