// crt0 of every kernel thread: compiled into the kernel's translation unit
// (hlk_impl.h includes it), so a thread is ONE object and hlkc's cache key
// (the preprocessed source) covers the start-up code too. The linker script
// of the thread (lib/kernels/ld/<arch>/trisc<N>.ld) places `_start` first in
// .text, i.e. at the start of the thread's code region, and makes it the
// ELF entry.
//
// Start-up: sp = top of local memory (__stack_top), zero .bss, run
// .init_array (global constructors), hlk_setup(), hlk_main(), store 0 to
// kMailboxDone (the hart halts), and spin should it not.
//
// .data is NOT copied: its load address is its run address in local memory,
// so the loader writes it there (see docs/kernels.md, "Memory layout").
#pragma once
#include "llk_common.h"

void hlk_main();  // defined by hlks.cpp

extern "C" {
extern uint32_t __bss_start[];  // linker script: 4-byte aligned bounds of .bss
extern uint32_t __bss_end[];
typedef void (*TesseraInitFn)();
extern TesseraInitFn __init_array_start[];
extern TesseraInitFn __init_array_end[];

void hlk_setup();

[[noreturn]] void __tessera_crt_main() {
  // Volatile stores: no memset call, whatever the optimiser sees.
  for (volatile uint32_t* p = __bss_start; p < __bss_end; ++p) *p = 0;
  for (TesseraInitFn* f = __init_array_start; f < __init_array_end; ++f) (*f)();
  hlk_setup();
  hlk_main();
  llk::mmio_write(tessera::contract::kMailboxDone, llk::kExitOk);
  for (;;) asm volatile("");
}

__attribute__((naked, used, section(".text.start"))) void _start() {
  asm volatile(
      "lui sp, %hi(__stack_top)\n"
      "addi sp, sp, %lo(__stack_top)\n"
      "j __tessera_crt_main\n");
}

} // extern "C"
