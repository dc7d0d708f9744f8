// The C++ models are torchvision's: parameter counts, state_dict names, shapes, order.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/util/errors.hpp"
#include "engine/models/flops.hpp"
#include "engine/models/registry.hpp"

namespace ddpbench {
namespace {

// torchvision.models.<name>(num_classes=1000): sum(p.numel() for p in m.parameters()).
const std::map<std::string, int64_t> kTorchvisionParams = {
    {"resnet18", 11689512},         {"resnet34", 21797672},        {"resnet50", 25557032},
    {"resnet101", 44549160},        {"resnet152", 60192808},       {"resnext50_32x4d", 25028904},
    {"resnext101_32x8d", 88791336}, {"wide_resnet50_2", 68883240}, {"vit_b_16", 86567656},
    {"vit_b_32", 88224232},         {"vit_l_16", 304326632},       {"vgg16", 138357544},
    {"alexnet", 61100840},          {"densenet121", 7978856},      {"squeezenet1_0", 1248424},
};

TEST(Models, RegistryListsEveryModel) {
  auto names = image_model_names();
  ASSERT_EQ(names.size(), kTorchvisionParams.size());
  for (const auto& n : names) EXPECT_TRUE(kTorchvisionParams.count(n)) << n;
}

TEST(Models, ParameterCountsEqualTorchvision) {
  for (const auto& [name, expected] : kTorchvisionParams)
    EXPECT_EQ(count_parameters(*make_model(name)), expected) << name;
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

// torchvision's model documentation ("GFLOPS", one multiply-add counted once) at 224x224.
const std::map<std::string, double> kTorchvisionGmacs = {
    {"resnet18", 1.81},   {"resnet34", 3.66},        {"resnet50", 4.09},          {"resnet101", 7.80},
    {"resnet152", 11.51}, {"resnext50_32x4d", 4.23}, {"resnext101_32x8d", 16.41}, {"wide_resnet50_2", 11.40},
    {"vit_b_16", 17.56},  {"vit_b_32", 4.41},        {"vit_l_16", 61.55},         {"vgg16", 15.47},
    {"alexnet", 0.71},    {"densenet121", 2.83},     {"squeezenet1_0", 0.82},
};

TEST(Flops, MultiplyAddsMatchTorchvisionDocsWithinOnePercent) {
  for (const auto& name : image_model_names()) {
    ASSERT_TRUE(kTorchvisionGmacs.count(name)) << name;
    const double gmacs = forward_macs(*make_model(name), 224) / 1e9;
    EXPECT_NEAR(gmacs, kTorchvisionGmacs.at(name), 0.01 * kTorchvisionGmacs.at(name)) << name;
  }
}

TEST(Flops, AtOtherImageSizes) {
  // vit_b_16 at 384x384 (torchvision's SWAG E2E weights list 55.48 GFLOPS): 577 tokens.
  EXPECT_NEAR(forward_macs(*make_model("vit_b_16", 1000, 384), 384) / 1e9, 55.48, 0.5548);
  // Convolutions scale with the pixels: at 448 every feature map of resnet50 doubles in
  // each side (no rounding), so the convolutions cost exactly 4x, the classifier the same.
  const double fc = 2048.0 * 1000;
  const double r224 = forward_macs(*make_model("resnet50"), 224), r448 = forward_macs(*make_model("resnet50"), 448);
  EXPECT_NEAR(r448, 4 * (r224 - fc) + fc, 1e-9 * r448);
  EXPECT_THROW(make_model("vit_b_16", 1000, 100), UsageError);  // not a multiple of the patch
}

// `ddpbench models` builds every model without torchvision's initialisation of its weights
// (flops::CountOnlyBuild): the parameter counts and the multiply-adds are those of the model
// as the benchmark builds it, at several sizes, and the scope ends with its block.
TEST(Flops, ACountOnlyBuildCountsTheSame) {
  EXPECT_TRUE(flops::initialising_weights());
  {
    const flops::CountOnlyBuild count_only;
    EXPECT_FALSE(flops::initialising_weights());
    {
      const flops::CountOnlyBuild nested;
      EXPECT_FALSE(flops::initialising_weights());
    }
    EXPECT_FALSE(flops::initialising_weights());
    for (const auto& [name, expected] : kTorchvisionParams)
      EXPECT_EQ(count_parameters(*make_model(name)), expected) << name;
  }
  EXPECT_TRUE(flops::initialising_weights());
  const auto macs = [](const std::string& name, int size, bool count_only) {
    std::optional<flops::CountOnlyBuild> scope;
    if (count_only) scope.emplace();
    auto m = make_model(name, 1000, size);
    return std::make_pair(count_parameters(*m), forward_macs(*m, size));
  };
  for (const auto& [name, size] : std::vector<std::pair<std::string, int>>{{"resnet50", 64},
                                                                           {"resnet50", 97},
                                                                           {"densenet121", 224},
                                                                           {"squeezenet1_0", 128},
                                                                           {"vgg16", 64},
                                                                           {"alexnet", 100},
                                                                           {"vit_b_32", 224},
                                                                           {"vit_b_32", 256}})
    EXPECT_EQ(macs(name, size, true), macs(name, size, false)) << name << " at " << size;
}

// `ddpbench models` counts the ResNets, ViTs, VGG-16 and AlexNet from their architecture
// without building them (engine/models/count.hpp): each count must equal the built model's
// parameters and multiply-adds, at sizes whose feature maps round down (odd sides, 97, 63)
// and with a classifier that is not 1000 wide; the families counted only by building say so.
TEST(Flops, CountsWithoutBuildingEqualTheBuiltModel) {
  int counted = 0;
  for (const auto& name : image_model_names()) {
    for (const auto& [classes, size] : std::vector<std::pair<int64_t, int64_t>>{{1000, 224}, {10, 97}, {37, 64}, {5, 256}}) {
      const bool vit = name.rfind("vit_", 0) == 0;
      const int64_t image = vit ? size / 32 * 32 : std::max<int64_t>(size, name == "alexnet" ? 63 : 32);
      const auto c = count_without_building(name, classes, image);
      if (!c) {
        EXPECT_TRUE(name == "densenet121" || name == "squeezenet1_0") << name << " has no count without building";
        continue;
      }
      ++counted;
      const flops::CountOnlyBuild count_only;
      auto m = make_model(name, classes, image);
      EXPECT_EQ(c->parameters, count_parameters(*m)) << name << " at " << image << ", " << classes << " classes";
      EXPECT_EQ(c->forward_macs, forward_macs(*m, image)) << name << " at " << image << ", " << classes << " classes";
    }
  }
  EXPECT_EQ(counted, 13 * 4);
  EXPECT_EQ(count_without_building("resnet50", 1000, 224)->parameters, kTorchvisionParams.at("resnet50"));
  EXPECT_THROW(count_without_building("vit_b_16", 1000, 100), UsageError);  // not a multiple of the patch
}

TEST(Flops, CountingDoesNotChangeTheModelOrItsOutputs) {
  auto m = make_model("resnet18", 10);
  m->eval();
  torch::NoGradGuard ng;
  const auto x = torch::randn({2, 3, 64, 64});
  const auto before = m->forward(x);
  forward_macs(*m, 64);
  EXPECT_TRUE(torch::equal(before, m->forward(x)));
}

TEST(FrozenBackbone, OnlyTheMlpHeadTrains) {
  auto m = make_model("resnet50", 10);
  freeze_backbone(*m, "mlp4096", 10, 64);
  const int64_t head = 2048 * 4096 + 4096 + 4096 * 4096 + 4096 + 4096 * 10 + 10;
  EXPECT_EQ(count_trainable_parameters(*m), head);
  EXPECT_EQ(count_parameters(*m), 25557032 - (2048 * 1000 + 1000) + (2048 * 10 + 10) + head);
  for (const auto& kv : m->named_parameters())
    EXPECT_EQ(kv.value().requires_grad(), kv.key().rfind("head.", 0) == 0) << kv.key();
  m->train();
  EXPECT_FALSE(m->named_modules()["bn1"]->is_training());  // BatchNorm statistics stay fixed
  EXPECT_TRUE(m->named_modules()["head"]->is_training());
  const auto y = m->forward(torch::randn({2, 3, 64, 64}));
  EXPECT_EQ(y.sizes().vec(), (std::vector<int64_t>{2, 10}));
  // ViT features are the class token; SqueezeNet's are a map, pooled for the head.
  auto v = make_model("vit_b_32", 10, 64);
  freeze_backbone(*v, "mlp4096", 10, 64);
  EXPECT_EQ(count_trainable_parameters(*v), 768 * 4096 + 4096 + 4096 * 4096 + 4096 + 4096 * 10 + 10);
  auto q = make_model("squeezenet1_0", 10);
  freeze_backbone(*q, "mlp4096", 10, 64);
  EXPECT_EQ(q->forward(torch::randn({1, 3, 64, 64})).sizes().vec(), (std::vector<int64_t>{1, 10}));
  EXPECT_THROW(freeze_backbone(*make_model("resnet18"), "linear", 10, 64), UsageError);
}

TEST(FrozenBackbone, MacsCountTheHeadInsteadOfTheClassifier) {
  auto plain = make_model("resnet18", 10), frozen = make_model("resnet18", 10);
  freeze_backbone(*frozen, "mlp4096", 10, 64);
  const double fc = 512.0 * 10, head = 512.0 * 4096 + 4096.0 * 4096 + 4096.0 * 10;
  EXPECT_DOUBLE_EQ(forward_macs(*frozen, 64), forward_macs(*plain, 64) - fc + head);
}

TEST(FrozenBackbone, TrainModeReachesTheHeadOnlyAndSurvivesCounting) {
  auto m = make_model("resnet18", 10);
  freeze_backbone(*m, "mlp4096", 10, 64);
  m->train(true);
  forward_macs(*m, 64);  // saves and restores the mode
  EXPECT_TRUE(m->is_training());
  EXPECT_TRUE(m->head()->is_training());         // dropout active in the trained head
  for (const auto& child : m->named_children())  // BatchNorm statistics stay fixed
    if (child.key() != "head") EXPECT_FALSE(child.value()->is_training()) << child.key();
  m->eval();
  EXPECT_FALSE(m->head()->is_training());
}

// Against Debian's python3-torchvision, when installed: every parameter name and shape in
// the same order (bucket assignment depends on it), every buffer, and the counts.
TEST(Models, MatchInstalledTorchvisionExactly) {
  const std::string python = "/usr/bin/python3";
  if (std::system((python + " -c 'import torchvision' >/dev/null 2>&1").c_str()) != 0)
    GTEST_SKIP() << "python3-torchvision is not installed (apt-get install python3-torchvision)";
  std::string cmd = python + " " + DDPBENCH_SOURCE_DIR "/tests/tools/torchvision_reference.py";
  for (const auto& n : image_model_names()) cmd += " " + n;
  FILE* f = ::popen(cmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string text;
  char buf[65536];
  size_t got = 0;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, got);
  ASSERT_EQ(::pclose(f), 0) << "torchvision_reference.py failed";
  const auto ref = nlohmann::json::parse(text);
  for (const auto& name : image_model_names()) {
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
