#!/usr/bin/env bash
# One device call: build ddpbench only, then reproduce the exit crash of comm on NCCL under variants.
set -u
O=${OUT:-/tmp/diagout}; mkdir -p $O
exec > >(tee $O/log.txt) 2>&1
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
gcc -shared -fPIC -O1 -o /tmp/segv_bt.so diag/segv_bt.c || echo "preload build failed"
el "nvidia/gdb:"; command -v gdb; nvidia-smi -L
prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" -DDDPBENCH_DEPS_DIR=$PWD/.deps -DDDPBENCH_REQUIRE_GPU_PATHS=ON > $O/configure.txt 2>&1 && ninja -C build-gpu ddpbench > $O/build.txt 2>&1 || { el "BUILD FAILED"; tail -30 $O/build.txt; }
el "built"
B=build-gpu/ddpbench
ldd $B | grep -Ei "cuda|nccl|nvidia|torch|c10|gomp|stdc" > $O/ldd.txt
C="comm -b 1M -e 1M --backend nccl --overwrite"
v() { local n=$1; shift; el "== $n: $*"; env DDPBENCH_TEARDOWN_TRACE=$O/td_$n LD_PRELOAD=/tmp/segv_bt.so "$@" > $O/$n.txt 2>&1; echo "rc=$?" | tee -a $O/$n.txt; mkdir -p $O/td_$n; }
mkdir -p $O/td_base; v base timeout 40 $B $C --json /tmp/c0.json
python3 diag/resolve.py $O/base.txt > $O/base_resolved.txt 2>&1; grep -A40 "DIAG signal" $O/base_resolved.txt | head -60
mkdir -p $O/ldd_files; LD_DEBUG=files LD_DEBUG_OUTPUT=$O/ldd_files/ld timeout 40 $B $C --json /tmp/c1.json > $O/ld_files_run.txt 2>&1; echo "ld rc=$?"; grep -h "calling fini" $O/ldd_files/ld* | tail -8
mkdir -p $O/td_nomon; v nomon env TORCH_NCCL_ENABLE_MONITORING=0 timeout 40 $B $C --json /tmp/c2.json
mkdir -p $O/td_nofr; v nofr env TORCH_FR_BUFFER_SIZE=0 TORCH_NCCL_TRACE_BUFFER_SIZE=0 timeout 40 $B $C --json /tmp/c3.json
mkdir -p $O/td_nccldbg; v nccldbg env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV timeout 40 $B $C --json /tmp/c4.json
tail -15 $O/nccldbg.txt
el "python"
MASTER_ADDR=127.0.0.1 MASTER_PORT=29533 timeout 60 python3 -c "
import torch, torch.distributed as dist
dist.init_process_group('nccl', rank=0, world_size=1, device_id=torch.device('cuda:0'))
t = torch.ones(1 << 20, device='cuda'); dist.all_reduce(t); torch.cuda.synchronize()
dist.destroy_process_group(); print('python ok', t[0].item())" > $O/python.txt 2>&1; echo "python rc=$?"
mkdir -p $O/td_run; v run timeout 40 $B run --model resnet18 --batch-size 8 --warmup 1 --iters 3 --world-sizes 1 --overwrite --json /tmp/r.json
python3 diag/resolve.py $O/run.txt > $O/run_resolved.txt 2>&1; grep -A25 "DIAG signal" $O/run_resolved.txt | head -30
if command -v gdb >/dev/null; then el gdb; timeout 60 gdb -batch -ex run -ex bt -ex "thread apply all bt 8" --args $B $C --json /tmp/c5.json > $O/gdb.txt 2>&1; grep -A30 "SIGSEGV" $O/gdb.txt | head -50; fi
el done
