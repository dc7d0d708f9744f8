#!/usr/bin/env bash
# Makes (once) a Debian 13 ("trixie") root with libtorch 2.6 built for CUDA 12.4 + NCCL,
# in which scripts/check-torch2.sh builds and tests ddpbench. Prints the root's path.
#
#   scripts/torch2-root.sh            # make it if missing or stale, print its path
#
# The root is cached at $DDPBENCH_TORCH2_ROOT (default /var/cache/ddpbench/torch2-root) and
# made anew when the recipe below changes (its hash is kept in the root's .ddpbench-recipe)
# or when a previous make was interrupted. Needs root and about 8.2 GB of disk (measured); the
# first make took 515 s here while the main build compiled beside it (debootstrap, then apt
# inside the root); a cached one takes under a second.
#
# Why each piece (facts of Debian 13's packages):
#  * libtorch-cuda-dev (contrib) is libtorch 2.6 with CUDA 12.4 and NCCL 2.22; its CMake
#    config refuses to configure without nvcc, hence nvidia-cuda-toolkit (non-free).
#  * It conflicts with the CPU libtorch-dev: the CUDA libtorch also runs CPU work, so this
#    one root serves the CUDA compile check and the CPU test suites on torch 2.6.
#  * nvidia-cudnn (a dependency) is an installer that downloads from the vendor at install
#    time, which fails offline: a local placeholder package of the same name satisfies apt.
#    ddpbench includes no cuDNN header. libtorch_cuda.so still needs libcudnn.so.9 to link
#    and load: a stub with every symbol it imports (each returning a cuDNN error status) is
#    made from the import lists of libtorch_cuda.so and libtorch_python.so (84 symbols with
#    Debian's 2.6) and installed as /usr/local/lib/libcudnn.so.9.
#    On a machine without a GPU torch never calls it.
#  * python3-torch-cuda / python3-torchvision: Python DDP 2.6 and torchvision 0.21 for the
#    cross-checks (bucket layout, model structures).
set -euo pipefail
root=${DDPBENCH_TORCH2_ROOT:-/var/cache/ddpbench/torch2-root}

# No CLI11, nlohmann/json, fmt, yaml-cpp or GoogleTest package: the build in this root takes them from the
# offline folder /opt/ddpbench-deps (scripts/deps-from-debian.sh, below), as a machine without
# Debian's -dev packages and without the internet would (cmake/Dependencies.cmake, DDPBENCH_DEPS_DIR).
pkgs=(g++ cmake ninja-build ccache git pkg-config ca-certificates zlib1g-dev
      libtorch-cuda-dev libgloo-cuda-dev libnccl-dev nvidia-cuda-toolkit
      python3 python3-torch-cuda python3-torchvision)
cudnn_placeholder_version="9.0.0.312~cuda12"
# The recipe: the package list, the placeholder, the offline folder's files and every step after
# the "the recipe" line below.
recipe=$( { printf '%s\n' "${pkgs[@]}" "$cudnn_placeholder_version"; "$(dirname "$0")/deps-from-debian.sh" - --list
            sed -n '/^# ---- the recipe/,$p' "$0"; } \
  | sha256sum | cut -d' ' -f1)
[ "${1:-}" = --recipe ] && { echo "$recipe"; exit 0; }

if [ -f "$root/.ddpbench-recipe" ] && [ "$(cat "$root/.ddpbench-recipe")" = "$recipe" ]; then
  echo "$root"
  exit 0
fi

[ "$(id -u)" -eq 0 ] || { echo "torch2-root: making the root needs root (debootstrap, chroot)" >&2; exit 2; }
log() { echo "torch2-root: $*" >&2; }
unmount_under() { { grep -F " $1/" /proc/mounts || true; } | cut -d' ' -f2 | sort -r | xargs -r -n1 umount -l; }

# The Debian mirror this machine's apt already uses (no host is named here).
mirror=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
[ -n "$mirror" ] || mirror=$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\/debian\)[[:space:]].*/\2/p' /etc/apt/sources.list 2>/dev/null | head -1)
[ -n "$mirror" ] || { echo "torch2-root: no Debian mirror found in this machine's apt sources" >&2; exit 2; }

command -v debootstrap >/dev/null || PATH=$PATH:/usr/sbin
command -v debootstrap >/dev/null || { echo "torch2-root: debootstrap is missing: run scripts/setup.sh" >&2; exit 2; }

# A stale or half-made root: unmount anything left inside it, then start over.
if [ -e "$root" ]; then
  log "recipe changed or previous make incomplete: making $root anew"
  unmount_under "$root"
  rm -rf --one-file-system "$root"
fi
mkdir -p "$(dirname "$root")"
tmp="$root.making"
unmount_under "$tmp"
rm -rf --one-file-system "$tmp"

# ---- the recipe (a change from here on makes the root anew)
t0=$(date +%s)
log "debootstrap trixie (minbase) from this machine's mirror"
debootstrap --variant=minbase trixie "$tmp" "$mirror" >"$tmp.log" 2>&1 || { tail -20 "$tmp.log" >&2; exit 1; }
cat >"$tmp/etc/apt/sources.list" <<EOF
deb $mirror trixie main contrib non-free non-free-firmware
EOF
cp /etc/apt/apt.conf.d/* "$tmp/etc/apt/apt.conf.d/" 2>/dev/null || true
printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$tmp/etc/apt/apt.conf.d/90ddpbench"

# Everything below runs in a private mount namespace: proc is gone when it exits.
unshare --mount --propagation private bash -euo pipefail -s "$tmp" "$cudnn_placeholder_version" "${pkgs[@]}" <<'INSIDE'
tmp=$1; cudnn_v=$2; shift 2
mount -t proc proc "$tmp/proc"
in_root() { chroot "$tmp" env DEBIAN_FRONTEND=noninteractive LC_ALL=C PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
in_root apt-get update -qq
# The placeholder for nvidia-cudnn (see the header).
mkdir -p "$tmp/tmp/cudnn-placeholder/DEBIAN"
cat >"$tmp/tmp/cudnn-placeholder/DEBIAN/control" <<EOF
Package: nvidia-cudnn
Version: $cudnn_v
Architecture: amd64
Maintainer: ddpbench <ddpbench@localhost>
Description: placeholder for the cuDNN installer (ddpbench's torch 2.x build check)
 ddpbench includes no cuDNN header; libtorch_cuda's imports are met by a stub library.
EOF
in_root dpkg-deb --build /tmp/cudnn-placeholder /tmp/nvidia-cudnn.deb >/dev/null
in_root dpkg -i /tmp/nvidia-cudnn.deb >/dev/null
echo "torch2-root: apt-get install (a few minutes)" >&2
in_root apt-get install -y -qq "$@" >/tmp/torch2-root-apt.log 2>&1 || { tail -30 /tmp/torch2-root-apt.log >&2; exit 1; }
in_root apt-get clean
INSIDE

# The cuDNN stub: every function libtorch_cuda and libtorch_python (Python's torch) import from
# libcudnn.so.9, returning CUDNN_STATUS_NOT_INITIALIZED (1001), under the version node they ask for.
syms=$(chroot "$tmp" sh -c 'nm -D --undefined-only /usr/lib/x86_64-linux-gnu/libtorch_cuda.so.* \
                              /usr/lib/x86_64-linux-gnu/libtorch_python.so.*' \
       | sed -n 's/^ *U \(cudnn[A-Za-z0-9_]*\)@libcudnn\.so\.9$/\1/p' | sort -u)
[ -n "$syms" ] || { echo "torch2-root: libtorch_cuda imports nothing from libcudnn.so.9 (unexpected)" >&2; exit 1; }
mkdir -p "$tmp/tmp/cudnn-stub"
{ echo "/* Generated by scripts/torch2-root.sh: a stand-in for libcudnn.so.9. */"
  for s in $syms; do echo "int $s(void) { return 1001; }"; done
  } >"$tmp/tmp/cudnn-stub/stub.c"
{ echo "libcudnn.so.9 { global:"; for s in $syms; do echo "  $s;"; done; echo "local: *; };"; } >"$tmp/tmp/cudnn-stub/stub.map"
chroot "$tmp" gcc -shared -fPIC -O1 -o /usr/local/lib/libcudnn.so.9 -Wl,-soname,libcudnn.so.9 \
  -Wl,--version-script=/tmp/cudnn-stub/stub.map /tmp/cudnn-stub/stub.c
chroot "$tmp" ldconfig
rm -rf "$tmp/tmp/cudnn-stub" "$tmp/tmp/cudnn-placeholder" "$tmp/tmp/nvidia-cudnn.deb" "$tmp.log"
log "$(echo "$syms" | wc -w) cuDNN symbols stubbed"

# The offline dependency folder (see pkgs above).
"$(dirname "$0")/deps-from-debian.sh" "$tmp/opt/ddpbench-deps" >&2

echo "$recipe" >"$tmp/.ddpbench-recipe"
mv "$tmp" "$root"
log "made $root in $(( $(date +%s) - t0 )) s ($(du -sh --one-file-system "$root" | cut -f1))"
echo "$root"
