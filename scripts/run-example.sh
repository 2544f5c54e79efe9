#!/usr/bin/env bash
# The main job on the bundled example: for now, check the example netlist
# against grayskull and print PASS. (Later: compile and run it on the simulator.)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
"$root/scripts/build.sh"
netlist="$root/examples/softmax/netlist.yaml"
"$build/tools/netlist-check/netlist-check" --arch grayskull --stats "$netlist"
echo "PASS: $netlist"
