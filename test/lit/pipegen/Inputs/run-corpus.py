#!/usr/bin/python3
"""Runs pipegen on every pipegen.yaml the BUDA backend wrote for the corpus.

  run-corpus.py PIPEGEN ANCHOR_DIR OUT_DIR

Prints one line per file, `OK <path>` or `FAIL <path>: <first error>`, and
for files that pass also compares with the blob.yaml BUDA's pipegen2 wrote
beside it: the set of worker cores (NOC y, x) that have streams must be the
same (`CORES-DIFFER <path>` otherwise). Ends with
`N passed, M failed, K with other cores`. Writes outputs as OUT_DIR/<n>.yaml.
"""
import os
import re
import subprocess
import sys

NAME = re.compile(rb"chip_\d+__y_(\d+)__x_(\d+)__stream_id_\d+:")


def cores(path):
    with open(path, "rb") as f:
        return {(int(y), int(x)) for y, x in NAME.findall(f.read())}


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    tool, root, out = argv[1:]
    os.makedirs(out, exist_ok=True)
    files = []
    for d, _, names in os.walk(root):
        if "pipegen.yaml" in names:
            files.append(os.path.join(d, "pipegen.yaml"))
    files.sort()
    passed = failed = differ = 0
    for n, path in enumerate(files):
        rel = os.path.relpath(path, root)
        target = os.path.join(out, f"{n}.yaml")
        r = subprocess.run([tool, "-w", path, "-o", target], capture_output=True, text=True)
        if r.returncode != 0:
            failed += 1
            first = next((l for l in r.stderr.splitlines() if "error:" in l), r.stderr.strip()[:200])
            print(f"FAIL {rel}: {first}")
            continue
        passed += 1
        print(f"OK {rel}")
        theirs = os.path.join(os.path.dirname(path), "blob.yaml")
        if os.path.exists(theirs) and cores(theirs) != cores(target):
            differ += 1
            print(f"CORES-DIFFER {rel}")
    print(f"{passed} passed, {failed} failed, {differ} with other cores")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
