// Per-host environments (core/launch/node_env): the comparison across hosts on hand-made node
// lists, the size bound, the nvidia-smi query parser and the readable form.
#include <gtest/gtest.h>

#include "core/launch/node_env.hpp"

namespace ddpbench {
namespace {

using nlohmann::json;

json node(const std::string& host, const std::string& driver, int gpus, const std::string& gpu_name = "NVIDIA H100") {
  json n = {{"host", host},
            {"driver", driver},
            {"gpus", json::array()},
            {"topology", "GPU0 X"},
            {"cuda", "12.4"},
            {"nccl", "2.21.5"},
            {"cudnn", "9.1.0"},
            {"torch", "2.4.0"},
            {"cpu_model", "AMD EPYC 7763"},
            {"cpus", 128},
            {"kernel", "6.1.0-18-amd64"},
            {"env", json::object()}};
  for (int i = 0; i < gpus; ++i)
    n["gpus"].push_back({{"index", i},
                         {"name", gpu_name},
                         {"memory_bytes", 85899345920LL},
                         {"uuid", "GPU-" + host + std::to_string(i)},
                         {"bus_id", "00000000:0" + std::to_string(i) + ":00.0"}});
  return n;
}

TEST(NodeDifferences, IdenticalNodesDifferInNothing) {
  // UUIDs, bus ids and host names differ between any two hosts; they are not differences.
  EXPECT_EQ(node_differences(json::array({node("a", "550.54", 8), node("b", "550.54", 8)})), json::array());
}

TEST(NodeDifferences, OneNodeOrNoneHasNothingToCompare) {
  EXPECT_EQ(node_differences(json::array({node("a", "550.54", 8)})), json::array());
  EXPECT_EQ(node_differences(json::array()), json::array());
  EXPECT_EQ(node_differences(json::object()), json::array());
}

TEST(NodeDifferences, NamesEveryDifferingFieldWithItsHosts) {
  json n1 = node("node1", "550.54", 8), n2 = node("node2", "550.54", 8), n3 = node("node3", "535.1", 4);
  n1["env"]["NCCL_DEBUG"] = "INFO";
  n2["env"]["NCCL_IB_HCA"] = "mlx5_0";
  n3["env"]["NCCL_IB_HCA"] = "mlx5_1";
  n3["kernel"] = "5.15.0";
  const json expected =
      json::array({{{"field", "driver"}, {"values", {{"550.54", {"node1", "node2"}}, {"535.1", {"node3"}}}}},
                   {{"field", "gpu_count"}, {"values", {{"8", {"node1", "node2"}}, {"4", {"node3"}}}}},
                   {{"field", "kernel"}, {"values", {{"6.1.0-18-amd64", {"node1", "node2"}}, {"5.15.0", {"node3"}}}}},
                   {{"field", "env.NCCL_DEBUG"}, {"values", {{"INFO", {"node1"}}, {"(unset)", {"node2", "node3"}}}}},
                   {{"field", "env.NCCL_IB_HCA"},
                    {"values", {{"(unset)", {"node1"}}, {"mlx5_0", {"node2"}}, {"mlx5_1", {"node3"}}}}}});
  EXPECT_EQ(node_differences(json::array({n1, n2, n3})), expected);
}

TEST(NodeDifferences, GpuModelIsTheSetOfNamesAndNoGpusIsNone) {
  json a = node("a", "550.54", 2), b = node("b", "550.54", 2, "NVIDIA A100-SXM4-80GB"), c = node("c", "550.54", 0);
  b["gpus"][1]["name"] = "NVIDIA H100";  // a mixed node
  c["gpus"] = json::array({});
  const json d = node_differences(json::array({a, b, c}));
  ASSERT_GE(d.size(), 1u);
  EXPECT_EQ(
      d[0],
      json({{"field", "gpu_model"},
            {"values", {{"NVIDIA H100", {"a"}}, {"NVIDIA A100-SXM4-80GB + NVIDIA H100", {"b"}}, {"none", {"c"}}}}}));
  EXPECT_EQ(d[1]["field"], "gpu_count");
  EXPECT_EQ(d[1]["values"]["0"], json::array({"c"}));
}

TEST(NodeDifferences, NodesWithAnErrorAndMissingFieldsAreHandled) {
  json a = node("a", "550.54", 1), b = node("b", "550.54", 1);
  b.erase("cudnn");
  const json broken = {{"host", "x"}, {"error", "no rank of local rank 0 on this host"}};
  const json d = node_differences(json::array({a, broken, b}));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], json({{"field", "cudnn"}, {"values", {{"9.1.0", {"a"}}, {"(unrecorded)", {"b"}}}}}));
}

TEST(NodeDifferences, OneLinePerFieldMostCommonValueFirst) {
  json n3 = node("node3", "535.1", 8);
  n3["topology"] = "GPU0 X NV18\nGPU1 NV18 X\n";
  const json d = node_differences(json::array({node("node1", "550.54", 8), node("node2", "550.54", 8), n3}));
  EXPECT_EQ(node_difference_lines(d),
            (std::vector<std::string>{"nodes differ in driver: 550.54 on node1,node2; 535.1 on node3",
                                      "nodes differ in topology: variant 1 on node1,node2; variant 2 on node3"}));
}

TEST(NodeDifferences, ManyHostsAreCountedNotListed) {
  json nodes = json::array();
  for (int i = 0; i < 10; ++i) nodes.push_back(node("n" + std::to_string(i), "550.54", 8));
  nodes.push_back(node("odd", "535.1", 8));
  EXPECT_EQ(
      node_difference_lines(node_differences(nodes)),
      std::vector<std::string>{"nodes differ in driver: 550.54 on n0,n1,n2,n3,n4,n5,n6,n7 and 2 more; 535.1 on odd"});
}

TEST(BoundNodeEnvironment, CutsTheTopologyAndSaysSo) {
  json n = node("a", "550.54", 8);
  const std::string topo(40000, 'x');
  n["topology"] = topo;
  bound_node_environment(n);
  const std::string text = n.dump();
  EXPECT_LE(text.size(), kMaxNodeEnvBytes);
  EXPECT_GT(text.size(), kMaxNodeEnvBytes - 200);  // nothing else was dropped
  EXPECT_EQ(n["truncated"], json::array({"topology"}));
  const std::string kept = n["topology"].get<std::string>();
  const auto note = kept.find("\n[truncated by ddpbench: kept ");
  ASSERT_NE(note, std::string::npos);
  EXPECT_EQ(kept.substr(note), "\n[truncated by ddpbench: kept " + std::to_string(note) + " of 40000 bytes]");
  EXPECT_EQ(n["gpus"].size(), 8u);
  EXPECT_EQ(n["driver"], "550.54");
}

TEST(BoundNodeEnvironment, EscapedTopologyStillFits) {
  json n = node("a", "550.54", 2);
  n["topology"] = std::string(30000, '\n');  // 2 bytes each in JSON
  n["cpu_model"] = std::string(1000, 'c');
  bound_node_environment(n, 4096);
  EXPECT_LE(n.dump().size(), 4096u);
  EXPECT_EQ(n["cpu_model"].get<std::string>().size(), 256u);
  EXPECT_EQ(n["truncated"], json::array({"cpu_model", "topology"}));
}

TEST(BoundNodeEnvironment, DropsVariablesAndGpusLast) {
  json n = node("a", "550.54", 64);
  for (int i = 0; i < 64; ++i) n["env"]["NCCL_V" + std::to_string(100 + i)] = std::string(500, 'v');
  bound_node_environment(n);
  EXPECT_LE(n.dump().size(), kMaxNodeEnvBytes);
  EXPECT_EQ(n["truncated"], json::array({"env"}));
  EXPECT_LT(n["env"].size(), 64u);
  EXPECT_TRUE(n["env"].contains("NCCL_V100"));  // kept from the front
  EXPECT_EQ(n["gpus"].size(), 64u);
}

TEST(BoundNodeEnvironment, SmallNodeIsUntouched) {
  const json n = node("a", "550.54", 8);
  json m = n;
  bound_node_environment(m);
  EXPECT_EQ(m, n);
  EXPECT_THROW(bound_node_environment(m, 100), std::invalid_argument);
}

TEST(ParseGpuQuery, ReadsNvidiaSmiCsv) {
  // nvidia-smi --query-gpu=index,name,memory.total,uuid,pci.bus_id --format=csv,noheader,nounits
  const std::string csv =
      "0, NVIDIA H100 80GB HBM3, 81559, GPU-3a1b6c2d-0000-1111-2222-333344445555, 00000000:19:00.0\n"
      "1, NVIDIA H100 80GB HBM3, [N/A], GPU-4a1b6c2d-0000-1111-2222-333344445555, 00000000:3B:00.0\n"
      "garbage line\n";
  const json g = parse_gpu_query(csv);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0], json({{"index", 0},
                        {"name", "NVIDIA H100 80GB HBM3"},
                        {"memory_bytes", 81559LL * 1048576},
                        {"uuid", "GPU-3a1b6c2d-0000-1111-2222-333344445555"},
                        {"bus_id", "00000000:19:00.0"}}));
  EXPECT_EQ(g[1]["memory_bytes"], 0);
  EXPECT_EQ(g[1]["bus_id"], "00000000:3B:00.0");
}

TEST(NodeEnvVars, KeepsOnlyCommunicationVariables) {
  const EnvMap env = {{"NCCL_DEBUG", "INFO"}, {"TORCH_NCCL_BLOCKING_WAIT", "1"}, {"GLOO_SOCKET_IFNAME", "eth0"},
                      {"HOME", "/root"},      {"MASTER_PORT", "29500"},          {"XNCCL_FOO", "1"}};
  EXPECT_EQ(node_env_vars(env),
            json({{"NCCL_DEBUG", "INFO"}, {"TORCH_NCCL_BLOCKING_WAIT", "1"}, {"GLOO_SOCKET_IFNAME", "eth0"}}));
}

// 300 euro signs (3 bytes each, 900 bytes): the 512-byte cut falls inside the 171st, which
// is dropped whole; a stray byte becomes U+FFFD, so the object dumps as JSON.
TEST(NodeEnvVars, CutOnACharacterBoundaryAndMadeValidUtf8) {
  std::string euros;
  for (int i = 0; i < 300; ++i) euros += "\xE2\x82\xAC";
  const json vars = node_env_vars({{"NCCL_SOCKET_IFNAME", euros}, {"NCCL_DEBUG", "IN\xFFO"}});
  EXPECT_EQ(vars["NCCL_SOCKET_IFNAME"].get<std::string>(), euros.substr(0, 510));
  EXPECT_EQ(vars["NCCL_DEBUG"].get<std::string>(), "IN\xEF\xBF\xBDO");
  EXPECT_NO_THROW((void)vars.dump());
}

// A long non-ASCII value cut to 256 bytes by the bound is cut between characters.
TEST(BoundNodeEnvironment, CutsStringsBetweenCharacters) {
  std::string euros;
  for (int i = 0; i < 400; ++i) euros += "\xE2\x82\xAC";
  json n = {{"host", "h"}, {"cpu_model", euros}};
  bound_node_environment(n, 1024);
  EXPECT_EQ(n["cpu_model"].get<std::string>(), euros.substr(0, 255));
  EXPECT_NO_THROW((void)n.dump());
}

TEST(RenderNodeEnvironment, NamesEveryField) {
  json n = node("node1", "550.54", 1);
  n["env"]["NCCL_DEBUG"] = "INFO";
  const std::string text = render_node_environment(n);
  for (const char* s :
       {"host:      node1", "kernel:    6.1.0-18-amd64", "AMD EPYC 7763 (128 CPUs online)", "driver:    550.54",
        "cudnn:     9.1.0", "GPU-node10", "80.00 GiB", "NCCL_DEBUG=INFO", "nvidia-smi topo -m"})
    EXPECT_NE(text.find(s), std::string::npos) << s << "\n" << text;
}

}  // namespace
}  // namespace ddpbench
