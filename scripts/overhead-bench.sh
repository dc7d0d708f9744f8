#!/usr/bin/env bash
# What each instrument of `ddpbench run` costs the step it measures (METHODOLOGY "What the
# harness costs"): per round one launch with every instrument on, one with each instrument
# off in turn (--instruments-off NAME) and one with all of them off, in an order rotated
# every round so that drift of the machine hits every variant alike. Per launch it reads
# the p50 step time of the no-DDP row and of the DDP row at WORLD ranks; per variant it
# prints the ratio on / off (every instrument on over this one off, the same round) as the
# median over the rounds and the range [min-max]: 1.02 means the instrument adds 2% to the
# p50. A quiet machine, nothing else running: the figures are measurements.
#
#   scripts/overhead-bench.sh [ROUNDS] [extra ddpbench flags...]     # ROUNDS: 3
# Env: DDPBENCH (build/ddpbench), MODEL (resnet18) BATCH (8) IMAGE (64) ITERS (30) WARMUP (5)
#      WORLD (2), OMP_NUM_THREADS (1), MARKDOWN=1 for the table as Markdown.
set -euo pipefail
rounds=${1:-3}; shift || true
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${DDPBENCH:-$root/build/ddpbench}
model=${MODEL:-resnet18} batch=${BATCH:-8} image=${IMAGE:-64} iters=${ITERS:-30} warmup=${WARMUP:-5}
world=${WORLD:-2}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
variants=(on telemetry counters timers progress stragglers all)
args=(run --model "$model" --batch-size "$batch" --image-size "$image" --iters "$iters" --warmup "$warmup"
      --world-sizes "$world" --nproc-per-node "$world")

echo "# $model, batch $batch per rank, ${image}px, $world rank(s), $iters iterations after $warmup warm-up," \
  "$rounds round(s); $("$bin" --version 2>/dev/null | head -1)" >&2
for ((r = 0; r < rounds; r++)); do
  n=${#variants[@]}
  for ((k = 0; k < n; k++)); do
    v=${variants[$(((k + r) % n))]}
    off=()
    [ "$v" != on ] && off=(--instruments-off "$v")
    "$bin" "${args[@]}" "${off[@]}" "$@" --json "$tmp/$v-$r.json" >/dev/null 2>"$tmp/$v-$r.err" ||
      { cat "$tmp/$v-$r.err" >&2; exit 1; }
    echo "round $((r + 1)): $v done" >&2
  done
done

python3 - "$tmp" "$rounds" "$world" "${MARKDOWN:-0}" "${variants[@]}" <<'PY'
import json, statistics, sys
tmp, rounds, world, md, variants = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5:]
def p50s(v, r):
    rs = json.load(open(f"{tmp}/{v}-{r}.json"))["results"]
    nd = [x for x in rs if not x["ddp"]][0]["summary"]["p50_s"]
    d = [x for x in rs if x["ddp"] and x["world_size"] == world][0]["summary"]["p50_s"]
    return nd, d
p = {(v, r): p50s(v, r) for v in variants for r in range(rounds)}
def cell(v, i):
    ratios = [p[("on", r)][i] / p[(v, r)][i] for r in range(rounds)]
    return "%.3f [%.3f-%.3f]" % (statistics.median(ratios), min(ratios), max(ratios))
head = ["switched off", "no-DDP p50 s (median)", "DDP p50 s (median)", "no-DDP on/off", "DDP on/off"]
rows = []
for v in variants:
    nd = statistics.median(p[(v, r)][0] for r in range(rounds))
    d = statistics.median(p[(v, r)][1] for r in range(rounds))
    name = "nothing (every instrument on)" if v == "on" else ("every instrument" if v == "all" else v)
    rows.append([name, "%.4f" % nd, "%.4f" % d] + (["1", "1"] if v == "on" else [cell(v, 0), cell(v, 1)]))
if md:
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for x in rows:
        print("| " + " | ".join(x) + " |")
else:
    w = [max(len(h), *(len(x[i]) for x in rows)) for i, h in enumerate(head)]
    print("  ".join(h.ljust(w[i]) for i, h in enumerate(head)))
    for x in rows:
        print("  ".join(c.ljust(w[i]) for i, c in enumerate(x)))
PY
