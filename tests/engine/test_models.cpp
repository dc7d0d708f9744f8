// The C++ models are torchvision's: parameter counts, state_dict names, shapes, order.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "engine/models/registry.hpp"

namespace ddpbench {
namespace {

// torchvision.models.<name>(num_classes=1000): sum(p.numel() for p in m.parameters()).
const std::map<std::string, int64_t> kTorchvisionParams = {
    {"resnet18", 11689512},        {"resnet50", 25557032},        {"resnet101", 44549160},
    {"resnet152", 60192808},       {"resnext50_32x4d", 25028904}, {"resnext101_32x8d", 88791336},
};

TEST(Models, RegistryListsEveryModel) {
  auto names = model_names();
  ASSERT_EQ(names.size(), kTorchvisionParams.size());
  for (const auto& n : names) EXPECT_TRUE(kTorchvisionParams.count(n)) << n;
}

TEST(Models, ParameterCountsEqualTorchvision) {
  for (const auto& [name, expected] : kTorchvisionParams) EXPECT_EQ(count_parameters(*make_model(name)), expected) << name;
}

TEST(Models, StateDictNamesFollowTorchvision) {
  auto m = make_model("resnet50");
  std::map<std::string, std::vector<int64_t>> entries;
  for (const auto& kv : m->named_parameters()) entries[kv.key()] = kv.value().sizes().vec();
  for (const auto& kv : m->named_buffers()) entries[kv.key()] = kv.value().sizes().vec();
  const std::map<std::string, std::vector<int64_t>> sample = {
      {"conv1.weight", {64, 3, 7, 7}},
      {"bn1.running_mean", {64}},
      {"bn1.num_batches_tracked", {}},
      {"layer1.0.downsample.0.weight", {256, 64, 1, 1}},
      {"layer1.0.downsample.1.running_var", {256}},
      {"layer2.3.conv2.weight", {128, 128, 3, 3}},
      {"layer4.2.bn3.bias", {2048}},
      {"fc.weight", {1000, 2048}},
      {"fc.bias", {1000}},
  };
  for (const auto& [name, shape] : sample) {
    ASSERT_TRUE(entries.count(name)) << name;
    EXPECT_EQ(entries[name], shape) << name;
  }
  EXPECT_EQ(entries.size(), 320u);  // len(torchvision.models.resnet50().state_dict())
  EXPECT_FALSE(entries.count("layer1.1.downsample.0.weight"));
}

TEST(Models, ResNeXtUsesGroupedConvolutions) {
  auto m = make_model("resnext50_32x4d");
  const auto* w = m->named_parameters().find("layer1.0.conv2.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->sizes().vec(), (std::vector<int64_t>{128, 4, 3, 3}));  // 32 groups of 4 channels
}

TEST(Models, ForwardGivesLogitsPerExample) {
  auto m = make_model("resnet18", 10);
  auto y = m->forward(torch::randn({2, 3, 64, 64}));
  EXPECT_EQ(y.sizes().vec(), (std::vector<int64_t>{2, 10}));
  EXPECT_TRUE(y.isfinite().all().item<bool>());
}

TEST(Models, UnknownNameIsAUsageError) { EXPECT_THROW(make_model("resnet9000"), UsageError); }

// Against Debian's python3-torchvision, when installed: every parameter name and shape in
// the same order (bucket assignment depends on it), every buffer, and the counts.
TEST(Models, MatchInstalledTorchvisionExactly) {
  const std::string python = "/usr/bin/python3";
  if (std::system((python + " -c 'import torchvision' >/dev/null 2>&1").c_str()) != 0)
    GTEST_SKIP() << "python3-torchvision is not installed (apt-get install python3-torchvision)";
  std::string cmd = python + " " + DDPBENCH_SOURCE_DIR "/tests/tools/torchvision_reference.py";
  for (const auto& n : model_names()) cmd += " " + n;
  FILE* f = ::popen(cmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string text;
  char buf[65536];
  size_t got = 0;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, got);
  ASSERT_EQ(::pclose(f), 0) << "torchvision_reference.py failed";
  const auto ref = nlohmann::json::parse(text);
  for (const auto& name : model_names()) {
    SCOPED_TRACE(name);
    const auto& r = ref.at(name);
    auto m = make_model(name);
    EXPECT_EQ(count_parameters(*m), r.at("parameters").get<int64_t>());
    nlohmann::json params = nlohmann::json::array(), buffers = nlohmann::json::array();
    for (const auto& kv : m->named_parameters()) params.push_back({kv.key(), kv.value().sizes().vec()});
    for (const auto& kv : m->named_buffers()) buffers.push_back({kv.key(), kv.value().sizes().vec()});
    EXPECT_EQ(params, r.at("params"));
    EXPECT_EQ(buffers, r.at("buffers"));
  }
}

}  // namespace
}  // namespace ddpbench
