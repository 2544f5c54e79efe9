#!/usr/bin/env python3
"""Compares two pipegen.yaml files of one epoch by meaning, not by id.

    compare-pipegen-yaml.py [--max-lines N] OURS BUDA

Ids differ between two net2pipes, so buffers are matched by what they are:
an op's buffer by (chip, core, op, buffer type, operand id); a queue's by
(queue, DRAM channel, DRAM address). Relay buffers (BUDA's prolog_relay /
relay / is_post_tm_relay_buf, our ethernet relays) are looked through: a pipe
reading one reads what feeds it. Pipes are matched by their destination
buffers; a matched pair is compared by the buffers it reads (a multiset of
meanings) and the tiles it delivers per input (input_list entries, each a
scatter chunk of scatter_gather_num_tiles tiles or a whole non-scatter input
of tiles_per_input tiles, times pipe_periodic_repeat).

Prints `missing` (in BUDA's file only), `extra` (in ours only) and
`different` lines (field: ours vs BUDA), then a summary line:
`buffers: M matched, A missing, B extra, C different; pipes: ...`.
Exit 0 when the files mean the same, 1 when they differ, 2 on a usage or
input error.
"""
import argparse
import bisect
import collections
import sys

import yaml

# Fields of a matched buffer pair whose difference changes what moves where.
BUFFER_FIELDS = ["epoch_tiles", "tiles_per_input", "tile_size", "q_slots", "dram_ram_flag", "dram_io_flag",
                 "untilized_output"]
# Fields reported separately: allocation choices, not meaning.
SIZE_FIELDS = ["size_tiles", "scatter_gather_num_tiles"]
RELAY_TYPES = {"relay", "prolog_relay", "ethernet"}
DRAM_TYPES = {"dram_io", "dram_prolog"}


class InputError(Exception):
    pass


def load(path):
    try:
        with open(path) as f:
            docs = list(yaml.load_all(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    except (OSError, yaml.YAMLError) as e:
        raise InputError(f"{path}: error: cannot read: {e}".replace("\n", " "))
    bufs, pipes = {}, []
    for d in docs:
        if not isinstance(d, dict):
            continue
        for k, v in d.items():
            if not isinstance(v, dict):
                continue
            if k.startswith("buffer_"):
                if "uniqid" not in v:
                    raise InputError(f"{path}: error: {k} has no uniqid")
                bufs[int(v["uniqid"])] = v
            elif k.startswith("pipe_"):
                pipes.append(v)
    return bufs, pipes


def flat_outputs(p):
    out = p.get("output_list") or []
    flat = []
    for o in out:
        flat.extend(o if isinstance(o, list) else [o])
    return flat


def is_relay(b):
    return b.get("buffer_type") in RELAY_TYPES or b.get("is_post_tm_relay_buf") == 1


def meaning(b):
    """What a buffer is, independent of ids."""
    t = b.get("buffer_type")
    chip = (b.get("chip_id") or [0])[0]
    if t in DRAM_TYPES or b.get("is_padding") == 1:
        if b.get("is_padding") == 1:
            return ("padding", b.get("md_op_name"))
        return ("queue", b.get("md_op_name"), chip, b.get("dram_chan"), int(b.get("dram_addr") or 0))
    core = tuple(b.get("core_coordinates") or [])
    return ("core", chip, core, b.get("md_op_name"), t, b.get("id"))


def describe(m):
    if m[0] == "queue":
        return f"queue {m[1]} chip {m[2]} dram_chan {m[3]} dram_addr {m[4]:#x}"
    if m[0] == "padding":
        return f"padding for {m[1]}"
    return f"{m[4]} {m[3]} id {m[5]} chip {m[1]} core {list(m[2])}"


class File:
    def __init__(self, path):
        self.path = path
        self.bufs, self.pipes = load(path)
        self.ids = sorted(self.bufs)
        self.writer = {}  # buffer uniqid -> the pipe writing it
        for p in self.pipes:
            for o in flat_outputs(p):
                self.writer[int(o)] = p

    def resolve(self, entry):
        """input_list entry -> (buffer uniqid, offset)."""
        if entry in self.bufs:
            return entry, 0
        # A scatter chunk: the buffer's uniqid plus a tile offset below 1e9.
        i = bisect.bisect_right(self.ids, entry) - 1
        if i < 0 or entry - self.ids[i] >= 1000000000:
            raise InputError(f"{self.path}: error: input {entry} names no buffer")
        return self.ids[i], entry - self.ids[i]

    def entry_tiles(self, b):
        if not b.get("is_scatter") and b.get("tiles_per_input"):
            return int(b["tiles_per_input"])
        return int(b.get("scatter_gather_num_tiles") or 0)

    def sources(self, p, depth=0):
        """The non-relay buffers a pipe reads (a Counter of meanings), relays looked through."""
        out = collections.Counter()
        for e in p.get("input_list") or []:
            u, _ = self.resolve(int(e))
            b = self.bufs[u]
            if is_relay(b) and u in self.writer and depth < 16:
                out.update(self.sources(self.writer[u], depth + 1))
            else:
                out[meaning(b)] += 1
        return out

    def tiles(self, p):
        n = sum(self.entry_tiles(self.bufs[self.resolve(int(e))[0]]) for e in p.get("input_list") or [])
        return n * max(1, int(p.get("pipe_periodic_repeat") or 0))

    def end_pipes(self):
        """Pipes whose destinations are not relays, keyed by their destinations' meanings."""
        out = collections.defaultdict(list)
        for p in self.pipes:
            dests = [self.bufs[int(o)] for o in flat_outputs(p) if int(o) in self.bufs]
            if dests and all(is_relay(d) for d in dests):
                continue
            key = tuple(sorted(meaning(d) for d in dests if not is_relay(d)))
            out[key].append(p)
        return out


def main():
    ap = argparse.ArgumentParser(description="Compare two pipegen.yaml files of one epoch by meaning.")
    ap.add_argument("--max-lines", type=int, default=50, help="print at most this many detail lines (0: all)")
    ap.add_argument("ours")
    ap.add_argument("buda")
    try:
        args = ap.parse_args()
    except SystemExit as e:
        return 2 if e.code else 0
    try:
        a, b = File(args.ours), File(args.buda)
        lines = []
        counts = {"buffers": [0, 0, 0, 0], "pipes": [0, 0, 0, 0]}  # matched, missing, extra, different

        def group(f):
            g = collections.defaultdict(list)
            for u in sorted(f.bufs):
                if not is_relay(f.bufs[u]):
                    g[meaning(f.bufs[u])].append(f.bufs[u])
            return g

        ga, gb = group(a), group(b)
        for m in sorted(set(ga) | set(gb), key=repr):
            la, lb = ga.get(m, []), gb.get(m, [])
            c = counts["buffers"]
            if not la:
                c[1] += 1
                lines.append(f"missing buffer: {describe(m)} (BUDA buffer_{lb[0]['uniqid']})")
                continue
            if not lb:
                c[2] += 1
                lines.append(f"extra buffer: {describe(m)} (our buffer_{la[0]['uniqid']})")
                continue
            c[0] += 1
            x, y = la[0], lb[0]
            diffs = [f"{k} {x.get(k)} vs {y.get(k)}" for k in BUFFER_FIELDS
                     if k in x and k in y and x.get(k) != y.get(k)]
            if x.get("buffer_type") == y.get("buffer_type") == "dram_prolog" and \
                    x.get("core_coordinates") != y.get("core_coordinates"):
                diffs.append(f"core_coordinates {x.get('core_coordinates')} vs {y.get('core_coordinates')}")
            if x.get("buffer_type") != y.get("buffer_type"):
                diffs.insert(0, f"buffer_type {x.get('buffer_type')} vs {y.get('buffer_type')}")
            sizes = [f"{k} {x.get(k)} vs {y.get(k)}" for k in SIZE_FIELDS if x.get(k) != y.get(k)]
            if diffs:
                c[3] += 1
                lines.append(f"different buffer: {describe(m)}: {', '.join(diffs + sizes)}")
            elif sizes:
                lines.append(f"sizes differ: {describe(m)}: {', '.join(sizes)}")

        pa, pb = a.end_pipes(), b.end_pipes()
        for key in sorted(set(pa) | set(pb), key=repr):
            la, lb = pa.get(key, []), pb.get(key, [])
            c = counts["pipes"]
            what = ", ".join(describe(m) for m in key[:3]) + (f" (+{len(key) - 3})" if len(key) > 3 else "")
            if not la:
                c[1] += 1
                lines.append(f"missing pipe: to {what} (BUDA pipe_{lb[0].get('id')})")
                continue
            if not lb:
                c[2] += 1
                lines.append(f"extra pipe: to {what} (our pipe_{la[0].get('id')})")
                continue
            c[0] += 1
            x, y = la[0], lb[0]
            diffs = []
            ta, tb = a.tiles(x), b.tiles(y)
            if ta != tb:
                diffs.append(f"tiles per input {ta} vs {tb}")
            sa, sb = a.sources(x), b.sources(y)
            if set(sa) != set(sb):
                only_a = sorted(set(sa) - set(sb), key=repr)
                only_b = sorted(set(sb) - set(sa), key=repr)
                if only_a:
                    diffs.append("reads only ours: " + "; ".join(describe(m) for m in only_a[:3]))
                if only_b:
                    diffs.append("reads only BUDA: " + "; ".join(describe(m) for m in only_b[:3]))
            if diffs:
                c[3] += 1
                lines.append(f"different pipe: to {what} (ours pipe_{x.get('id')}, BUDA pipe_{y.get('id')}): "
                             + ", ".join(diffs))
        shown = lines if args.max_lines == 0 else lines[:args.max_lines]
        for line in shown:
            print(line)
        if len(shown) < len(lines):
            print(f"... {len(lines) - len(shown)} more lines")

        def summary(k):
            m, mi, ex, di = counts[k]
            return f"{k}: {m} matched, {mi} missing, {ex} extra, {di} different"
        print(f"{summary('buffers')}; {summary('pipes')}")
        differ = any(counts[k][1] or counts[k][2] or counts[k][3] for k in counts)
        return 1 if differ else 0
    except InputError as e:
        print(str(e), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
