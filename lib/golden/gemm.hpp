// The reference model's matrix-product kernels. Kept in their own translation
// unit, the only one that includes Eigen, so it can be built for the host's
// vector ISA (AVX2+FMA when the build machine has it; see CMakeLists.txt)
// without mixing ISAs in Eigen's inline functions across files.
#pragma once
#include "netlist/enums.hpp"

#include <cstdint>
#include <span>

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
// C += A_t * B_t for each term in order, then C is rounded to `dest`.
// Every value is bit-identical to calling gemmAccumulate per term and tile on
// panels of 64 rows of C (Eigen's GEMM: its accumulation order, which columns
// of each cache block it sums as two halves, reproduced) and rounding the
// panel after each tile; but one pass over C, no packing, and Float16_b
// rounded in registers. Returns false (C untouched) when this build has no
// such kernel (not AVX2+FMA) or the shape does not suit it (m not a multiple
// of 4, n not a multiple of 8): the caller then takes the gemmAccumulate path.
bool gemmTilesRounded(float* c, int64_t m, int64_t n, std::span<const GemmTerm> terms, int64_t lda, int64_t ldb,
                      int64_t tiles, DataFormat dest);

// Rows of C per panel of the gemmAccumulate path that gemmTilesRounded
// reproduces (ops.cpp's kPanelRows).
constexpr int64_t kGemmPanelRows = 64;

// The instruction set the kernel was built for, for benchmark reports.
const char* gemmIsa();

} // namespace tessera::golden
