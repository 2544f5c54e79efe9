#!/bin/sh
# build-kernels.sh SRCROOT OUTDIR UNPACK.cpp MATH.cpp PACK.cpp [clang flags...]
# Compiles one test kernel per thread (C++, rv32im, freestanding) and links
# it at the thread's code region: OUTDIR/{unpack,math,pack}.elf.
set -e
src=$1 out=$2 unpack=$3 math=$4 pack=$5
shift 5
here=$(dirname "$0")
mkdir -p "$out"
# build SOURCE NAME CODE_BASE [clang flags...]
build() {
  source=$1 name=$2 base=$3
  shift 3
  clang --target=riscv32-unknown-elf -march=rv32im -mabi=ilp32 -ffreestanding -nostdlib -O2 -mno-relax \
    -x c++ -std=c++17 -fno-exceptions -fno-rtti -I"$src/lib" "$@" -c "$source" -o "$out/$name.o"
  ld.lld --defsym=CODE_BASE="$base" -T "$here/kernel.ld" "$out/$name.o" -o "$out/$name.elf"
}
build "$unpack" unpack 0x4000 "$@"
build "$math" math 0x9000 "$@"
build "$pack" pack 0xD000 "$@"
