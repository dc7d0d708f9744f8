#!/usr/bin/env bash
# Proves every GPU path of ddpbench on a GPU machine in one call: builds against the machine's
# pip PyTorch (libtorch in the wheel, CUDA and NCCL; every GPU path required), then runs each
# path and writes OUTDIR/SUMMARY.md, one line per path:
#     PASS|FAIL <name> exit=<code> seconds=<s>[ (<why it failed>)]
# and a last line "<n> of <m> paths passed". A path that exits non-zero is FAIL even when it
# wrote its rows. Each path's command is in OUTDIR/COMMANDS.md, its output in OUTDIR/<name>.txt,
# its result file (if any) in OUTDIR/<name>.json, the teardown trace of each of its processes in
# OUTDIR/teardown/<name>/ (a path that exits 0 with a trace out of PyTorch's order is FAIL).
# Commit OUTDIR under docs/results/.
#
#   scripts/gpu-check.sh OUTDIR [STEP] [--only NAME[,NAME...]] [--list]
#
# STEPs ("all" by default; the build runs first in every step):
#   build    configure and build ddpbench and the engine test binaries; the GPU-only tests; env
#   runs     the default main job, --iters auto, fp32-strict / tf32, bf16 b256, NCCL refusing two
#            spawned ranks on one GPU
#   paths    zero2 and fsdp, fsdp --cpu-offload, --breakdown (CUDA events), comm on NCCL,
#            --mode inference, NVML telemetry and the straggler entry, --profile (Kineto),
#            dataparallel, every comm hook on NCCL (one rank)
#   maxbs    find-max-bs for resnet152 and vit_b_16 in bf16
#   compare  ddpbench against Python DDP on the same torch (scripts/compare-python-ddp.sh): the
#            ratio ddpbench / Python of the p50 step per configuration goes into SUMMARY.md
#   guides   not part of "all" (a second call): the commands the guides show that no other path
#            runs (activation checkpointing, --batch-size max, a burn-in, a bucket and hook sweep,
#            strong scaling, --min-busbw, dataparallel --freeze-backbone), each on one GPU
#            (tests/tools/check_gpu_paths.py checks that every documented device command has a path)
#   controlplane  not part of "all" (it needs no GPU, only the wheel's TCPStore, which is built
#            with libuv where Debian's is not): the control-plane simulation of 1,024 and 4,096
#            ranks (tests/sim/control_plane_sim.cpp; docs/results/control_plane_simulation.md)
# --only selects paths by name (after a fix, rerun what failed); --list prints every path's step,
# name and command.
# Sized for one 9-minute call on one H100 or H200 from a bare machine (no ccache), the build
# included: the paths run short series (they prove the path; they are not the performance record).
# With one GPU, NCCL runs one rank: NCCL across ranks is not tested here.
#
# Libraries: nlohmann/json and fmt come from the wheel when it ships them, else from the system;
# CLI11, GoogleTest (and any library the machine lacks) from .deps/ when it exists (a
# DDPBENCH_DEPS_DIR), since the GPU machine has no internet: make it before the call with
# scripts/fetch-deps.sh .deps (GitHub) or scripts/deps-from-debian.sh .deps (Debian's mirror),
# and carry .deps with the tree. A tree without .git can be told its commit: DDPBENCH_GIT_SHA=<sha>.
set -uo pipefail
usage="usage: scripts/gpu-check.sh OUTDIR [build|runs|paths|maxbs|compare|guides|controlplane|all] [--only NAME[,NAME...]] [--list]"
out=""; step=all; only=""; list=0
while [ $# -gt 0 ]; do
  case "$1" in
    --only) only=${2:?$usage}; shift 2 ;;
    --only=*) only=${1#--only=}; shift ;;
    --list) list=1; shift ;;
    build|runs|paths|maxbs|compare|guides|controlplane|all) [ -n "$out" ] || { echo "$usage" >&2; exit 2; }; step=$1; shift ;;
    -*) echo "gpu-check: unknown option '$1'; $usage" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "gpu-check: unknown step '$1'; $usage" >&2; exit 2; }; out=$1; shift ;;
  esac
done
[ -n "$out" ] || [ "$list" = 1 ] || { echo "$usage" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=build-gpu/ddpbench
t_start=$(date +%s)
# The whole call's budget (s): a path that would start past it is not run (FAIL, saying so) and
# each path's limit is cut to what is left, so SUMMARY.md is whole before the device's 10-minute
# command limit (GPU_CHECK_BUDGET_S overrides).
budget=${GPU_CHECK_BUDGET_S:-540}
short="--warmup 3 --iters 15 --overwrite"

# ------------------------------------------------------------------ the paths, in order
# path <step> <name> <time limit s> <command...>: one path. expect <name> <python expression over
# d, the path's JSON>: a property its result must show (else FAIL). Declared once, run by run_paths.
names=() steps=() limits=() cmds=()
path() { steps+=("$1"); names+=("$2"); limits+=("$3"); shift 3; cmds+=("$(printf '%q ' "$@")"); }
declare -A expects
expect() { expects[$1]+="$2"$'\n'; }
J() { echo "$out/$1.json"; }  # a path's result file

# First, in seconds: every symbol ddpbench imports that libstdc++ and the wheel's libtorch/libc10
# both define is bound to libstdc++ (scripts/binding-audit.py; else it lists each clash). Its
# CPU stand-in: ctest Link.BindingAudit*.
path build binding_audit 60 python3 scripts/binding-audit.py $bin
path build gpu_tests 120 build-gpu/tests/ddpbench_engine_tests \
  --gtest_filter='Precision*:Flops.Multiply*:MemoryPeaks*:Inference*:ModelStateBytes*:Teardown*'
path build gpu_tests_dataparallel 90 build-gpu/tests/ddpbench_data_parallel_tests
path build env 60 $bin env
# libstdc++ before the wheel's libraries in every program's DT_NEEDED list (CMakeLists.txt,
# ddpbench_libstdcxx_first), and the lookup itself with a library that exports its own copy of
# std::filesystem::remove_all, as the wheel's libtorch.so does. First the link command's items
# that decide the order (where -lstdc++ and libtorch's libraries stand on it).
path build needed_order 30 bash -c 'ninja -C build-gpu -t commands ddpbench | tail -1 | tr " " "\n" |
  grep -nE "stdc\+\+|libtorch|libc10|as-needed|push-state|pop-state|^-o$|\.o$" | head -40
for b in build-gpu/ddpbench build-gpu/tests/ddpbench_engine_tests; do
  readelf -d "$b" | grep NEEDED | head -6; cmake -DREADELF=readelf -DBINARY="$b" -P cmake/CheckNeededOrder.cmake || exit 1
done; build-gpu/tests/link_order_probe'

path runs run_default 90 $bin run --overwrite --json "$(J run_default)"
expect run_default "d['environment']['device_type']=='cuda' and d['environment']['backend']=='nccl'"
expect run_default "d['config']['zero_grad_set_to_none'] == (int(d['environment']['torch'].split('.')[0]) >= 2)"
path runs run_default_iters_auto 60 $bin run --iters auto --max-time 8 --overwrite --json "$(J run_default_iters_auto)"
path runs run_fp32_strict 60 $bin run --precision fp32-strict $short --json "$(J run_fp32_strict)"
path runs run_tf32 60 $bin run --precision tf32 $short --json "$(J run_tf32)"
path runs run_resnet50_bf16_b256 90 $bin run --model resnet50 --precision bf16 --batch-size 256 $short \
  --json "$(J run_resnet50_bf16_b256)"
# NCCL refuses two spawned ranks on one GPU before starting them: exit 2 is this path's pass
# (expect_exit CODE: the exit code a path must end with, instead of 0).
path runs nccl_two_ranks_one_gpu 60 expect_exit 2 $bin run --backend nccl --nproc-per-node 2 --model resnet18 \
  --warmup 1 --iters 3

path paths strategies_zero2_fsdp 120 $bin run --model resnet50 --batch-size 32 --strategy ddp,zero2,fsdp $short \
  --json "$(J strategies_zero2_fsdp)"
expect strategies_zero2_fsdp "{r.get('strategy') for r in d['results']} >= {'zero2','fsdp'} and all(r['memory']['max_over_ranks']['peak_allocated_bytes']>0 for r in d['results'])"
path paths fsdp_cpu_offload 120 $bin run --model resnet50 --batch-size 32 --strategy ddp,fsdp --cpu-offload $short \
  --json "$(J fsdp_cpu_offload)"
expect fsdp_cpu_offload "[r.get('cpu_offload', False) for r in d['results'] if r.get('strategy')=='fsdp'] == [True]"
path paths breakdown_resnet50_bf16 90 $bin run --model resnet50 --precision bf16 --batch-size 64 --breakdown $short \
  --json "$(J breakdown_resnet50_bf16)"
expect breakdown_resnet50_bf16 "any(r['ddp'] for r in d['results']) and all(r['breakdown'] for r in d['results'] if r['ddp'])"
# One rank: busbw is 0 by definition, algbw is the copy rate.
path paths comm_nccl 90 $bin comm -b 1M -e 256M -f 4 --backend nccl --overwrite --json "$(J comm_nccl)"
path paths inference 90 $bin run --model resnet50 --batch-size 64 --mode inference --precision bf16 $short \
  --json "$(J inference)"
expect inference "[r.get('mode') for r in d['results']] and all(r.get('mode')=='inference' for r in d['results'])"
path paths telemetry_straggler 90 $bin run --model resnet50 --batch-size 32 --sample-ms 100 $short \
  --json "$(J telemetry_straggler)"
expect telemetry_straggler "any(rk['telemetry']['sampled']['gpu']['available'] for r in d['results'] for rk in r['ranks'] if rk.get('telemetry'))"
expect telemetry_straggler "d['stragglers'] and all(k.get('gpu_uuid') and k.get('bus_id') and k.get('gpu_index') is not None for s in d['stragglers'] for k in s['ranks'])"
path paths profile_kineto 120 $bin run --model resnet50 --batch-size 32 --world-sizes 1 --profile "$out/profile" \
  --profile-iters 2 $short --json "$(J profile_kineto)"
expect profile_kineto "all(r['telemetry'].get('profile') for r in d['results'])"
# Language models: GPT-2 small in bf16 under DDP at 1,024 tokens (tokens/s and MFU by the PaLM
# formula), the Llama 3.2 1B shape under fsdp, and find-max-bs at 2,048 tokens.
path paths llm_gpt2_bf16_ddp 120 $bin run --model gpt2 --precision bf16 --seq-len 1024 --batch-size 8 $short \
  --json "$(J llm_gpt2_bf16_ddp)"
expect llm_gpt2_bf16_ddp "all(r['compute'].get('seq_len')==1024 and r['compute'].get('tokens_per_s_per_gpu',0)>0 and r['compute'].get('mfu',0)>0 for r in d['results'])"
path paths llm_llama1b_fsdp 150 $bin run --model llama3.2-1b --precision bf16 --seq-len 1024 --batch-size 4 \
  --strategy fsdp $short --json "$(J llm_llama1b_fsdp)"
expect llm_llama1b_fsdp "[r.get('strategy') for r in d['results'] if r['ddp']] == ['fsdp'] and all(r['compute'].get('tokens_per_s',0)>0 for r in d['results'])"
path maxbs find_max_bs_llama1b_seq2048 120 $bin find-max-bs --model llama3.2-1b --precision bf16 --seq-len 2048 \
  --memory-limit 40G --overwrite --json "$(J find_max_bs_llama1b_seq2048)"
# The acceptance plan of one GPU (plans/one-gpu.yaml) through validate: its steps, the record,
# the report and the tally line.
path paths validate_one_gpu 100 $bin validate plans/one-gpu.yaml --out "$out/validate_one_gpu"
path paths dataparallel 90 $bin dataparallel --model resnet50 --batch-size 64 --gpus 1 --overwrite --json "$(J dataparallel)"
# A hook on one rank still runs its compression and its collective.
for hook in allreduce fp16 bf16 powersgd:2 hierarchical topk:0.01; do
  name="hook_${hook//[:.]/_}"
  path paths "$name" 90 $bin run --model resnet50 --batch-size 32 --comm-hook "$hook" --world-sizes 1 $short \
    --json "$(J "$name")"
done

# Under a cap of 8 GiB (find-max-bs --memory-limit): the search meets out of memory within a few
# trials and bisects, on any GPU (uncapped on an H200, resnet152 alone tried up to 2048 and took
# over 120 s). A resnet152 trial took 6 to 11 s even at batch 1 on an H200 (torch 2.11): it starts
# at 16 and has 100 s.
path maxbs find_max_bs_resnet152_bf16 100 $bin find-max-bs --model resnet152 --precision bf16 --memory-limit 8G --start 16 --overwrite \
  --json "$(J find_max_bs_resnet152_bf16)"
path maxbs find_max_bs_vit_b_16_bf16 60 $bin find-max-bs --model vit_b_16 --precision bf16 --memory-limit 8G --overwrite \
  --json "$(J find_max_bs_vit_b_16_bf16)"

# One round each (ddpbench, then Python DDP as plain processes and under torchrun), WORLD=1: a
# parity check that fits the call; scripts/compare-python-ddp.sh N gives the median of N rounds.
path compare compare_resnet50_fp32_b32 90 env PYTHON=python3 TORCHRUN=torchrun WORLD=1 DDPBENCH=$bin \
  MODEL=resnet50 BATCH=32 IMAGE=224 PRECISION=fp32 ITERS=30 scripts/compare-python-ddp.sh 1
path compare compare_resnet50_bf16_b256 90 env PYTHON=python3 TORCHRUN=torchrun WORLD=1 DDPBENCH=$bin \
  MODEL=resnet50 BATCH=256 IMAGE=224 PRECISION=bf16 ITERS=30 scripts/compare-python-ddp.sh 1
# The guides' commands no path above runs, on one GPU (a second call: `gpu-check.sh OUTDIR guides`).
# Sweeps over world sizes run size 1 only (NCCL takes one rank per GPU); --min-busbw fails by
# design on one rank (busbw is 0), so its pass is exit 1.
path guides activation_checkpointing 120 $bin run --model resnet50 --batch-size 32 --strategy ddp,fsdp \
  --activation-checkpointing $short --json "$(J activation_checkpointing)"
expect activation_checkpointing "all(r.get('activation_checkpointing') for r in d['results'] if r['ddp'])"
path guides batch_size_max 150 $bin run --model resnet18 --batch-size max --memory-limit 4G $short \
  --json "$(J batch_size_max)"
path guides burn_in 90 $bin run --model resnet18 --world-sizes 1 --duration 30s --overwrite --json "$(J burn_in)"
path guides bucket_hook_sweep 120 $bin run --model resnet50 --world-sizes 1 --bucket-cap-mb 1,25 --comm-hook none,fp16 \
  $short --json "$(J bucket_hook_sweep)"
path guides strong_scaling 90 $bin run --model resnet50 --scaling strong --global-batch-size 64 $short \
  --json "$(J strong_scaling)"
path guides comm_min_busbw 60 expect_exit 1 $bin comm --collectives allreduce -b 64M -e 256M --min-busbw 20 \
  --overwrite --json "$(J comm_min_busbw)"
path guides dataparallel_freeze_backbone 90 $bin dataparallel --model vgg16 --gpus 1 --freeze-backbone --overwrite \
  --json "$(J dataparallel_freeze_backbone)"

# The control plane against the wheel's TCPStore server (libuv): each size in a fresh process.
path controlplane control_plane_sim 200 build-gpu/tests/control_plane_sim --ranks 1024,4096 --out "$out/cps" \
  --json "$(J control_plane_sim)"

if [ "$list" = 1 ]; then
  for i in "${!names[@]}"; do printf '%-12s %-30s %s\n' "${steps[$i]}" "${names[$i]}" "${cmds[$i]}"; done
  exit 0
fi
if [ -n "$only" ]; then
  for n in ${only//,/ }; do
    [[ " ${names[*]} " == *" $n "* ]] || { echo "gpu-check: --only: no path named '$n' (--list names them)" >&2; exit 2; }
  done
fi

# ------------------------------------------------------------------ run
mkdir -p "$out"
out=$(cd "$out" && pwd)
summary="$out/SUMMARY.md"
passed=0; total=0
ratios=()
line() {  # PASS|FAIL name exit seconds [why]
  local l="$1 $2 exit=$3 seconds=$4${5:+ ($5)}"
  echo "$l" >>"$summary.lines"; echo "gpu-check: $l"
  total=$((total + 1)); [ "$1" = PASS ] && passed=$((passed + 1))
  write_summary
}

{
  echo "# GPU check, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
  echo "- torch: $(python3 -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda, "NCCL", ".".join(map(str, torch.cuda.nccl.version())))' 2>&1 | tail -1)"
  echo "- commit: ${DDPBENCH_GIT_SHA:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}"
  echo "- step: $step${only:+, only $only}"
  echo
  echo "Commands (from the repository root; each output is NAME.txt beside this file):"
  echo
} >"$out/COMMANDS.md"
: >"$summary.lines"
# SUMMARY.md as it stands: rewritten after every path, so a call stopped from outside still
# leaves the lines of the paths that ran.
write_summary() {
  {
    echo "# GPU check summary"
    echo
    sed -n 's/^- \(GPU\|torch\|commit\|step\): /- \1: /p' "$out/COMMANDS.md"
    echo
    echo '```'
    cat "$summary.lines"
    echo '```'
    if [ ${#ratios[@]} -gt 0 ]; then
      echo
      echo "Parity (p50 step time, ddpbench over Python DDP on the same torch and GPU, the medians of the rounds; below 1: ddpbench's step is shorter):"
      echo
      printf '%s\n' "${ratios[@]}"
    fi
    echo
    echo "Whole call: $(( $(date +%s) - t_start )) s."
    echo
    echo "$passed of $total paths passed"
  } >"$summary.tmp" && mv "$summary.tmp" "$summary"
}

# teardown_order DIR: every trace file in DIR (one per process) has the teardown's events in
# PyTorch's order (teardown, device synchronized, groups, store, allocator, autograd engine,
# streams) and ends "main returns 0"; prints the first file that does not, and fails.
teardown_order() {
  python3 - "$1" <<'PY'
import pathlib, sys
order = ["teardown:", "device synchronized:", "allocator emptied:", "autograd engine stopped:", "streams flushed:",
         "main returns 0"]
for f in sorted(pathlib.Path(sys.argv[1]).glob("*.txt")):
    lines = f.read_text().splitlines()
    at = [next((i for i, l in enumerate(lines) if l.startswith(e)), -1) for e in order]
    after = [i for i, l in enumerate(lines) if l.startswith(("group destroyed:", "store released:")) and i > at[0]]
    if -1 in at or at != sorted(at) or lines[-1] != "main returns 0" or any(not (at[1] < i < at[2]) for i in after):
        print(f"{f.name}: events out of PyTorch's order or missing ({len(lines)} lines)")
        sys.exit(1)
PY
}

# The build: always (a rerun after a fix needs the fixed binary); a path of its own.
t0=$(date +%s)
prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)
deps=()
[ -d "$root/.deps" ] && deps=(-DDDPBENCH_DEPS_DIR="$root/.deps")
# GPU_CHECK_CMAKE_ARGS: more configure options, last (the script's own test on a machine without
# a GPU passes -DDDPBENCH_REQUIRE_GPU_PATHS=OFF).
read -r -a extra <<<"${GPU_CHECK_CMAKE_ARGS:-}"
targets=(ddpbench ddpbench_engine_tests ddpbench_data_parallel_tests link_order_probe)
[ "$step" = controlplane ] || [[ ",$only," == *",control_plane_sim,"* ]] && targets+=(control_plane_sim)
printf -- '- `build`: `cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=%s %s -DDDPBENCH_REQUIRE_GPU_PATHS=ON %s && ninja -C build-gpu %s`\n' \
  "$prefix" "${deps[*]}" "${extra[*]}" "${targets[*]}" >>"$out/COMMANDS.md"
build_rc=0
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" "${deps[@]}" \
    -DDDPBENCH_REQUIRE_GPU_PATHS=ON "${extra[@]}" && ninja -C build-gpu "${targets[@]}"; } \
  >"$out/build.txt" 2>&1 || build_rc=$?
grep -E "ddpbench: " "$out/build.txt" | head -8
if [ "$build_rc" -ne 0 ]; then
  grep -E "error|undefined|CMake Error" "$out/build.txt" | head -30
  line FAIL build "$build_rc" $(( $(date +%s) - t0 )) "see build.txt"
else
  line PASS build 0 $(( $(date +%s) - t0 ))
fi

for i in "${!names[@]}"; do
  name=${names[$i]}
  if [ -n "$only" ]; then [[ ",$only," == *",$name,"* ]] || continue
  elif [ "$step" != all ] && [ "$step" != "${steps[$i]}" ]; then continue
  elif [ "$step" = all ] && { [ "${steps[$i]}" = controlplane ] || [ "${steps[$i]}" = guides ]; }; then continue; fi
  eval "cmd=(${cmds[$i]})"
  printf -- '- `%s`: `%s`\n' "$name" "${cmd[*]}" | sed "s|$out/|OUTDIR/|g" >>"$out/COMMANDS.md"
  if [ "$build_rc" -ne 0 ]; then line FAIL "$name" - 0 "not run: the build failed"; continue; fi
  left=$(( budget - ($(date +%s) - t_start) ))
  if [ "$left" -lt 20 ]; then line FAIL "$name" - 0 "not run: the call's budget of $budget s was spent"; continue; fi
  limit=${limits[$i]}; [ "$limit" -gt $((left - 5)) ] && limit=$((left - 5))
  [ "$name" = profile_kineto ] && rm -rf "$out/profile"
  printf '\n== %s\n$ %s\n' "$name" "${cmd[*]}"
  t0=$(date +%s); rc=0; want=0
  if [ "${cmd[0]}" = expect_exit ]; then want=${cmd[1]}; cmd=("${cmd[@]:2}"); fi
  # Every process of the path records its teardown (engine/run/teardown.hpp) under
  # OUTDIR/teardown/NAME/; a path that exits 0 must show each one in PyTorch's order.
  rm -rf "${out:?}/teardown/$name"; mkdir -p "$out/teardown/$name"
  DDPBENCH_TEARDOWN_TRACE="$out/teardown/$name" timeout --kill-after=5 "$limit" "${cmd[@]}" >"$out/$name.txt" 2>&1 || rc=$?
  secs=$(( $(date +%s) - t0 ))
  tail -n 6 "$out/$name.txt"
  why=""
  [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && why="time limit $limit s"
  [ "$rc" -eq 139 ] && why="segmentation fault"
  [ "$rc" -ne "$want" ] && [ "$want" -ne 0 ] && why="expected exit $want"
  if [ "$rc" -eq 0 ] && ! bad=$(teardown_order "$out/teardown/$name"); then why="teardown: $bad"; fi
  if [ "$rc" -eq 0 ] && [ -n "${expects[$name]:-}" ]; then
    while IFS= read -r e; do
      [ -n "$e" ] || continue
      if ! python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($e) else 1)" "$(J "$name")" 2>/dev/null; then
        rc_expect="result does not show: $e"; why=${why:-$rc_expect}
      fi
    done <<<"${expects[$name]}"
  fi
  if [ "$name" = profile_kineto ]; then  # Kineto's traces are large: keep their names and sizes, not the files
    ls -la "$out/profile" >>"$out/$name.txt" 2>&1
    find "$out/profile" -name '*.json' -size +20M -delete 2>/dev/null
  fi
  if [[ "$name" == compare_* ]]; then
    r=$(grep -o 'no-DDP [0-9.]* \[[0-9.-]*\], DDP [0-9.]* \[[0-9.-]*\]' "$out/$name.txt" | tail -1)
    [ -n "$r" ] && ratios+=("- \`$name\`: ddpbench / Python DDP p50 ${r}")
  fi
  if [ "$rc" -eq "$want" ] && [ -z "$why" ]; then line PASS "$name" "$rc" "$secs"; else line FAIL "$name" "$rc" "$secs" "$why"; fi
done

write_summary
rm -f "$summary.lines"
echo "gpu-check: $passed of $total paths passed ($(( $(date +%s) - t_start )) s); $summary"
[ "$passed" -eq "$total" ]
