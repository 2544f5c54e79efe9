
#include "hlk_topk.h"

// Inputs 0 (values) and 1 (indices): per t and output mblock row, the
// kTopkTiles tiles of the core's rows in order; the output: kTopkOutTiles
// tiles per row. hlk_topk.h describes the passes over operands 24 and 25.
void hlk_main() {
  configure();
  const uint32_t entries = hlk_input_count(kInputCount);
  for (uint32_t entry = 0; entry < entries; ++entry)
    for (int t = 0; t < kT; ++t)
      for (int r = 0; r < kMblockR; ++r)
        topk_kernel::topk_row<kTopkK, kTopkTiles, kTopkKreduce, kTopkValues, kTopkOutTiles>(kOutputOperand);
}
