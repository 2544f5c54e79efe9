#!/usr/bin/python3
"""run-on-sim.py OUTDIR OP HLKC TENSIX_RUN [--run-only]: runs one op that net2hlks generated
(OUTDIR/manifest.yaml) on one simulated core and checks its output.

Feeds every input operand the tiles of a test tensor in the order the manifest
gives (t slices, ublocks in ublock_order, tiles row-major), compiles the
kernel with hlkc, runs it with tensix-run (operand capacities = the manifest's
min_tiles, EpochInfo.inputCount = the op's input_count), decodes the output in
the manifest's order and compares it with the op computed here in Python.
Values are small integers so every Float16_b result is exact. Supports the
ops of the net2hlks e2e tests: add, nop (with a transposed input), matmul
(m_k blocks, bias), reduce (c, max) and the fused op of e2e-fused.yaml.
Prints `OK <op>: <n> tiles` or the first mismatch; exit 1 on a mismatch.
With --run-only any op runs (on the same test values) and only the number of
output tiles is checked: the kernel ran to completion with these capacities."""
import os
import struct
import subprocess
import sys

import yaml

TILE = 32


def bf16(v):
    return struct.unpack("<I", struct.pack("<f", float(v)))[0] >> 16


def pack_tile(values):  # values[r][c], 32x32 -> Float16_b tile bytes
    out = bytearray(struct.pack("<I", 2080 // 16) + bytes(12))
    for face in range(4):
        r0, c0 = (face // 2) * 16, (face % 2) * 16
        for r in range(16):
            for c in range(16):
                out += struct.pack("<H", bf16(values[r0 + r][c0 + c]))
    return bytes(out + bytes(2080 - len(out)))


def tile_bytes(df):
    return {"Float32": 4128, "Int32": 4128, "RawUInt32": 4128, "Float16": 2080, "Float16_b": 2080, "UInt16": 2080,
            "RawUInt16": 2080, "Bfp8": 1120, "Bfp8_b": 1120, "Int8": 1120, "UInt8": 1120, "Bfp4": 608, "Bfp4_b": 608,
            "Bfp2": 352, "Bfp2_b": 352, "Lf8": 1056, "Fp8_e4m3": 1056, "RawUInt8": 1056}[df]


def unpack_tile(data):
    vals = [[0.0] * TILE for _ in range(TILE)]
    pos = 16
    for face in range(4):
        r0, c0 = (face // 2) * 16, (face % 2) * 16
        for r in range(16):
            for c in range(16):
                (h,) = struct.unpack_from("<H", data, pos)
                pos += 2
                vals[r0 + r][c0 + c] = struct.unpack("<f", struct.pack("<I", h << 16))[0]
    return vals


def layout_order(o):
    """(t, tile row, tile col) of the tiles of one entry, in stream order."""
    mr, mc = o["mblock"]
    ur, uc = o["ublock"]
    order = []
    for t in range(o["t"]):
        ublocks = [(r, c) for r in range(mr) for c in range(mc)] if o["ublock_order"] == "r" else \
                  [(r, c) for c in range(mc) for r in range(mr)]
        for (br, bc) in ublocks:
            for r in range(ur):
                for c in range(uc):
                    order.append((t, br * ur + r, bc * uc + c))
    return order


def dims(o):
    return o["mblock"][0] * o["ublock"][0] * TILE, o["mblock"][1] * o["ublock"][1] * TILE


def tensor(seed, t, rows, cols, lo=0, hi=1):
    """entry tensor [t][rows][cols] of small integers in [lo, hi]."""
    span = hi - lo + 1
    return [[[lo + ((i * 7 + j * 13 + z * 5 + seed * 11 + (i * j) % 7) % span) for j in range(cols)]
             for i in range(rows)] for z in range(t)]


def tile_of(x, t, rt, ct, transpose=False):
    v = [[x[t][rt * TILE + r][ct * TILE + c] for c in range(TILE)] for r in range(TILE)]
    if transpose:
        v = [[v[c][r] for c in range(TILE)] for r in range(TILE)]
    return v


def matmul(a, b):
    n, k, m = len(a), len(b), len(b[0])
    return [[sum(a[i][x] * b[x][j] for x in range(k)) for j in range(m)] for i in range(n)]


def header_array(args_h, name):
    line = next(l for l in args_h.splitlines() if " " + name + "[" in l)
    return [int(v) for v in line.split("{")[1].split("}")[0].split(",")]


def header_int(args_h, name):
    line = next(l for l in args_h.splitlines() if " " + name + " = " in l)
    return line.split(" = ")[1].split(";")[0]


def check_splice(opname, raw, order, entries, inputs, data, out, args_h):
    """splice: which input tile each output tile must be, by the rounds of
    docs/golden-special-ops.md, then compare tile by tile."""
    index, length, stride = (header_array(args_h, n) for n in ("kSpliceIndex", "kSpliceLength", "kSpliceStride"))
    by_t = header_int(args_h, "kSpliceByT") == "true"
    streams = {o["index"]: layout_order(o) for o in inputs}
    ub = out["ublock"][0] * out["ublock"][1]
    unit = len(order) // out["t"] if by_t else ub  # tiles per unit (one t's block, or one ublock)
    per_pass = len(order) if by_t else len(order) // out["t"]
    source = []  # per output tile of one entry: (input, t, rt, ct)
    for p in range(len(order) // per_pass):
        nxt = {i: 0 for i in streams}
        while len(source) < (p + 1) * per_pass:
            for i in sorted(streams):
                base = (0 if by_t else p * (len(streams[i]) // out["t"]))
                nxt[i] += index[i]
                for l in range(length[i]):
                    for k in range(unit):
                        source.append((i,) + streams[i][base + (nxt[i] + l) * unit + k])
                nxt[i] += stride[i]
    n = len(raw) // 2080
    for k in range(n):
        e, j = k // len(order), k % len(order)
        i, t, rt, ct = source[j]
        want = tile_of(data[i][e], t, rt, ct)
        got = unpack_tile(raw[k * 2080:(k + 1) * 2080])
        if got != want:
            print("FAIL %s: entry %d output tile %d is not input%d tile (t %d, %d, %d)" % (opname, e, j, i, t, rt, ct))
            return 1
    print("OK %s: %d tiles" % (opname, n))
    return 0


def main():
    outdir, opname, hlkc, tensix_run = sys.argv[1:5]
    run_only = "--run-only" in sys.argv[5:]
    manifest = yaml.safe_load(open(os.path.join(outdir, "manifest.yaml")))
    op = next(o for o in manifest["ops"] if o["op"] == opname)
    kdir = os.path.join(outdir, op["kernel"])
    work = os.path.join(outdir, "sim-" + opname)
    os.makedirs(work, exist_ok=True)
    arch = "grayskull" if manifest["arch"] == "grayskull" else "wormhole_b0"  # what hlkc and tensix-run model
    subprocess.run([hlkc, "--no-cache", "--arch", arch, "--out-dir", work, kdir], check=True)
    entries = int(os.environ.get("RUN_ON_SIM_ENTRIES", op["input_count"]))
    operands = {o["operand"]: o for o in op["operands"]}
    inputs = [o for o in op["operands"] if o["role"] == "input"]
    out = operands[16]

    # Test tensors per input, as the op sees them after its TMs.
    data = {}
    for o in inputs:
        t = o["t"]
        rows, cols = dims(o)
        data[o["index"]] = [tensor(o["index"] + 3 * e, t, rows, cols) for e in range(entries)]

    # A transpose TM: the pipe delivers the transposed tensor's tiles with
    # their contents untransposed; the kernel transposes each tile.
    args_h = open(os.path.join(kdir, "hlk_args.h")).read()
    transpose = {0: "kTransposeIn0 = true" in args_h, 1: "kTransposeIn1 = true" in args_h, 2: False}

    args = [tensix_run, "--kernel-dir", work, "--input-count", str(entries), "--arch", arch]
    for o in inputs:
        path = os.path.join(work, "in%d.bin" % o["index"])
        with open(path, "wb") as f:
            for e in range(entries):
                for (t, rt, ct) in layout_order(o):
                    if run_only:  # zero tiles of the operand's format: only the flow matters
                        size = tile_bytes(o["df"])
                        f.write(struct.pack("<I", size // 16) + bytes(size - 4))
                    else:
                        f.write(pack_tile(tile_of(data[o["index"]][e], t, rt, ct, transpose[o["index"]])))
        args += ["--input", "%d:%s:%d:%s" % (o["operand"], o["df"], max(o["min_tiles"], 1), path)]
    for o in op["operands"]:
        if o["role"] in ("intermediate", "spill"):
            args += ["--operand", "%d:%s:%d" % (o["operand"], o["df"], o["min_tiles"])]
    out_path = os.path.join(work, "out.bin")
    args += ["--output", "16:%s:%d:%s" % (out["df"], out["min_tiles"], out_path)]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)

    raw = open(out_path, "rb").read()
    order = layout_order(out)
    n = len(raw) // tile_bytes(out["df"])
    if n != entries * len(order):
        print("FAIL %s: %d output tiles, expected %d" % (opname, n, entries * len(order)))
        return 1
    if run_only:
        print("OK %s: %d tiles" % (opname, n))
        return 0

    if op["type"] == "splice":
        return check_splice(opname, raw, order, entries, inputs, data, out, args_h)

    # Expected output per entry.
    rows, cols = dims(out)
    expected = []
    for e in range(entries):
        x = {i: data[i][e] for i in data}
        ex = []
        for t in range(out["t"]):
            if op["type"] == "add":
                m = [[x[0][t][i][j] + x[1][t][i][j] for j in range(cols)] for i in range(rows)]
            elif op["type"] == "nop":
                m = x[0][t]
            elif op["type"] == "matmul":
                m = matmul(x[0][t], x[1][t])
                if 2 in x:  # bias: row 0 of each bias tile to every row of it
                    m = [[m[i][j] + x[2][t][i - i % TILE][j] for j in range(cols)] for i in range(rows)]
            elif op["type"] == "reduce":  # dim c, max: column 0 of each tile row
                m = [[(max(x[0][t][i]) if j == 0 else 0.0) for j in range(cols)] for i in range(rows)]
            elif op["type"] == "fused_op":  # e2e-fused.yaml: input1 * (row sums of input0 + input2)
                m = [[x[1][t][i][j] * (sum(x[0][t][i]) + sum(x[2][t][i])) for j in range(cols)] for i in range(rows)]
            else:
                sys.exit("run-on-sim.py: no reference for " + op["type"])
            ex.append(m)
        expected.append(ex)

    for k in range(n):
        e, (t, rt, ct) = k // len(order), order[k % len(order)]
        got = unpack_tile(raw[k * 2080:(k + 1) * 2080])
        for r in range(TILE):
            for c in range(TILE):
                want = expected[e][t][rt * TILE + r][ct * TILE + c]
                if got[r][c] != want:
                    print("FAIL %s: entry %d t %d tile (%d, %d) value (%d, %d) = %r, expected %r" %
                          (opname, e, t, rt, ct, r, c, got[r][c], want))
                    return 1
    print("OK %s: %d tiles" % (opname, n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
