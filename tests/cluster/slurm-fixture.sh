#!/usr/bin/env bash
# slurm-fixture.sh up|down DIR - the ctest fixture around the Slurm cases of the cluster
# suite (tests/CMakeLists.txt: cluster.slurm_up, cluster.slurm_down): a loopback Slurm
# from local-slurm.sh with its state in DIR, never installing packages and never
# touching /etc (clients use SLURM_CONF=DIR/etc/slurm.conf).
#
# Exit 77 (ctest: "Skipped") where no loopback Slurm is possible: not root, or slurmctld,
# slurmd or munged missing. The Slurm cases then skip for the same reason. As root with
# the packages installed a failed bring-up fails, and ctest does not run the cases.
set -uo pipefail

mode=${1:-}
dir=${2:-}
if [[ -z $mode || -z $dir ]]; then
    echo "usage: $0 up|down DIR" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)

missing=()
for b in slurmctld slurmd munged srun sbatch; do command -v "$b" >/dev/null 2>&1 || missing+=("$b"); done
if [[ $(id -u) != 0 ]]; then
    echo "skipped: a loopback Slurm needs root (its daemons run as root)"
    exit 77
fi
if ((${#missing[@]})); then
    echo "skipped: ${missing[*]} not on PATH (apt-get install slurmctld slurmd slurm-client munge)"
    exit 77
fi

# The daemons must not inherit ctest's output pipe (ctest would wait for them to close
# it): everything goes to a log file, which is printed afterwards.
mkdir -p "$dir"
log="$dir/fixture-$mode.log"
LOCAL_SLURM_DIR=$dir LOCAL_SLURM_INSTALL=0 LOCAL_SLURM_LINK_ETC=0 "$here/local-slurm.sh" "$mode" \
    </dev/null >"$log" 2>&1
rc=$?
cat "$log"
exit $rc
