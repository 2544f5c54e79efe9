# Pack side: four times wait MathPack, log the iteration, post PackMath.
.equ SEMAPHORES, 0xFFE02000
.equ DEBUG_WORD, 0xFFE03008
.equ MAILBOX_DONE, 0xFFE03000
  li   s0, SEMAPHORES
  li   s1, 0
  li   s2, 4
  li   s3, DEBUG_WORD
  li   t1, 1
loop:
  sw   t1, 4(s0)               # wait MathPack (semaphore 0)
  sw   s1, 0(s3)
  sw   t1, 8(s0)               # post PackMath (semaphore 1)
  addi s1, s1, 1
  bne  s1, s2, loop
  li   t0, MAILBOX_DONE
  sw   zero, 0(t0)
