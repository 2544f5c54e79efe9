#!/usr/bin/env bash
# Builds every artifact `loader --target sim --build-dir DIR` needs for one
# netlist, running the five stage tools in order (docs/loader.md):
#
#   net2hlks NETLIST -o DIR                       DIR/manifest.yaml, DIR/kernels/*/
#   hlkc DIR/kernels/*                            unpack.elf math.elf pack.elf per kernel
#   net2pipe NETLIST -o DIR                       DIR/epochs.yaml, DIR/temporal_epoch_<E>/overlay/pipegen.yaml
#   pipegen  .../overlay/pipegen.yaml -o .../overlay/blob.yaml
#   blobgen  .../overlay/blob.yaml -o DIR/temporal_epoch_<E>/blobs   pipegen_epoch<E>_<chip>_<y>_<x>.hex
#
# Usage: scripts/build-artifacts.sh [--arch ARCH] [--tools-dir BUILD] [--pipegen-arg ARG]... NETLIST DIR
# --pipegen-arg passes ARG to every pipegen run (e.g. --release-windows).
# Tools: --tools-dir BUILD (BUILD/tools/<tool>/<tool>), else $TESSERA_BUILD,
# else the first of build-*/ and build/ beside this script holding each tool.
# Exit status: the failing stage's (its diagnostics on stderr, and a line
# naming the stage), 2 on usage errors.
set -euo pipefail

arch=""
tools_dir="${TESSERA_BUILD:-}"
pipegen_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --arch) arch="$2"; shift 2 ;;
    --tools-dir) tools_dir="$2"; shift 2 ;;
    --pipegen-arg) pipegen_args+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "build-artifacts.sh: error: unknown option '$1'" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [[ $# -ne 2 ]]; then
  echo "usage: build-artifacts.sh [--arch ARCH] [--tools-dir BUILD] [--pipegen-arg ARG]... NETLIST DIR" >&2
  exit 2
fi
netlist="$1"
dir="$2"
root="$(cd "$(dirname "$0")/.." && pwd)"

find_tool() {
  local t="$1" d
  if [[ -n "$tools_dir" ]]; then
    echo "$tools_dir/tools/$t/$t"
    return
  fi
  for d in "$root"/build "$root"/build-*; do
    if [[ -x "$d/tools/$t/$t" ]]; then echo "$d/tools/$t/$t"; return; fi
  done
  echo "build-artifacts.sh: error: no built '$t' found (give --tools-dir)" >&2
  exit 2
}
NET2HLKS=$(find_tool net2hlks)
HLKC=$(find_tool hlkc)
NET2PIPE=$(find_tool net2pipe)
PIPEGEN=$(find_tool pipegen)
BLOBGEN=$(find_tool blobgen)
for t in "$NET2HLKS" "$HLKC" "$NET2PIPE" "$PIPEGEN" "$BLOBGEN"; do
  [[ -x "$t" ]] || { echo "build-artifacts.sh: error: '$t' is not executable" >&2; exit 2; }
done

archflag=()
[[ -n "$arch" ]] && archflag=(--arch "$arch")
hlkcarch=()
[[ -n "$arch" ]] && hlkcarch=(--arch "$arch")

stage() {
  local name="$1"; shift
  local rc=0
  "$@" || rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "build-artifacts.sh: stage $name failed (exit $rc): $*" >&2
    exit "$rc"
  fi
}

mkdir -p "$dir"
stage net2hlks "$NET2HLKS" "${archflag[@]}" "$netlist" -o "$dir"
# Without --arch, net2hlks and net2pipe take the netlist's first arch; hlkc,
# pipegen and blobgen default to grayskull, so they get the manifest's arch.
if [[ -z "$arch" ]]; then
  arch="$(sed -n 's/^arch: *//p' "$dir/manifest.yaml" | head -n 1)"
  [[ -n "$arch" ]] || { echo "build-artifacts.sh: error: no 'arch:' in $dir/manifest.yaml" >&2; exit 1; }
  hlkcarch=(--arch "$arch")
fi
shopt -s nullglob
kernels=("$dir"/kernels/*/)
# Only the kernels the manifest names (earlier runs may have left others).
named=()
for k in "${kernels[@]}"; do
  k="${k%/}"
  if grep -q "dir: kernels/$(basename "$k")\$" "$dir/manifest.yaml"; then named+=("$k"); fi
done
if [[ ${#named[@]} -gt 0 ]]; then
  stage hlkc "$HLKC" "${hlkcarch[@]}" -j 1 "${named[@]}"
fi
stage net2pipe "$NET2PIPE" "${archflag[@]}" "$netlist" -o "$dir"
for yaml in "$dir"/temporal_epoch_*/overlay/pipegen.yaml; do
  epochdir="$(dirname "$(dirname "$yaml")")"
  stage pipegen "$PIPEGEN" --arch "$arch" "${pipegen_args[@]}" "$yaml" -o "$epochdir/overlay/blob.yaml"
  stage blobgen "$BLOBGEN" --arch "$arch" "$epochdir/overlay/blob.yaml" -o "$epochdir/blobs"
done
