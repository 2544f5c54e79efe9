// The per-tile matmul of a 16-bit dest in the device's summation order
// (docs/device-model.md, MATMUL): each output value's dot product over one
// 32-deep tile is summed in float from 0 with k ascending, one rounding per
// multiply and one per add, then added to C. This is the simulator's order
// (lib/sim/tile_product.cpp), so the two agree bit for bit even where the
// order decides the result: sums that overflow to inf in one order and to
// NaN (inf - inf) in another, which a Bfp pack then saturates to opposite
// signs. Eigen's order (FMA chains, some columns as two interleaved chains)
// and its dependence on the build's ISA are why this is not Eigen.
//
// Built with -ffp-contract=off (CMakeLists.txt): GCC would otherwise fuse
// the multiply and the add, also inside the AVX2 intrinsics (plain vector
// operators in its headers), and round once instead of twice.
#include "golden/gemm.hpp"

#include "formats/formats.hpp"
#include "support/cpu_features.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#define TESSERA_GEMM_TILES_AVX2 1
#else
#define TESSERA_GEMM_TILES_AVX2 0
#endif

namespace tessera::golden {
namespace {

constexpr int64_t kTileK = 32;
constexpr int64_t kStrip = 64; // columns of C (and of B's packed strip) per pass
constexpr int64_t kBlockRows = 8; // rows of C per pass over the strip (addTile)

#if defined(__x86_64__) && defined(__GNUC__)
#define TESSERA_GEMM_TILES_AVX512 1
typedef float V16 __attribute__((vector_size(64)));
#else
#define TESSERA_GEMM_TILES_AVX512 0
#endif

// rows x cols of C += one tile's products, any shape: the order's definition.
void addTileScalar(float* c, int64_t ldc, const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows,
                   int64_t cols) {
  float dot[kStrip];
  for (int64_t i = 0; i < rows; ++i) {
    std::fill_n(dot, cols, 0.0f);
    for (int64_t k = 0; k < kTileK; ++k) {
      const float ak = a[i * lda + k];
      const float* bk = b + k * ldb;
      for (int64_t j = 0; j < cols; ++j) dot[j] += ak * bk[j];
    }
    float* row = c + i * ldc;
    for (int64_t j = 0; j < cols; ++j) row[j] = row[j] + dot[j];
  }
}

#if TESSERA_GEMM_TILES_AVX2
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

// C[0..4) x [0..16) += the tile's products: 8 running sums in registers.
// The fixed loops are unrolled so they stay there (-O2 does not unroll them).
inline void addTile4x16(float* c, int64_t ldc, const float* a, int64_t lda, const float* b, int64_t ldb) {
  __m256 lo[4], hi[4];
  #pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) lo[i] = hi[i] = _mm256_setzero_ps();
  for (int64_t k = 0; k < kTileK; ++k) {
    const __m256 b0 = _mm256_loadu_ps(b + k * ldb);
    const __m256 b1 = _mm256_loadu_ps(b + k * ldb + 8);
    #pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i * lda + k);
      lo[i] = _mm256_add_ps(lo[i], _mm256_mul_ps(ai, b0));
      hi[i] = _mm256_add_ps(hi[i], _mm256_mul_ps(ai, b1));
    }
  }
  #pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    float* row = c + i * ldc;
    _mm256_storeu_ps(row, _mm256_add_ps(_mm256_loadu_ps(row), lo[i]));
    _mm256_storeu_ps(row + 8, _mm256_add_ps(_mm256_loadu_ps(row + 8), hi[i]));
  }
}

inline void addTile4x8(float* c, int64_t ldc, const float* a, int64_t lda, const float* b, int64_t ldb) {
  __m256 s[4];
  #pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) s[i] = _mm256_setzero_ps();
  for (int64_t k = 0; k < kTileK; ++k) {
    const __m256 b0 = _mm256_loadu_ps(b + k * ldb);
    #pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) s[i] = _mm256_add_ps(s[i], _mm256_mul_ps(_mm256_broadcast_ss(a + i * lda + k), b0));
  }
  #pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) _mm256_storeu_ps(c + i * ldc, _mm256_add_ps(_mm256_loadu_ps(c + i * ldc), s[i]));
}
#endif

#if TESSERA_GEMM_TILES_AVX512
// C[0..8) x [0..32) += the tile's products: 16 running sums in registers
// (AVX-512 has 32), each row of B loaded once for 8 rows of C where the AVX2
// kernel loads it for 4: half the B traffic from cache per product, which
// bounds the deep (k 1024-4096) matmuls of the bert netlists. Picked at run
// time (the build targets AVX2 at most). The broadcast is `x - 0`, exact for
// every x (-0 included), so GCC emits a plain broadcast.
__attribute__((target("avx512f"))) void addTile8x32(float* c, int64_t ldc, const float* a, int64_t lda,
                                                    const float* b, int64_t ldb) {
  V16 lo[8], hi[8];
  #pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) lo[i] = hi[i] = V16{};
  for (int64_t k = 0; k < kTileK; ++k) {
    V16 b0, b1;
    std::memcpy(&b0, b + k * ldb, sizeof b0);
    std::memcpy(&b1, b + k * ldb + 16, sizeof b1);
    #pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      const V16 ai = a[i * lda + k] - V16{};
      lo[i] += ai * b0;
      hi[i] += ai * b1;
    }
  }
  #pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    float* row = c + i * ldc;
    V16 r0, r1;
    std::memcpy(&r0, row, sizeof r0);
    std::memcpy(&r1, row + 16, sizeof r1);
    r0 = r0 + lo[i];
    r1 = r1 + hi[i];
    std::memcpy(row, &r0, sizeof r0);
    std::memcpy(row + 16, &r1, sizeof r1);
  }
}

#endif

void addTile4(float* c, int64_t ldc, const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows,
              int64_t width);

// rows (at most kBlockRows) x width of C (row stride ldc) += one tile's
// products. Every value is its own sum, so how the block is split between
// kernels changes no bit.
void addTile(float* c, int64_t ldc, const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows,
             int64_t width) {
#if TESSERA_GEMM_TILES_AVX512
  if (rows == 8 && cpuHasAvx512f()) {
    int64_t j = 0;
    for (; j + 32 <= width; j += 32) addTile8x32(c + j, ldc, a, lda, b + j, ldb);
    if (j < width) {
      addTile4(c + j, ldc, a, lda, b + j, ldb, 4, width - j);
      addTile4(c + 4 * ldc + j, ldc, a + 4 * lda, lda, b + j, ldb, 4, width - j);
    }
    return;
  }
#endif
  if (rows > 4) {
    addTile4(c, ldc, a, lda, b, ldb, 4, width);
    addTile4(c + 4 * ldc, ldc, a + 4 * lda, lda, b, ldb, rows - 4, width);
    return;
  }
  addTile4(c, ldc, a, lda, b, ldb, rows, width);
}

// rows (at most 4) x width of C += one tile's products.
void addTile4(float* c, int64_t ldc, const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows,
              int64_t width) {
#if TESSERA_GEMM_TILES_AVX2
  if (rows == 4) {
    int64_t j = 0;
    for (; j + 16 <= width; j += 16) addTile4x16(c + j, ldc, a, lda, b + j, ldb);
    for (; j + 8 <= width; j += 8) addTile4x8(c + j, ldc, a, lda, b + j, ldb);
    if (j < width) addTileScalar(c + j, ldc, a, lda, b + j, ldb, rows, width - j);
    return;
  }
#endif
  addTileScalar(c, ldc, a, lda, b, ldb, rows, width);
}

void roundRow(DataFormat dest, float* row, int64_t width) {
  int64_t j = 0;
#if TESSERA_GEMM_TILES_AVX2
  if (dest == DataFormat::Float16_b)
    for (; j + 8 <= width; j += 8) _mm256_storeu_ps(row + j, roundBf16(_mm256_loadu_ps(row + j)));
#endif
  if (j < width) formats::quantize(dest, std::span<float>(row + j, static_cast<size_t>(width - j)));
}

} // namespace

bool gemmTilesRounded(float* c, int64_t m, int64_t n, std::span<const GemmTerm> terms, int64_t lda, int64_t ldb,
                      int64_t tiles, DataFormat dest) {
  if (m <= 0 || n <= 0 || tiles < 1) return false;
  // Column strips of C outer; each term's strip of B (tiles x 32 rows) is
  // copied to a contiguous buffer that stays in cache over all rows of C (read
  // in place, every row of B is another page: TLB misses cost more than the
  // copy). Then 8 rows of C at a time, every tile and term, then rounding.
  const int64_t depth = tiles * kTileK;
  thread_local std::vector<float> packed;
  packed.resize(static_cast<size_t>(static_cast<int64_t>(terms.size()) * depth * kStrip));
  for (int64_t j0 = 0; j0 < n; j0 += kStrip) {
    const int64_t width = std::min(n, j0 + kStrip) - j0;
    for (size_t ti = 0; ti < terms.size(); ++ti)
      for (int64_t k = 0; k < depth; ++k)
        std::copy_n(terms[ti].b + k * ldb + j0, width, packed.data() + (static_cast<int64_t>(ti) * depth + k) * width);
    for (int64_t r0 = 0; r0 < m; r0 += kBlockRows) {
      const int64_t rows = std::min<int64_t>(kBlockRows, m - r0);
      float* cRows = c + r0 * n + j0;
      for (int64_t t = 0; t < tiles; ++t) {
        for (size_t ti = 0; ti < terms.size(); ++ti) {
          const float* a = terms[ti].a + r0 * lda + t * kTileK;
          const float* b = packed.data() + (static_cast<int64_t>(ti) * depth + t * kTileK) * width;
          addTile(cRows, n, a, lda, b, width, rows, width);
        }
        for (int64_t i = 0; i < rows; ++i) roundRow(dest, cRows + i * n, width);
      }
    }
  }
  return true;
}

} // namespace tessera::golden
