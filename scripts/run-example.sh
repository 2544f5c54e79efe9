#!/usr/bin/env bash
# The main job on the bundled example: build the tools, then `loader run` the
# softmax netlist: the stage tools build its artifacts, its program runs on the
# simulated chip, and every output queue is checked against the host
# reference model. Prints the check table and PASS.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
"$root/scripts/build.sh"
netlist="$root/examples/softmax/netlist.yaml"
"$build/tools/loader/loader" run "$netlist" --build-dir "$build/examples/softmax"
