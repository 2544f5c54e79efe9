# Waits on MathPack once (stalls: nobody posted yet), then logs the cycle
# counter it reads right after the wait and ends.
.equ SEMAPHORES, 0xFFE02000
.equ MAILBOX_DONE, 0xFFE03000
.equ DEBUG_WORD, 0xFFE03008
.equ CYCLES, 0xFFE0300C
  li   s0, SEMAPHORES          # lui: 1 cycle
  li   t1, 1                   # 1
  sw   t1, 4(s0)               # wait MathPack at cycle 2: 2 cycles once it proceeds
  li   t0, CYCLES              # lui + addi: 2
  lw   t2, 0(t0)               # reads the clock before its own 2 cycles
  li   t0, DEBUG_WORD
  sw   t2, 0(t0)
  li   t0, MAILBOX_DONE
  sw   zero, 0(t0)
