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
// Floats of packed B per pass over the rows of C (256 KB: the tiles of a
// deep product are taken a chunk at a time so that their strip stays in L2).
constexpr int64_t kChunkFloats = 16 * 1024;

#if defined(__x86_64__) && defined(__GNUC__)
#define TESSERA_GEMM_TILES_AVX512 1
#include <immintrin.h>
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
// Float16_b rounding of 16 values, the same steps as roundBf16 (signed
// compares, so a NaN's wrapped sum behaves the same).
__attribute__((target("avx512f"))) inline __m512 roundBf16x16(__m512 x) {
  const __m512i u = _mm512_castps_si512(x);
  const __m512i sign = _mm512_and_si512(u, _mm512_set1_epi32(static_cast<int>(0x80000000u)));
  const __m512i mag = _mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFFFF));
  const __m512i inf = _mm512_set1_epi32(0x7F800000);
  const __m512i minNormal = _mm512_set1_epi32(0x00800000);
  __m512i r = _mm512_and_si512(_mm512_add_epi32(mag, _mm512_set1_epi32(0x8000)),
                               _mm512_set1_epi32(static_cast<int>(0xFFFF0000u)));
  r = _mm512_mask_mov_epi32(r, _mm512_cmpgt_epi32_mask(r, _mm512_set1_epi32(0x7F7F0000)), inf); // overflow
  const __mmask16 keep = static_cast<__mmask16>(_mm512_cmpge_epi32_mask(r, minNormal) &  // not denormal
                                                _mm512_cmpge_epi32_mask(mag, minNormal)); // nor zero
  r = _mm512_or_si512(_mm512_maskz_mov_epi32(keep, r), sign);
  r = _mm512_mask_mov_epi32(r, _mm512_cmpgt_epi32_mask(mag, inf), _mm512_set1_epi32(0x7FC00000)); // NaN
  return _mm512_castsi512_ps(r);
}

// C[0..8) x [0..32) += one tile's products of every term in turn (term ti:
// A at a[ti] + aOff, B at b + ti * bTermStride, row stride ldb), then, with
// Round, C rounded to Float16_b in registers before the one store. Each
// term keeps 16 running sums in registers (AVX-512 has 32), each row of B
// loaded once for 8 rows of C where the AVX2 kernel loads it for 4: half the
// B traffic from cache per product, which bounds the deep (k 1024-4096)
// matmuls of the bert netlists. Picked at run time (the build targets AVX2
// at most). The broadcast is `x - 0`, exact for every x (-0 included), so
// GCC emits a plain broadcast. C stays in L1 between terms.
template <bool Round>
__attribute__((target("avx512f"))) void tileTerms8x32(float* c, int64_t ldc, const float* const* a, int64_t aOff,
                                                      int64_t lda, const float* b, int64_t bTermStride, int64_t ldb,
                                                      int64_t terms) {
  for (int64_t ti = 0; ti < terms; ++ti) {
    const float* at = a[ti] + aOff;
    const float* bt = b + ti * bTermStride;
    V16 lo[8], hi[8];
    #pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) lo[i] = hi[i] = V16{};
    for (int64_t k = 0; k < kTileK; ++k) {
      V16 b0, b1;
      std::memcpy(&b0, bt + k * ldb, sizeof b0);
      std::memcpy(&b1, bt + k * ldb + 16, sizeof b1);
      #pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) {
        const V16 ai = at[i * lda + k] - V16{};
        lo[i] += ai * b0;
        hi[i] += ai * b1;
      }
    }
    const bool round = Round && ti + 1 == terms;
    #pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      float* row = c + i * ldc;
      V16 r0, r1;
      std::memcpy(&r0, row, sizeof r0);
      std::memcpy(&r1, row + 16, sizeof r1);
      r0 = r0 + lo[i];
      r1 = r1 + hi[i];
      if (round) {
        r0 = (V16)roundBf16x16((__m512)r0);
        r1 = (V16)roundBf16x16((__m512)r1);
      }
      std::memcpy(row, &r0, sizeof r0);
      std::memcpy(row + 16, &r1, sizeof r1);
    }
  }
}

// C[0..8) x [0..32) += the tile's products: one term of tileTerms8x32,
// unrounded.
__attribute__((target("avx512f"))) void addTile8x32(float* c, int64_t ldc, const float* a, int64_t lda,
                                                    const float* b, int64_t ldb) {
  tileTerms8x32<false>(c, ldc, &a, 0, lda, b, 0, ldb, 1);
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

void PackedTerms::pack(std::span<const float* const> b, int64_t ldb, int64_t depth, int64_t n) {
  terms_ = static_cast<int64_t>(b.size());
  depth_ = depth;
  n_ = n;
  // Strip s (columns [64s, 64s + width)) starts after the full strips before
  // it: terms x depth x 64s floats; term ti's row k at (ti * depth + k) * width.
  data_.resize(static_cast<size_t>(terms_ * depth * n));
  for (int64_t j0 = 0; j0 < n; j0 += kStrip) {
    const int64_t width = std::min(n, j0 + kStrip) - j0;
    float* strip = data_.data() + terms_ * depth * j0;
    for (int64_t ti = 0; ti < terms_; ++ti)
      for (int64_t k = 0; k < depth; ++k)
        std::copy_n(b[static_cast<size_t>(ti)] + k * ldb + j0, width, strip + (ti * depth + k) * width);
  }
}

bool gemmTilesPacked(float* c, int64_t m, std::span<const float* const> a, int64_t lda, const PackedTerms& b,
                     int64_t tile0, int64_t tiles, DataFormat dest) {
  const int64_t n = b.cols(), terms = b.terms(), depth = b.depth();
  if (m <= 0 || n <= 0 || tiles < 1 || terms < 1 || static_cast<int64_t>(a.size()) != terms || tile0 < 0 ||
      (tile0 + tiles) * kTileK > depth)
    return false;
#if TESSERA_GEMM_TILES_AVX512
  const bool avx512 = cpuHasAvx512f();
#else
  const bool avx512 = false;
#endif
  const bool roundInKernel = avx512 && dest == DataFormat::Float16_b;
  // Column strips of C outer, then a chunk of tiles whose packed B stays in
  // L2, then 8 rows of C at a time, each tile and term in turn, rounding after
  // each tile. Every value still sees its tiles in ascending order with a
  // rounding after each: the chunks only reorder work between values.
  const int64_t chunk = std::max<int64_t>(1, kChunkFloats / (terms * kTileK * kStrip));
  for (int64_t j0 = 0; j0 < n; j0 += kStrip) {
    const int64_t width = std::min(n, j0 + kStrip) - j0;
    const float* strip = b.data() + terms * depth * j0;
    const int64_t termStride = depth * width;
    for (int64_t t0 = tile0; t0 < tile0 + tiles; t0 += chunk) {
      const int64_t t1 = std::min(tile0 + tiles, t0 + chunk);
      for (int64_t r0 = 0; r0 < m; r0 += kBlockRows) {
        const int64_t rows = std::min<int64_t>(kBlockRows, m - r0);
        float* cRows = c + r0 * n + j0;
        for (int64_t t = t0; t < t1; ++t) {
          const float* bt = strip + t * kTileK * width;
          const int64_t aOff = r0 * lda + t * kTileK;
          int64_t done = 0;
#if TESSERA_GEMM_TILES_AVX512
          if (avx512 && rows == kBlockRows)
            for (; done + 32 <= width; done += 32) {
              if (roundInKernel)
                tileTerms8x32<true>(cRows + done, n, a.data(), aOff, lda, bt + done, termStride, width, terms);
              else
                tileTerms8x32<false>(cRows + done, n, a.data(), aOff, lda, bt + done, termStride, width, terms);
            }
#endif
          if (done < width)
            for (int64_t ti = 0; ti < terms; ++ti)
              addTile(cRows + done, n, a[static_cast<size_t>(ti)] + aOff, lda, bt + ti * termStride + done, width,
                      rows, width - done);
          const int64_t from = roundInKernel ? done : 0;
          if (from < width)
            for (int64_t i = 0; i < rows; ++i) roundRow(dest, cRows + i * n + from, width - from);
        }
      }
    }
  }
  return true;
}

bool gemmTilesRounded(float* c, int64_t m, int64_t n, std::span<const GemmTerm> terms, int64_t lda, int64_t ldb,
                      int64_t tiles, DataFormat dest) {
  if (m <= 0 || n <= 0 || tiles < 1 || terms.empty()) return false;
  thread_local PackedTerms packed;
  thread_local std::vector<const float*> as, bs;
  as.clear();
  bs.clear();
  for (const GemmTerm& t : terms) {
    as.push_back(t.a);
    bs.push_back(t.b);
  }
  packed.pack(bs, ldb, tiles * kTileK, n);
  return gemmTilesPacked(c, m, as, lda, packed, 0, tiles, dest);
}

} // namespace tessera::golden
