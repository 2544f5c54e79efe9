// Scratch data too big for local memory once the minimum stack is counted.
#include "hlk_api.h"
#include "hlk_args.h"

using namespace hlk;

uint32_t scratch[args::kScratchWords];

void hlk_main() {
  uint32_t n = hlk_input_count(1);
  scratch[n % args::kScratchWords] = n;
  hlk_debug_word(scratch[(n * 7) % args::kScratchWords]);
}
