#!/usr/bin/env bash
# The main job on the bundled example: check the softmax netlist, then run its
# program on the golden target (host reference model) and print PASS. The
# simulated chip becomes the default target when the compute and data paths land.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
"$root/scripts/build.sh"
netlist="$root/examples/softmax/netlist.yaml"
"$build/tools/netlist-check/netlist-check" --arch grayskull --stats "$netlist"
"$build/tools/loader/loader" --target golden "$netlist"
