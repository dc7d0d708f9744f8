// Every node's environment (environment.nodes, `ddpbench env`): the fields against
// independent sources on this machine, one node object per host in a 2-rank run, and two
// emulated hosts (network namespaces with their own host names, tests/tools/netns_nodes.sh)
// whose NCCL variables differ, named in node_differences and in a warning.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "common/testutil.hpp"
#include "core/launch/spawn.hpp"
#include "core/result/result.hpp"

namespace ddpbench {
namespace {

using nlohmann::json;
using testutil::run;
using testutil::TempDir;

const std::string kBin = DDPBENCH_BINARY;
const std::string kNetns = DDPBENCH_SOURCE_DIR "/tests/tools/netns_nodes.sh";

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Output of a shell command, trimmed; fails the test when it fails.
std::string sh(const std::string& cmd) {
  const auto o = run(cmd);
  EXPECT_EQ(o.code, 0) << cmd << ": " << o.err;
  return trimmed(o.out);
}

// "1.13" of "1.13.1+cpu".
std::string major_minor(const std::string& v) {
  const auto a = v.find('.');
  const auto b = v.find('.', a + 1);
  return v.substr(0, b);
}

TEST(EnvCommand, JsonFieldsMatchIndependentSources) {
  // Only the variables given here: env -i keeps the test's own NCCL_* out.
  const auto o =
      run("env -i PATH=\"$PATH\" NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=lo HOME=/nonexistent " + kBin + " env --json");
  ASSERT_EQ(o.code, 0) << o.err;
  const json n = json::parse(o.out);
  EXPECT_EQ(n.at("host"), sh("hostname"));
  EXPECT_EQ(n.at("kernel"), sh("uname -r"));
  EXPECT_EQ(n.at("cpu_model"), sh("grep -m1 '^model name' /proc/cpuinfo | sed 's/^[^:]*: *//'"));
  EXPECT_EQ(n.at("cpus").get<int>(), std::stoi(sh("getconf _NPROCESSORS_ONLN")));
  EXPECT_GE(n.at("cpus").get<int>(), std::stoi(sh("env -u OMP_NUM_THREADS nproc")));
  EXPECT_EQ(n.at("env"), json({{"NCCL_DEBUG", "WARN"}, {"NCCL_SOCKET_IFNAME", "lo"}}));
  EXPECT_FALSE(n.contains("truncated"));
  EXPECT_LE(o.out.size(), 16u * 1024 * 2);  // dump(2) indents; the object itself is bounded
  if (testutil::have("nvidia-smi")) {
    // A GPU machine: the count nvidia-smi lists, the driver it reports.
    EXPECT_EQ(n.at("gpus").size(), static_cast<size_t>(std::stoi(sh("nvidia-smi -L | wc -l"))));
    EXPECT_EQ(n.at("driver"), sh("nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1"));
  } else {
    EXPECT_EQ(n.at("gpus"), json::array());
    EXPECT_EQ(n.at("driver"), "none");
    EXPECT_EQ(n.at("topology"), "");
  }
  // torch: Debian's python3-torch reports 1.13.1 for the libtorch that says 1.13.0 in
  // torch/version.h (TORCH_VERSION); the release (major.minor) must agree.
  const auto py = run("/usr/bin/python3 -c 'import torch; print(torch.__version__)'");
  if (py.code == 0) EXPECT_EQ(major_minor(n.at("torch").get<std::string>()), major_minor(trimmed(py.out))) << py.out;
  for (const char* k : {"cuda", "nccl", "cudnn"}) EXPECT_TRUE(n.at(k).is_string()) << k;
  // The Debian CPU build: no CUDA, no NCCL, no cuDNN.
  if (!testutil::have("nvidia-smi")) {
    EXPECT_EQ(n.at("cuda"), "none");
    EXPECT_EQ(n.at("cudnn"), "none");
  }
}

TEST(EnvCommand, ReadableFormNamesTheSameValues) {
  const auto o = run(kBin + " env");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("kernel:    " + sh("uname -r") + "\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("host:      " + sh("hostname") + "\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("NCCL variables:"), std::string::npos) << o.out;
}

TEST(NodeEnvironments, TwoRanksOnOneHostAreOneNode) {
  TempDir d;
  const auto json_path = (d.path / "r.json").string();
  const auto o = run("env NCCL_DEBUG=WARN " + kBin + " run " + testutil::kTinyArgs +
                     " --iters 2 --warmup 1 --world-sizes 2 "
                     "--timeout 60 --json " +
                     json_path);
  ASSERT_EQ(o.code, 0) << o.err;
  const ResultFile f = read_result_file(json_path);
  const json& nodes = f.environment.at("nodes");
  ASSERT_EQ(nodes.size(), 1u) << nodes.dump(2);
  EXPECT_EQ(nodes[0].at("host"), sh("hostname"));
  EXPECT_EQ(nodes[0].at("ranks"), json::array({0, 1}));
  EXPECT_EQ(nodes[0].at("kernel"), sh("uname -r"));
  EXPECT_EQ(nodes[0].at("env").at("NCCL_DEBUG"), "WARN");
  EXPECT_EQ(nodes[0].at("torch"), f.environment.at("torch"));
  EXPECT_EQ(f.environment.at("node_differences"), json::array());
  EXPECT_EQ(o.err.find("nodes differ"), std::string::npos) << o.err;
}

// Two emulated hosts: namespaces "nodea" and "nodeb" on one bridge, one rank each (a
// torchrun-style launch by hand), rank 1's host with NCCL_DEBUG=INFO.
TEST(NodeEnvironments, TwoHostsWithDifferentNcclVariablesAreNamed) {
  const auto c = run(kNetns + " probe");
  if (c.code != 0) GTEST_SKIP() << "no emulated nodes: " << trimmed(c.out) << trimmed(c.err);
  TempDir d;
  const std::string name = "ddpbns" + std::to_string(::getpid()) + "xenv";  // reapable (netns_nodes.sh reap)
  const auto json_path = (d.path / "c.json").string();
  const auto script = d.path / "two_hosts.sh";
  const std::string rank_env =
      "WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=10.213.0.1 MASTER_PORT=29517 GLOO_SOCKET_IFNAME=veth0";
  const std::string comm = kBin + " comm -b 1K -e 1K --collectives allreduce -w 1 -n 2 --timeout 30";
  std::ofstream(script) << "set -u\n"
                        << "S=" << kNetns << "\n"
                        << "$S up " << name << " 2 || exit 1\n"
                        << "trap '$S down " << name << "' EXIT\n"
                        << "env RANK=1 " << rank_env << " NCCL_DEBUG=INFO timeout 60 $S exec " << name << " 1 nodeb "
                        << comm << " > " << (d.path / "r1.log").string() << " 2>&1 &\n"
                        << "env RANK=0 " << rank_env << " timeout 60 $S exec " << name << " 0 nodea " << comm
                        << " --json " << json_path << "\n"
                        << "rc=$?\nwait\nexit $rc\n";
  const auto o = run("sh " + script.string());
  ASSERT_EQ(o.code, 0) << o.err << "\nrank 1:\n" << testutil::slurp(d.path / "r1.log");
  const ResultFile f = read_result_file(json_path);
  const json& nodes = f.environment.at("nodes");
  ASSERT_EQ(nodes.size(), 2u) << nodes.dump(2);
  EXPECT_EQ(nodes[0].at("host"), "nodea");
  EXPECT_EQ(nodes[0].at("ranks"), json::array({0}));
  EXPECT_EQ(nodes[1].at("host"), "nodeb");
  EXPECT_EQ(nodes[1].at("ranks"), json::array({1}));
  EXPECT_EQ(nodes[1].at("env").at("NCCL_DEBUG"), "INFO");
  EXPECT_FALSE(nodes[0].at("env").contains("NCCL_DEBUG"));
  // The two hosts share the kernel and everything else: NCCL_DEBUG is the one difference.
  EXPECT_EQ(f.environment.at("node_differences"),
            json::array({{{"field", "env.NCCL_DEBUG"}, {"values", {{"INFO", {"nodeb"}}, {"(unset)", {"nodea"}}}}}}));
  EXPECT_NE(o.err.find("ddpbench: warning: nodes differ in env.NCCL_DEBUG: "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("INFO on nodeb"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("(unset) on nodea"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace ddpbench
