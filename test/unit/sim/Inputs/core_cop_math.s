# Pushes N words 0x20000000 + i to the coprocessor port, N = the word at
# local memory 0xFFB00FF0 (written by the test), then ends.
.equ COP_PORT, 0xFFE00000
.equ MAILBOX_DONE, 0xFFE03000
  li   s0, COP_PORT
  li   t0, 0xFFB00FF0
  lw   t2, 0(t0)
  li   t1, 0
loop:
  li   t3, 0x20000000
  add  t3, t3, t1
  sw   t3, 0(s0)
  addi t1, t1, 1
  bne  t1, t2, loop
  li   t0, MAILBOX_DONE
  sw   zero, 0(t0)
