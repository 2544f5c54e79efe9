// The reference model's matrix-product kernels: Eigen's GEMM (gemm.cpp, the
// only file that includes Eigen, so it can be built for the host's vector ISA,
// AVX2+FMA when the build machine has it, without mixing ISAs in Eigen's
// inline functions across files) and the per-tile product of a 16-bit dest in
// the device's order (gemm_tiles.cpp). See CMakeLists.txt.
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
// C += A_t * B_t for each term in order, then C is rounded to `dest`. Each
// value's dot product over a tile is summed in float from 0 with k ascending
// (a multiply and an add, each rounded; no FMA) and then added to C: the
// simulator's order (docs/device-model.md, MATMUL), the same on every build
// (gemm_tiles.cpp; AVX2 where the build has it, AVX-512 where the CPU has it).
// Returns false (C untouched) only for an empty shape or no tiles.
bool gemmTilesRounded(float* c, int64_t m, int64_t n, std::span<const GemmTerm> terms, int64_t lda, int64_t ldb,
                      int64_t tiles, DataFormat dest);

// Rows of C per panel of ops.cpp's gemmAccumulate path (kPanelRows).
constexpr int64_t kGemmPanelRows = 64;

// The instruction set the kernel was built for, for benchmark reports.
const char* gemmIsa();

} // namespace tessera::golden
