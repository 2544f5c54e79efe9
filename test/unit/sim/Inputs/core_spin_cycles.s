# Reads the cycle counter forever: it changes, so this is not a hang; the
# run ends at the cycle limit.
.equ CYCLES, 0xFFE0300C
  li   t0, CYCLES
loop:
  lw   t1, 0(t0)
  j    loop
