# Writes a blob.yaml whose core (y 1, x 1) has N phases on stream 8, each
# phase DRAM-read into the kernel's buffer; plus a small second core.
# Usage: many-phases.py N
import sys

n = int(sys.argv[1])
print("phase_0:")
print("  chip_0__y_2__x_2__stream_id_8: {dram_input: true, local_receiver: true, dram_buf_noc_addr: 0x100000000}")
for k in range(n):
    print(f"phase_{k}:")
    print("  chip_0__y_1__x_1__stream_id_8:")
    print("    dram_input: true")
    print("    local_receiver: true")
    print(f"    dram_buf_noc_addr: {0x100000000 + 32 * k:#x}")
    print("    num_msgs: 1")
    print("    msg_size: 2080")
