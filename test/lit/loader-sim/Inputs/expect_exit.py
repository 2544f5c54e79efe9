# expect_exit.py N CMD ARGS...: runs CMD (output discarded) and succeeds only
# when it exits with status N.
import subprocess
import sys

want = int(sys.argv[1])
got = subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if got != want:
    sys.exit(f"expect_exit: {sys.argv[2]} exited with {got}, expected {want}")
