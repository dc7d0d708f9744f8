#!/bin/sh
# Emulated nodes for tests/e2e/test_pairs.cpp: network namespaces joined by veth pairs to
# a bridge that lives in a namespace of its own, so nothing is added to the host's network
# and deleting the namespaces deletes every interface (a veth dies with its namespace).
#
#   netns_nodes.sh probe                 exit 0 when this user may create a namespace
#   netns_nodes.sh probe-cpu             exit 0 when this user may create a CPU-limited cgroup
#   netns_nodes.sh up PREFIX N [LIMITED RATE [CPU_QUOTA_US]]
#       namespaces PREFIX-sw (bridge br0) and PREFIX-n0 .. PREFIX-n<N-1>; node k has veth0
#       with 10.213.0.<k+1>/24 (the addresses exist only inside these namespaces). With
#       LIMITED and RATE (tc units, e.g. 200mbit): a token-bucket filter on node LIMITED's
#       veth0, so what that node sends is limited to RATE; LIMITED "all": on every node's
#       (LIMITED "" for none). With CPU_QUOTA_US (> 0): a cgroup PREFIX-n<k> per node with
#       that CPU quota per 100 ms period (60000: 0.6 CPU), so each node has a CPU budget of
#       its own, as a real node does (cgroup v2 cpu.max, else v1 cpu.cfs_quota_us).
#   netns_nodes.sh down PREFIX           deletes every namespace PREFIX-* and cgroup PREFIX-n*
#   netns_nodes.sh exec PREFIX K HOST CMD...
#       runs CMD in node K's namespace with host name HOST (own UTS namespace), inside node
#       K's cgroup when `up` made one
#   netns_nodes.sh reap                  deletes the namespaces and cgroups of test runs whose
#                                        process is gone (names ddpbns<pid>x...), e.g. after
#                                        a kill -9
set -eu

cmd=${1:?usage: netns_nodes.sh probe|up|down|exec|reap ...}
shift

# The cpu controller's hierarchy: cgroup v2's root (unified), else v1's cpu; "" when neither.
cg_root() {
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    echo /sys/fs/cgroup
  elif [ -d /sys/fs/cgroup/cpu ]; then
    echo /sys/fs/cgroup/cpu
  fi
}

# Makes cgroup NAME under the cpu hierarchy with QUOTA_US per 100000 us.
cg_make() {
  root=$(cg_root)
  [ -n "$root" ] || return 1
  mkdir "$root/$1" || return 1
  if [ -f "$root/cgroup.controllers" ]; then
    grep -qw cpu "$root/cgroup.subtree_control" || echo +cpu >"$root/cgroup.subtree_control" || return 1
    echo "$2 100000" >"$root/$1/cpu.max" || return 1
  else
    echo 100000 >"$root/$1/cpu.cfs_period_us" || return 1
    echo "$2" >"$root/$1/cpu.cfs_quota_us" || return 1
  fi
}

# Deletes the cgroups named PATTERN (a glob), moving any process left in one to the root.
cg_remove() {
  root=$(cg_root)
  [ -n "$root" ] || return 0
  for d in "$root"/$1; do
    [ -d "$d" ] || continue
    for p in $(cat "$d/cgroup.procs" 2>/dev/null); do echo "$p" >"$root/cgroup.procs" 2>/dev/null || true; done
    rmdir "$d" 2>/dev/null || true
  done
}

reap() {
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^ddpbns[0-9]*x' || true); do
    pid=${ns#ddpbns}
    pid=${pid%%x*}
    if ! kill -0 "$pid" 2>/dev/null; then ip netns delete "$ns" 2>/dev/null || true; fi
  done
  root=$(cg_root)
  [ -n "$root" ] || return 0
  for d in "$root"/ddpbns*x*; do
    [ -d "$d" ] || continue
    pid=${d##*/ddpbns}
    pid=${pid%%x*}
    if ! kill -0 "$pid" 2>/dev/null; then cg_remove "${d##*/}"; fi
  done
}

case "$cmd" in
  probe)
    ns="ddpbns$$xprobe"
    ip netns add "$ns" 2>/dev/null || exit 1
    ip netns delete "$ns"
    command -v tc >/dev/null 2>&1 || exit 1
    command -v unshare >/dev/null 2>&1 || exit 1
    ;;
  probe-cpu)
    cg="ddpbns$$xprobe-cpu"
    if cg_make "$cg" 60000 2>/dev/null; then ok=0; else ok=1; fi
    cg_remove "$cg"
    exit $ok
    ;;
  up)
    prefix=$1 n=$2 limited=${3:-} rate=${4:-} quota=${5:-0}
    reap
    trap 'for x in $(ip netns list | awk "{print \$1}" | grep "^$prefix-" || true); do ip netns delete "$x"; done; cg_remove "$prefix-n*"' EXIT
    sw="$prefix-sw"
    ip netns add "$sw"
    ip -n "$sw" link set lo up
    ip -n "$sw" link add br0 type bridge
    ip -n "$sw" link set br0 up
    k=0
    while [ "$k" -lt "$n" ]; do
      node="$prefix-n$k"
      ip netns add "$node"
      ip -n "$node" link set lo up
      # Created in the node's namespace, its peer moved to the bridge's.
      ip -n "$node" link add veth0 type veth peer name p$k
      ip -n "$node" link set p$k netns "$sw"
      ip -n "$sw" link set p$k master br0
      ip -n "$sw" link set p$k up
      ip -n "$node" addr add "10.213.0.$((k + 1))/24" dev veth0
      ip -n "$node" link set veth0 up
      if [ "$quota" -gt 0 ]; then cg_make "$node" "$quota"; fi
      k=$((k + 1))
    done
    if [ -n "$limited" ]; then
      # tbf: RATE sustained; a 64 kB bucket (>= RATE / HZ) and 200 ms of queue, so TCP sees
      # a slow link rather than losses.
      if [ "$limited" = all ]; then nodes=$(seq 0 $((n - 1))); else nodes=$limited; fi
      for k in $nodes; do
        ip netns exec "$prefix-n$k" tc qdisc add dev veth0 root tbf rate "$rate" burst 64kb latency 200ms
      done
    fi
    trap - EXIT
    ;;
  down)
    prefix=$1
    for x in $(ip netns list | awk '{print $1}' | grep "^$prefix-" || true); do ip netns delete "$x"; done
    cg_remove "$prefix-n*"
    ;;
  exec)
    prefix=$1 k=$2 host=$3
    shift 3
    root=$(cg_root)
    # Node k's CPU budget: this shell joins its cgroup, and CMD inherits it.
    if [ -n "$root" ] && [ -d "$root/$prefix-n$k" ]; then echo $$ >"$root/$prefix-n$k/cgroup.procs"; fi
    exec ip netns exec "$prefix-n$k" unshare --uts sh -c 'hostname "$0"; exec "$@"' "$host" "$@"
    ;;
  reap)
    reap
    ;;
  *)
    echo "netns_nodes.sh: unknown command '$cmd'" >&2
    exit 2
    ;;
esac
