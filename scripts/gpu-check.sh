#!/usr/bin/env bash
# Builds ddpbench against the pip PyTorch of a GPU machine and runs the GPU
# measurements recorded in docs/results/. Usage: scripts/gpu-check.sh OUTDIR
# Header-only dependencies (CLI/, nlohmann/, gloo/) come from .deps/include when the
# machine has no Debian packages (copy them from /usr/include of a Debian machine).
# A tree without .git can be told its commit: DDPBENCH_GIT_SHA=<sha>.
set -euo pipefail
out=${1:?usage: scripts/gpu-check.sh OUTDIR}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DDDPBENCH_DEPS_DIR="$root/.deps/include" -DDDPBENCH_BUILD_TESTS=OFF >"$out/cmake.log" 2>&1
ninja -C build-gpu ddpbench >"$out/build.log" 2>&1
bin=build-gpu/ddpbench
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
$bin models

echo "== the default main job (resnet50, batch 32, 224x224, fp32, one rank per GPU), twice"
$bin run --json "$out/run_default.json"
$bin run --json "$out/run_default_repeat.json" | tail -3

echo "== Python DDP on the same torch, same loop (scripts/python_ddp_reference.py)"
for flag in --no-ddp ""; do
  torchrun --standalone --nproc-per-node 1 scripts/python_ddp_reference.py --model resnet50 --batch-size 32 \
    --image-size 224 --iters 20 $flag 2>/dev/null | tail -1 | tee -a "$out/python_ddp.jsonl"
done

echo "== torchrun as launcher"
torchrun --standalone --nproc-per-node 1 --no-python $bin run --model resnet18 --warmup 2 --iters 5 \
  --json "$out/torchrun_resnet18.json" | tail -3

echo "== Gloo: two ranks sharing one GPU"
$bin run --backend gloo --nproc-per-node 2 --model resnet18 --warmup 2 --iters 10 \
  --json "$out/gloo_two_ranks_one_gpu.json" | tail -4
