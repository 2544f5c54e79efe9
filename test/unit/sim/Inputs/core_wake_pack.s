# Counts down for 59 cycles, then posts MathPack at cycle 62 and ends.
.equ SEMAPHORES, 0xFFE02000
.equ MAILBOX_DONE, 0xFFE03000
  li   t0, 20                  # 1 cycle
loop:
  addi t0, t0, -1              # 20 x 1
  bnez t0, loop                # 19 taken x 2, the last not taken 1
  li   s0, SEMAPHORES          # 1
  li   t2, 1                   # 1
  sw   t2, 0(s0)               # post MathPack at cycle 1 + 59 + 2 = 62
  li   t0, MAILBOX_DONE
  sw   zero, 0(t0)
