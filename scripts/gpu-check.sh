#!/usr/bin/env bash
# Proves every GPU path of ddpbench on a GPU machine: builds against the machine's pip PyTorch
# (libtorch in the wheel, CUDA and NCCL), then runs each path and writes what it measured to
# OUTDIR (JSON, text and COMMANDS.md, the exact commands in order). Commit OUTDIR under
# docs/results/. Exits 1 when any step failed (the others still run); their output says which.
#
#   scripts/gpu-check.sh OUTDIR [STEP]
#
# STEPs, each within one 10-minute call on one H100 (run them in this order; "all" runs every one):
#   build    configure and build ddpbench and the engine test binaries, run the GPU-only tests
#   runs     the default main job, --iters auto, fp32-strict / tf32, bf16 b256, NCCL refusing
#            two spawned ranks on one GPU
#   paths    zero2 and fsdp rows, fsdp --cpu-offload; --breakdown (CUDA events) for resnet50 bf16;
#            comm on one GPU (NCCL); --mode inference; NVML telemetry and the straggler line (GPU
#            index, UUID, bus id); --profile with Kineto; dataparallel (1 GPU); every comm hook
#            on NCCL (1 rank)
#   maxbs    find-max-bs for resnet152 and vit_b_16 in bf16
#   compare  ddpbench against Python DDP on the same torch (scripts/compare-python-ddp.sh)
# With one GPU, NCCL runs one rank: NCCL across ranks is not tested here.
#
# Header-only dependencies (CLI/, nlohmann/, gloo/) and GoogleTest's sources (googletest/) come
# from .deps/include when the machine has no Debian packages (copy them from /usr/include and
# /usr/src/googletest of a Debian machine). A tree without .git can be told its commit:
# DDPBENCH_GIT_SHA=<sha>.
set -uo pipefail
out=${1:?usage: scripts/gpu-check.sh OUTDIR [build|runs|paths|maxbs|compare|all]}
step=${2:-all}
case "$step" in build|runs|paths|maxbs|compare|all) ;; *) echo "gpu-check: unknown step '$step'" >&2; exit 2 ;; esac
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=build-gpu/ddpbench
failed=()

# One path: its command goes to COMMANDS.md and the terminal, its output to OUTDIR/NAME.txt.
check() {
  local name=$1; shift
  printf '\n== %s\n$ %s\n' "$name" "$*"
  printf -- '- `%s`: `%s`\n' "$name" "$*" >>"$out/COMMANDS.md"
  local rc=0
  "$@" >"$out/$name.txt" 2>&1 || rc=$?
  tail -n 12 "$out/$name.txt"
  if [ "$rc" -ne 0 ]; then echo "gpu-check: $name FAILED (exit $rc)"; failed+=("$name"); fi
  return 0
}
# A JSON property a path must show (python3: the machine's PyTorch comes with it).
expect() {
  local name=$1 file=$2 expr=$3
  if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($expr) else 1)" "$file" 2>/dev/null; then
    echo "gpu-check: $name: $expr"
  else
    echo "gpu-check: $name FAILED: $file does not show $expr"; failed+=("$name")
  fi
}

if [ "$step" = build ] || [ "$step" = all ]; then
  {
    echo "# GPU check, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)"
    echo "- torch: $(python3 -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda, "NCCL", ".".join(map(str, torch.cuda.nccl.version())))')"
    echo "- commit: ${DDPBENCH_GIT_SHA:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}"
    echo
    echo "Commands (from the repository root; each output is NAME.txt beside this file):"
    echo
  } >"$out/COMMANDS.md"
  prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
  if ! cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
      -DDDPBENCH_DEPS_DIR="$root/.deps/include" -DDDPBENCH_REQUIRE_GPU_PATHS=ON >"$out/cmake.txt" 2>&1; then
    tail -30 "$out/cmake.txt"; echo "gpu-check: cmake failed"; exit 1
  fi
  if ! ninja -C build-gpu ddpbench ddpbench_engine_tests ddpbench_data_parallel_tests >"$out/build.txt" 2>&1; then
    grep -E "error|undefined" "$out/build.txt" | head -30; echo "gpu-check: build failed"; exit 1
  fi
  echo "gpu-check: built against torch at $prefix, every GPU path required (DDPBENCH_REQUIRE_GPU_PATHS)"
  check gpu_tests build-gpu/tests/ddpbench_engine_tests \
    --gtest_filter='Precision*:Flops.Multiply*:MemoryPeaks*:Inference*:ModelStateBytes*'
  check gpu_tests_dataparallel build-gpu/tests/ddpbench_data_parallel_tests
  grep -hE "SKIPPED|FAILED" "$out/gpu_tests.txt" "$out/gpu_tests_dataparallel.txt" | head -20
  check env $bin env
fi

[ -x "$bin" ] || { echo "gpu-check: $bin is missing: run the build step first"; exit 1; }

if [ "$step" = runs ] || [ "$step" = all ]; then
  check run_default $bin run --overwrite --json "$out/run_default.json"
  expect run_default "$out/run_default.json" "d['environment']['device_type']=='cuda' and d['environment']['backend']=='nccl'"
  expect run_default "$out/run_default.json" \
    "d['config']['zero_grad_set_to_none'] == (int(d['environment']['torch'].split('.')[0]) >= 2)"
  check run_default_iters_auto $bin run --iters auto --overwrite --json "$out/run_default_iters_auto.json"
  check run_fp32_strict $bin run --precision fp32-strict --overwrite --json "$out/run_fp32_strict.json"
  check run_tf32 $bin run --precision tf32 --overwrite --json "$out/run_tf32.json"
  check run_resnet50_bf16_b256 $bin run --model resnet50 --precision bf16 --batch-size 256 --overwrite \
    --json "$out/run_resnet50_bf16_b256.json"
  # NCCL refuses two spawned ranks on one GPU before starting them (exit 2, one line).
  rc=0
  $bin run --backend nccl --nproc-per-node 2 --model resnet18 --warmup 1 --iters 3 >"$out/nccl_two_ranks_one_gpu.txt" 2>&1 || rc=$?
  printf -- '- `nccl_two_ranks_one_gpu`: `%s` (expected exit 2 on one GPU)\n' \
    "$bin run --backend nccl --nproc-per-node 2 --model resnet18 --warmup 1 --iters 3" >>"$out/COMMANDS.md"
  tail -2 "$out/nccl_two_ranks_one_gpu.txt"
  if [ "$(nvidia-smi -L | wc -l)" -eq 1 ] && [ "$rc" -ne 2 ]; then
    echo "gpu-check: nccl_two_ranks_one_gpu FAILED: exit $rc, expected 2"; failed+=(nccl_two_ranks_one_gpu)
  fi
fi

if [ "$step" = paths ] || [ "$step" = all ]; then
  short="--warmup 5 --iters 30 --overwrite"
  # The sharded strategies on NCCL (one rank: the collectives still run), then fsdp with its
  # shards and optimizer state offloaded to the host.
  check strategies_zero2_fsdp $bin run --model resnet50 --batch-size 32 --strategy ddp,zero2,fsdp $short \
    --json "$out/strategies_zero2_fsdp.json"
  expect strategies_zero2_fsdp "$out/strategies_zero2_fsdp.json" \
    "{r.get('strategy') for r in d['results']} >= {'zero2','fsdp'} and all(r['memory']['max_over_ranks']['peak_allocated_bytes']>0 for r in d['results'])"
  check fsdp_cpu_offload $bin run --model resnet50 --batch-size 32 --strategy ddp,fsdp --cpu-offload $short \
    --json "$out/fsdp_cpu_offload.json"
  expect fsdp_cpu_offload "$out/fsdp_cpu_offload.json" \
    "[r.get('cpu_offload', False) for r in d['results'] if r.get('strategy')=='fsdp'] == [True]"
  # CUDA-event phase marks and the Reducer's timers.
  check breakdown_resnet50_bf16 $bin run --model resnet50 --precision bf16 --batch-size 64 --breakdown $short \
    --json "$out/breakdown_resnet50_bf16.json"
  expect breakdown_resnet50_bf16 "$out/breakdown_resnet50_bf16.json" \
    "any(r['ddp'] for r in d['results']) and all(r['breakdown'] for r in d['results'] if r['ddp'])"
  # NCCL collectives on one GPU (one rank: busbw is 0 by definition, algbw is the copy rate).
  check comm_nccl $bin comm -b 1M -e 256M -f 4 --backend nccl --overwrite --json "$out/comm_nccl.json"
  check inference $bin run --model resnet50 --batch-size 64 --mode inference --precision bf16 $short \
    --json "$out/inference.json"
  # NVML telemetry sampled every 100 ms, and the straggler entry naming the GPU.
  check telemetry_straggler $bin run --model resnet50 --batch-size 32 --sample-ms 100 $short \
    --json "$out/telemetry_straggler.json"
  expect telemetry_straggler "$out/telemetry_straggler.json" \
    "any(rk['telemetry']['sampled']['gpu']['available'] for r in d['results'] for rk in r['ranks'] if rk.get('telemetry'))"
  expect telemetry_straggler "$out/telemetry_straggler.json" \
    "d['stragglers'] and all(k.get('gpu_uuid') and k.get('bus_id') and k.get('gpu_index') is not None for s in d['stragglers'] for k in s['ranks'])"
  rm -rf "$out/profile"
  check profile_kineto $bin run --model resnet50 --batch-size 32 --world-sizes 1 --profile "$out/profile" \
    --profile-iters 2 $short --json "$out/profile_kineto.json"
  ls -la "$out/profile" >>"$out/profile_kineto.txt" 2>&1
  # Kineto's traces are large: keep their names and sizes, not the files.
  find "$out/profile" -name '*.json' -size +20M -delete 2>/dev/null
  check dataparallel $bin dataparallel --model resnet50 --batch-size 64 --gpus 1 --overwrite \
    --json "$out/dataparallel.json"
  # Every comm hook on NCCL, one rank each (a hook on one rank still runs its compression and collective).
  for hook in allreduce fp16 bf16 powersgd:2 hierarchical topk:0.01; do
    name="hook_${hook//[:.]/_}"
    check "$name" $bin run --model resnet50 --batch-size 32 --comm-hook "$hook" --world-sizes 1 $short \
      --json "$out/$name.json"
  done
fi

if [ "$step" = maxbs ] || [ "$step" = all ]; then
  check find_max_bs_resnet152_bf16 $bin find-max-bs --model resnet152 --precision bf16 --overwrite \
    --json "$out/find_max_bs_resnet152_bf16.json"
  check find_max_bs_vit_b_16_bf16 $bin find-max-bs --model vit_b_16 --precision bf16 --overwrite \
    --json "$out/find_max_bs_vit_b_16_bf16.json"
fi

if [ "$step" = compare ] || [ "$step" = all ]; then
  export PYTHON=python3 TORCHRUN=torchrun WORLD=1 DDPBENCH=$bin
  MODEL=resnet50 BATCH=32 IMAGE=224 PRECISION=fp32 check compare_resnet50_fp32_b32 scripts/compare-python-ddp.sh 3
  MODEL=resnet50 BATCH=256 IMAGE=224 PRECISION=bf16 check compare_resnet50_bf16_b256 scripts/compare-python-ddp.sh 3
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "gpu-check: FAILED: ${failed[*]}"
  exit 1
fi
echo "gpu-check: step '$step' passed"
