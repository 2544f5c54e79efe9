#!/usr/bin/env bash
# The sim-vs-golden matrix (docs/testing.md): every kernel family on the
# one-core simulator against lib/golden, one line per case. ctest runs the
# default set; this script runs it and the extended set ([.extended]: the
# op x format x fidelity cross products, about 270 more kernels, a few
# minutes with a cold kernel cache).
#
#   scripts/test-sim-matrix.sh              the default and the extended set
#   scripts/test-sim-matrix.sh FILTER...    a Catch2 test spec, e.g. "[.extended][matmul]"
#   BUILD_DIR=... to pick a build (default build/)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
ninja -C "$build" -j"${JOBS:-$(nproc)}" unit-tests-simgolden >/dev/null
bin="$build/test/unit/unit-tests-simgolden"
export SIMGOLDEN_VERBOSE=1
if [ $# -gt 0 ]; then
  exec "$bin" "$@"
fi
status=0
"$bin" || status=1
"$bin" "[.extended]" || status=1
exit $status
