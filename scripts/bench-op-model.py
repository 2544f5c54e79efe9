#!/usr/bin/env python3
"""Simulated op cycles vs tt-budabackend's op_model estimates.

Runs each netlist with `loader run --perf-report`, and for every op of the
report compares the simulator's cycles per core and input (the busy cycles of
the busiest unit - unpack, math or pack - of the op's busiest core, over the
epoch's runs and inputs) with the op_model estimate for the op's arch (one
core's share of the op: its mblock, ublock and t). Prints the distribution of
sim / estimate (quartiles and median) per arch and op class (matmul, eltwise,
SFPU), and one line per op with --verbose.

The estimate formulas and weights are the public op_model's
(tenstorrent/tt-budabackend perf_lib/op_model/op_model.cpp,
params/grayskull/params_v2.yaml, params/wormhole_b0/params_v3.yaml; fitted
by linear regression on silicon sweeps, perf_lib/op_model/README.md):
  unary:    t * (ublocks * ublock_weight + tiles * tile_weight) (the approx set with approximate_mode)
  binary:   t * (ublocks * ublock_weight + tiles * tile_weight * df_weight),
            df_weight 1 (Bfp), 2 (Float16/_b), 4 (Float32)
  matmul, grayskull: t * ((m_k - 1) * m_k_weight + m_k * ublocks * ublock_weight
            + m_k * ublocks * u_kt * ublock_tiles * tile_weight * fidelity_phases)
  matmul, wormhole_b0 (V2): t * (m_k * ublocks * u_kt * ublock_tiles * phases * math_tiles_weight
            + (m_k - 1) * ublocks * ublock_tiles * math_dest_spill_weight
            + m_k * ublocks * unpack_ublocks_weight
            + m_k * ublocks * u_kt * rt * (1 + ct) * unpack_tiles_weight)

With --elapsed the loader also writes a trace (`--trace`) and a second table
compares the op's elapsed cycles per input instead: the median over inputs of
each core's window (first unpack to last pack, the trace's per-input spans),
on the op's slowest core. Busy cycles leave out the kernels' own instructions
and the units' waits for each other; the window does not (but in a pipeline
it also holds waits for the producer).
Usage: scripts/bench-op-model.py [--loader PATH] [--timeout S] [--work DIR] [--verbose] [--elapsed] NETLIST...
Exit 0; netlists that fail or time out are listed and skipped.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import yaml

# (ublock_weight, tile_weight) per op; grayskull params_v2, wormhole_b0 params_v3 (base sets).
PARAMS = {
    "grayskull": {
        "nop": (305, 56), "datacopy": (305, 56), "exp": (0, 2666), "gelu": (64, 286),
        "gelu_derivative": (0, 3116), "log": (0, 1413), "power": (140.92, 125.59),
        "reciprocal": (29, 915), "sigmoid": (84.15, 174.76), "sqrt": (195, 159),
        "add": (293.96, 50.43), "subtract": (293.60, 50.51), "multiply": (261.21, 54.84),
        "maximum": (30.74, 260.33),
        "matmul": {"m_k_weight": 1321, "ublock_weight": 56, "tile_weight": 36},
    },
    "wormhole_b0": {
        "nop": (305, 56), "datacopy": (305, 56), "abs": (31.24, 171.50), "cosine": (13.26, 1547.50),
        "exp": (9, 1771), "gelu": (7.92, 270.42), "gelu_derivative": (19.45, 2219.61),
        "log": (7.97, 718.10), "lrelu": (19.46, 321.99), "power": (54.37, 200.44),
        "reciprocal": (7.94, 910.09), "sigmoid": (25.04, 266.47), "sine": (7.94, 910.09),
        "sqrt": (7.94, 910.09), "square": (20.08, 204.16), "tanh": (20.23, 204.14),
        "add": (234.25, 49.60), "subtract": (234.08, 49.68), "multiply": (222.05, 54.60),
        "maximum": (9.86, 333.84),
        "matmul": {"fp16": (15.516, 47.701, 93.197, 3.333), "bfp": (14.163, 22.113, 192.765, 3.972)},
    },
}
# The approx sets (approximate_mode: true), same files.
APPROX = {
    "grayskull": {"exp": (31.08, 668.08), "gelu_derivative": (12.09, 822.25), "reciprocal": (31.81, 905.53)},
    "wormhole_b0": {"exp": (10.21, 812.81), "gelu_derivative": (19.50, 383.77), "reciprocal": (10.23, 780.81)},
}
BINARY = {"add", "subtract", "multiply", "maximum"}
ELTWISE = BINARY | {"nop", "datacopy"}
PHASES = {"LoFi": 1, "HiFi2": 2, "HiFi2_A": 2, "HiFi2_B": 2, "HiFi3": 3, "HiFi4": 4}


def op_class(op_type):
    if op_type == "matmul":
        return "matmul"
    if op_type in ELTWISE:
        return "eltwise"
    return "sfpu"


def estimate(arch, op):
    p = PARAMS.get(arch, {})
    t = int(op.get("t", 1))
    mb = op.get("mblock", [1, 1])
    ub = op.get("ublock", [1, 1])
    ublocks = int(mb[0]) * int(mb[1])
    ub_tiles = int(ub[0]) * int(ub[1])
    typ = op["type"]
    attrs = op.get("attributes") or {}
    if typ == "matmul":
        if "matmul" not in p or attrs.get("identity") or "m_k" not in attrs:
            return None
        mk, ukt = int(attrs["m_k"]), int(attrs.get("u_kt", 1))
        phases = PHASES.get(str(op.get("math_fidelity", "HiFi4")), 4)
        if arch == "grayskull":
            w = p["matmul"]
            return t * ((mk - 1) * w["m_k_weight"] + mk * ublocks * w["ublock_weight"]
                        + mk * ublocks * ukt * ub_tiles * w["tile_weight"] * phases)
        df = str((op.get("in_df") or ["Float16_b"])[0])
        math_w, spill_w, unp_ub_w, unp_t_w = p["matmul"]["bfp" if df.startswith("Bfp") else "fp16"]
        n_ub = mk * ublocks
        return t * (n_ub * ukt * ub_tiles * phases * math_w + (mk - 1) * ublocks * ub_tiles * spill_w
                    + n_ub * unp_ub_w + n_ub * ukt * int(ub[0]) * (1 + int(ub[1])) * unp_t_w)
    if typ not in p:
        return None
    uw, tw = p[typ]
    if attrs.get("approximate_mode") and typ in APPROX.get(arch, {}):
        uw, tw = APPROX[arch][typ]
    if typ in BINARY:
        df = str((op.get("in_df") or ["Float16_b"])[0])
        tw *= 4 if df in ("Float32", "Tf32") else 2 if df in ("Float16", "Float16_b") else 1
    return t * (ublocks * uw + ublocks * ub_tiles * tw)


def quartiles(xs):
    xs = sorted(xs)
    if len(xs) == 1:
        return xs[0], xs[0], xs[0]
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], q[1], q[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("netlists", nargs="+")
    ap.add_argument("--loader", default=os.path.join(os.path.dirname(__file__), "..", "build", "tools", "loader", "loader"))
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--work", default="/tmp/bench-op-model")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--elapsed", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    ratios = {}  # (arch, class) -> [ratio]
    elapsed_ratios = {}  # the same with elapsed cycles (--elapsed)
    skipped = []
    for i, path in enumerate(args.netlists):
        with open(path) as f:
            nl = yaml.safe_load(f)
        arch = nl.get("devices", {}).get("arch", "grayskull")
        arch = (arch[0] if isinstance(arch, list) else arch).lower()
        arch = "wormhole_b0" if arch.startswith("wormhole") else arch
        report = os.path.join(args.work, "perf%d.json" % i)
        trace = os.path.join(args.work, "trace%d.json" % i)
        cmd = [args.loader, "run", path, "--build-dir", os.path.join(args.work, "b%d" % i), "--perf-report", report]
        if args.elapsed:
            cmd += ["--trace", trace]
        start = time.time()
        try:
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            skipped.append((path, "timeout"))
            continue
        if not os.path.exists(report):
            skipped.append((path, "exit %d" % r.returncode))
            continue
        with open(report) as f:
            perf = json.load(f)
        if os.path.exists(report):
            os.remove(report)
        windows = {}  # op -> core -> [per-input window]
        if args.elapsed and os.path.exists(trace):
            with open(trace) as f:
                events = json.load(f)["traceEvents"]
            os.remove(trace)
            for e in events:
                if e.get("cat") == "input":
                    a = e["args"]
                    windows.setdefault(a["core"].rsplit("[", 1)[0], {}).setdefault(a["core"], []).append(a["end"] - a["start"])
        ops = {}
        for gname, g in (nl.get("graphs") or {}).items():
            for name, op in g.items():
                if isinstance(op, dict) and "type" in op:
                    ops[name] = (op, int(g.get("input_count", 1)))
        for ep in perf["epochs"]:
            for o in ep["ops"]:
                if o["op"] not in ops:
                    continue
                op, inputs = ops[o["op"]]
                est = estimate(arch, op)
                if not est:
                    continue
                busy = max(o["unpack_cycles"], o["math_cycles"], o["pack_cycles"])
                sim = busy / (ep["runs"] * inputs)
                ratio = sim / est
                ratios.setdefault((arch, op_class(op["type"])), []).append(ratio)
                line = "%-12s %-8s %-16s %-40s sim %10.0f est %10.0f ratio %6.2f" % (
                    arch, op_class(op["type"]), op["type"], o["op"][:40], sim, est, ratio)
                if o["op"] in windows:
                    el = max(statistics.median(w) for w in windows[o["op"]].values())
                    elapsed_ratios.setdefault((arch, op_class(op["type"])), []).append(el / est)
                    line += " elapsed %10.0f ratio %6.2f" % (el, el / est)
                if args.verbose:
                    print(line)
        if args.verbose:
            print("# %s: %.1f s" % (path, time.time() - start), file=sys.stderr)
    print("%-12s %-8s %5s %8s %8s %8s" % ("arch", "class", "ops", "q1", "median", "q3"))
    for (arch, cls) in sorted(ratios):
        q1, med, q3 = quartiles(ratios[(arch, cls)])
        print("%-12s %-8s %5d %8.2f %8.2f %8.2f" % (arch, cls, len(ratios[(arch, cls)]), q1, med, q3))
    if args.elapsed:
        print("elapsed cycles per input (median window, slowest core) / estimate:")
        print("%-12s %-8s %5s %8s %8s %8s" % ("arch", "class", "ops", "q1", "median", "q3"))
        for (arch, cls) in sorted(elapsed_ratios):
            q1, med, q3 = quartiles(elapsed_ratios[(arch, cls)])
            print("%-12s %-8s %5d %8.2f %8.2f %8.2f" % (arch, cls, len(elapsed_ratios[(arch, cls)]), q1, med, q3))
    for path, why in skipped:
        print("skipped %s (%s)" % (path, why))
    return 0


if __name__ == "__main__":
    sys.exit(main())
