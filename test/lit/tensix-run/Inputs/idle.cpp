// Says hello on the debug log and ends with EXIT_CODE (default 0).
#include "kernel.h"

#ifndef EXIT_CODE
#define EXIT_CODE 0
#endif

KERNEL_MAIN {
  static const char* const kNames[3] = {"unpack", "math", "pack"};
  k::print("hello from ");
  k::print(kNames[k::reg(k::kThreadId)]);
  k::print("\n");
  k::reg(k::kDebugPutWord) = 0xC0FFEE;
  k::done(EXIT_CODE);
}
