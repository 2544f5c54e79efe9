// out16 = in0 x in1 on one block: dest[r][c] = sum_k in0[r][k] x in1[k][c].
#include "hlk_api.h"
#include "hlk_args.h"

using namespace hlk;

void hlk_main() {
  hlk_set_math_fidelity(kHiFi4);
  hlk_set_dest_format(kFloat16_b);
  const uint32_t inputs = hlk_input_count(args::kInputCount);
  for (uint32_t i = 0; i < inputs; ++i) {
    hlk_acquire_dst();
    for (int t = 0; t < args::kRt * args::kCt; ++t) hlk_zero_dst(t);
    hlk_wait_tiles(0, args::kRt * args::kKt);
    hlk_wait_tiles(1, args::kKt * args::kCt);
    for (int r = 0; r < args::kRt; ++r)
      for (int c = 0; c < args::kCt; ++c)
        for (int k = 0; k < args::kKt; ++k)
          hlk_mm_tile(0, 1, r * args::kKt + k, k * args::kCt + c, r * args::kCt + c);
    hlk_pop_tiles(0, args::kRt * args::kKt);
    hlk_pop_tiles(1, args::kKt * args::kCt);
    hlk_wait_for_free_tiles(16, args::kRt * args::kCt);
    for (int t = 0; t < args::kRt * args::kCt; ++t) hlk_pack_tile_to_stream(t, 16);
    hlk_push_tiles(16, args::kRt * args::kCt);
    hlk_release_dst();
  }
}
