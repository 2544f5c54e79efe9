// Broken on the math thread only: the error names that thread.
#include "hlk_api.h"
#include "hlk_args.h"

using namespace hlk;

void hlk_main() {
#if defined(TESSERA_THREAD_MATH)
  hlk_zero_dst(no_such_tile);
#endif
  hlk_acquire_dst();
  hlk_release_dst();
}
