#!/usr/bin/env bash
# Same workload under ddpbench (C++ c10d Reducer) and under Python's
# torch.nn.parallel.DistributedDataParallel on the same torch, alternating runs so
# machine noise hits both alike. Per round it prints the p50 step time (s) of:
#   cpp-noddp   ddpbench's no-DDP row (rank 0 alone; the other rank waits idle)
#   cpp-ddp     ddpbench's DDP row at WORLD ranks
#   py-noddp    python_ddp_reference.py --no-ddp, one process (a plain training loop)
#   py-ddp      python_ddp_reference.py under DDP, WORLD ranks started as plain processes
#               with RANK/WORLD_SIZE/MASTER_* set (what ddpbench's own launcher does)
#   py-ddp-trun the same under torchrun (its agent process and --tee log tailing included)
# and the DDP cost of each side (ddp - noddp), so the DDP engine is compared, not just the step;
# then per configuration one line "ratio ddpbench/python p50 (median of N round(s)): no-DDP R,
# DDP R [min-max of the per-round ratios]". The Python processes get the malloc settings
# ddpbench applies to itself (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_: README).
# Usage: scripts/compare-python-ddp.sh [ROUNDS] [extra ddpbench flags...]
# Env: PYTHON (default /usr/bin/python3), TORCHRUN (default /usr/bin/torchrun),
#      CONFIGS: the configurations, MODEL:BATCH:IMAGE each (default "resnet18:8:64 resnet50:8:32";
#      for a language model, gpt2* or llama*, the third field is the sequence length in tokens);
#      MODEL_LAYERS, MODEL_WIDTH: a language model's reduced shape (passed to both sides);
#      MODEL, BATCH, IMAGE: one configuration instead (BATCH 8, IMAGE 64 unless given);
#      ITERS (30) WARMUP (5), OMP_NUM_THREADS (1),
#      WORLD (2: ranks of the DDP row; 1 on a one-GPU machine), PRECISION (fp32, fp32-strict,
#      tf32 or bf16; passed to both sides), SKIP_TORCHRUN=1 to leave out the torchrun column.
set -euo pipefail
rounds=${1:-5}; shift || true
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${DDPBENCH:-$root/build/ddpbench}
python=${PYTHON:-/usr/bin/python3}
torchrun=${TORCHRUN:-/usr/bin/torchrun}
ref="$root/scripts/python_ddp_reference.py"
iters=${ITERS:-30} warmup=${WARMUP:-5} world=${WORLD:-2} precision=${PRECISION:-fp32}
if [ -n "${MODEL:-}" ]; then configs="$MODEL:${BATCH:-8}:${IMAGE:-64}"
else configs=${CONFIGS:-resnet18:8:64 resnet50:8:32}; fi
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pymalloc=(env MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824)

p50() { "$python" -c "import json,sys; print('%.4f' % json.loads(sys.stdin.read().strip().splitlines()[-1])['p50_s'])"; }
free_port() { "$python" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])"; }

# Python ranks started as plain processes, as ddpbench's built-in launcher starts its own.
py_plain() {  # $1 = world size, rest: script flags
  local n=$1; shift
  local port; port=$(free_port)
  local pids=()
  for ((r = 0; r < n; r++)); do
    RANK=$r LOCAL_RANK=$r WORLD_SIZE=$n LOCAL_WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      timeout 600 "${pymalloc[@]}" "$python" "$ref" "${wargs[@]}" "$@" >"$tmp/py$r.out" 2>"$tmp/py$r.err" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  p50 <"$tmp/py0.out"
}

compare_one() {  # $1 model, $2 batch, $3 image; rest: extra ddpbench flags
  local model=$1 batch=$2 image=$3; shift 3
  local input=(--image-size "$image") what="${image}px"
  case $model in
    gpt2*|llama*) input=(--seq-len "$image" --model-layers "${MODEL_LAYERS:-0}" --model-width "${MODEL_WIDTH:-0}")
                  what="$image tokens, layers ${MODEL_LAYERS:-published}, width ${MODEL_WIDTH:-published}" ;;
  esac
  wargs=(--model "$model" --batch-size "$batch" "${input[@]}" --iters "$iters" --warmup "$warmup"
         --precision "$precision")
  echo "== $model, batch $batch per rank, $what, $world rank(s), $iters iterations after $warmup warm-up"
  cnds=() cdds=() pnds=() pdds=()
  printf '%-6s %10s %10s %10s %10s %12s   %9s %9s\n' round cpp-noddp cpp-ddp py-noddp py-ddp py-ddp-trun cpp-cost py-cost
  for ((i = 1; i <= rounds; i++)); do
    "$bin" run "${wargs[@]}" --world-sizes "$world" --nproc-per-node "$world" --json "$tmp/cpp-$model-$i.json" "$@" >/dev/null 2>"$tmp/cpp.err" || { cat "$tmp/cpp.err" >&2; exit 1; }
    read -r cnd cdd < <("$python" -c "
import json,sys
rs=json.load(open(sys.argv[1]))['results']
nd=[r for r in rs if not r['ddp']][0]; d=[r for r in rs if r['ddp'] and r['world_size']==int(sys.argv[2])][0]
print('%.4f %.4f' % (nd['summary']['p50_s'], d['summary']['p50_s']))" "$tmp/cpp-$model-$i.json" "$world")
    pnd=$(py_plain 1 --no-ddp)
    pdd=$(py_plain "$world")
    ptr=n/a
    if [ "${SKIP_TORCHRUN:-0}" != 1 ]; then
      # --redirects 1 --tee 1: Debian's torchrun 1.13 crashes on its default under Python 3.11.
      ptr=$(timeout 600 "${pymalloc[@]}" "$torchrun" --redirects 1 --tee 1 --standalone --nproc_per_node "$world" "$ref" "${wargs[@]}" 2>/dev/null |
            sed -n 's/^\[default0\]://p' | p50)
    fi
    printf '%-6s %10s %10s %10s %10s %12s   %9s %9s\n' "$i" "$cnd" "$cdd" "$pnd" "$pdd" "$ptr" \
      "$("$python" -c "print('%.4f' % ($cdd-$cnd))")" "$("$python" -c "print('%.4f' % ($pdd-$pnd))")"
    cnds+=("$cnd") cdds+=("$cdd") pnds+=("$pnd") pdds+=("$pdd")
  done
  # The parity line scripts/gpu-check.sh reads: ddpbench's p50 over Python's, median over the
  # rounds (the plain-process Python columns; < 1 means ddpbench's step is shorter).
  "$python" - "${cnds[*]}" "${pnds[*]}" "${cdds[*]}" "${pdds[*]}" "$model batch $batch $what" <<'PY'
import statistics, sys
c_nd, p_nd, c_d, p_d = ([float(x) for x in a.split()] for a in sys.argv[1:5])
print("%s: ratio ddpbench/python p50 (median of %d round(s)): no-DDP %.3f [%.3f-%.3f], DDP %.3f [%.3f-%.3f]"
      % (sys.argv[5], len(c_nd), statistics.median(c_nd) / statistics.median(p_nd),
         min(a / b for a, b in zip(c_nd, p_nd)), max(a / b for a, b in zip(c_nd, p_nd)),
         statistics.median(c_d) / statistics.median(p_d),
         min(a / b for a, b in zip(c_d, p_d)), max(a / b for a, b in zip(c_d, p_d))))
PY
}

for c in $configs; do
  IFS=: read -r m b im <<<"$c"
  compare_one "$m" "$b" "$im" "$@"
done
