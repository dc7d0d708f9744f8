#!/usr/bin/env bash
# Same DDP workload under ddpbench (C++ c10d Reducer) and under Python's
# torch.nn.parallel.DistributedDataParallel on the same torch, alternating runs so
# machine noise hits both alike. Prints one line per run with the 2-rank DDP p50.
# Usage: scripts/compare-python-ddp.sh [ROUNDS] [extra ddpbench flags...]
# Env: PYTHON (default /usr/bin/python3), TORCHRUN (default /usr/bin/torchrun),
#      MODEL (resnet18) BATCH (8) IMAGE (64) ITERS (50) WARMUP (5).
set -euo pipefail
rounds=${1:-5}; shift || true
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${DDPBENCH:-$root/build/ddpbench}
torchrun=${TORCHRUN:-/usr/bin/torchrun}
model=${MODEL:-resnet18} batch=${BATCH:-8} image=${IMAGE:-64} iters=${ITERS:-50} warmup=${WARMUP:-5}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for ((i = 1; i <= rounds; i++)); do
  "$bin" run --model "$model" --batch-size "$batch" --image-size "$image" --iters "$iters" --warmup "$warmup" \
    --world-sizes 2 --json "$tmp/cpp.json" "$@" >/dev/null
  cpp=$(python3 -c "import json,sys; r=[x for x in json.load(open(sys.argv[1]))['results'] if x['ddp'] and x['world_size']==2][0]; print('%.4f' % r['summary']['p50_s'])" "$tmp/cpp.json")
  # --redirects 1 --tee 1: Debian's torchrun 1.13 crashes on its default under Python 3.11.
  py=$(timeout 600 "$torchrun" --redirects 1 --tee 1 --standalone --nproc_per_node 2 "$root/scripts/python_ddp_reference.py" \
        --model "$model" --batch-size "$batch" --image-size "$image" --iters "$iters" --warmup "$warmup" 2>/dev/null |
       sed -n 's/^\[default0\]://p' | python3 -c "import json,sys; print('%.4f' % json.loads(sys.stdin.read())['p50_s'])")
  echo "round $i: ddpbench p50 ${cpp} s  python-ddp p50 ${py} s  ratio $(python3 -c "print('%.3f' % ($cpp/$py))")"
done
