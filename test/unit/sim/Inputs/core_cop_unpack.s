# Pushes five words (0x10000001..5) to the coprocessor port, then logs the
# coprocessor status register and ends.
.equ COP_PORT, 0xFFE00000
.equ DEBUG_WORD, 0xFFE03008
.equ MAILBOX_DONE, 0xFFE03000
  li   s0, COP_PORT
  li   t1, 0x10000001
  li   t2, 0x10000006
loop:
  sw   t1, 0(s0)
  addi t1, t1, 1
  bne  t1, t2, loop
  lw   t3, 4(s0)               # status
  li   t0, DEBUG_WORD
  sw   t3, 0(t0)
  li   t0, MAILBOX_DONE
  sw   zero, 0(t0)
