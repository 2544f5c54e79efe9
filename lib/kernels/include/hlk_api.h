// The HLK API: what a generated hlks.cpp calls. One kernel source is compiled
// three times, with TESSERA_THREAD_UNPACK, TESSERA_THREAD_MATH or
// TESSERA_THREAD_PACK defined; each call keeps only its thread's part (an
// eltwise add is two UNPACKs on the unpack thread, one ELTWISE on math,
// nothing on pack). The implementation is header-only (hlk_impl.h, included
// at the end) so every call inlines into the kernel.
//
// Conventions:
// - operands: 0-7 inputs, 16-23 outputs, 24-31 intermediates (device_contract.h).
// - tile indices of inputs are relative to the operand's read pointer (0 =
//   oldest tile not yet popped); dest indices are relative to the dest half
//   the thread currently holds (hlk_acquire_dst).
// - Floats never reach the RISC-V ALU (rv32im has no FPU and no soft-float
//   library is linked): parameters travel as their float32 bit patterns.
// - The generated args header (hlk_args.h) is included by hlks.cpp, not here.
//
// hlks.cpp defines `void hlk_main();` (global namespace, C++ linkage). crt0
// (llk_crt0.h) calls hlk_setup(), then hlk_main(), then reports completion to
// the mailbox. docs/kernels.md lists what every call compiles to per thread.
//
// Index conventions, as implemented:
// - input tile `tile` of operand o = slot (readPointer[o] + tile) mod capacity;
//   hlk_pop_tiles advances readPointer by count, modulo the capacity.
// - dest index `dst` = (held half == 0 ? 0 : halfSize) + dst, halfSize 8 (4
//   with a Float32/Int32 dest format); every hlk_release_dst flips the half
//   of the releasing thread (math and pack each keep their own).
// - pack slot = (writePointer[o] + slot) mod capacity; hlk_pack_tile_to_stream
//   uses slot = tiles packed since the last push; hlk_push_tiles advances
//   writePointer by count.
#pragma once
#include <stdint.h>
#include "device/device_contract.h"

// hlk_binary_tile_dest_b needs dest as ELTWISE input B: wormhole_b0 only.
// hlkc defines TESSERA_ARCH_GRAYSKULL, TESSERA_ARCH_WORMHOLE_B0, TESSERA_ARCH_WORMHOLE or TESSERA_ARCH_BLACKHOLE.
#if defined(TESSERA_ARCH_GRAYSKULL)
#define TESSERA_WORMHOLE_ONLY __attribute__((unavailable("dest as input B (hlk_binary_tile_dest_b) needs wormhole_b0")))
#else
#define TESSERA_WORMHOLE_ONLY
#endif

void hlk_main();  // defined by hlks.cpp; crt0 calls it

namespace hlk {
using namespace tessera::contract;

// --- Configuration (call at the start of hlk_main; cheap to repeat) -------
inline void hlk_set_math_fidelity(FidelityCode fidelity);          // math
inline void hlk_set_dest_format(DataFormatCode format);            // math: Float16, Float16_b, Float32, Int32
                                                                   // (math and pack: dest half = 8 tiles, 4 if 32-bit)
inline void hlk_set_relu(uint32_t mode, uint32_t thresholdBits);   // pack: 0 off, 1 min, 2 max
// Inputs this run processes: EpochInfo.inputCount, or `fromArgs` (the args
// header's count) when the firmware wrote 0. All threads.
inline uint32_t hlk_input_count(uint32_t fromArgs);

// --- Flow control ---------------------------------------------------------
inline void hlk_wait_tiles(int operand, int count);          // unpack: until `count` tiles are present
inline void hlk_pop_tiles(int operand, int count);           // unpack: release the oldest `count` tiles
inline void hlk_wait_for_free_tiles(int operand, int count); // pack: until `count` slots are free
inline void hlk_push_tiles(int operand, int count);          // pack: publish the `count` tiles packed since the last push
inline void hlk_acquire_dst();  // math: wait for a free dest half; pack: wait for a filled half
inline void hlk_release_dst();  // math: hand the half to pack; pack: give it back to math

// --- Math on tiles (unpack + math parts) ----------------------------------
inline void hlk_copy_tile_to_dst(int operand, int tile, int dst, bool transpose = false);
// dst = in0[tile0] op in1[tile1]; bcast applies to in1 (row/col/scalar).
inline void hlk_binary_tile(EltwiseOp op, int in0, int in1, int tile0, int tile1, int dst,
                            Broadcast bcastIn1 = kBcastNone);
// dst = dst op in1[tile1] (bias add, fused ops reading dest as input 0).
inline void hlk_binary_tile_dest_a(EltwiseOp op, int in1, int tile1, int dst, Broadcast bcastIn1 = kBcastNone);
// dst = in0[tile0] op dst (wormhole_b0 only: dest as input 1).
TESSERA_WORMHOLE_ONLY inline void hlk_binary_tile_dest_b(EltwiseOp op, int in0, int tile0, int dst);
// dst += in0[tile0] x in1[tile1] (matmul of one tile pair; dst must be zeroed or reloaded first).
// Reuse of the input-0 tile across a ublock row (as BUDA's kernel does):
// unpackIn0 false takes the tile the previous call kept (keepIn0 true).
inline void hlk_mm_tile(int in0, int in1, int tile0, int tile1, int dst, bool transposeIn1 = false,
                        bool unpackIn0 = true, bool keepIn0 = false);
// dst (=|op=) reduce(operand[tile]) * scale.
inline void hlk_reduce_tile(ReduceType type, ReduceDim dim, int operand, int tile, int dst,
                            uint32_t scaleBits, bool accumulate);
inline void hlk_sfpu(SfpuFunc func, int dst, uint32_t parameter = 0);  // math only
inline void hlk_zero_dst(int dst);                                    // math only

// --- Pack -----------------------------------------------------------------
// Packs dest[dst] into the next slot of `operand` (slots count from the write
// pointer; hlk_push_tiles publishes them).
inline void hlk_pack_tile_to_stream(int dst, int operand);
// Packs into an explicit slot, relative to the write pointer.
inline void hlk_pack_tile_to_stream_at(int dst, int operand, int slot, bool l1Accumulate = false);
// Untilized output: writes dest[dst] as 32 rows at (row block, tile column)
// of the operand's row-major buffer (rowStrideBytes from the operand table).
inline void hlk_pack_tile_untilized(int dst, int operand, int tileRow, int tileCol);

// --- Debug ------------------------------------------------------------------
inline void hlk_debug_word(uint32_t word);  // all threads: one word to the core's debug log

} // namespace hlk

#include "hlk_impl.h"
