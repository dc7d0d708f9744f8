#!/usr/bin/env bash
# The container recipe, tested on this machine, offline: a local base image with a PyTorch and
# none of the CLI11/nlohmann/fmt/yaml-cpp/GoogleTest -dev packages (scripts/container-base.sh),
# ddpbench built into it with podman from container/Containerfile (scripts/container-build.sh,
# --network none), then inside the image, without network and from a folder that holds no
# checkout: `ddpbench --version`, `ddpbench env`, `ddpbench run` on its CPU defaults and
# `ddpbench validate plans/quick.yaml` (found among the image's installed plans), each
# required to exit 0, and the installed man pages, Slurm templates and docs. Writes
# OUTDIR/SUMMARY.md (the build time, the image sizes, each command with its exit code and
# seconds) and OUTDIR/<step>.log. Exit 0 when every step passed, 1 otherwise, 2 when podman
# cannot run here (the reason on stderr).
#
#   scripts/container-check.sh OUTDIR
#
# Not in `make test`: the image build compiles ddpbench from scratch (about 10 minutes on 2
# cores) on top of making the base (minutes, once).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/container-check.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export DEBIAN_FRONTEND=noninteractive
for p in podman runc; do
  command -v "$p" >/dev/null || apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 ||
    { echo "container-check: $p is missing and could not be installed (apt-get install $p)" >&2; exit 2; }
done
summary=$out/SUMMARY.md
fails=0
row() { printf '| %s | `%s` | %s | %s |\n' "$1" "$2" "$3" "$4" >>"$summary"; }

base=$(scripts/container-base.sh 2>"$out/base.log") || { cat "$out/base.log" >&2; echo "container-check: making the base failed" >&2; exit 1; }

# How podman runs here. Its defaults (crun, RLIMIT_NOFILE 1048576) fail in a sandbox where the
# process may not raise its limits or where cgroups are mounted hybrid; runc with the limits
# this process already has works there. The first form that runs is used, and named below.
run_flags=()
if ! podman run --rm --network none "$base" true 2>"$out/podman-probe.log"; then
  n=$(ulimit -Hn)
  run_flags=(--runtime runc --ulimit "nofile=$n:$n" --ulimit "nproc=4096:4096")
  podman run --rm --network none "${run_flags[@]}" "$base" true 2>>"$out/podman-probe.log" ||
    { cat "$out/podman-probe.log" >&2; echo "container-check: podman cannot run a container here" >&2; exit 2; }
fi

{
  echo "# Container recipe check ($(date -u +%Y-%m-%d), $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown))"
  echo
  echo "Base: \`$base\` (scripts/container-base.sh: Debian 12, Debian's PyTorch 1.13 CPU, no CLI11/nlohmann/fmt/yaml-cpp/GoogleTest -dev)."
  echo "podman $(podman --version | awk '{print $3}'); run flags: \`${run_flags[*]:-none}\`."
  echo
  echo "| step | command | exit | s |"
  echo "|---|---|---|---|"
} >"$summary"

t0=$(date +%s)
tag=localhost/ddpbench:check
build_extra=()
[ ${#run_flags[@]} -eq 0 ] || build_extra=(-- "${run_flags[@]}")  # podman build takes the same flags
scripts/container-build.sh --tool podman --base "$base" --tag "$tag" "${build_extra[@]}" >"$out/build.log" 2>&1
rc=$?
build_s=$(( $(date +%s) - t0 ))
row build "scripts/container-build.sh --tool podman --base $base" "$rc" "$build_s"
[ "$rc" -eq 0 ] || { fails=$((fails + 1)); tail -30 "$out/build.log" >&2; }

if [ "$rc" -eq 0 ]; then
  size() { podman image inspect --format '{{.Size}}' "$1"; }
  base_b=$(size "$base"); img_b=$(size "$tag")
  inside() {  # inside NAME COMMAND: runs COMMAND in a fresh container from /tmp, no network
    local name=$1 cmd=$2 s rc
    s=$(date +%s)
    podman run --rm --network none "${run_flags[@]}" -w /tmp "$tag" bash -c "$cmd" >"$out/$name.log" 2>&1
    rc=$?
    row "$name" "$cmd" "$rc" "$(( $(date +%s) - s ))"
    [ "$rc" -eq 0 ] || { fails=$((fails + 1)); echo "container-check: $name exited $rc:" >&2; tail -20 "$out/$name.log" >&2; }
  }
  inside version "ddpbench --version"
  inside env "ddpbench env"
  inside run "ddpbench run"
  inside validate "ddpbench validate plans/quick.yaml --out /tmp/v && test -s /tmp/v/validate.json"
  inside installed 'test -x "$DDPBENCH_SLURM/ddpbench-node.sbatch" && test -f "$DDPBENCH_PLANS/acceptance.yaml" && ls /opt/ddpbench/share/man/man1 | grep -c "^ddpbench.*\.1$" && test -f /opt/ddpbench/share/doc/ddpbench/docs/CLUSTER.md'
  {
    echo
    echo "Image \`$tag\`: $(numfmt --to=iec --suffix=B "$img_b") ($img_b bytes), base $(numfmt --to=iec --suffix=B "$base_b") ($base_b bytes): ddpbench adds $(numfmt --to=iec --suffix=B $((img_b - base_b)))."
    echo "Build (configure, compile without tests, install): $build_s s."
  } >>"$summary"
fi
echo >>"$summary"
[ "$fails" -eq 0 ] && echo "All steps passed." >>"$summary" || echo "$fails step(s) failed." >>"$summary"
cat "$summary"
[ "$fails" -eq 0 ]
