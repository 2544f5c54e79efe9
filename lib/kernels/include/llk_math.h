// LLK layer, math thread (TRISC1): dest half handshake with pack and the math
// instructions, always with absolute dest indices (held half offset + index).
// Compiled only into math.elf.
#pragma once
#include "llk_common.h"

namespace llk {

// Waits for a free dest half (semaphore PackMath, starts at 2).
inline void math_acquire_dst() { semaphore_wait(kSemPackMath); }
// Hands the half to pack (post MathPack); the next acquire gets the other half.
inline void math_release_dst() {
  semaphore_post(kSemMathPack);
  g_dest.half ^= 1u;
}

inline uint32_t math_fields(int dst, bool accumulate) {
  return dest_fields(dst) | (accumulate ? kFieldAccumulate : 0u);
}

inline void math_datacopy(int dst) { issue(kOpDatacopy, math_fields(dst, false)); }

inline void math_eltwise(EltwiseOp op, int dst, uint32_t operandFields) {
  issue(kOpEltwise, math_fields(dst, false) | ((static_cast<uint32_t>(op) & 3u) << kEltwiseOpShift) | operandFields);
}

// keepSrcB: srcB (input 0's tile) stays valid for the next product.
inline void math_matmul(int dst, bool keepSrcB = false) {
  issue(kOpMatmul, math_fields(dst, true) | (keepSrcB ? kFieldKeepSrcB : 0u));
}

inline void math_reduce(ReduceType type, ReduceDim dim, int dst, uint32_t scaleBits, bool accumulate) {
  issue(kOpReduce,
        math_fields(dst, accumulate) | ((static_cast<uint32_t>(dim) & 3u) << kReduceDimShift) |
            ((static_cast<uint32_t>(type) & 3u) << kReduceTypeShift),
        scaleBits);
}

// func may carry kSfpuApproximate (bit 8), which lands in field [16].
inline void math_sfpu(SfpuFunc func, int dst, uint32_t parameter) {
  issue(kOpSfpu, math_fields(dst, false) | ((static_cast<uint32_t>(func) & 0x1FFu) << kSfpuFuncShift), parameter);
}

inline void math_zero_dst(int dst) { issue(kOpZeroDest, math_fields(dst, false)); }

} // namespace llk
