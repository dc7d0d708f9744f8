#!/usr/bin/env bash
# Makes (once) a local base image with a PyTorch for the container recipe's check, where no
# registry is reachable: a Debian 12 root (debootstrap, minbase) with Debian's PyTorch 1.13
# (libtorch-dev, libgloo-dev, python3-torch), a compiler, CMake, Ninja and help2man, imported
# into podman. On purpose it has none of the CLI11, nlohmann/json, fmt, yaml-cpp or GoogleTest
# -dev packages, as an NGC or site PyTorch image has none of them: the recipe must take them from
# .deps, offline.
#
#   scripts/container-base.sh [TAG]     # default localhost/ddpbench-base:debian12-torch; prints TAG
#
# Kept between calls: remade when the recipe below changes (the image's label ddpbench.recipe).
# Needs root, debootstrap and podman; about 3 minutes and 2 GB the first time.
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:-localhost/ddpbench-base:debian12-torch}
pkgs=(g++ make cmake ninja-build git ca-certificates zlib1g-dev help2man python3
      libtorch-dev libgloo-dev python3-torch)
recipe=$( { printf '%s\n' "${pkgs[@]}"; sed -n '/^# ---- the recipe/,$p' "$0"; } | sha256sum | cut -c1-16)
have=$(podman image inspect --format '{{ index .Labels "ddpbench.recipe" }}' "$tag" 2>/dev/null || true)
if [ "$have" = "$recipe" ]; then echo "$tag"; exit 0; fi

[ "$(id -u)" -eq 0 ] || { echo "container-base: making the root needs root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || PATH=$PATH:/usr/sbin
command -v debootstrap >/dev/null || { echo "container-base: debootstrap is missing: run scripts/setup.sh" >&2; exit 2; }
command -v podman >/dev/null || { echo "container-base: podman is missing (apt-get install podman)" >&2; exit 2; }
# The Debian mirror this machine's apt already uses (no host is named here).
mirror=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
[ -n "$mirror" ] || mirror=$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\/debian\)[[:space:]].*/\2/p' /etc/apt/sources.list 2>/dev/null | head -1)
[ -n "$mirror" ] || { echo "container-base: no Debian mirror found in this machine's apt sources" >&2; exit 2; }
tmp=$(mktemp -d /var/tmp/ddpbench-base.XXXXXX)
cleanup() { { grep -F " $tmp/" /proc/mounts || true; } | cut -d' ' -f2 | sort -r | xargs -r -n1 umount -l; rm -rf --one-file-system "$tmp"; }
trap cleanup EXIT

# ---- the recipe (a change from here on makes the image anew)
t0=$(date +%s)
echo "container-base: debootstrap bookworm (minbase)" >&2
debootstrap --variant=minbase bookworm "$tmp/root" "$mirror" >"$tmp/debootstrap.log" 2>&1 || { tail -20 "$tmp/debootstrap.log" >&2; exit 1; }
echo "deb $mirror bookworm main" >"$tmp/root/etc/apt/sources.list"
printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$tmp/root/etc/apt/apt.conf.d/90ddpbench"
unshare --mount --propagation private bash -euo pipefail -s "$tmp/root" "${pkgs[@]}" <<'INSIDE'
root=$1; shift
mount -t proc proc "$root/proc"
in_root() { chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
in_root apt-get update -qq
echo "container-base: apt-get install (a few minutes)" >&2
in_root apt-get install -y -qq "$@" >/tmp/container-base-apt.log 2>&1 || { tail -30 /tmp/container-base-apt.log >&2; exit 1; }
in_root apt-get clean
rm -rf "$root"/var/lib/apt/lists/*
INSIDE
for p in libcli11-dev nlohmann-json3-dev libfmt-dev libyaml-cpp-dev libgtest-dev; do
  if chroot "$tmp/root" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    echo "container-base: $p came in as a dependency; the base must not have it" >&2; exit 1
  fi
done
tar -C "$tmp/root" --one-file-system -c . | podman import --change "LABEL ddpbench.recipe=$recipe" \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'CMD ["/bin/bash"]' \
  - "$tag" >/dev/null 2>&1
echo "container-base: $tag made in $(( $(date +%s) - t0 )) s" >&2
echo "$tag"
