#!/usr/bin/env bash
# The torch 2.x check CI runs (.ci/run): builds ddpbench and every test binary against Debian 13's
# libtorch 2.6 built for CUDA 12.4 + NCCL, with every GPU path required (DDPBENCH_REQUIRE_GPU_PATHS:
# a guard that drops NCCL, the CUDA timers or the CUDA allocator stats is a compile error), then
# runs the test suites whose behaviour depends on the torch version with that CUDA-enabled
# binary on this GPU-less machine (a login node: CPU fallback, "no GPU", Gloo ranks).
#
#   scripts/check-torch2.sh            # root (cached), build, tests
#   scripts/check-torch2.sh build      # root, build only (any compile or link error fails)
#   scripts/check-torch2.sh sim OUT.json  # root, the control-plane simulation against torch 2.6's
#                                          # TCPStore (Debian 13 builds it without libuv: the classic
#                                          # poll() server), N = DDPBENCH_SIM_RANKS (default
#                                          # 64,256,1024,4096), ranks 1..N-1 in
#                                          # DDPBENCH_SIM_PROCS processes (default 1), its
#                                          # JSON copied to OUT.json
#
# The root comes from scripts/torch2-root.sh (made once, about 5 minutes; cached). The build
# tree and its ccache live inside the root, so a later check recompiles only what changed.
# DDPBENCH_TORCH2_TESTS overrides the ctest regular expression of the cases run.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-all}
usage="usage: scripts/check-torch2.sh [all|build|sim OUT.json]"
sim_out=""
case "$what" in
  all|build) ;;
  sim) sim_out=${2:?$usage}
       [ -d "$(dirname "$sim_out")" ] && [ -w "$(dirname "$sim_out")" ] \
         || { echo "check-torch2: cannot write $sim_out (its folder is missing or read-only)" >&2; exit 2; } ;;
  *) echo "$usage" >&2; exit 2 ;;
esac

t0=$(date +%s)
root=$("$src/scripts/torch2-root.sh")
sha=$(git -C "$src" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
dirty=false
[ -z "$(git -C "$src" status --porcelain --untracked-files=no 2>/dev/null)" ] || dirty=true

# The suites that depend on the torch version: the engine (models against torchvision 2.6,
# DDP/Reducer against the mean of per-rank gradients, comm hooks, sharded, precision, memory,
# data, DataParallel on CPU devices), the CLI end to end (bucket layout against Python DDP 2.6,
# breakdown, --profile with Kineto, iters auto, comm, find-max-bs), and the torch-free unit suite
# (cheap; it proves GCC 14 builds and runs core). Left out: the fault matrix, bad-input tables,
# the launchers (Slurm/MPI are not in the root), pairs and progress, whose behaviour does not
# depend on torch's version and which the main build's ctest runs.
tests=${DDPBENCH_TORCH2_TESTS:-'(^|/)(Models|LanguageModels|AgainstPython|ShardedLanguageModel|Flops|FrozenBackbone|Ddp[A-Za-z]*|CommHook[A-Za-z]*|Sharded|Checkpointing|Units|Precision|ModelStateBytes|MemoryPeaks|Inference|IdxReader|DistributedSampler|BatchLoader|Preprocess|TimeToLoss|DataParallel|Cli|Comm|FindMaxBs[A-Za-z]*|LoginNode|Teardown)[.]'}

# A private mount namespace: proc, sys, dev and the read-only source vanish with it.
unshare --mount --propagation private bash -euo pipefail -s "$root" "$src" "$what" "$sha" "$dirty" "$tests" <<'INSIDE'
root=$1; src=$2; what=$3; sha=$4; dirty=$5; tests=$6
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mkdir -p "$root/src/ddpbench"
mount --bind "$src" "$root/src/ddpbench"
mount -o remount,bind,ro "$root/src/ddpbench"
cp /etc/hosts "$root/etc/hosts"
cp /etc/hostname "$root/etc/hostname" 2>/dev/null || true
in_root() {
  ${net:-} chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb \
    CCACHE_DIR=/var/cache/ccache CCACHE_MAXSIZE=4G DDPBENCH_GIT_SHA="$sha" DDPBENCH_GIT_DIRTY="$dirty" "$@"
}
build=/var/tmp/ddpbench-torch2
echo "check-torch2: $(in_root sh -c 'dpkg-query -W -f="\${Package} \${Version}\n" libtorch-cuda-dev libnccl-dev python3-torch-cuda python3-torchvision g++ | tr "\n" " "')"
# -O0: a compile and behaviour check, not a benchmark (the work is in libtorch, built optimised);
# it compiles faster than Release's -O2.
# Offline (a network namespace of its own, no interface up): the root has no CLI11, nlohmann/json,
# fmt, yaml-cpp or GoogleTest package, so they come from its offline folder /opt/ddpbench-deps
# (scripts/torch2-root.sh), as on a machine without Debian's packages or the internet.
net="unshare --net" in_root cmake -S /src/ddpbench -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS=-O0 \
  -DDDPBENCH_REQUIRE_GPU_PATHS=ON -DDDPBENCH_DEPS_DIR=/opt/ddpbench-deps >"$root/$build.cmake.log" 2>&1 \
  || { tail -40 "$root/$build.cmake.log"; echo "check-torch2: cmake failed against torch 2.6 (CUDA)"; exit 1; }
grep -E "ddpbench: |Found CUDA|NCCL" "$root/$build.cmake.log" | sed 's/^/check-torch2: /' | head -12
for lib in nlohmann_json CLI11 fmt yaml_cpp GoogleTest; do
  grep -qE "^$lib\|[^|]*\|DDPBENCH_DEPS_DIR" "$root/$build/dependencies.txt" \
    || { echo "check-torch2: $lib did not come from the offline folder: $(grep "^$lib|" "$root/$build/dependencies.txt")"; exit 1; }
done
if [ "$what" = sim ]; then
  # Only the harness (tests/sim/control_plane_sim.cpp), then each size in a fresh process.
  net="unshare --net" in_root ninja -C "$build" control_plane_sim >"$root/$build.ninja.log" 2>&1 \
    || { tail -30 "$root/$build.ninja.log"; echo "check-torch2: control_plane_sim did not build"; exit 1; }
  rm -rf "$root/tmp/cps" && mkdir -p "$root/tmp/cps"
  in_root "$build/tests/control_plane_sim" --ranks "${DDPBENCH_SIM_RANKS:-64,256,1024,4096}" --out /tmp/cps \
    --json /tmp/cps/control_plane.json --rank-procs "${DDPBENCH_SIM_PROCS:-1}"
  exit 0
fi
if ! net="unshare --net" in_root ninja -C "$build" -k 0 >"$root/$build.ninja.log" 2>&1; then
  grep -E "error|undefined reference|FAILED" "$root/$build.ninja.log" | head -60
  echo "check-torch2: the build against torch 2.6 (CUDA, NCCL) failed; the whole log is $root$build.ninja.log"
  exit 1
fi
echo "check-torch2: ddpbench and every test binary built against torch 2.6 (CUDA, NCCL), every GPU path required, offline, with CLI11, nlohmann/json, fmt, yaml-cpp and GoogleTest from /opt/ddpbench-deps"
[ "$what" = build ] && exit 0
# Tests: as on a login node (a CUDA-enabled binary on a machine without a GPU).
set +e
{
  rc=0
  in_root ctest --test-dir "$build" --output-on-failure -j 2 -L unit --no-tests=error || rc=1
  in_root ctest --test-dir "$build" --output-on-failure -j 2 -R "$tests" --no-tests=error || rc=1
  exit $rc
} 2>&1 | tee "$root/$build.ctest.log"
rc=${PIPESTATUS[0]}
set -e
# The cross-checks this build exists for must have run, not skipped: the models against
# torchvision 0.21 and the bucket layout against Python DDP 2.6.
for t in Models.MatchInstalledTorchvisionExactly Cli.BucketLayoutMatchesPythonDdpForEveryCap; do
  if ! grep -qE "Test +#[0-9]+: $t \.+ +Passed" "$root/$build.ctest.log"; then
    echo "check-torch2: $t did not pass on torch 2.6 (it must run here, not skip)"; rc=1
  fi
done
exit $rc
INSIDE
if [ "$what" = sim ]; then
  cp "$root/tmp/cps/control_plane.json" "$sim_out"
  echo "check-torch2: wrote $sim_out"
fi
echo "check-torch2: done in $(( $(date +%s) - t0 )) s"
