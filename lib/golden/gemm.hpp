// The reference model's matrix-product kernels: Eigen's GEMM (gemm.cpp, the
// only file that includes Eigen, so it can be built for the host's vector ISA,
// AVX2+FMA when the build machine has it, without mixing ISAs in Eigen's
// inline functions across files) and the per-tile product of a 16-bit dest in
// the device's order (gemm_tiles.cpp). See CMakeLists.txt.
#pragma once
#include "netlist/enums.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace tessera::golden {

using netlist::DataFormat;

// C (m x n, row-major, contiguous) += A (m x k, row stride lda) * B (k x n, row stride ldb).
void gemmAccumulate(float* c, const float* a, int64_t lda, const float* b, int64_t ldb, int64_t m, int64_t k,
                    int64_t n);

// One operand pair of a product: A (row stride lda) and B (row stride ldb),
// both starting at the first inner index of the block.
struct GemmTerm {
  const float* a;
  const float* b;
};

// The matmul of a dest narrower than Float32, as the device computes it: for
// each of `tiles` inner tiles t of 32 (A's columns, B's rows 32t..32t+31),
// C += A_t * B_t for each term in order, then C is rounded to `dest`. Each
// value's dot product over a tile is summed in float from 0 with k ascending
// (a multiply and an add, each rounded; no FMA) and then added to C: the
// simulator's order (docs/device-model.md, MATMUL), the same on every build
// (gemm_tiles.cpp; AVX2 where the build has it, AVX-512 where the CPU has it).
// Returns false (C untouched) only for an empty shape or no tiles.
bool gemmTilesRounded(float* c, int64_t m, int64_t n, std::span<const GemmTerm> terms, int64_t lda, int64_t ldb,
                      int64_t tiles, DataFormat dest);

// The B operands of a product's terms, packed once into column strips (each
// strip every term's rows, contiguous) for several gemmTilesPacked calls: the
// entries of a matmul that share one weight matrix, and its m_k blocks.
class PackedTerms {
public:
  // b[t] is term t's B: `depth` rows (a multiple of 32) of n values, row stride ldb.
  void pack(std::span<const float* const> b, int64_t ldb, int64_t depth, int64_t n);
  int64_t terms() const { return terms_; }
  int64_t depth() const { return depth_; }
  int64_t cols() const { return n_; }
  const float* data() const { return data_.data(); }

private:
  std::vector<float> data_;
  int64_t terms_ = 0, depth_ = 0, n_ = 0;
};

// gemmTilesRounded over B packed beforehand: tiles [tile0, tile0 + tiles) of
// the packed depth; a[t] is term t's A at inner index 0 (row stride lda), as
// many as b has terms. The same order and bits as gemmTilesRounded.
bool gemmTilesPacked(float* c, int64_t m, std::span<const float* const> a, int64_t lda, const PackedTerms& b,
                     int64_t tile0, int64_t tiles, DataFormat dest);

// Rows of C per panel of ops.cpp's gemmAccumulate path (kPanelRows).
constexpr int64_t kGemmPanelRows = 64;

// The instruction set the kernel was built for, for benchmark reports.
const char* gemmIsa();

} // namespace tessera::golden
