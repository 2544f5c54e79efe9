// Float arithmetic on the RISC-V: needs a soft-float library kernels do not have.
#include "hlk_api.h"
#include "hlk_args.h"

using namespace hlk;

void hlk_main() {
  float x = static_cast<float>(hlk_input_count(3)) * args::kScale;
  hlk_debug_word(static_cast<uint32_t>(x));
}
