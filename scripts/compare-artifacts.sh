#!/usr/bin/env bash
# Byte-identity check between two builds: runs net2pipe, pipegen and blobgen
# of each netlist with the tools of BUILD_A and of BUILD_B into separate
# directories, then compares every file they wrote (epochs.yaml, each
# pipegen.yaml, blob.yaml and .hex), the tools' stderr and exit codes.
# Meant for refactors that must not change behaviour.
#
#   scripts/compare-artifacts.sh [-j N] [--keep DIR] BUILD_A BUILD_B NETLIST_OR_DIR...
#
# Directories are searched for *.yaml netlists. Netlists BUILD_A's
# netlist-check rejects are skipped (as the conformance `pipes` stage does);
# each tool gets the arch of net2pipe's epochs.yaml, as there. A stage that
# fails must fail alike in both builds (same exit code and stderr, with the
# directory names replaced), and the later stages are then not run.
# Per differing netlist one line `DIFFER <netlist>: <what>`; last line
# `N netlists (S skipped by check), M files, K differ`. Exit status 0 when
# nothing differs, 1 otherwise (the differing outputs are then kept), 2 on
# usage errors. Give BUILD_A a copy of the baseline tools when another
# process may rebuild it meanwhile.
set -uo pipefail

jobs_n=2
keep=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    -j) jobs_n="$2"; shift 2 ;;
    -j*) jobs_n="${1#-j}"; shift ;;
    --keep) keep="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "compare-artifacts.sh: error: unknown option '$1'" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [[ $# -lt 3 ]]; then
  echo "usage: compare-artifacts.sh [-j N] [--keep DIR] BUILD_A BUILD_B NETLIST_OR_DIR..." >&2
  exit 2
fi
build_a="$(cd "$1" && pwd)" || exit 2
build_b="$(cd "$2" && pwd)" || exit 2
shift 2
for b in "$build_a" "$build_b"; do
  for t in netlist-check net2pipe pipegen blobgen; do
    [[ -x "$b/tools/$t/$t" ]] || { echo "compare-artifacts.sh: error: $b/tools/$t/$t not built" >&2; exit 2; }
  done
done

if [[ -n "$keep" ]]; then mkdir -p "$keep"; work="$(cd "$keep" && pwd)"; else
  work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
fi
list="$work/netlists.txt"
: >"$list"
for arg in "$@"; do
  if [[ -d "$arg" ]]; then find "$arg" -name '*.yaml' -type f | LC_ALL=C sort >>"$list"
  else echo "$arg" >>"$list"; fi
done

# The three stages of netlist $1 with the tools of build $2 into $3/art;
# exit codes in $3/rc, stderr in $3/<tool>[.<epoch>].err.
stages() {
  local n="$1" b="$2" out="$3" rc arch dir epoch
  mkdir -p "$out"
  "$b/tools/net2pipe/net2pipe" --no-warnings "$n" -o "$out/art" >/dev/null 2>"$out/net2pipe.err"
  rc=$?; echo "net2pipe $rc" >"$out/rc"
  [[ $rc -eq 0 ]] || return 0
  arch="$(sed -n 's/^arch: //p' "$out/art/epochs.yaml")"
  for dir in "$out"/art/temporal_epoch_*/overlay; do
    epoch="$(basename "$(dirname "$dir")")"
    "$b/tools/pipegen/pipegen" --no-warnings --arch "$arch" "$dir/pipegen.yaml" -o "$dir/blob.yaml" \
      >/dev/null 2>"$out/pipegen.$epoch.err"
    rc=$?; echo "pipegen $epoch $rc" >>"$out/rc"
    [[ $rc -eq 0 ]] || continue
    "$b/tools/blobgen/blobgen" --no-warnings --arch "$arch" "$dir/blob.yaml" -o "$dir/blobs" \
      >/dev/null 2>"$out/blobgen.$epoch.err"
    rc=$?; echo "blobgen $epoch $rc" >>"$out/rc"
  done
}

# One netlist: prints `SKIP`, `SAME <files>` or `DIFFER <netlist>: <what>`.
one() {
  local n="$1" idx="$2" side b
  local root="$work/$idx"
  rm -rf "$root"; mkdir -p "$root"
  if ! "$build_a/tools/netlist-check/netlist-check" --no-warnings "$n" >/dev/null 2>&1; then
    rm -rf "$root"; echo SKIP; return
  fi
  for side in a b; do
    if [[ $side == a ]]; then b="$build_a"; else b="$build_b"; fi
    stages "$n" "$b" "$root/$side"
    # Diagnostics may name the output directory: make them side-neutral.
    sed -i "s#$root/$side#OUT#g" "$root/$side"/*.err
  done
  local files what
  files="$(find "$root/a/art" -type f 2>/dev/null | wc -l)"
  if what="$(diff -rq "$root/a" "$root/b" 2>&1)"; then
    echo "SAME $files"
    [[ -n "$keep" ]] || rm -rf "$root"
  else
    echo "DIFFER $n: $(echo "$what" | head -3 | tr '\n' ';')"
  fi
}
export -f one stages
export build_a build_b work keep

nl -ba -w1 -s' ' "$list" | xargs -P "$jobs_n" -n 2 bash -c 'one "$1" "$0"' >"$work/results.txt"

total="$(wc -l <"$list")"
skipped="$(grep -c '^SKIP$' "$work/results.txt")"
differ="$(grep -c '^DIFFER ' "$work/results.txt")"
files="$(awk '$1 == "SAME" {s += $2} END {print s + 0}' "$work/results.txt")"
grep '^DIFFER ' "$work/results.txt"
echo "$total netlists ($skipped skipped by check), $files artifact files identical, $differ differ"
if [[ "$differ" -ne 0 && -z "$keep" ]]; then
  trap - EXIT   # keep the differing outputs (the others were removed)
  echo "outputs of the differing netlists kept in $work" >&2
fi
[[ "$differ" -eq 0 ]]
