#!/usr/bin/python3
"""compile-kernels.py DIR: clang -fsyntax-only every DIR/**/kernels/*/hlks.cpp
for the unpack, math and pack threads (riscv32, freestanding), as hlkc would.
Prints each failure and a summary line; exit 1 when any failed."""
import glob
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
src = os.path.abspath(os.path.join(here, "..", "..", "..", ".."))
dirs = sorted(glob.glob(os.path.join(sys.argv[1], "**", "kernels", "*"), recursive=True))
failed = 0
for d in dirs:
    for thread in ("UNPACK", "MATH", "PACK"):
        cmd = ["clang", "--target=riscv32-unknown-elf", "-march=rv32im", "-mabi=ilp32", "-ffreestanding",
               "-nostdlib", "-O2", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
               "-DTESSERA_THREAD_" + thread, "-DTESSERA_ARCH_GRAYSKULL",
               "-I" + os.path.join(src, "lib", "kernels", "include"), "-I" + os.path.join(here, "stub"),
               "-I" + os.path.join(src, "lib"), "-I" + d, os.path.join(d, "hlks.cpp")]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            failed += 1
            print("FAIL %s %s\n%s" % (d, thread, r.stderr[:2000]))
print("compiled %d kernels x 3 threads, %d failed" % (len(dirs), failed))
sys.exit(1 if failed else 0)
