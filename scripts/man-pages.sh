#!/bin/sh
# Writes the man pages of ddpbench into OUTDIR from the binary's own --help, with help2man:
# ddpbench.1 (the commands) and ddpbench-COMMAND.1 for each command `ddpbench --help` lists
# under "Subcommands:". CMake runs it after each link of the binary (CMakeLists.txt), so the
# pages cannot drift from --help.
#
#   scripts/man-pages.sh BINARY HELP2MAN OUTDIR VERSION
set -eu
bin=$1 h2m=$2 out=$3 version=$4
help=$("$bin" --help) || { echo "man-pages: '$bin --help' failed" >&2; exit 1; }
# "Subcommands:" then "  NAME   description" lines up to the next heading or the end.
list=$(printf '%s\n' "$help" | awk 'tolower($0) ~ /^subcommands:/ {on = 1; next}
                                    on && /^[^ ]/ {on = 0}
                                    on && NF {print}')
[ -n "$list" ] || { echo "man-pages: '$bin --help' lists no subcommands" >&2; exit 1; }
cmds=$(printf '%s\n' "$list" | awk '{print $1}')
tmp="$out.tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
see="ddpbench(1)"
for c in $cmds; do see="$see, ddpbench-$c(1)"; done
printf '[SEE ALSO]\n%s\n.PP\nThe guides and the methodology: share/doc/ddpbench under the install prefix (docs/ in the source).\n' \
  "$see" >"$tmp/see-also.h2m"
"$h2m" --no-info --no-discard-stderr --version-string="ddpbench $version" \
  --name="benchmarks of PyTorch distributed data-parallel training" \
  --include="$tmp/see-also.h2m" --output="$tmp/ddpbench.1" "$bin"
for c in $cmds; do
  # The NAME line: the command's description up to its first '(', ':' or ';' (the rest is in DESCRIPTION).
  desc=$(printf '%s\n' "$list" | awk -v c="$c" '$1 == c {sub(/^[ ]*[^ ]+[ ]+/, ""); print; exit}' | sed 's/[(:;].*//; s/[ ]*$//')
  "$h2m" --no-info --no-discard-stderr --help-option="$c --help" --version-string="ddpbench-$c $version" \
    --name="$desc" --include="$tmp/see-also.h2m" --output="$tmp/ddpbench-$c.1" "$bin"
done
rm "$tmp/see-also.h2m"
rm -rf "$out"
mv "$tmp" "$out"
