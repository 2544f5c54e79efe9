# Computes for a long time (no MMIO at all), then posts MathPack and ends:
# a thread waiting on MathPack meanwhile must not be reported as a hang.
.equ SEMAPHORES, 0xFFE02000
.equ MAILBOX_DONE, 0xFFE03000
  li   t0, 200000
  li   t1, 0
loop:
  add  t1, t1, t0
  addi t0, t0, -1
  bnez t0, loop
  li   s0, SEMAPHORES
  li   t2, 1
  sw   t2, 0(s0)               # post MathPack
  li   t0, MAILBOX_DONE
  sw   zero, 0(t0)
