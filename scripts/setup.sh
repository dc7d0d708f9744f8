#!/usr/bin/env bash
# Installs what ddpbench needs to build and test on Debian 12+, and only what is missing.
#  * libtorch: the PyTorch of `python3` when it ships libtorch's CMake files (a pip wheel,
#    with CUDA and NCCL where it has them); otherwise Debian's libtorch-dev + libgloo-dev
#    (CPU, Gloo: ProcessGroupGloo.hpp includes gloo headers that libtorch-dev does not pull in).
#  * build: cmake, ninja, ccache, a C++17 compiler, CLI11, nlohmann/json, fmt, yaml-cpp, GoogleTest.
#  * tests: python3-torch (torchrun as a real launcher) and python3-torchvision (model
#    cross-checks), unless python3 already has a PyTorch of its own (then the two tests
#    that run /usr/bin/python3 and /usr/bin/torchrun skip); openmpi-bin (mpirun)
#    and slurmctld, slurmd, slurm-client, munge for a loopback Slurm (srun, sbatch) that
#    the tests start and stop themselves; gnuplot-nox (report plots), clang-14 with
#    libclang-rt-14-dev (the libFuzzer target), python3 (HTML check), chromium (the HTML
#    page in a real browser, headless), jq (scripts/fault-matrix.sh).
#  * real data: zlib1g-dev and dataset-fashion-mnist (IDX files under /usr/share/datasets/fashion-mnist).
#  * debootstrap: the torch 2.x build check (scripts/check-torch2.sh) makes a Debian 13 root with it.
#  * install: help2man (man pages from --help, at build time) and lmod (the modulefile's test).
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=(g++ make cmake ninja-build ccache git pkg-config curl
      libcli11-dev nlohmann-json3-dev libfmt-dev libyaml-cpp-dev libgtest-dev libgmock-dev
      openmpi-bin slurmctld slurmd slurm-client munge
      gnuplot-nox clang-14 libclang-rt-14-dev python3 jq
      chromium   # headless: the report's HTML page checked in a real browser
      iproute2   # ip netns and tc: the emulated nodes of the comm --pairs and node-environment tests
      debootstrap  # scripts/torch2-root.sh: the Debian 13 root of the torch 2.6 (CUDA, NCCL) build check (curl: its offline dependency folder)
      help2man   # the man pages, made from each command's --help at build time
      lmod       # the install test loads the installed modulefile with Lmod
      zlib1g-dev dataset-fashion-mnist)  # run --data fashion-mnist: the gzip IDX reader and the dataset
if [ -n "$(scripts/torch-prefix.sh)" ]; then
  echo "setup: using python3's PyTorch at $(scripts/torch-prefix.sh)"
else
  pkgs+=(libtorch-dev libgloo-dev python3-torch python3-torchvision)
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: run as root or install sudo" >&2; exit 2; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
