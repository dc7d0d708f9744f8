#!/usr/bin/env bash
# Builds ddpbench against the pip PyTorch of a GPU machine and runs the GPU
# measurements recorded in docs/results/. Usage: scripts/gpu-check.sh OUTDIR [runs|compare|all]
# (the two halves fit one 10-minute call each on one H100).
# Header-only dependencies (CLI/, nlohmann/, gloo/) and GoogleTest's sources
# (googletest/) come from .deps/include when the machine has no Debian packages (copy
# them from /usr/include and /usr/src/googletest of a Debian machine).
# A tree without .git can be told its commit: DDPBENCH_GIT_SHA=<sha>.
set -euo pipefail
out=${1:?usage: scripts/gpu-check.sh OUTDIR}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DDDPBENCH_DEPS_DIR="$root/.deps/include" >/tmp/ddpbench-cmake.log 2>&1
ninja -C build-gpu ddpbench ddpbench_engine_tests >/tmp/ddpbench-build.log 2>&1 || { tail -30 /tmp/ddpbench-build.log; exit 1; }
bin=build-gpu/ddpbench
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

echo "== GPU-only tests: fp16 autocast and loss scaling with ATen's CUDA AMP kernels"
gpu_tests=0
[ "${2:-all}" = compare ] || build-gpu/tests/ddpbench_engine_tests --gtest_filter='Precision*:Flops.Multiply*' >/tmp/ddpbench-gpu-tests.log 2>&1 || gpu_tests=$?
grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) |Failure|Expected|Which is|what\(\)|Error" /tmp/ddpbench-gpu-tests.log 2>/dev/null | head -40 || true
echo "GPU-only tests exit status: $gpu_tests"  # the measurements still run; the script fails at the end

step=${2:-all}  # "runs" (after the build and GPU tests), "compare" (the Python parity rounds), or "all"
if [ "$step" = runs ] || [ "$step" = all ]; then
echo "== the default main job (resnet50, batch 32, 224x224, fp32 = PyTorch's default math, one rank per GPU)"
$bin run --overwrite --json "$out/run_default.json"
echo "== the same with --iters auto (95% CI of the mean within 1%)"
$bin run --iters auto --overwrite --json "$out/run_default_auto.json" | tail -4
echo "== true fp32 (TF32 off) and TF32 everywhere"
$bin run --precision fp32-strict --overwrite --json "$out/run_fp32_strict.json" | tail -3
$bin run --precision tf32 --overwrite --json "$out/run_tf32.json" | tail -3
echo "== mixed precision at batch 256 per GPU"
$bin run --model resnet50 --precision bf16 --batch-size 256 --overwrite --json "$out/resnet50_bf16_b256.json" 2>&1 | tail -4
echo "== NCCL refuses two spawned ranks on one GPU before starting them (exit 2, one line)"
rc=0
msg=$($bin run --backend nccl --nproc-per-node 2 --model resnet18 --warmup 1 --iters 3 2>&1) || rc=$?
echo "$msg" | tail -2
echo "exit status: $rc"
if [ "$(nvidia-smi -L | wc -l)" -eq 1 ] && [ "$rc" -ne 2 ]; then echo "expected exit 2"; exit 1; fi
fi

if [ "$step" = compare ] || [ "$step" = all ]; then
echo "== ddpbench against Python DDP on the same torch, alternating rounds (scripts/compare-python-ddp.sh)"
export PYTHON=python3 TORCHRUN=torchrun WORLD=1 DDPBENCH=$bin
MODEL=resnet50 BATCH=32 IMAGE=224 PRECISION=fp32 scripts/compare-python-ddp.sh 3 | tee "$out/compare_resnet50_fp32_b32.txt"
MODEL=resnet50 BATCH=256 IMAGE=224 PRECISION=bf16 scripts/compare-python-ddp.sh 3 | tee "$out/compare_resnet50_bf16_b256.txt"
fi

if [ "$gpu_tests" -ne 0 ]; then echo "GPU-only tests FAILED (exit $gpu_tests)"; exit 1; fi
