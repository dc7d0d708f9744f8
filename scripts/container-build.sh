#!/usr/bin/env bash
# Builds the ddpbench image, against the base image's own PyTorch, from container/Containerfile
# (podman, docker, buildah) or container/ddpbench.def (apptainer). The build itself needs no
# network: the pinned archives of the libraries the base may lack are put in .deps first
# (scripts/fetch-deps.sh from their releases, else scripts/deps-from-debian.sh from Debian's
# mirror), and podman, docker and buildah build with --network none.
#
#   scripts/container-build.sh [--tool podman|docker|buildah|apptainer] [--base IMAGE] [--tag NAME]
#                              [-- ARGS passed to the tool's build command]
#
# Defaults: the first of podman, docker, buildah, apptainer found; the NGC PyTorch image
# (nvcr.io/nvidia/pytorch:25.10-py3); the tag localhost/ddpbench:VERSION (apptainer: ddpbench.sif).
# Prints the image's name on its last line. Exit 2: bad arguments or no tool.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: scripts/container-build.sh [--tool podman|docker|buildah|apptainer] [--base IMAGE] [--tag NAME] [-- ARGS]" >&2; exit 2; }
tool="" base="" tag="" extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tool) tool=${2:-}; shift 2 || usage ;;
    --base) base=${2:-}; shift 2 || usage ;;
    --tag) tag=${2:-}; shift 2 || usage ;;
    --) shift; extra=("$@"); break ;;
    *) echo "container-build: unknown argument '$1'" >&2; usage ;;
  esac
done
if [ -z "$tool" ]; then
  for t in podman docker buildah apptainer; do command -v "$t" >/dev/null && { tool=$t; break; }; done
  [ -n "$tool" ] || { echo "container-build: none of podman, docker, buildah, apptainer is installed; install one (apt-get install podman)" >&2; exit 2; }
fi
case "$tool" in podman|docker|buildah|apptainer) ;; *) echo "container-build: --tool must be podman, docker, buildah or apptainer, not '$tool'" >&2; exit 2 ;; esac
command -v "$tool" >/dev/null || { echo "container-build: $tool is not installed" >&2; exit 2; }
version=$(sed -n 's/^project(ddpbench VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
base=${base:-nvcr.io/nvidia/pytorch:25.10-py3}
sha=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
dirty=false
[ "$sha" != unknown ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && dirty=true

# The offline dependency folder (kept: a later build reuses it).
if [ ! -d .deps ] || [ -z "$(ls -A .deps)" ]; then
  echo "container-build: filling .deps" >&2
  scripts/fetch-deps.sh .deps >&2 || { echo "container-build: the releases are not reachable; taking Debian's archives" >&2; scripts/deps-from-debian.sh .deps >&2; }
fi

start=$(date +%s)
case "$tool" in
  apptainer)
    # Apptainer's %files copies the folder it is run in and reads no ignore file: run it in a
    # copy of the source (git's files, tracked or not ignored) and .deps, without build trees.
    tag=${tag:-ddpbench.sif}
    [[ $tag == /* ]] || tag=$PWD/$tag
    ctx=$(mktemp -d)
    trap 'rm -rf "$ctx"' EXIT
    git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$ctx"
    cp -r .deps "$ctx/"
    (cd "$ctx" && apptainer build --build-arg "BASE=$base" --build-arg "GIT_SHA=$sha" "${extra[@]}" "$tag" \
       container/ddpbench.def) >&2 ;;
  buildah)
    tag=${tag:-localhost/ddpbench:$version}
    buildah bud --network none --build-arg "BASE=$base" --build-arg "GIT_SHA=$sha" --build-arg "GIT_DIRTY=$dirty" \
      "${extra[@]}" -f container/Containerfile -t "$tag" . >&2 ;;
  *)
    tag=${tag:-localhost/ddpbench:$version}
    "$tool" build --network none --build-arg "BASE=$base" --build-arg "GIT_SHA=$sha" --build-arg "GIT_DIRTY=$dirty" \
      "${extra[@]}" -f container/Containerfile -t "$tag" . >&2 ;;
esac
echo "container-build: $tag built with $tool from $base in $(( $(date +%s) - start )) s" >&2
echo "$tag"
