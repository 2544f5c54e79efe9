#!/usr/bin/env bash
# Benchmark: speed of the RV32IM interpreter (lib/sim/rv32) inside the core
# model, in RISC-V instructions per second. Compiles a compute-heavy kernel
# (sorting, CRC-32, multiply/divide mixing over arrays in local memory) for the
# math thread with clang-14, idle kernels for unpack and pack, runs them with
# tensix-run --time RUNS times and prints the best and median MIPS.
# Record the figures in docs/performance.md ("RV32 interpreter").
#
#   scripts/bench-rv32.sh [REPS] [RUNS]      (BUILD_DIR=... to pick a build)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
tool="$build/tools/tensix-run/tensix-run"
reps="${1:-400}"
runs="${2:-5}"
[ -x "$tool" ] || { echo "bench-rv32: build tensix-run first (scripts/build.sh)" >&2; exit 2; }
clang="$(command -v clang-14 || echo /usr/lib/llvm-14/bin/clang)"
lld="$(command -v ld.lld-14 || echo /usr/lib/llvm-14/bin/ld.lld)"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

cat > "$work/kernel.ld" <<'LD'
ENTRY(_start)
SECTIONS {
  . = CODE_BASE;
  .text : { *(.text.start) *(.text .text.*) *(.rodata .rodata.* .srodata .srodata.*) }
  . = 0xFFB00000;
  .data : { *(.data .data.* .sdata .sdata.*) *(.sbss .sbss.* .bss .bss.* COMMON) }
}
LD
cat > "$work/idle.cpp" <<'CPP'
#include "device/device_contract.h"
extern "C" __attribute__((section(".text.start"))) void _start() {
  *reinterpret_cast<volatile uint32_t*>(tessera::contract::kMailboxDone) = 0;
  for (;;) {
  }
}
CPP
cat > "$work/heavy.cpp" <<'CPP'
// REPS rounds of: fill 200 words from an LCG, insertion-sort them, CRC-32
// over their bytes, fold with multiplies and a few divisions. The result goes
// to the debug log so nothing is optimized away.
#include "device/device_contract.h"
static uint32_t values[200];
extern "C" __attribute__((section(".text.start"))) void _start() {
  uint32_t seed = 1, acc = 0;
  for (int rep = 0; rep < REPS; ++rep) {
    for (int i = 0; i < 200; ++i) values[i] = seed = seed * 1664525u + 1013904223u;
    for (int i = 1; i < 200; ++i) {
      uint32_t v = values[i];
      int j = i;
      for (; j > 0 && values[j - 1] > v; --j) values[j] = values[j - 1];
      values[j] = v;
    }
    uint32_t crc = 0xFFFFFFFFu;
    const uint8_t* p = reinterpret_cast<const uint8_t*>(values);
    for (int i = 0; i < 800; ++i) {
      crc ^= p[i];
      for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    acc = acc * 31u + (crc ^ (values[rep % 200] / ((crc & 0xFFu) | 1u)));
  }
  *reinterpret_cast<volatile uint32_t*>(tessera::contract::kDebugPutWord) = acc;
  *reinterpret_cast<volatile uint32_t*>(tessera::contract::kMailboxDone) = 0;
  for (;;) {
  }
}
CPP
build() {  # build SOURCE NAME CODE_BASE
  "$clang" --target=riscv32-unknown-elf -march=rv32im -mabi=ilp32 -ffreestanding -nostdlib -O2 -mno-relax \
    -x c++ -std=c++17 -fno-exceptions -fno-rtti -I"$root/lib" -DREPS="$reps" -c "$1" -o "$work/$2.o"
  "$lld" --defsym=CODE_BASE="$3" -T "$work/kernel.ld" "$work/$2.o" -o "$work/k/$2.elf"
}
mkdir -p "$work/k"
build "$work/idle.cpp" unpack 0x4000
build "$work/heavy.cpp" math 0x9000
build "$work/idle.cpp" pack 0xD000

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/{print $2}') GiB"
echo "command: tensix-run --kernel-dir <heavy kernel, REPS=$reps> --max-cycles 1000000000000 --time"
mips=()
for _ in $(seq "$runs"); do
  out="$("$tool" --kernel-dir "$work/k" --max-cycles 1000000000000 --time)"
  line="$(printf '%s\n' "$out" | grep '^host:')"
  mips+=("$(printf '%s\n' "$line" | sed 's/.*instructions, \([0-9.]*\) MIPS/\1/')")
done
printf '%s\n' "$out" | grep -E '^(math|host)'
sorted="$(printf '%s\n' "${mips[@]}" | sort -n)"
echo "runs:    $runs"
echo "MIPS:    best $(printf '%s\n' "$sorted" | tail -1), median $(printf '%s\n' "$sorted" | sed -n "$(( (runs + 1) / 2 ))p")"
