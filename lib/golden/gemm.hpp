// The reference model's one matrix-product kernel. Kept in its own translation
// unit, the only one that includes Eigen, so it can be built for the host's
// vector ISA (AVX2+FMA when the build machine has it; see CMakeLists.txt)
// without mixing ISAs in Eigen's inline functions across files.
#pragma once
#include <cstdint>

namespace tessera::golden {

// C (m x n, row-major, contiguous) += A (m x k, row stride lda) * B (k x n, row stride ldb).
void gemmAccumulate(float* c, const float* a, int64_t lda, const float* b, int64_t ldb, int64_t m, int64_t k,
                    int64_t n);

// The instruction set the kernel was built for, for benchmark reports.
const char* gemmIsa();

} // namespace tessera::golden
