#!/usr/bin/python3
"""Writes small pipegen.yaml files for the lit tests: make-pipegen.py KIND [N].

  streams N   two packers (cores [0, 0] and [0, 1]) gathered by N pipes, each
              writing its own DRAM queue: each pipe needs a writer stream.
  l1 N        a packer and an unpacker of N tiles on core [0, 0].
  nested N    a packer whose N passes alternate between two cores.
  huge        every size at its 32-bit maximum.
  long        a unicast pipe of 4294967295 one-tile passes.
  repeat      pipe_periodic_repeat 4294967295.
"""
import sys


def buffer(uid, kind, operand, core, size, sg, epoch, extra=""):
    return (f"---\nbuffer_{uid}:\n  md_op_name: op{uid}\n  buffer_type: {kind}\n  id: {operand}\n"
            f"  uniqid: {uid}\n  epoch_tiles: {epoch}\n  core_coordinates: {core}\n  size_tiles: {size}\n"
            f"  scatter_gather_num_tiles: {sg}\n  tile_size: 2080\n{extra}")


def pipe(pid, inputs, outputs):
    return f"---\npipe_{pid}:\n  id: {pid}\n  input_list: {inputs}\n  output_list: {outputs}\n"


def main(kind, n):
    out = ["graph_name: g\n"]
    if kind == "streams":
        out.append(buffer(100, "packer", 16, "[0, 0]", 2, 1, 2))
        out.append(buffer(101, "packer", 16, "[0, 1]", 2, 1, 2))
        for i in range(n):
            out.append(buffer(1000 + i, "dram_io", 0, "[255, 255]", 2, 2, 4,
                              f"  dram_chan: 0\n  dram_addr: {0x100000 * (i + 1)}\n  q_slots: 2\n"))
            out.append(pipe(5000 + i, "[100, 101]", f"[{1000 + i}]"))
    elif kind == "l1":
        out.append(buffer(100, "packer", 16, "[0, 0]", 2, 1, 4))
        out.append(buffer(200, "unpacker", 0, "[0, 0]", n, 1, 4))
        out.append(pipe(300, "[100]", "[200]"))
    elif kind == "nested":
        out.append(buffer(100, "packer", 16, "[0, 0]", 2, 1, n))
        out.append(buffer(200, "unpacker", 0, "[0, 1]", 2, 1, (n + 1) // 2))
        out.append(buffer(201, "unpacker", 0, "[0, 2]", 2, 1, n // 2))
        out.append(pipe(300, "[100]", "[[200], [201]]"))
    elif kind == "huge":
        m = 4294967295
        big = f"  is_scatter: 1\n  replicate: {m}\n"
        out.append(buffer(100, "packer", 16, "[0, 0]", m, m, m, big).replace("2080", str(m)))
        out.append(buffer(200, "unpacker", 0, "[0, 1]", m, m, m).replace("2080", str(m)))
        out.append(pipe(300, "[100]", "[200]"))
    elif kind == "long":
        out.append(buffer(100, "packer", 16, "[0, 0]", 2, 1, 4294967295))
        out.append(buffer(200, "unpacker", 0, "[0, 1]", 2, 1, 4294967295))
        out.append(pipe(300, "[100]", "[200]"))
    elif kind == "repeat":
        out.append(buffer(100, "packer", 16, "[0, 0]", 2, 1, 2))
        out.append(buffer(200, "unpacker", 0, "[0, 1]", 2, 1, 2))
        out.append(pipe(300, "[100]", "[200]") + "  pipe_periodic_repeat: 4294967295\n")
    else:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    sys.stdout.write("".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0))
