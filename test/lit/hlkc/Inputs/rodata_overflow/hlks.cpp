// A constant table too big for the unpack thread's 20 KiB code region.
#include "hlk_api.h"
#include "hlk_args.h"

using namespace hlk;

namespace {
struct Table {
  uint32_t words[args::kTableWords];
  constexpr Table() : words() {
    for (int i = 0; i < args::kTableWords; ++i) words[i] = 2654435761u * uint32_t(i + 1);
  }
};
constexpr Table kTable;
}

void hlk_main() {
  // A runtime index keeps the whole table.
  uint32_t i = hlk_input_count(1);
  hlk_debug_word(kTable.words[i % args::kTableWords]);
}
