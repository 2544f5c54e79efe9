# Math side of the dest hand-off, four times: wait PackMath, post MathPack.
.equ SEMAPHORES, 0xFFE02000    # semaphore s at + 8*s: value/post, wait
.equ MAILBOX_DONE, 0xFFE03000
  li   s0, SEMAPHORES
  li   s1, 4
  li   t1, 1
loop:
  sw   t1, 12(s0)              # wait PackMath (semaphore 1)
  sw   t1, 0(s0)               # post MathPack (semaphore 0)
  addi s1, s1, -1
  bnez s1, loop
  li   t0, MAILBOX_DONE
  sw   zero, 0(t0)
