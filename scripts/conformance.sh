#!/usr/bin/env bash
# Conformance driver: runs every netlist under the given directories through a
# stage and prints one line per file, then `N passed, M failed`.
#
#   scripts/conformance.sh [--build-dir DIR] [--arch ARCH | --all-archs] STAGE DIR...
#
# STAGE: check   netlist-check (parse + validate against the netlist's first arch,
#                or --arch, or with --all-archs every arch the netlist lists)
#
# Per file: PASS; REJECTED <rule>: <first error> when the tool rejected the
# netlist with a diagnostic; FAIL <reason> when it crashed, hung (60 s) or exited
# without a diagnostic. Exit status 0 only when every file passed.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
arch_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$2"; shift 2 ;;
    --arch) arch_args=(--arch "$2"); shift 2 ;;
    --all-archs) arch_args=(--all-archs); shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
if [ $# -lt 2 ]; then
  echo "usage: conformance.sh [--build-dir DIR] [--arch ARCH | --all-archs] STAGE DIR..." >&2
  exit 2
fi
stage="$1"; shift
case "$stage" in
  check) tool="$build/tools/netlist-check/netlist-check" ;;
  *) echo "conformance.sh: unknown stage '$stage' (known: check)" >&2; exit 2 ;;
esac
if [ ! -x "$tool" ]; then
  echo "conformance.sh: $tool not built (run scripts/build.sh)" >&2
  exit 2
fi

passed=0; failed=0
log="$(mktemp)"; trap 'rm -f "$log"' EXIT
while IFS= read -r -d '' file; do
  timeout 60 "$tool" --no-warnings --max-errors 1 "${arch_args[@]}" "$file" >/dev/null 2>"$log"
  rc=$?
  if [ $rc -eq 0 ]; then
    echo "PASS $file"; passed=$((passed + 1))
  else
    failed=$((failed + 1))
    first="$(grep -m1 -E ': error: ' "$log" || true)"
    if [ $rc -eq 1 ] && [ -n "$first" ]; then
      rule="$(printf '%s' "$first" | grep -oE '\[[a-z0-9-]+\]$' | tr -d '[]')"
      msg="$(printf '%s' "$first" | sed -E 's/^.*: error: //; s/ \[[a-z0-9-]+\]$//')"
      echo "REJECTED ${rule:-error} $file: $msg"
    elif [ $rc -eq 124 ]; then
      echo "FAIL timeout $file"
    else
      echo "FAIL exit-$rc $file: $(head -c 200 "$log" | tr '\n' ' ')"
    fi
  fi
done < <(find "$@" -type f \( -name '*.yaml' -o -name '*.yml' \) -print0 | sort -z)
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
