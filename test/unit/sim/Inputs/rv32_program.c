/* Runs the shared workload on the simulated hart: results go to L1 at
 * 0x20000 (where the test reads them), then ecall with a0 = 0x600D. */
#include "rv32_workload.h"

#define RESULTS ((uint32_t*)0x20000)

/* Initialized data: must arrive in local memory from the .data image. */
uint32_t wl_seed = 12345u;

__attribute__((section(".text.start"), noreturn)) void _start(void) {
  wl_run(RESULTS, wl_seed);
  register uint32_t a0 __asm__("a0") = 0x600D;
  __asm__ volatile("ecall" : : "r"(a0));
  __builtin_unreachable();
}
