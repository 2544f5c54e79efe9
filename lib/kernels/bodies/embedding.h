
#include "hlk_embedding.h"

// Input 0: the table's kEmbTableRows x kEmbTableCols tiles, row-major, once
// per entry; input 1: one tile of index words per entry; the output in the
// op's blocking (hlk_embedding.h).
void hlk_main() {
  configure();
  SparseEncoding idx{};
  const uint32_t entries = hlk_input_count(kInputCount);
  for (uint32_t entry = 0; entry < entries; ++entry)
    embedding_kernel::embedding_entry<kEmbTableRows, kEmbTableCols, kEmbNumIndices, kMblockR, kMblockC, kUblockC,
                                      kUblockOrderR>(idx);
}
