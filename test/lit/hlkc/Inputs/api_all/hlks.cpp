// Every HLK call once per input, with a Float32 dest (halves of 4 tiles), an
// untilized output (operand 17) and dest as ELTWISE input B (wormhole_b0).
#include "hlk_api.h"
#include "hlk_args.h"

using namespace hlk;

void hlk_main() {
  hlk_set_math_fidelity(kHiFi4);
  hlk_set_dest_format(kFloat32);
  hlk_set_relu(1, 0x3f000000);  // relu min, threshold 0.5f
  const uint32_t inputs = hlk_input_count(args::kInputCount);
  for (uint32_t i = 0; i < inputs; ++i) {
    hlk_acquire_dst();
    hlk_wait_tiles(0, 2);
    hlk_wait_tiles(1, 2);
    hlk_zero_dst(0);
    hlk_mm_tile(0, 1, 1, 0, 0, true);
    hlk_copy_tile_to_dst(0, 0, 1, true);
    hlk_binary_tile(kEltMul, 0, 1, 0, 1, 2, kBcastCol);
    hlk_binary_tile_dest_a(kEltSub, 1, 1, 2, kBcastScalar);
    hlk_binary_tile_dest_b(kEltMax, 0, 1, 2);
    hlk_reduce_tile(kReduceMax, kReduceCols, 0, 1, 3, 0x3f800000, true);
    hlk_sfpu(kSfpuLrelu, 3, 0x3dcccccd);
    hlk_pop_tiles(0, 2);
    hlk_pop_tiles(1, 2);
    hlk_wait_for_free_tiles(16, 2);
    hlk_pack_tile_to_stream_at(0, 16, 1, true);
    hlk_pack_tile_to_stream(1, 16);
    hlk_push_tiles(16, 2);
    hlk_wait_for_free_tiles(17, 4);
    hlk_pack_tile_untilized(2, 17, 1, 3);
    hlk_pack_tile_untilized(3, 17, 0, 0);
    hlk_push_tiles(17, 4);
    hlk_release_dst();
  }
  hlk_debug_word(0x1234);
}
