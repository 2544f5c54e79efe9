// Stand-in for lib/kernels/include/hlk_impl.h while it is being written: the
// HLK API's calls with empty bodies, so a generated hlks.cpp can be checked
// for syntax against hlk_api.h (-I order: the real header wins when present).
#pragma once

namespace hlk {
inline void hlk_set_math_fidelity(FidelityCode) {}
inline void hlk_set_dest_format(DataFormatCode) {}
inline void hlk_set_relu(uint32_t, uint32_t) {}
inline void hlk_wait_tiles(int, int) {}
inline void hlk_pop_tiles(int, int) {}
inline void hlk_wait_for_free_tiles(int, int) {}
inline void hlk_push_tiles(int, int) {}
inline void hlk_acquire_dst() {}
inline void hlk_release_dst() {}
inline void hlk_copy_tile_to_dst(int, int, int, bool) {}
inline void hlk_binary_tile(EltwiseOp, int, int, int, int, int, Broadcast) {}
inline void hlk_binary_tile_dest_a(EltwiseOp, int, int, int, Broadcast) {}
inline void hlk_binary_tile_dest_b(EltwiseOp, int, int, int) {}
inline void hlk_mm_tile(int, int, int, int, int, bool, bool = true, bool = false) {}
inline void hlk_reduce_tile(ReduceType, ReduceDim, int, int, int, uint32_t, bool) {}
inline void hlk_sfpu(SfpuFunc, int, uint32_t) {}
inline void hlk_zero_dst(int) {}
inline void hlk_pack_tile_to_stream(int, int) {}
inline void hlk_pack_tile_to_stream_at(int, int, int, bool) {}
inline void hlk_pack_tile_untilized(int, int, int, int) {}
inline void hlk_debug_word(uint32_t) {}
} // namespace hlk
