# Unpack-thread kernel for core_test: copies EpochInfo.inputCount tiles from
# operand 0 to operand 16 with plain loads and stores (no coprocessor):
# wait for an input tile, wait for a free output slot, copy, pop, push.
# Buffers, tile size and capacities come from the operand table.
.equ OPERAND_TABLE, 0x1000
.equ EPOCH_INFO, 0x1400
.equ COUNTERS, 0xFFE01000      # operand o at + 16*o: received, acked, capacity
.equ MAILBOX_DONE, 0xFFE03000

  li   s0, COUNTERS            # operand 0
  li   s1, COUNTERS + 16*16    # operand 16
  li   t0, OPERAND_TABLE
  lw   s2, 0(t0)               # operand 0 base
  lw   s3, 4(t0)               # tile size (both operands)
  lhu  s4, 8(t0)               # operand 0 capacity
  lw   s5, 256(t0)             # operand 16 base (entry 16)
  lhu  s6, 264(t0)             # operand 16 capacity
  li   t0, EPOCH_INFO
  lw   s7, 4(t0)               # tiles to copy
  li   s8, 0                   # copied
  li   s9, 0                   # input read slot
  li   s10, 0                  # output write slot
next:
  beq  s8, s7, finish
wait_input:
  lw   t0, 0(s0)
  lw   t1, 4(s0)
  beq  t0, t1, wait_input      # received == acked: empty
wait_space:
  lw   t0, 0(s1)
  lw   t1, 4(s1)
  sub  t0, t0, t1
  bgeu t0, s6, wait_space      # occupied >= capacity: full
  mul  t2, s9, s3
  add  t2, t2, s2              # source
  mul  t3, s10, s3
  add  t3, t3, s5              # destination
  add  t4, t2, s3
copy:
  lw   t5, 0(t2)
  sw   t5, 0(t3)
  addi t2, t2, 4
  addi t3, t3, 4
  bne  t2, t4, copy
  li   t0, 1
  sw   t0, 4(s0)               # pop the input tile
  sw   t0, 0(s1)               # push the output tile
  addi s9, s9, 1
  bne  s9, s4, 1f
  li   s9, 0
1:
  addi s10, s10, 1
  bne  s10, s6, 2f
  li   s10, 0
2:
  addi s8, s8, 1
  j    next
finish:
  li   t0, MAILBOX_DONE
  sw   zero, 0(t0)
