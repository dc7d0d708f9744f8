#!/usr/bin/env bash
# Downloads the pinned release archives of ddpbench's libraries (nlohmann/json, CLI11, fmt,
# GoogleTest: the table DDPBENCH_PINNED in cmake/Dependencies.cmake, URL and SHA-256 each) into
# DIR, checked, for a machine without the internet: copy DIR there and configure with
# -DDDPBENCH_DEPS_DIR=DIR (docs/CLUSTER.md). Only what the machine lacks is needed; a library
# found on the system or shipped by torch is not read from DIR.
#
#   scripts/fetch-deps.sh DIR
set -euo pipefail
dir=${1:?usage: scripts/fetch-deps.sh DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$dir"
command -v curl >/dev/null || { echo "fetch-deps: curl is missing" >&2; exit 2; }
# "<name>|<version>|<url>|<sha256>" lines of the table.
mapfile -t pins < <(sed -n 's/^ *"\([a-z0-9_]*|[^|]*|https:[^|]*|[0-9a-f]\{64\}\)".*/\1/p' "$here/cmake/Dependencies.cmake")
[ ${#pins[@]} -gt 0 ] || { echo "fetch-deps: no pinned archives found in cmake/Dependencies.cmake" >&2; exit 1; }
for pin in "${pins[@]}"; do
  IFS='|' read -r name version url sha <<<"$pin"
  file="$dir/$name-$(basename "$url")"   # the name cmake/Dependencies.cmake looks for
  if [ -f "$file" ] && echo "$sha  $file" | sha256sum -c --status; then
    echo "fetch-deps: $name $version: $file already there"
    continue
  fi
  curl -fsSL --retry 3 -o "$file.part" "$url"
  if ! echo "$sha  $file.part" | sha256sum -c --status; then
    rm -f "$file.part"
    echo "fetch-deps: $name $version: $url does not have the pinned SHA-256 $sha" >&2
    exit 1
  fi
  mv "$file.part" "$file"
  echo "fetch-deps: $name $version: $file"
done
