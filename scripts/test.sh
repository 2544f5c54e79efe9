#!/usr/bin/env bash
# Builds everything and runs every test (Catch2 unit tests and lit tests) via ctest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
"$root/scripts/build.sh" "$@"
cd "$build"
ctest --output-on-failure -j"${JOBS:-$(nproc)}"
