#!/usr/bin/env bash
# Builds the libFuzzer targets (build-fuzz/, clang-14, ASan+UBSan) and runs
# them one after the other. See docs/fuzzing.md.
#
#   fuzz/run-fuzz.sh [SECONDS] [TARGET...]
#
# SECONDS   total fuzzing time, default 600. Split 4:1 between fuzz-netlist and
#           fuzz-soc-descriptor (the netlist front end is far larger), so
#           1500 gives 20 min + 5 min. With one TARGET it gets all of it.
# TARGET    netlist, soc, blob, pipegen-yaml, blob-yaml, elf, npy, cluster,
#           hex, program, blob-sim, or readers (the last seven: issue 21) or all
#           (default: netlist and soc). With several targets other than the
#           netlist+soc pair, each gets an equal share of SECONDS.
#
# Environment:
#   BUILD_DIR    build directory (default: <repo>/build-fuzz)
#   CXX / CC     compilers (default: clang++-14 / clang-14)
#   NICE         niceness of build and fuzzers (default 10: do not starve other builds)
#   JOBS         libFuzzer -jobs/-workers per target (default 1: one process)
#   FUZZ_FLAGS   extra libFuzzer flags, e.g. "-use_value_profile=1"
#   NO_BUILD=1   skip the configure/build step
#
# Inputs that grow coverage go to fuzz/corpus-work/<target>/ (gitignored;
# reused by the next run), the seeds in fuzz/seeds/ are read but never
# written. Crashes, timeouts (>10 s), OOMs (>2 GB) and leaks are written to
# fuzz/corpus-work/artifacts/<target>/ and the script exits 1. Full logs:
# fuzz/corpus-work/logs/<target>.log.
set -u -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
total=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(netlist soc)

build=${BUILD_DIR:-$root/build-fuzz}
case $build in /*) ;; *) build=$PWD/$build ;; esac # the fuzzers run from the log directory
nice_level=${NICE:-10}
jobs=${JOBS:-1}
work=$here/corpus-work

case $total in '' | *[!0-9]*) echo "run-fuzz.sh: SECONDS must be a number, got '$total'" >&2; exit 2 ;; esac
readers=(pipegen-yaml blob-yaml elf npy cluster hex program)
expanded=()
for t in "${targets[@]}"; do
  case $t in
    netlist | soc | blob | pipegen-yaml | blob-yaml | elf | npy | cluster | hex | program | blob-sim) expanded+=("$t") ;;
    readers) expanded+=("${readers[@]}") ;;
    all) expanded+=(netlist soc blob "${readers[@]}" blob-sim) ;;
    *) echo "run-fuzz.sh: unknown target '$t' (netlist, soc, blob, ${readers[*]}, readers, all)" >&2; exit 2 ;;
  esac
done
targets=("${expanded[@]}")
# The fuzzer binary of a target: fuzz-<target>, but soc is fuzz-soc-descriptor.
bin_of() { if [ "$1" = soc ]; then echo fuzz-soc-descriptor; else echo "fuzz-$1"; fi; }

if [ "${NO_BUILD:-0}" != 1 ]; then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    CC=${CC:-clang-14} CXX=${CXX:-clang++-14} cmake -S "$root" -B "$build" -G Ninja \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_FUZZ=ON -DTESSERA_SANITIZE=ON -DTESSERA_TESTS=OFF || exit 1
  fi
  build_targets=()
  for t in "${targets[@]}"; do build_targets+=("$(bin_of "$t")"); done
  nice -n "$nice_level" cmake --build "$build" --target "${build_targets[@]}" || exit 1
fi

seconds_for() { # $1 = target
  if [ ${#targets[@]} -eq 1 ]; then echo "$total"
  elif [ "${targets[*]}" = "netlist soc" ] || [ "${targets[*]}" = "soc netlist" ]; then
    if [ "$1" = netlist ]; then echo $((total * 4 / 5)); else echo $((total - total * 4 / 5)); fi
  else echo $((total / ${#targets[@]})); fi
}

status=0
summary=()
for t in "${targets[@]}"; do
  bin=$build/fuzz/$(bin_of "$t") seeds=$here/seeds/$t
  [ "$t" = program ] && seeds=$here/seeds/netlist # programs live in netlists
  [ "$t" = blob-sim ] && seeds=$here/seeds/blob-yaml # the differential target reads blob.yaml
  secs=$(seconds_for "$t")
  # libFuzzer reads -max_total_time=0 as "no limit": a share that rounds
  # down to 0 would fuzz forever.
  if [ "$secs" -lt 1 ]; then
    echo "run-fuzz.sh: $total seconds give $t less than one second (${#targets[@]} targets); give more" >&2
    exit 2
  fi
  corpus=$work/$t
  artifacts=$work/artifacts/$t
  log=$work/logs/$t.log
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  before=$(ls "$artifacts" | wc -l)
  flags=(-timeout=10 -rss_limit_mb=2048 -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$artifacts/")
  # A blob is up to 56 KiB of binary words; the YAML targets get their
  # format's dictionary (netlist.dict for netlists and SoC descriptors), and
  # the seeds of pipegen.yaml/blob.yaml (up to 12 KB) fit in max_len.
  case $t in
    blob) flags+=(-max_len=65536) ;;
    netlist | soc | program) flags+=(-max_len=8192 -dict="$here/netlist.dict") ;;
    pipegen-yaml | blob-yaml | cluster) flags+=(-max_len=16384 -dict="$here/$t.dict") ;;
    blob-sim) flags+=(-max_len=16384 -dict="$here/blob-yaml.dict") ;;
    *) flags+=(-max_len=8192 -dict="$here/$t.dict") ;;
  esac
  [ "$jobs" -gt 1 ] && flags+=(-jobs="$jobs" -workers="$jobs")
  # shellcheck disable=SC2206 # FUZZ_FLAGS is a list of flags
  flags+=(${FUZZ_FLAGS:-})
  echo "== $(basename "$bin"): ${secs}s, corpus $corpus (+ seeds $seeds), log $log"
  echo "   nice -n $nice_level $bin ${flags[*]} $corpus $seeds"
  start=$(date +%s)
  (cd "$(dirname "$log")" && nice -n "$nice_level" "$bin" "${flags[@]}" "$corpus" "$seeds") >"$log" 2>&1 # -jobs writes fuzz-N.log to the cwd
  rc=$?
  end=$(date +%s)
  after=$(ls "$artifacts" | wc -l)
  # The last status line (#N DONE / a crash's last #N line) and the final stats.
  last=$(grep -aE '^#[0-9]+' "$log" | tail -n 1)
  stats=$(grep -aE '^stat::' "$log")
  summary+=("== $(basename "$bin") (rc $rc, $((end - start))s wall, corpus $(ls "$corpus" | wc -l) files)"
            "$last" "$stats")
  if [ "$rc" -ne 0 ] || [ "$after" -gt "$before" ]; then
    status=1
    summary+=("!! findings in $artifacts:" "$(ls -t "$artifacts" | head -n 20)"
              "!! $(grep -aE '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" | head -n 3)")
  fi
done

echo
printf '%s\n' "${summary[@]}"
exit $status
