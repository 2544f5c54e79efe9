#include "golden/gemm.hpp"

#include "formats/formats.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <vector>

#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
#include <immintrin.h>
#define TESSERA_GEMM_TILES 1
#else
#define TESSERA_GEMM_TILES 0
#endif

namespace tessera::golden {

void gemmAccumulate(float* c, const float* a, int64_t lda, const float* b, int64_t ldb, int64_t m, int64_t k,
                    int64_t n) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Strided = Eigen::Map<const RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;
  Eigen::Map<RowMajor> acc(c, m, n);
  Strided lhs(a, m, k, Eigen::OuterStride<>(lda));
  Strided rhs(b, k, n, Eigen::OuterStride<>(ldb));
  acc.noalias() += lhs * rhs;
}

#if TESSERA_GEMM_TILES
namespace {

constexpr int64_t kTileK = 32;
constexpr int64_t kVec = 8; // floats per AVX2 register

// Eigen 3.4's GEBP (Eigen/src/Core/products/GeneralBlockPanelKernel.h), for
// a row-major C, computes C^T = B^T A^T: its "rows" are C's columns, taken in
// cache blocks of mc columns; within a block, groups of 24 and 16 columns sum
// each C value's products in k order with one FMA chain, but a last group of 8
// (lhs_process_one_packet) sums even k and odd k in two chains and adds them.
// Every chain is then added to C (one rounding). This marks, per group of 8
// columns, which of the two orders gemmAccumulate(rows x 32 x n) uses.
// Returns false for a blocking this kernel does not reproduce.
bool splitGroups(int64_t rows, int64_t n, std::vector<uint8_t>& split) {
  Eigen::Index kc = kTileK, mc = n, nc = rows;
  Eigen::internal::computeProductBlockingSizes<float, float, 1, Eigen::Index>(kc, mc, nc, 1);
  if (kc != kTileK || mc < 1) return false;
  split.assign(static_cast<size_t>(n / kVec), 0);
  for (int64_t i2 = 0; i2 < n; i2 += mc) {
    const int64_t cols = std::min<int64_t>(i2 + mc, n) - i2;
    const int64_t p3 = cols / (3 * kVec) * (3 * kVec);
    const int64_t p2 = p3 + (cols - p3) / (2 * kVec) * (2 * kVec);
    const int64_t p1 = p2 + (cols - p2) / kVec * kVec;
    if (p1 != cols || i2 % kVec != 0) return false; // half-packet paths: not reproduced
    for (int64_t col = p2; col < p1; col += kVec) split[static_cast<size_t>((i2 + col) / kVec)] = 1;
  }
  return true;
}

// Float16_b rounding (formats::quantize: ties away from zero, denormals
// flushed, overflow to inf, NaN canonical) of 8 values, branch-free.
inline __m256 roundBf16(__m256 x) {
  const __m256i u = _mm256_castps_si256(x);
  const __m256i sign = _mm256_and_si256(u, _mm256_set1_epi32(static_cast<int>(0x80000000u)));
  const __m256i mag = _mm256_and_si256(u, _mm256_set1_epi32(0x7FFFFFFF));
  const __m256i inf = _mm256_set1_epi32(0x7F800000);
  const __m256i minNormal = _mm256_set1_epi32(0x00800000);
  // Magnitudes are below 2^31, so signed compares are exact (a NaN's sum may
  // wrap; the NaN select below overrides it).
  __m256i r = _mm256_and_si256(_mm256_add_epi32(mag, _mm256_set1_epi32(0x8000)),
                               _mm256_set1_epi32(static_cast<int>(0xFFFF0000u)));
  r = _mm256_blendv_epi8(r, inf, _mm256_cmpgt_epi32(r, _mm256_set1_epi32(0x7F7F0000))); // overflow
  r = _mm256_andnot_si256(_mm256_cmpgt_epi32(minNormal, r), r);                         // would be denormal
  r = _mm256_andnot_si256(_mm256_cmpgt_epi32(minNormal, mag), r);                       // zero, denormal
  r = _mm256_or_si256(sign, r);
  r = _mm256_blendv_epi8(r, _mm256_set1_epi32(0x7FC00000), _mm256_cmpgt_epi32(mag, inf)); // NaN
  return _mm256_castsi256_ps(r);
}

// The chain of 4 rows x 8 columns over one tile: c[i] = sum_k a[i][k] * b[k]
// in Eigen's order for that column group (see splitGroups). The fixed loops
// are unrolled so the chains stay in registers (-O2 does not unroll them).
template <bool Split>
inline void chains4(const float* a, int64_t lda, const float* b, int64_t ldb, __m256 (&c)[4]) {
  __m256 even[4], odd[4];
  #pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) even[i] = odd[i] = _mm256_setzero_ps();
  for (int64_t k = 0; k < kTileK; k += 2) {
    const __m256 b0 = _mm256_loadu_ps(b + k * ldb);
    const __m256 b1 = _mm256_loadu_ps(b + (k + 1) * ldb);
    #pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      even[i] = _mm256_fmadd_ps(_mm256_broadcast_ss(a + i * lda + k), b0, even[i]);
      __m256& second = Split ? odd[i] : even[i];
      second = _mm256_fmadd_ps(_mm256_broadcast_ss(a + i * lda + k + 1), b1, second);
    }
  }
  #pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) c[i] = Split ? _mm256_add_ps(even[i], odd[i]) : even[i];
}

// C[0..4) x [0..16) += the tile's products, two plain column groups at once
// (the common case: eight independent FMA chains).
inline void addTile4x16(float* c, int64_t ldc, const float* a, int64_t lda, const float* b, int64_t ldb) {
  __m256 lo[4], hi[4];
  #pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) lo[i] = hi[i] = _mm256_setzero_ps();
  for (int64_t k = 0; k < kTileK; ++k) {
    const __m256 b0 = _mm256_loadu_ps(b + k * ldb);
    const __m256 b1 = _mm256_loadu_ps(b + k * ldb + kVec);
    #pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i * lda + k);
      lo[i] = _mm256_fmadd_ps(ai, b0, lo[i]);
      hi[i] = _mm256_fmadd_ps(ai, b1, hi[i]);
    }
  }
  #pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    float* row = c + i * ldc;
    _mm256_storeu_ps(row, _mm256_add_ps(_mm256_loadu_ps(row), lo[i]));
    _mm256_storeu_ps(row + kVec, _mm256_add_ps(_mm256_loadu_ps(row + kVec), hi[i]));
  }
}

inline void addTile4x8(bool split, float* c, int64_t ldc, const float* a, int64_t lda, const float* b, int64_t ldb) {
  __m256 ch[4];
  if (split)
    chains4<true>(a, lda, b, ldb, ch);
  else
    chains4<false>(a, lda, b, ldb, ch);
  #pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) _mm256_storeu_ps(c + i * ldc, _mm256_add_ps(_mm256_loadu_ps(c + i * ldc), ch[i]));
}

} // namespace

bool gemmTilesRounded(float* c, int64_t m, int64_t n, std::span<const GemmTerm> terms, int64_t lda, int64_t ldb,
                      int64_t tiles, DataFormat dest) {
  if (m <= 0 || n <= 0 || m % 4 != 0 || n % kVec != 0 || tiles < 1) return false;
  // The split columns depend on the panel's row count: all panels have
  // kGemmPanelRows rows but perhaps the last.
  std::vector<uint8_t> splitFull, splitLast;
  const int64_t lastRows = m % kGemmPanelRows;
  if (!splitGroups(std::min(m, kGemmPanelRows), n, splitFull)) return false;
  if (lastRows != 0 && m > kGemmPanelRows && !splitGroups(lastRows, n, splitLast)) return false;
  const bool bf16 = dest == DataFormat::Float16_b;

  // Column strips of C outer; each term's strip of B (tiles x 32 rows) is
  // copied to a contiguous buffer that stays in cache over all rows of C (read
  // in place, every row of B is another page: TLB misses cost more than the
  // copy). Then 4 rows of C at a time, every tile and term, then rounding.
  constexpr int64_t kStrip = 64;
  const int64_t depth = tiles * kTileK;
  thread_local std::vector<float> packed;
  packed.resize(static_cast<size_t>(static_cast<int64_t>(terms.size()) * depth * kStrip));
  for (int64_t j0 = 0; j0 < n; j0 += kStrip) {
    const int64_t j1 = std::min(n, j0 + kStrip);
    const int64_t width = j1 - j0;
    for (size_t ti = 0; ti < terms.size(); ++ti)
      for (int64_t k = 0; k < depth; ++k)
        std::copy_n(terms[ti].b + k * ldb + j0, width, packed.data() + (static_cast<int64_t>(ti) * depth + k) * width);
    for (int64_t r0 = 0; r0 < m; r0 += 4) {
      const bool inLast = lastRows != 0 && m > kGemmPanelRows && r0 >= m - lastRows;
      const std::vector<uint8_t>& split = inLast ? splitLast : splitFull;
      float* cRows = c + r0 * n;
      for (int64_t t = 0; t < tiles; ++t) {
        for (size_t ti = 0; ti < terms.size(); ++ti) {
          const float* a = terms[ti].a + r0 * lda + t * kTileK;
          const float* b = packed.data() + (static_cast<int64_t>(ti) * depth + t * kTileK) * width;
          int64_t j = j0;
          while (j < j1) {
            const size_t g = static_cast<size_t>(j / kVec);
            if (j + 2 * kVec <= j1 && !split[g] && !split[g + 1]) {
              addTile4x16(cRows + j, n, a, lda, b + (j - j0), width);
              j += 2 * kVec;
            } else {
              addTile4x8(split[g] != 0, cRows + j, n, a, lda, b + (j - j0), width);
              j += kVec;
            }
          }
        }
        #pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) {
          float* row = cRows + i * n;
          if (bf16) {
            for (int64_t j = j0; j < j1; j += kVec) _mm256_storeu_ps(row + j, roundBf16(_mm256_loadu_ps(row + j)));
          } else {
            formats::quantize(dest, std::span<float>(row + j0, static_cast<size_t>(j1 - j0)));
          }
        }
      }
    }
  }
  return true;
}
#else
bool gemmTilesRounded(float*, int64_t, int64_t, std::span<const GemmTerm>, int64_t, int64_t, int64_t, DataFormat) {
  return false;
}
#endif

const char* gemmIsa() {
#if defined(__AVX512F__)
  return "AVX-512";
#elif defined(__AVX2__) && defined(__FMA__)
  return "AVX2+FMA";
#else
  return "SSE2";
#endif
}

} // namespace tessera::golden
