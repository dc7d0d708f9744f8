#!/bin/bash
# Shows that the independent claims checker (tests/tools/check_claims.py) can fail: each mutation
# below puts one defect back into the report or diff code (a noise floor borrowed from another
# configuration, warnings not recomputed, "fastest" against the slowest only, a claim citing a
# table the report does not print, a verdict on a voided diff row, a one-launch diff confirmed, a
# tally that names nothing, a baseline's warning ignored), rebuilds build/ddpbench, runs
# claims_suite.py, and restores the source. Every mutation must end in a failed suite.
#
#   tests/tools/claims_mutations.sh [OUTDIR]     # results in OUTDIR/results.txt (default /tmp/claims_mutations)
#
# It edits and restores files under src/ with git: it refuses to run with uncommitted changes there.
cd "$(dirname "$0")/../.."
if [ -n "$(git status --porcelain src)" ]; then
  echo "claims_mutations: src/ has uncommitted changes; commit or stash them first" >&2
  exit 2
fi
out=${1:-/tmp/claims_mutations}/results.txt; mkdir -p "$(dirname "$out")"; : > $out; M=$(dirname "$out")
apply() { python3 - "$1" <<'PY'
import sys
name=sys.argv[1]
M={
 'borrowed_floor':('src/core/analysis/summary.cpp','''  } else {
    g.verdict = "unmeasured";
    g.basis = "launches";
  }''','''  } else {
    g.floor = 0.195;  // MUTATION: the device's spread borrowed
    g.verdict = g.gap > *g.floor ? "beyond noise" : "within noise";
    g.basis = "launches";
  }'''),
 'no_recomputed_warnings':('src/core/result/row_validation.cpp','''  complete_row_warnings(file);
  return lines;''','''  return lines;'''),
 'fastest_vs_slowest_only':('src/core/analysis/summary.cpp','''        ClaimItem it = item_of(name(*x), x->aggregate_ex_s, x->launch, x->facts);
        it.verdict = g.verdict;''','''        ClaimItem it = item_of(name(*x), x->aggregate_ex_s, x->launch, x->facts);
        it.verdict = x == *std::min_element(lines.begin(), lines.end(), [](const StrategyRow* a, const StrategyRow* b) { return a->aggregate_ex_s < b->aggregate_ex_s; }) ? g.verdict : "beyond noise";  // MUTATION'''),
 'cites_an_unprinted_table':('src/core/analysis/summary.cpp','''      c.word("unit", unit_word(m.key)).word("table", "strategy");''','''      c.word("unit", unit_word(m.key)).word("table", "memory");  // MUTATION'''),
 'diff_void_gets_a_verdict':('src/core/analysis/diff.cpp','''  if (const RowWarning* w = voiding_warning(b, t)) {''','''  if (const RowWarning* w = nullptr; w) {  // MUTATION'''),
 'diff_one_launch_confirmed':('src/core/analysis/diff.cpp','''  if (one_each && row.method == "bootstrap" && row.verdict != "within noise") row.verdict += ", unconfirmed";''','''  // MUTATION: no "unconfirmed"'''),
 'tally_names_nothing':('src/core/analysis/summary.cpp','''  c.items = tally_items(checks);
  return finish_claim(std::move(c));''','''  return finish_claim(std::move(c));  // MUTATION'''),
 'baseline_drift_ignored':('src/core/analysis/summary.cpp','''  if (w.baseline_kind == WeakTable::Baseline::no_ddp) return {&row.facts, &row.baseline_facts};''','''  if (w.baseline_kind == WeakTable::Baseline::no_ddp) return {&row.facts, &row.facts};  // MUTATION'''),
}
f,old,new=M[name]
s=open(f).read()
assert old in s, name
open(f,'w').write(s.replace(old,new))
PY
}
for m in borrowed_floor no_recomputed_warnings fastest_vs_slowest_only cites_an_unprinted_table diff_void_gets_a_verdict diff_one_launch_confirmed tally_names_nothing baseline_drift_ignored; do
  apply $m
  cmake --build build --target ddpbench > $M/build_$m.log 2>&1 || { echo "$m: BUILD FAILED" >> $out; git checkout -- src; continue; }
  timeout 600 python3 tests/tools/claims_suite.py --ddpbench build/ddpbench --out $M/cs_$m > $M/suite_$m.log 2>&1
  rc=$?
  echo "$m: suite exit $rc; $(tail -1 $M/suite_$m.log)" >> $out
  grep -m3 "  FAIL" $M/suite_$m.log | sed 's/^/    /' >> $out
  git checkout -- src
done
cmake --build build --target ddpbench > $M/build_final.log 2>&1
echo done >> $out
