#!/usr/bin/env bash
# Builds ddpbench against the pip PyTorch of a GPU machine and runs the GPU
# measurements recorded in docs/results/. Usage: scripts/gpu-check.sh OUTDIR
# Header-only dependencies (CLI/, nlohmann/, gloo/) come from .deps/include when the
# machine has no Debian packages (copy them from /usr/include of a Debian machine).
set -euo pipefail
out=${1:?usage: scripts/gpu-check.sh OUTDIR}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DDDPBENCH_DEPS_DIR="$root/.deps/include" -DDDPBENCH_BUILD_TESTS=OFF
ninja -C build-gpu ddpbench
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
./build-gpu/ddpbench models
# The default main job on a GPU machine: resnet50, batch 32, 224x224, fp32, one rank per GPU.
./build-gpu/ddpbench run --json "$out/run_default.json"
