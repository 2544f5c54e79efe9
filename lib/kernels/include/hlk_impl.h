// Implementation of the HLK API (hlk_api.h) over the LLK layer. Each call
// keeps only the part of the thread this compile is for (`if constexpr` on
// llk::kThread); the other parts are discarded before code generation, so
// unpack.elf holds no math or pack instruction and so on. Included at the
// end of hlk_api.h; include hlk_api.h from exactly one translation unit per
// thread (it also defines the thread's crt0 and runtime functions).
#pragma once
#include "llk_common.h"
#include "llk_math.h"
#include "llk_pack.h"
#include "llk_unpack.h"
#if !defined(TESSERA_LLK_HOST_TRACE)
#include "llk_runtime.h"
#include "llk_crt0.h"
#endif

// Called by crt0 before hlk_main: checks that this ELF runs on the hart it
// was compiled for (else exits with llk::kExitWrongThread), resets the
// per-thread state and sets the default dest format, Float16_b (halves of 8
// tiles), so that math and pack agree on the halves whatever the
// coprocessor's reset state; hlk_set_dest_format changes both.
extern "C" void hlk_setup() {
  if (llk::mmio_read(tessera::contract::kThreadId) != llk::kThread) {
    llk::mmio_write(tessera::contract::kMailboxDone, llk::kExitWrongThread);
    for (;;) llk::spin();
  }
  if constexpr (llk::kMath) llk::set_config(tessera::contract::kCfgDestFormat, tessera::contract::kFloat16_b);
  if constexpr (llk::kMath || llk::kPack) {
    llk::g_dest.half = 0;
    llk::g_dest.halfTiles = llk::kDestTiles16Arch / 2;
  }
}

namespace hlk {

// --- Configuration -------------------------------------------------------------
inline void hlk_set_math_fidelity(FidelityCode fidelity) {
  if constexpr (llk::kMath) llk::set_config(kCfgMathFidelity, fidelity);
}

inline void hlk_set_dest_format(DataFormatCode format) {
  if constexpr (llk::kMath) llk::set_config(kCfgDestFormat, format);
  if constexpr (llk::kMath || llk::kPack) {
    bool wide = format == kFloat32 || format == kInt32;
    llk::g_dest.halfTiles = (wide ? llk::kDestTiles16Arch / 2 : llk::kDestTiles16Arch) / 2;
  }
}

inline void hlk_set_relu(uint32_t mode, uint32_t thresholdBits) {
  if constexpr (llk::kPack) {
    llk::set_config(kCfgReluMode, mode);
    llk::set_config(kCfgReluThreshold, thresholdBits);
  }
}

inline uint32_t hlk_input_count(uint32_t fromArgs) {
  uint32_t n = llk::epoch_info().inputCount;
  return n != 0 ? n : fromArgs;
}

// --- Flow control ----------------------------------------------------------------
inline void hlk_wait_tiles(int operand, int count) {
  if constexpr (llk::kUnpack) llk::unpack_wait_tiles(operand, static_cast<uint32_t>(count));
}
inline void hlk_pop_tiles(int operand, int count) {
  if constexpr (llk::kUnpack) llk::unpack_pop_tiles(operand, static_cast<uint32_t>(count));
}
inline void hlk_wait_for_free_tiles(int operand, int count) {
  if constexpr (llk::kPack) llk::pack_wait_free(operand, static_cast<uint32_t>(count));
}
inline void hlk_push_tiles(int operand, int count) {
  if constexpr (llk::kPack) llk::pack_push_tiles(operand, static_cast<uint32_t>(count));
}
inline void hlk_acquire_dst() {
  if constexpr (llk::kMath) llk::math_acquire_dst();
  if constexpr (llk::kPack) llk::pack_acquire_dst();
}
inline void hlk_release_dst() {
  if constexpr (llk::kMath) llk::math_release_dst();
  if constexpr (llk::kPack) llk::pack_release_dst();
}

// --- Math on tiles ----------------------------------------------------------------
inline void hlk_copy_tile_to_dst(int operand, int tile, int dst, bool transpose) {
  if constexpr (llk::kUnpack) llk::unpack_tile(operand, tile, false, transpose ? kUnpackTranspose : 0u);
  if constexpr (llk::kMath) llk::math_datacopy(dst);
}

inline void hlk_binary_tile(EltwiseOp op, int in0, int in1, int tile0, int tile1, int dst, Broadcast bcastIn1) {
  if constexpr (llk::kUnpack) {
    llk::unpack_tile(in0, tile0, false, 0u);
    llk::unpack_tile(in1, tile1, true, llk::broadcast_fields(bcastIn1));
  }
  if constexpr (llk::kMath) llk::math_eltwise(op, dst, 0u);
}

inline void hlk_binary_tile_dest_a(EltwiseOp op, int in1, int tile1, int dst, Broadcast bcastIn1) {
  if constexpr (llk::kUnpack) llk::unpack_tile(in1, tile1, true, llk::broadcast_fields(bcastIn1));
  if constexpr (llk::kMath) llk::math_eltwise(op, dst, kEltwiseAFromDest);
}

inline void hlk_binary_tile_dest_b(EltwiseOp op, int in0, int tile0, int dst) {
  if constexpr (llk::kUnpack) llk::unpack_tile(in0, tile0, false, 0u);
  if constexpr (llk::kMath) llk::math_eltwise(op, dst, kEltwiseBFromDest);
}

// MATMUL computes srcB x srcA: in0's tile goes to srcB, in1's to srcA.
inline void hlk_mm_tile(int in0, int in1, int tile0, int tile1, int dst, bool transposeIn1, bool unpackIn0,
                        bool keepIn0) {
  if constexpr (llk::kUnpack) {
    llk::unpack_tile(in1, tile1, false, transposeIn1 ? kUnpackTranspose : 0u);
    if (unpackIn0) llk::unpack_tile(in0, tile0, true, 0u);
  }
  if constexpr (llk::kMath) llk::math_matmul(dst, keepIn0);
}

inline void hlk_reduce_tile(ReduceType type, ReduceDim dim, int operand, int tile, int dst, uint32_t scaleBits,
                            bool accumulate) {
  if constexpr (llk::kUnpack) llk::unpack_tile(operand, tile, false, 0u);
  if constexpr (llk::kMath) llk::math_reduce(type, dim, dst, scaleBits, accumulate);
}

inline void hlk_sfpu(SfpuFunc func, int dst, uint32_t parameter) {
  if constexpr (llk::kMath) llk::math_sfpu(func, dst, parameter);
}

inline void hlk_zero_dst(int dst) {
  if constexpr (llk::kMath) llk::math_zero_dst(dst);
}

// --- Pack ----------------------------------------------------------------------------
inline void hlk_pack_tile_to_stream(int dst, int operand) {
  if constexpr (llk::kPack) llk::pack_tile_next(dst, operand);
}

inline void hlk_pack_tile_to_stream_at(int dst, int operand, int slot, bool l1Accumulate) {
  if constexpr (llk::kPack) llk::pack_tile_at(dst, operand, static_cast<uint32_t>(slot), l1Accumulate);
}

inline void hlk_pack_tile_untilized(int dst, int operand, int tileRow, int tileCol) {
  if constexpr (llk::kPack)
    llk::pack_tile_untilized(dst, operand, static_cast<uint32_t>(tileRow), static_cast<uint32_t>(tileCol));
}

// --- Debug -----------------------------------------------------------------------------
inline void hlk_debug_word(uint32_t word) { llk::mmio_write(kDebugPutWord, word); }

} // namespace hlk
