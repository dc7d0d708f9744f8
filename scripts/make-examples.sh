#!/usr/bin/env bash
# Measures every result file under docs/examples again with today's ddpbench, then renders the
# reports made from them (docs/examples/report/cpu and h100). Each command is the one the
# example's page shows; run from anywhere on this project's 2-core CPU machine, quiet (the files
# are measurements: nothing else should run beside it). About 30 minutes.
#
#   scripts/make-examples.sh [BIN]                  # BIN: the ddpbench to use (default build/ddpbench)
#   scripts/make-examples.sh --reports-only [BIN]   # only the reports, from the files as they are
#
# Kept as they are: the pair-bandwidth file of emulated nodes (cluster-validation/pairs_netns_cpu.json,
# made on three network namespaces by tests/tools/netns_nodes.sh as its page shows) unless
# DDPBENCH_EXAMPLES_NETNS=1 (root: it makes and removes the namespaces).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
measure=1
if [ "${1:-}" = --reports-only ]; then
  measure=0
  shift
fi
B=$(realpath "${1:-build/ddpbench}")
export OMP_NUM_THREADS=1
say() { echo "make-examples: $*" >&2; }
run() {
  say "$*"
  "$@"
}

X=docs/examples
W=$X/where-the-time-goes
S=$X/strategies-memory-data
C=$X/cluster-validation
measure() {
  # Scaling (docs/guide/scaling.md).
  run "$B" run --nproc-per-node 4 --model resnet18 --batch-size 16 --image-size 64 --json $X/cpu_weak_resnet18.json \
    --overwrite --quiet
  run "$B" run --nproc-per-node 4 --model resnet18 --image-size 64 --scaling strong --global-batch-size 32 \
    --json $X/cpu_strong_resnet18.json --overwrite --quiet

  # Where the time goes (where-the-time-goes/README.md).
  run "$B" run --model resnet18,resnet50 --image-size 64 --batch-size 16 --warmup 5 --iters 20 --breakdown \
    --json $W/breakdown_cpu.json --overwrite --quiet
  run "$B" run --model resnet18 --image-size 64 --batch-size 16 --warmup 5 --iters 20 --world-sizes 2 \
    --bucket-cap-mb 1,5,25,100 --json $W/bucket_sweep_cpu.json --overwrite --quiet
  run "$B" run --model resnet18 --image-size 64 --batch-size 16 --warmup 5 --iters 20 --world-sizes 2 \
    --comm-hook none,allreduce,fp16,bf16,powersgd:2,topk:0.01,hierarchical --breakdown \
    --json $W/hook_sweep_cpu.json --overwrite --quiet
  run "$B" comm --nproc-per-node 2 --collectives allreduce -b 1K -e 256M -f 4 --json $W/comm_allreduce_cpu.json \
    --overwrite > /dev/null

  # Strategies, memory, time to loss (strategies-memory-data/README.md).
  for ckpt in off on; do
    run "$B" run --model resnet50 --image-size 64 --batch-size 8 --nproc-per-node 2 --world-sizes 2 \
      --strategy ddp,zero2,fsdp --warmup 2 --iters 8 $([ $ckpt = on ] && echo --activation-checkpointing) \
      --json $S/sharded-resnet50-ckpt-$ckpt.json --overwrite --quiet
  done
  for b in 8 32; do
    run "$B" run --model resnet18 --image-size 64 --batch-size $b --world-sizes 2 --iters 5 --warmup 2 \
      --json $S/memory-train-b$b.json --overwrite --quiet
  done
  for b in 8 32 128; do
    run "$B" run --model resnet18 --image-size 64 --batch-size $b --world-sizes 2 --iters 5 --warmup 2 --mode inference \
      --json $S/memory-inference-b$b.json --overwrite --quiet
  done
  run "$B" run --data fashion-mnist --model resnet18 --image-size 32 --scaling strong --global-batch-size 64 \
    --world-sizes 1,2 --nproc-per-node 2 --epochs 3 --target-accuracy 0.70 --train-limit 4096 --test-limit 1000 \
    --lr 0.05 --json $S/fashion_mnist_resnet18_ttl.json --overwrite --quiet

  # Cluster validation (cluster-validation/README.md), from its folder.
  (
    cd $C
    # A rank slowed from outside: two ranks pinned to CPUs 0 and 1, a busy loop pinned to CPU 1.
    taskset -c 1 sh -c 'while :; do :; done' &
    spin=$!
    trap 'kill $spin 2>/dev/null || true' EXIT
    port=$((29741 + RANDOM % 1000))
    for r in 0 1; do
      json=()
      [ $r = 0 ] && json=(--json straggler_cpu.json --overwrite)
      OMP_NUM_THREADS=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 RANK=$r LOCAL_RANK=$r \
        taskset -c $r "$B" run --model resnet18 --image-size 64 --batch-size 8 --warmup 3 --iters 20 --world-sizes 2 \
        "${json[@]}" > run_output_rank$r.txt 2>&1 &
    done
    wait %2 %3 || true
    kill $spin
    trap - EXIT
    mv run_output_rank0.txt run_output.txt
    rm -f run_output_rank1.txt
    "$B" find-max-bs --model squeezenet1_0 --image-size 32 --num-classes 10 --memory-limit 48M --json maxbs_cpu.json \
      --overwrite > maxbs_output.txt 2>&1
    "$B" run --model resnet18 --image-size 64 --batch-size 16 --world-sizes 2 --warmup 2 --duration 40s \
      --json burnin_cpu.json --overwrite > burnin_output.txt 2>&1
  )
  if [ "${DDPBENCH_EXAMPLES_NETNS:-0}" = 1 ]; then
    (
      cd $C
      N=$root/tests/tools/netns_nodes.sh
      sh $N up ddpbnsex2 3 2 200mbit
      trap 'sh $N down ddpbnsex2' EXIT
      pids=()
      # ranks 0 and 1 on node0, 2 on node1, 3 on node2
      for spec in "0 0 0 2" "1 0 1 2" "2 1 0 1" "3 2 0 1"; do
        set -- $spec
        json=()
        [ $1 = 0 ] && json=(--json pairs_netns_cpu.json --overwrite)
        sh $N exec ddpbnsex2 $2 node$2 env OMP_NUM_THREADS=1 RANK=$1 WORLD_SIZE=4 LOCAL_RANK=$3 LOCAL_WORLD_SIZE=$4 \
          MASTER_ADDR=10.213.0.1 MASTER_PORT=29517 GLOO_SOCKET_IFNAME=veth0 \
          "$B" comm --pairs --pair-bytes 2M -w 1 -n 8 --slow-fraction 0.3 --timeout 60 "${json[@]}" \
          > pairs_rank$1.txt 2>&1 &
        pids+=($!)
      done
      wait "${pids[@]}" || true  # exit 1: a slow node was named
      mv pairs_rank0.txt pairs_output.txt
      rm -f pairs_rank1.txt pairs_rank2.txt pairs_rank3.txt
    )
  fi

}
[ $measure = 1 ] && measure

# The reports of each example's page.
(cd $W && "$B" report breakdown_cpu.json > report_breakdown.txt &&
  "$B" report bucket_sweep_cpu.json hook_sweep_cpu.json > report_sweeps.txt &&
  "$B" report comm_allreduce_cpu.json > report_comm.txt &&
  "$B" predict breakdown_cpu.json --comm comm_allreduce_cpu.json > predict.txt)
rm -rf $S/plots-data
run "$B" report $S/fashion_mnist_resnet18_ttl.json --plots $S/plots-data --format md -o $S/report-data.md
(cd $C && "$B" report straggler_cpu.json --per-rank > report_per_rank.txt)

# The complete reports (report/README.md); the file labels F1, F2, ... follow this order.
FILES=$(find $X -name "*.json" -not -path "*/report/*" | sort)
R=$X/report
rm -rf $R/cpu/plots $R/h100/plots
run "$B" report $FILES --gpu-hour-cost 0.10 --plots $R/cpu/plots --html $R/cpu/report.html --format md \
  -o $R/cpu/report.md
run "$B" report $FILES --gpu-hour-cost 0.10 -o $R/cpu/report.txt
run "$B" report docs/results/*.json --gpu-hour-cost 2.50 --plots $R/h100/plots --html $R/h100/report.html \
  --format md -o $R/h100/report.md
run "$B" report docs/results/*.json --gpu-hour-cost 2.50 -o $R/h100/report.txt
# The scaling example's report and plots (docs/guide/scaling.md).
rm -rf $X/plots
run "$B" report $X/cpu_weak_resnet18.json $X/cpu_strong_resnet18.json --gpu-hour-cost 0.10 --plots $X/plots \
  --html $X/report.html --format md -o $X/report.md
run "$B" report $X/cpu_weak_resnet18.json $X/cpu_strong_resnet18.json --gpu-hour-cost 0.10 -o $X/report.txt
say "done"
