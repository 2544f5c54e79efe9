#!/usr/bin/env bash
# Conformance driver: runs every netlist under the given directories through a
# stage and prints one line per file, then `N passed, M failed`.
#
#   scripts/conformance.sh [--build-dir DIR] [--arch ARCH | --all-archs] [--cluster FILE] [-j N]
#                          [--resume [--results FILE] [--retry-failed]] STAGE DIR...
#
# --cluster FILE is passed to every tool that runs (netlist-check, net2pipe,
# pipegen, blobgen, loader): the chips netlists are checked and built for
# (docs/cluster.md); without it each tool uses the arch's default topology
# for the netlist's highest target_device.
#
# STAGE: check   netlist-check (parse + validate against the netlist's first arch,
#                or --arch, or with --all-archs every arch the netlist lists)
#        (golden, kernels, pipes and sim first check the netlist with
#        netlist-check --any-arch when no --arch is given, and run it on the
#        first arch it lists that accepts it, as loader run does)
#        golden  loader --target golden: runs every program to completion on the
#                host reference model (netlists check rejects are REJECTED, not run),
#                with the loader arguments scripts/conformance-runs.txt gives the
#                netlists whose test driver fixes the program order
#        kernels net2hlks: the kernel of every op into a scratch directory, then
#                hlkc on every kernel when $build/tools/hlkc/hlkc exists (or
#                $HLKC; HLKC= skips it) (netlists check rejects are REJECTED,
#                not run); PASS = every op generated (and compiled)
#        pipes   net2pipe into a scratch directory, its epochs.yaml and every
#                pipegen.yaml checked against their schemas; then, per epoch,
#                pipegen (blob.yaml next to pipegen.yaml) and blobgen (blobs/)
#                when $build/tools/{pipegen,blobgen} exist (PIPEGEN=/BLOBGEN=
#                skip them), blob.yaml checked against schemas/blob.schema.json
#                when it exists (BLOB_SCHEMA= skips that check; SCHEMAS= skips
#                every schema check) (netlists check rejects are REJECTED, not run)
#        sim     loader run: the five stages build the artifacts (the sweep
#                shares one hlkc cache), the programs run on the simulated chip
#                and every op-fed queue is checked against the reference model;
#                PASS = every queue passed. What a netlist's test-config leaves
#                out comes from the upstream test driver of its directory
#                (docs/stimulus.md, "Test drivers"); check rejects are
#                REJECTED; loader arguments as for golden
#        anchors the netlists under DIR... that BUDA's own tools wrote artifacts for
#                (../shared/corpus/anchor-artifacts): our net2pipe for grayskull,
#                scripts/compare-pipegen-yaml.py against BUDA's pipegen.yaml, and
#                BUDA's pipegen2 and blobgen2 on our files when ../shared/anchor-tools
#                exists (scripts/anchors.sh: PASS = BUDA accepts every epoch; a netlist
#                our net2pipe does not compile is SKIPPED)
#        pipes-from  the same anchored netlists on the simulated chip for grayskull
#                (loader run --arch grayskull): first with our own net2pipe's pipes,
#                then with BUDA's net2pipe output from anchor-artifacts (loader run
#                --pipes-from, docs/loader.md). PASS = both runs pass; FAIL = ours
#                pass and BUDA's do not; a netlist whose own run fails is SKIPPED
#                with that run's reason (it says nothing about BUDA's pipes)
#
# -j N runs N netlists side by side (default: one per CPU this process may
# use); the per-file lines keep the input order. --resume keeps a results
# file (--results FILE, default BUILD/conformance/STAGE.results) keyed by
# the netlist's path and bytes and the identity of the sweep (hashes of the
# tool binaries, lib/kernels, the schemas, this script, conformance-runs.txt,
# the stage, arch flags and TIMEOUT): a rerun reuses the verdict of every
# unchanged netlist and judges the rest (new or changed netlists, those an
# interrupted sweep did not finish); --retry-failed judges the FAILs again too
# (after a loaded machine timed some out). On a terminal a progress line with
# an ETA is shown on stderr.

# Per file: PASS; REJECTED <rule>: <first error> when netlist-check rejected the
# netlist with a diagnostic; FAIL <rule>: <first error> when the stage failed on a
# netlist check accepts, FAIL <reason> when it crashed, hung (TIMEOUT s, default
# 60) or exited without a diagnostic. Last line: `N passed, M failed` (golden,
# kernels, pipes and sim add `, R rejected by check`; anchors `, S not compiled by net2pipe`). Exit status 0 only when no file FAILed
# (and, for check, none was rejected); 2 on a usage error.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
arch_args=()
cluster_args=()
jobs_n=""; resume=""; results=""; retry_failed=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$2"; shift 2 ;;
    --arch) arch_args=(--arch "$2"); shift 2 ;;
    --all-archs) arch_args=(--all-archs); shift ;;
    --cluster) cluster_args=(--cluster "$2"); shift 2 ;;
    -j|--jobs) jobs_n="${2-}"; shift 2 ;;
    -j*) jobs_n="${1#-j}"; shift ;;
    --resume) resume=1; shift ;;
    --results) results="${2-}"; resume=1; shift 2 ;;
    --retry-failed) retry_failed=1; resume=1; shift ;;
    -h|--help) sed -n '2,53p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
if [ $# -lt 2 ]; then
  echo "usage: conformance.sh [--build-dir DIR] [--arch ARCH | --all-archs] [--cluster FILE] [-j N] [--resume [--results FILE] [--retry-failed]] STAGE DIR..." >&2
  exit 2
fi
if [ -z "$jobs_n" ]; then jobs_n="$(nproc 2>/dev/null || echo 1)"; fi
case "$jobs_n" in
  ''|*[!0-9]*|0) echo "conformance.sh: -j needs a positive number, got '$jobs_n'" >&2; exit 2 ;;
esac
stage="$1"; shift
check_tool="$build/tools/netlist-check/netlist-check"
case "$stage" in
  check) tool="$check_tool" ;;
  golden) tool="$build/tools/loader/loader" ;;
  kernels) tool="$build/tools/net2hlks/net2hlks" ;;
  pipes) tool="$build/tools/net2pipe/net2pipe" ;;
  sim) tool="$build/tools/loader/loader" ;;
  anchors) tool="$build/tools/net2pipe/net2pipe" ;;
  pipes-from) tool="$build/tools/loader/loader" ;;
  *) echo "conformance.sh: unknown stage '$stage' (known: check, golden, kernels, pipes, sim, anchors, pipes-from)" >&2; exit 2 ;;
esac
for t in "$tool" "$check_tool"; do
  if [ ! -x "$t" ]; then
    echo "conformance.sh: $t not built (run scripts/build.sh)" >&2
    exit 2
  fi
done
limit="${TIMEOUT:-60}"
if [ "$stage" != check ] && [ "${arch_args[0]:-}" = --all-archs ]; then
  echo "conformance.sh: --all-archs applies to check only" >&2
  exit 2
fi

passed=0; failed=0; rejected=0
# One work directory: per netlist its scratch (j<N>/, removed when judged) and
# verdict (out/<N>); the sweep's shared hlkc cache (hlkc's cache is safe for
# concurrent processes: entries are renamed into place).
work="$(mktemp -d)"
# Stopping the sweep stops every job's whole process tree (subshell,
# timeout, tool): killing the subshell alone would leave its tool running.
kill_tree() {
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do kill_tree "$child"; done
  kill "$1" 2>/dev/null
}
trap 'for j in $(jobs -p); do kill_tree "$j"; done; wait 2>/dev/null; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
mkdir -p "$work/out"
hlkc_cache="$work/hlkc-cache"
hlkc="${HLKC-$build/tools/hlkc/hlkc}"   # kernels: HLKC= (empty) skips hlkc
pipegen="${PIPEGEN-$build/tools/pipegen/pipegen}"   # pipes: PIPEGEN= skips pipegen
blobgen="${BLOBGEN-$build/tools/blobgen/blobgen}"   # pipes: BLOBGEN= skips blobgen
blob_schema="${BLOB_SCHEMA-$root/schemas/blob.schema.json}"  # pipes: BLOB_SCHEMA= skips the blob.yaml check
schemas="${SCHEMAS-1}"                                        # pipes: SCHEMAS= skips every schema check
[ -n "$schemas" ] || blob_schema=""

# kernels: net2hlks into the scratch directory, then hlkc on every kernel
# directory it wrote (for the arch of the manifest), when hlkc is built. The
# sweep's own hlkc cache (empty at its start) compiles every distinct
# kernel once; netlists sharing kernels reuse those ELFs, as a user's
# second build would.
run_kernels() {
  rm -rf "$scratch/out"
  timeout "$limit" "$tool" --no-warnings --max-errors 1 "${arch_args[@]}" "$1" -o "$scratch/out" >/dev/null 2>"$log" || return $?
  [ -x "$hlkc" ] || return 0
  local arch
  arch="$(sed -n 's/^arch: //p' "$scratch/out/manifest.yaml")"
  # hlkc targets grayskull and wormhole_b0; the kernels of the other archs'
  # netlists are compiled as wormhole_b0 (kernel texts do not depend on the arch).
  [ "$arch" = grayskull ] || arch=wormhole_b0
  timeout "$limit" "$hlkc" --arch "$arch" --cache-dir "$hlkc_cache" "$scratch/out"/kernels/* >/dev/null 2>"$log"
}

# pipes: net2pipe, the schemas, then pipegen and blobgen per epoch. A
# failure leaves its diagnostics in $log; a schema failure is reported as
# rule schema-<artifact>, a later stage's rules as <tool>/<rule>.
run_pipes() {
  local out="$scratch/out" arch dir rc
  rm -rf "$out"
  timeout "$limit" "$tool" --no-warnings --max-errors 1 "${arch_args[@]}" "${cluster_args[@]}" "$1" -o "$out" >/dev/null 2>"$log" || return $?
  if [ -n "$schemas" ] && ! /usr/bin/python3 "$root/scripts/validate-yaml-schema.py" "$root/schemas/net2pipe-epochs.schema.json" \
       "$out/epochs.yaml" >"$log.schema" 2>&1; then
    echo "$out/epochs.yaml: error: $(grep -m1 FAIL "$log.schema" | sed 's/^FAIL [^:]*: //') [schema-epochs]" >"$log"
    return 1
  fi
  if [ -n "$schemas" ] && ! /usr/bin/python3 "$root/scripts/validate-yaml-schema.py" --documents "$root/schemas/pipegen.schema.json" \
       "$out"/temporal_epoch_*/overlay/pipegen.yaml >"$log.schema" 2>&1; then
    echo "pipegen.yaml: error: $(grep -m1 FAIL "$log.schema" | sed 's/^FAIL [^:]*: //') [schema-pipegen]" >"$log"
    return 1
  fi
  arch="$(sed -n 's/^arch: //p' "$out/epochs.yaml")"
  for dir in "$out"/temporal_epoch_*/overlay; do
    if [ -x "$pipegen" ]; then
      timeout "$limit" "$pipegen" --no-warnings --max-errors 1 --arch "$arch" "${cluster_args[@]}" "$dir/pipegen.yaml" -o "$dir/blob.yaml" \
        >/dev/null 2>"$log"
      rc=$?
      if [ $rc -ne 0 ]; then sed -i -E 's/ \[([a-z0-9-]+)\]$/ [pipegen\/\1]/' "$log"; return $rc; fi
      if [ -n "$blob_schema" ] && [ -f "$blob_schema" ] &&
         ! /usr/bin/python3 "$root/scripts/validate-yaml-schema.py" "$blob_schema" \
           "$dir/blob.yaml" >"$log.schema" 2>&1; then
        echo "$dir/blob.yaml: error: $(grep -m1 FAIL "$log.schema" | sed 's/^FAIL [^:]*: //') [schema-blob]" >"$log"
        return 1
      fi
      if [ -x "$blobgen" ]; then
        timeout "$limit" "$blobgen" --no-warnings --max-errors 1 --arch "$arch" "${cluster_args[@]}" "$dir/blob.yaml" -o "$dir/blobs" \
          >/dev/null 2>"$log"
        rc=$?
        if [ $rc -ne 0 ]; then sed -i -E 's/ \[([a-z0-9-]+)\]$/ [blobgen\/\1]/' "$log"; return $rc; fi
      fi
    fi
  done
  return 0
}

# sim: loader run into the scratch directory. A failing stage is reported
# by the loader as "stage <tool> failed" followed by the tool's own
# diagnostic, whose rule is kept as <tool>/<rule>; a failed check becomes
# rule check-mismatch naming the queues that differ (and saying so when the
# netlist's DRAM buffers overlap: the loader's dram-overlap note).
run_sim() {
  local rc stage
  rm -rf "$scratch/out"
  timeout "$limit" "$tool" run --max-errors 1 "${arch_args[@]}" "${cluster_args[@]}" "${run_args[@]}" --tools-dir "$build" \
    --hlkc-cache-dir "$hlkc_cache" --build-dir "$scratch/out" "$1" >"$log.out" 2>"$log"
  rc=$?
  stage="$(sed -n -E 's/^loader: error: stage ([a-z0-9]+) failed.*/\1/p' "$log" | head -1)"
  if [ -n "$stage" ]; then
    sed -i -E '/^loader: error: stage /d; s/ \[([a-z0-9-]+)\]$/ ['"$stage"'\/\1]/' "$log"
  elif [ $rc -eq 1 ] && ! grep -q ': error: ' "$log" && grep -q '^checked ' "$log.out"; then
    local overlap=""
    grep -q "^loader: note: this netlist's DRAM buffers overlap" "$log" && overlap="; the netlist's DRAM buffers overlap (dram-overlap: a defect of the file)"
    echo "$1: error: $(grep '^checked ' "$log.out" | sed 's/^checked //'); failing: $(awk '$3 == "FAIL" || $4 == "FAIL" {print $1}' "$log.out" | head -3 | tr '\n' ' ' | sed 's/ $//')$overlap [check-mismatch]" >"$log"
  fi
  return $rc
}

# First error of the last run as "<rule> <file>: <message>".
first_error() {
  local first rule msg
  first="$(grep -m1 -E ': error: ' "$log" || true)"
  [ -n "$first" ] || return 1
  rule="$(printf '%s' "$first" | grep -oE '\[[a-z0-9/-]+\]$' | tr -d '[]')"
  msg="$(printf '%s' "$first" | sed -E 's/^.*: error: //; s/ \[[a-z0-9/-]+\]$//')"
  echo "${rule:-error} $1: $msg"
}

# The loader arguments scripts/conformance-runs.txt gives a netlist (empty: none).
runs_for() {
  local suffix args
  while read -r suffix args; do
    case "$suffix" in ''|'#'*) continue ;; esac
    case "$1" in *"$suffix") printf '%s\n' "$args"; return 0 ;; esac
  done < "$root/scripts/conformance-runs.txt"
}

# Judges one netlist (in a subshell of its own): prints its verdict line.
judge() {
  local file="$1" rc
  if [ "$stage" = anchors ]; then
    BUILD_DIR="$build" TIMEOUT="$limit" "$root/scripts/anchors.sh" --judge "$file" "$scratch"
    return
  fi
  if [ "$stage" = pipes-from ]; then
    local adir
    adir="$("$root/scripts/anchors.sh" --dir "$file")" || { echo "SKIP no-anchor $file: no BUDA artifacts"; return; }
    arch_args=(--arch grayskull)
    run_args=()
    read -r -a run_args <<<"$(runs_for "$file")" || true
    run_sim "$file"
    rc=$?
    if [ $rc -ne 0 ]; then
      if [ $rc -eq 124 ]; then echo "SKIP own-run-timeout $file"
      else echo "SKIP own-run-$(first_error "$file" || echo "exit-$rc $file")"; fi
      return
    fi
    run_args+=(--pipes-from "$adir")
    run_sim "$file"
  elif [ "$stage" = golden ] || [ "$stage" = kernels ] || [ "$stage" = pipes ] || [ "$stage" = sim ]; then
    # Without --arch a netlist runs on the first arch it lists that accepts
    # it, as `loader run` does (netlist-check --any-arch names that arch).
    local any_arch=()
    [ ${#arch_args[@]} -eq 0 ] && any_arch=(--any-arch)
    timeout 60 "$check_tool" --no-warnings --max-errors 1 --print-arch "${arch_args[@]}" "${any_arch[@]}" "${cluster_args[@]}" "$file" >"$scratch/arch" 2>"$log"
    rc=$?
    if [ $rc -ne 0 ]; then
      echo "REJECTED $(first_error "$file" || echo "exit-$rc $file")"
      return
    fi
    local accepted
    accepted="$(head -n 1 "$scratch/arch")"
    [ -n "$accepted" ] && local -a arch_args=(--arch "$accepted")
    if [ "$stage" = kernels ]; then
      run_kernels "$file"
    elif [ "$stage" = pipes ]; then
      run_pipes "$file"
    elif [ "$stage" = sim ]; then
      run_args=()
      read -r -a run_args <<<"$(runs_for "$file")" || true
      run_sim "$file"
    else
      run_args=()
      read -r -a run_args <<<"$(runs_for "$file")" || true
      timeout "$limit" "$tool" --target golden --max-errors 1 "${arch_args[@]}" "${cluster_args[@]}" "${run_args[@]}" "$file" >/dev/null 2>"$log"
    fi
  else
    timeout "$limit" "$tool" --no-warnings --max-errors 1 "${arch_args[@]}" "${cluster_args[@]}" "$file" >/dev/null 2>"$log"
  fi
  rc=$?
  if [ $rc -eq 0 ]; then
    echo "PASS $file"
  elif [ "$stage" = check ] && [ $rc -eq 1 ] && first_error "$file" >/dev/null; then
    echo "REJECTED $(first_error "$file")"
  elif [ $rc -eq 1 ] && first_error "$file" >/dev/null; then
    echo "FAIL $(first_error "$file")"
  elif [ $rc -eq 124 ]; then
    echo "FAIL timeout $file"
  else
    echo "FAIL exit-$rc $file: $(head -c 200 "$log" | tr '\n' ' ')"
  fi
}

files=()
if [ "$stage" = anchors ] || [ "$stage" = pipes-from ]; then
  if [ "$stage" = anchors ] && [ ! -x "${ANCHOR_TOOLS:-$root/../shared/anchor-tools}/run.sh" ]; then
    echo "conformance.sh: BUDA's anchor tools are absent: only our net2pipe and the comparison run" >&2
  fi
  mapfile -t files < <("$root/scripts/anchors.sh" --list "$@")
else
  while IFS= read -r -d '' f; do files+=("$f"); done < <(find "$@" -type f \( -name '*.yaml' -o -name '*.yml' \) -print0 | sort -z)
fi
total=${#files[@]}

# --resume: the sweep's identity, then each netlist's key (identity, bytes, path).
declare -A cached=()
if [ -n "$resume" ]; then
  [ -n "$results" ] || results="$build/conformance/$stage.results"
  mkdir -p "$(dirname "$results")" || exit 2
  ident="$(
    {
      printf '%s\n' "$stage" "${arch_args[*]}" "$limit" "${HLKC-}" "${PIPEGEN-}" "${BLOBGEN-}" "${BLOB_SCHEMA-}" "${SCHEMAS-}"
      for t in "$check_tool" "$tool" "$hlkc" "$pipegen" "$blobgen" "$build/tools/net2hlks/net2hlks" \
               "$build/tools/net2pipe/net2pipe"; do
        [ -f "$t" ] && sha256sum < "$t"
      done
      find "$root/lib/kernels" "$root/schemas" -type f -print0 | sort -z | xargs -0 sha256sum
      sha256sum < "$0"; sha256sum < "$root/scripts/conformance-runs.txt"
    } | sha256sum | cut -c1-64)"
  if [ "$total" -gt 0 ]; then
    mapfile -t hashes < <(printf '%s\0' "${files[@]}" | xargs -0 sha256sum | cut -c1-64)
  fi
  if [ -f "$results" ]; then
    # Line: identity, netlist hash, path, verdict (tab-separated); later lines win.
    while IFS=$'\t' read -r id h p verdict; do
      [ "$id" = "$ident" ] || continue
      case "$verdict" in
        FAIL\ *) if [ -n "$retry_failed" ]; then unset 'cached[$h:$p]'; else cached["$h:$p"]="$verdict"; fi ;;
        *) cached["$h:$p"]="$verdict" ;;
      esac
    done < "$results"
  fi
fi

# Runs netlist $1 (index $2) in the background; its verdict lands in out/$2.
start_job() {
  (
    scratch="$work/j$2"; log="$scratch/log"
    mkdir -p "$scratch"
    verdict="$(judge "$1")"
    if [ -n "$resume" ]; then
      printf '%s\t%s\t%s\t%s\n' "$ident" "${hashes[$2]}" "$1" "$verdict" >> "$results"
    fi
    printf '%s\n' "$verdict" > "$work/out/$2.tmp" && mv "$work/out/$2.tmp" "$work/out/$2"
    rm -rf "$scratch"
  ) &
}

# Prints the verdicts that are ready, in input order, and counts them.
next=0; ran=0; reused=0; t0=$SECONDS
progress=""; [ -t 2 ] && progress=1
flush() {
  local line
  while [ $next -lt $total ] && [ -f "$work/out/$next" ]; do
    line="$(cat "$work/out/$next")"
    [ -n "$progress" ] && printf '\r\033[K' >&2
    echo "$line"
    case "$line" in
      PASS\ *) passed=$((passed + 1)) ;;
      SKIP\ *) rejected=$((rejected + 1)) ;;
      REJECTED\ *) if [ "$stage" = check ]; then failed=$((failed + 1)); else rejected=$((rejected + 1)); fi ;;
      *) failed=$((failed + 1)) ;;
    esac
    next=$((next + 1))
  done
  if [ -n "$progress" ] && [ $next -lt $total ]; then
    local el=$((SECONDS - t0)) eta="?"
    [ $ran -gt 0 ] && eta=$(( el * (total - next) / (ran > 0 ? ran : 1) ))
    printf '\r\033[K[%d/%d] %d passed, %d failed, %d rejected; %dm%02ds elapsed, ETA %s' >&2 \
      "$next" "$total" "$passed" "$failed" "$rejected" $((el / 60)) $((el % 60)) \
      "$([ "$eta" = "?" ] && echo "?" || printf '%dm%02ds' $((eta / 60)) $((eta % 60)))"
  fi
}

running=0
for ((i = 0; i < total; i++)); do
  file="${files[$i]}"
  if [ -n "$resume" ] && [ -n "${cached["${hashes[$i]}:$file"]+x}" ]; then
    printf '%s\n' "${cached["${hashes[$i]}:$file"]}" > "$work/out/$i"
    reused=$((reused + 1))
    flush
    continue
  fi
  while [ $running -ge "$jobs_n" ]; do
    wait -n 2>/dev/null
    running=$((running - 1)); ran=$((ran + 1))
    flush
  done
  start_job "$file" "$i"
  running=$((running + 1))
done
while [ $running -gt 0 ]; do
  wait -n 2>/dev/null
  running=$((running - 1)); ran=$((ran + 1))
  flush
done
flush
[ -n "$progress" ] && printf '\r\033[K' >&2
if [ -n "$resume" ]; then
  echo "conformance.sh: $reused of $total verdicts reused from $results, $((total - reused)) judged" >&2
fi
if [ "$stage" = anchors ]; then
  echo "$passed passed, $failed failed, $rejected not compiled by net2pipe"
elif [ "$stage" = pipes-from ]; then
  echo "$passed passed, $failed failed, $rejected whose own run fails"
elif [ "$stage" = golden ] || [ "$stage" = kernels ] || [ "$stage" = pipes ] || [ "$stage" = sim ]; then
  echo "$passed passed, $failed failed, $rejected rejected by check"
else
  echo "$passed passed, $failed failed"
fi
[ $failed -eq 0 ]
