// Loads a word from an odd address: a misaligned-load fault.
#include "kernel.h"

KERNEL_MAIN {
  volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(0x20002);
  k::done(*p);
}
