#!/usr/bin/env bash
# Fills DIR as a DDPBENCH_DEPS_DIR (cmake/Dependencies.cmake) from Debian's source archive, for
# machines that reach Debian's mirror but not GitHub (this project's: the GPU machine, which has
# no network at all, is given the folder), each file checked against the SHA-256 of Debian's
# source index:
#  * nlohmann/json 3.11.3 and GoogleTest 1.12.1: Debian's upstream archives are the very archives
#    cmake/Dependencies.cmake pins (the same SHA-256), kept under the names it looks for;
#  * CLI11 2.4.1, fmt 10.1.1 and yaml-cpp 0.8.0: Debian repacks them (+ds: files Debian does not ship removed),
#    so they are unpacked into source folders of the same releases.
# The mirror is this machine's apt mirror (no host is named here).
#
#   scripts/deps-from-debian.sh DIR
set -euo pipefail
dir=${1:?usage: scripts/deps-from-debian.sh DIR}
deps=("n/nlohmann-json3/nlohmann-json3_3.11.3.orig.tar.gz|0d8ef5af7f9794e3263480193c491549b2ba6cc74bb018906202ada498a79406|nlohmann_json-v3.11.3.tar.gz"
      "g/googletest/googletest_1.12.1.orig.tar.gz|81964fe578e9bd7c94dfdb09c8e4d6e6759e19967e397dbea48d1c10e45d0df2|googletest-release-1.12.1.tar.gz"
      "c/cli11/cli11_2.4.1+ds.orig.tar.xz|0b8fbf2398875f15f30a675c7f412123a2aaa38df2863e991de72004fd5f1292|cli11/"
      "f/fmtlib/fmtlib_10.1.1+ds1.orig.tar.gz|7000f214d2628f04174822f8048c573f1608194408d7931121595a03f1c18a17|fmt/"
      "y/yaml-cpp/yaml-cpp_0.8.0+dfsg.orig.tar.xz|32c85a5f36633a9005b20261b35fccb0d8ec69e9ef16c67de7d5d007944e3709|yaml_cpp/")
[ "${2:-}" = --list ] && { printf '%s\n' "${deps[@]}"; exit 0; }
mirror=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
[ -n "$mirror" ] || mirror=$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\/debian\)[[:space:]].*/\2/p' /etc/apt/sources.list 2>/dev/null | head -1)
[ -n "$mirror" ] || { echo "deps-from-debian: no Debian mirror found in this machine's apt sources" >&2; exit 2; }
command -v curl >/dev/null || { echo "deps-from-debian: curl is missing (scripts/setup.sh installs it)" >&2; exit 2; }
mkdir -p "$dir"
for d in "${deps[@]}"; do
  IFS='|' read -r path sha target <<<"$d"
  file="$dir/$(basename "$path")"
  curl -fsSL --retry 3 -o "$file" "$mirror/pool/main/$path" || { echo "deps-from-debian: downloading $path failed" >&2; exit 1; }
  echo "$sha  $file" | sha256sum -c --status || { rm -f "$file"; echo "deps-from-debian: $path does not have Debian's SHA-256 $sha" >&2; exit 1; }
  case "$target" in
    */) rm -rf "${dir:?}/$target"; mkdir -p "$dir/$target"
        tar -xf "$file" -C "$dir/$target" --strip-components=1
        rm "$file" ;;
    *) mv "$file" "$dir/$target" ;;
  esac
done
echo "deps-from-debian: $dir holds $(ls "$dir" | tr '\n' ' ')"
