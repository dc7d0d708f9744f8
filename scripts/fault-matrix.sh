#!/usr/bin/env bash
# The fault matrix: runs the fault suite (tests/faults) against a ddpbench
# binary and prints a Markdown table, scenario -> each process's exit code and seconds to
# exit (and after the injected fault), its stderr, stray processes, and whether the case
# passed. Use it to compare binaries, e.g. the code before and after a fix:
#
#   scripts/fault-matrix.sh -b /path/to/old/ddpbench -o before.md
#   scripts/fault-matrix.sh -o after.md                 # the binary this build made
#
# Options: -b BINARY   ddpbench to test (default: the one the suite was built against)
#          -s SUITE    the suite binary (default: build/tests/ddpbench_fault_tests)
#          -o FILE     also write the table to FILE
#          -j FILE     keep the raw JSON lines in FILE (default: a temporary file)
#          -f FILTER   --gtest_filter for the suite (default: every case)
#          -r FILE     run nothing: print the table of JSON lines an earlier run kept (-j)
# A case the binary fails is recorded, not an error: the script exits 0 once the table is
# written (1 when the suite could not run at all). Needs jq.
set -euo pipefail
cd "$(dirname "$0")/.."

binary="" suite="build/tests/ddpbench_fault_tests" out="" jsonl="" filter="*" render=""
while getopts "b:s:o:j:f:r:h" opt; do
  case "$opt" in
    b) binary="$OPTARG" ;;
    s) suite="$OPTARG" ;;
    o) out="$OPTARG" ;;
    j) jsonl="$OPTARG" ;;
    f) filter="$OPTARG" ;;
    r) render="$OPTARG" ;;
    *) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
command -v jq >/dev/null || { echo "fault-matrix: jq is missing (scripts/setup.sh installs it)" >&2; exit 1; }
[ -n "$render" ] || [ -x "$suite" ] || { echo "fault-matrix: no suite at $suite (cmake --build build --target ddpbench_fault_tests)" >&2; exit 1; }
[ -z "$binary" ] || [ -x "$binary" ] || { echo "fault-matrix: $binary is not an executable" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
took="" version=""
if [ -n "$render" ]; then
  jsonl="$render"
  binary=""
else
  version=$("${binary:-build/ddpbench}" --version 2>/dev/null || true)
  [ -n "$jsonl" ] || jsonl="$tmp/matrix.jsonl"
  : >"$jsonl"
  start=$(date +%s)
  # Failing cases are the point of a "before" matrix: the suite's exit status is not ours.
  DDPBENCH_UNDER_TEST="$binary" DDPBENCH_FAULT_MATRIX="$jsonl" \
    "$suite" --gtest_filter="$filter" --gtest_brief=1 >"$tmp/suite.log" 2>&1 || true
  took=" $(( $(date +%s) - start )) s in all."
fi
[ -s "$jsonl" ] || { echo "fault-matrix: the suite recorded no case; its output:" >&2; tail -40 "$tmp/suite.log" >&2; exit 1; }

table() {
  local shown cases passed
  shown=$(jq -rs '.[0].binary' "$jsonl")
  [ -z "$version" ] || shown="$shown, $version"
  cases=$(jq -s 'length' "$jsonl")
  passed=$(jq -s 'map(select(.passed)) | length' "$jsonl")
  echo "Binary: $shown; $cases cases, $passed passed.$took"
  echo
  echo "exit: the exit code (128 + signal when killed); \"hung, killed\": still running at the suite's"
  echo "hard deadline (3 x --timeout + 30 s, or the case's bound + 15 s after its fault), so killed."
  echo "launcher/rankN: a rank the built-in launcher started (its exit code is the launcher's to"
  echo "see; its seconds count from when the suite first saw it). s after fault: from the first"
  echo "signal the case sent. stderr: non-empty lines, and the first ddpbench error line (else the"
  echo "first line)."
  echo
  echo "| case | process | exit | s to exit | s after fault | stderr lines | stderr | stray | passed |"
  echo "|---|---|---:|---:|---:|---:|---|---:|---|"
  jq -r '
    def cell: tostring | gsub("\\|"; "\\|") | gsub("`"; "'"'"'");
    def num: if . == null then "" else (. * 10 | round / 10 | tostring) end;
    . as $c
    | ($c.procs | map(select(.role != "listener"))) as $ps
    | $ps | to_entries[]
    | .key as $i | .value as $p
    | [ (if $i == 0 then $c.case else "" end),
        $p.role,
        (if $p.hung then "hung, killed"
         elif $p.victim then "(ended by the harness)"
         elif $p.code == null then "-"
         else ($p.code | tostring) end),
        ($p.seconds | num),
        ($p.after_fault | num),
        (if $p.stderr_lines == null then "" else ($p.stderr_lines | tostring) end),
        ((if ($p.error_line // "") != "" then $p.error_line else ($p.first_line // "") end) as $l
         | if $l == "" then "" else "`" + ($l | .[0:160] | cell) + "`" end),
        (if $i == 0 then ($c.stray | tostring) else "" end),
        (if $i == 0 then (if $c.passed then "yes" else "no" end) else "" end) ]
    | "| " + join(" | ") + " |"' "$jsonl"
  if jq -e 'select(.passed | not)' "$jsonl" >/dev/null; then
    echo
    echo "Failed checks:"
    echo
    jq -r 'select(.passed | not) | "* \(.case): " + (.failures | map(gsub("\n"; " ")) | join("; "))' "$jsonl"
  fi
}

if [ -n "$out" ]; then table | tee "$out"; else table; fi
