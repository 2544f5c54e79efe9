// out16 = in0 + in1, one block of args::kBlockTiles tiles per dest half.
#include "hlk_api.h"
#include "hlk_args.h"

using namespace hlk;

void hlk_main() {
  hlk_set_dest_format(kFloat16_b);
  const uint32_t inputs = hlk_input_count(args::kInputCount);
  for (uint32_t i = 0; i < inputs; ++i) {
    hlk_acquire_dst();
    hlk_wait_tiles(0, args::kBlockTiles);
    hlk_wait_tiles(1, args::kBlockTiles);
    for (int t = 0; t < args::kBlockTiles; ++t) hlk_binary_tile(kEltAdd, 0, 1, t, t, t);
    hlk_pop_tiles(0, args::kBlockTiles);
    hlk_pop_tiles(1, args::kBlockTiles);
    hlk_wait_for_free_tiles(16, args::kBlockTiles);
    for (int t = 0; t < args::kBlockTiles; ++t) hlk_pack_tile_to_stream(t, 16);
    hlk_push_tiles(16, args::kBlockTiles);
    hlk_release_dst();
  }
}
