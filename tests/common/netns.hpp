// Emulated nodes for end-to-end tests: network namespaces on one bridge
// (tests/tools/netns_nodes.sh), created for one test and deleted with it, optionally each
// with a CPU budget of its own (a cgroup with a CPU quota), and a helper that starts one
// ddpbench rank per node.
#pragma once

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "common/testutil.hpp"

namespace ddpbench::testutil {

/// The script behind the namespaces.
inline const std::string kNetnsScript = std::string(DDPBENCH_SOURCE_DIR) + "/tests/tools/netns_nodes.sh";

/// True when this user may create namespaces (root or CAP_SYS_ADMIN + CAP_NET_ADMIN, plus tc
/// and unshare); a test without them skips.
inline bool netns_available() {
  return have("ip") && std::system((kNetnsScript + " probe >/dev/null 2>&1").c_str()) == 0;
}

/// True when this user may also give each node a CPU quota (Netns's `cpus_per_node`): a
/// cgroup with the cpu controller can be made (cgroup v2 cpu.max, or v1 cpu.cfs_quota_us);
/// a test that asks for one skips without it.
inline bool cpu_quota_available() {
  return std::system((kNetnsScript + " probe-cpu >/dev/null 2>&1").c_str()) == 0;
}

/// `nodes` namespaces (node k at 10.213.0.<k+1>), created in the constructor and deleted in
/// the destructor (also when an assertion fails; a killed test's are reaped by the next
/// `up`). `limited` ("2", "all" or "") and `rate` (tc units, "200mbit"): the tbf on what
/// that node (or every node) sends. `cpus_per_node` > 0: each node's processes (every rank
/// launch_script starts on it) run in a cgroup of their own with that CPU quota (0.6: 60 ms
/// per 100 ms period), made and deleted with the namespaces, so that the nodes' compute
/// does not contend for this machine's cores as long as the quotas sum to at most its
/// cores; 0 (the default): no cgroup, the nodes share the cores.
struct Netns {
  std::string prefix;
  bool ok = false;
  Netns(int nodes, const std::string& limited, const std::string& rate, double cpus_per_node = 0) {
    static int seq = 0;
    prefix = "ddpbns" + std::to_string(::getpid()) + "x" + std::to_string(seq++);
    const long quota_us = cpus_per_node > 0 ? std::lround(cpus_per_node * 100000) : 0;
    ok = std::system((kNetnsScript + " up " + prefix + " " + std::to_string(nodes) + " '" + limited + "' '" + rate +
                      "' " + std::to_string(quota_us) + " >/dev/null 2>&1")
                         .c_str()) == 0;
  }
  ~Netns() { (void)std::system((kNetnsScript + " down " + prefix + " >/dev/null 2>&1").c_str()); }
  Netns(const Netns&) = delete;
  Netns& operator=(const Netns&) = delete;

  /// Shell text that starts `binary args` as rank r of `n` on node r (r = 0..n-1, one rank
  /// per node, host name node<r>, rendezvous at node 0's `port`), each in the background
  /// with stdout, stderr and exit code in `log_prefix`.r<r>.{out,err,rc}, then waits for
  /// them. `timeout_s` bounds each rank.
  std::string launch_script(int n, const std::string& binary, const std::string& args, const std::string& log_prefix,
                            int port, int timeout_s) const {
    std::string script;
    for (int r = 0; r < n; ++r) {
      const std::string log = log_prefix + ".r" + std::to_string(r);
      script += "(" + kNetnsScript + " exec " + prefix + " " + std::to_string(r) + " node" + std::to_string(r) +
                " env RANK=" + std::to_string(r) + " WORLD_SIZE=" + std::to_string(n) +
                " LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=10.213.0.1 MASTER_PORT=" + std::to_string(port) +
                " GLOO_SOCKET_IFNAME=veth0 OMP_NUM_THREADS=1 timeout -k 5 " + std::to_string(timeout_s) + " " + binary +
                " " + args + " >" + log + ".out 2>" + log + ".err; echo $? >" + log + ".rc) & pids=\"$pids $!\"; ";
    }
    return script + "wait $pids; ";
  }
};

}  // namespace ddpbench::testutil
