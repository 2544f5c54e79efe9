#!/usr/bin/env bash
# Anchors: do BUDA's own data-path tools accept what our net2pipe writes?
#
#   scripts/anchors.sh [--build-dir DIR] [--keep DIR] [NETLIST...]
#   scripts/anchors.sh --judge NETLIST SCRATCH      (one verdict line; used by conformance.sh)
#   scripts/anchors.sh --list DIR...                (the netlists under DIR... that have BUDA's artifacts)
#   scripts/anchors.sh --dir NETLIST                (the directory of BUDA's artifacts of NETLIST; exit 1: none)
#
# For each netlist (default: every netlist of the corpus that has BUDA's
# artifacts in $ANCHORS, i.e. BUDA accepts it for grayskull): our net2pipe
# --arch grayskull, then BUDA's pipegen2 on every epoch's pipegen.yaml, then
# BUDA's blobgen2 on the blob.yaml pipegen2 wrote. One line per netlist:
#   PASS <netlist>
#   FAIL pipegen2|blobgen2 <netlist> (epoch E): <BUDA's first error>
#   SKIP net2pipe/<rule> <netlist>: <our first error>   (our net2pipe does not compile it)
# then `N passed, M failed, S not compiled by net2pipe`. Exit 0 when none FAILed.
# A compiled netlist's line ends with `(vs BUDA's net2pipe: B buffers, P pipes
# differ)`: scripts/compare-pipegen-yaml.py on every epoch against BUDA's own
# pipegen.yaml in $ANCHORS (missing + extra + different, summed over epochs).
#
# BUDA's tools come from $ANCHOR_TOOLS (default ../shared/anchor-tools beside
# the checkout, README there). Without them nothing of BUDA's runs: the script
# says so and exits 0 (CI never needs them). Pipegen2 is slow (about 15 s an
# epoch on a large netlist): netlists run one at a time, each stage under
# TIMEOUT seconds (default 600).
# --keep DIR keeps every netlist's files (DIR/<n>/temporal_epoch_E/overlay/:
# ours, and BUDA's buda-blob.yaml, buda-blobs/, pipegen2.log).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
anchor_tools="${ANCHOR_TOOLS:-$root/../shared/anchor-tools}"
anchors="${ANCHORS:-$root/../shared/corpus/anchor-artifacts/grayskull}"
netlists="${NETLISTS:-$root/../shared/corpus/netlists}"
soc="${SOC_YAML:-$root/../shared/corpus/soc_descriptors/grayskull_10x12.yaml}"
limit="${TIMEOUT:-600}"

# BUDA's first error in a log: its assert/error message without the log prefix.
buda_error() {
  local line
  line="$(grep -m1 -E 'PIPEGEN-ERROR|ERROR|error:|terminate called|Assertion|what\(\)' "$1" || true)"
  [ -n "$line" ] || line="$(grep -v '^[[:space:]]*$' "$1" | tail -1)"
  printf '%s' "$line" | sed -E 's/\x1b\[[0-9;]*m//g; s/^.*(PIPEGEN-ERROR>|ERROR[^:]*:) *//; s/^[[:space:]]+//' | cut -c1-300
}

# BUDA's artifacts of a netlist: <anchors>/<path> for <netlists>/<path>.yaml.
anchor_dir() {
  local n rel
  n="$(realpath -m "$1")"
  rel="${n#"$(realpath -m "$netlists")"/}"
  [ "$rel" != "$n" ] || return 1
  rel="${rel%.yaml}"
  [ -f "$anchors/$rel/netlist_queues.yaml" ] || return 1
  echo "$anchors/$rel"
}

# Sum of missing + extra + different buffers and pipes over the epochs that
# BUDA's net2pipe wrote too: "B buffers, P pipes".
compare_summary() {
  local out="$1" adir="$2" e nb=0 np=0 line
  for e in $(ls "$out" | sed -n 's/^temporal_epoch_\([0-9]*\)$/\1/p' | sort -n); do
    [ -f "$adir/temporal_epoch_$e/pipegen.yaml" ] || continue
    line="$(/usr/bin/python3 "$root/scripts/compare-pipegen-yaml.py" --max-lines 1 "$out/temporal_epoch_$e/overlay/pipegen.yaml" \
      "$adir/temporal_epoch_$e/pipegen.yaml" 2>/dev/null | tail -1)"
    # buffers: M matched, A missing, B extra, C different; pipes: ...
    set -- $(printf '%s' "$line" | grep -oE '[0-9]+ (missing|extra|different)' | cut -d' ' -f1)
    [ $# -eq 6 ] || continue
    nb=$((nb + $1 + $2 + $3)); np=$((np + $4 + $5 + $6))
  done
  echo "$nb buffers, $np pipes"
}

# One netlist into scratch dir $2: prints its verdict line.
judge() {
  local netlist="$1" scratch="$2" out rc dir e adir suffix=""
  out="$scratch/ours"
  rm -rf "$out"
  timeout "$limit" "$build/tools/net2pipe/net2pipe" --no-warnings --max-errors 1 --arch grayskull "$netlist" -o "$out" \
    >/dev/null 2>"$scratch/net2pipe.log"
  rc=$?
  if [ $rc -ne 0 ]; then
    local first rule msg
    first="$(grep -m1 ': error: ' "$scratch/net2pipe.log" || echo "exit $rc")"
    rule="$(printf '%s' "$first" | grep -oE '\[[a-z0-9/-]+\]$' | tr -d '[]')"
    msg="$(printf '%s' "$first" | sed -E 's/^.*: error: //; s/ \[[a-z0-9/-]+\]$//')"
    echo "SKIP net2pipe/${rule:-error} $netlist: $msg"
    return
  fi
  if adir="$(anchor_dir "$netlist")"; then suffix=" (vs BUDA's net2pipe: $(compare_summary "$out" "$adir") differ)"; fi
  [ -x "$anchor_tools/run.sh" ] || { echo "PASS $netlist$suffix (anchor-tools absent: BUDA's pipegen2 not run)"; return; }
  # Epochs in numeric order.
  for e in $(ls "$out" | sed -n 's/^temporal_epoch_\([0-9]*\)$/\1/p' | sort -n); do
    dir="$out/temporal_epoch_$e/overlay"
    [ -f "$dir/pipegen.yaml" ] || continue
    timeout "$limit" nice "$anchor_tools/run.sh" pipegen2 "$dir/pipegen.yaml" "$soc" "$dir/buda-blob.yaml" "$e" 0 \
      >"$dir/pipegen2.log" 2>&1
    rc=$?
    if [ $rc -ne 0 ] || [ ! -s "$dir/buda-blob.yaml" ]; then
      [ $rc -eq 124 ] && echo "timeout after ${limit}s" >>"$dir/pipegen2.log"
      echo "FAIL pipegen2 $netlist (epoch $e): $(buda_error "$dir/pipegen2.log")$suffix"
      return
    fi
    mkdir -p "$dir/buda-blobs"
    timeout "$limit" nice "$anchor_tools/run.sh" blobgen2 "$dir/buda-blob.yaml" "$e" "$dir/buda-blobs" "$soc" 0 \
      >"$dir/blobgen2.log" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
      [ $rc -eq 124 ] && echo "timeout after ${limit}s" >>"$dir/blobgen2.log"
      echo "FAIL blobgen2 $netlist (epoch $e): $(buda_error "$dir/blobgen2.log")$suffix"
      return
    fi
  done
  echo "PASS $netlist$suffix"
}

keep=""
if [ "${1:-}" = --list ]; then
  shift
  while IFS= read -r -d '' f; do anchor_dir "$f" >/dev/null && echo "$f"; done \
    < <(find "$@" -type f -name '*.yaml' -print0 | LC_ALL=C sort -z)
  exit 0
fi
if [ "${1:-}" = --dir ]; then
  [ $# -eq 2 ] || { echo "usage: anchors.sh --dir NETLIST" >&2; exit 2; }
  anchor_dir "$2"
  exit
fi
if [ "${1:-}" = --judge ]; then
  [ $# -eq 3 ] || { echo "usage: anchors.sh --judge NETLIST SCRATCH" >&2; exit 2; }
  judge "$2" "$3"
  exit 0
fi
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "anchors.sh: unknown option '$1'" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [ ! -x "$build/tools/net2pipe/net2pipe" ]; then
  echo "anchors.sh: $build/tools/net2pipe/net2pipe not built (run scripts/build.sh)" >&2
  exit 2
fi
if [ ! -x "$anchor_tools/run.sh" ]; then
  echo "anchors.sh: BUDA's anchor tools not found at $anchor_tools: skipped (nothing of BUDA's runs)"
  exit 0
fi
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  if [ ! -d "$anchors" ] || [ ! -d "$netlists" ]; then
    echo "anchors.sh: no anchor artifacts at $anchors or no corpus at $netlists: skipped"
    exit 0
  fi
  # The netlists BUDA's artifacts were written for.
  while IFS= read -r -d '' f; do anchor_dir "$f" >/dev/null && files+=("$f"); done \
    < <(find "$netlists" -type f -name '*.yaml' -print0 | LC_ALL=C sort -z)
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
passed=0; failed=0; skipped=0; n=0
for f in "${files[@]}"; do
  scratch="$work/$n"
  [ -n "$keep" ] && scratch="$keep/$n"
  rm -rf "$scratch"; mkdir -p "$scratch"
  line="$(judge "$f" "$scratch")"
  echo "$line"
  case "$line" in
    PASS\ *) passed=$((passed + 1)) ;;
    SKIP\ *) skipped=$((skipped + 1)) ;;
    *) failed=$((failed + 1)) ;;
  esac
  [ -n "$keep" ] || rm -rf "$scratch"
  n=$((n + 1))
done
echo "$passed passed, $failed failed, $skipped not compiled by net2pipe"
[ $failed -eq 0 ]
