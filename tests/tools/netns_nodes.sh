#!/usr/bin/env bash
# netns_nodes.sh - emulated nodes on one machine for tests: N network namespaces on one
# bridge, each with its own address and, for the commands run in it, its own host name.
#
#   netns_nodes.sh check               exit 0 where namespaces can be made here, else print
#                                      why and exit 77 (ctest's/gtest's "skipped")
#   netns_nodes.sh up NAME N           namespaces NAME-0 .. NAME-(N-1) (2 <= N <= 16), each with
#                                      "eth0" at 10.99.0.(i+1)/24 (see addr) on a bridge that
#                                      lives in a namespace of its own, NAME-br
#   netns_nodes.sh addr I              the address of node I: 10.99.0.(I+1)
#   netns_nodes.sh exec NAME I HOST CMD...
#                                      runs CMD in node I's network namespace and in a new UTS
#                                      namespace whose host name is HOST; the environment
#                                      passes through
#   netns_nodes.sh down NAME           deletes NAME-* (processes still inside keep their copy
#                                      until they exit)
#
# Nothing is added to the machine's own network namespace, so the fixed subnet cannot
# clash with its routes, and several sets (different NAMEs) can exist at once. The bridge
# side of node I is "v<I>" in NAME-br; shape a link with e.g.
#   ip netns exec NAME-2 tc qdisc add dev eth0 root tbf rate 100mbit burst 32kbit latency 50ms
# Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN), ip (iproute2) and unshare (util-linux).
set -euo pipefail

die() { echo "netns_nodes.sh: $*" >&2; exit 1; }

check() {
    if [[ $(id -u) != 0 ]]; then echo "network namespaces need root"; return 77; fi
    command -v ip >/dev/null || { echo "ip (iproute2) is not installed"; return 77; }
    command -v unshare >/dev/null || { echo "unshare (util-linux) is not installed"; return 77; }
    local probe="ddpbench-probe-$$"
    if ! ip netns add "$probe" 2>/dev/null; then echo "ip netns add is not permitted here"; return 77; fi
    local ok=1
    ip netns exec "$probe" unshare --uts true 2>/dev/null || ok=0
    ip -n "$probe" link add eth0 type veth peer name eth1 2>/dev/null || ok=0
    ip netns del "$probe" 2>/dev/null || true
    if ((!ok)); then echo "veth pairs or UTS namespaces are not permitted here"; return 77; fi
    return 0
}

cmd=${1:-}
case $cmd in
check)
    check
    ;;
up)
    name=${2:?NAME}; n=${3:?N}
    if ! [[ $n =~ ^[0-9]+$ ]] || ((n < 2 || n > 16)); then die "N must be 2..16"; fi
    ip netns add "$name-br"
    ip -n "$name-br" link add br0 type bridge stp_state 0 forward_delay 0
    ip -n "$name-br" link set br0 up
    for ((i = 0; i < n; i++)); do
        ip netns add "$name-$i"
        ip -n "$name-$i" link set lo up
        ip -n "$name-$i" link add eth0 type veth peer name "v$i" netns "$name-br"
        ip -n "$name-br" link set "v$i" master br0
        ip -n "$name-br" link set "v$i" up
        ip -n "$name-$i" addr add "10.99.0.$((i + 1))/24" dev eth0
        ip -n "$name-$i" link set eth0 up
    done
    # No spanning tree and no forwarding delay: the bridge forwards at once.
    ;;
addr)
    i=${2:?I}
    echo "10.99.0.$((i + 1))"
    ;;
exec)
    name=${2:?NAME}; i=${3:?I}; host=${4:?HOST}
    shift 4
    # shellcheck disable=SC2016  # expanded by the inner sh
    exec ip netns exec "$name-$i" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$host" "$@"
    ;;
down)
    name=${2:?NAME}
    for ns in $(ip netns list | awk '{print $1}'); do
        case $ns in "$name"-*) ip netns del "$ns" 2>/dev/null || true ;; esac
    done
    ;;
*)
    echo "usage: $0 check | up NAME N | addr I | exec NAME I HOST CMD... | down NAME" >&2
    exit 2
    ;;
esac
