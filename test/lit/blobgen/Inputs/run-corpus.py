# Runs blobgen over every blob.yaml under a directory (BUDA's pipegen2
# output, corpus/anchor-artifacts), then --dump over every .hex it wrote.
# Prints one line per failure and a summary:
#   <files> blob.yaml, <ok> ok, <failed> failed, <hex> blobs, <dumped> dumped
# Usage: run-corpus.py BLOBGEN DIR OUTDIR
import os
import subprocess
import sys

blobgen, root, out = sys.argv[1:4]
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f == "blob.yaml")
ok = failed = hexes = dumped = 0
for i, path in enumerate(files):
    dest = os.path.join(out, str(i))
    r = subprocess.run([blobgen, "-w", path, "-o", dest], capture_output=True, text=True)
    if r.returncode != 0:
        failed += 1
        print(f"FAIL {os.path.relpath(path, root)}: exit {r.returncode}: {r.stderr.splitlines()[:1]}")
        continue
    ok += 1
    for name in sorted(os.listdir(dest)):
        hexes += 1
        d = subprocess.run([blobgen, "--dump", os.path.join(dest, name)], capture_output=True, text=True)
        if d.returncode == 0 and d.stdout.startswith("# Tessera overlay blob"):
            dumped += 1
        else:
            print(f"DUMP FAIL {os.path.relpath(path, root)} {name}: {d.stderr.splitlines()[:1]}")
print(f"{len(files)} blob.yaml, {ok} ok, {failed} failed, {hexes} blobs, {dumped} dumped")
