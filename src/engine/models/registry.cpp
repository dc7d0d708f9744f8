#include "engine/models/registry.hpp"

#include <torch/csrc/autograd/grad_mode.h>

#include <ATen/ops/zeros.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <utility>

#include "core/errors.hpp"
#include "engine/models/alexnet.hpp"
#include "engine/models/densenet.hpp"
#include "engine/models/flops.hpp"
#include "engine/models/resnet.hpp"
#include "engine/models/squeezenet.hpp"
#include "engine/models/vgg.hpp"
#include "engine/models/vit.hpp"

namespace ddpbench {
namespace {

using Builder = std::function<ModelPtr(int64_t classes, int64_t image)>;

const std::vector<std::pair<std::string, Builder>>& builders() {
  static const std::vector<std::pair<std::string, Builder>> b = [] {
    std::vector<std::pair<std::string, Builder>> out;
    for (const auto& s : resnet_specs())
      out.emplace_back(s.name, [s](int64_t c, int64_t) { return make_resnet(s, c); });
    for (const auto& s : vit_specs())
      out.emplace_back(s.name, [s](int64_t c, int64_t image) { return make_vit(s, c, image); });
    out.emplace_back("vgg16", [](int64_t c, int64_t) { return make_vgg16(c); });
    out.emplace_back("alexnet", [](int64_t c, int64_t) { return make_alexnet(c); });
    out.emplace_back("densenet121", [](int64_t c, int64_t) { return make_densenet121(c); });
    out.emplace_back("squeezenet1_0", [](int64_t c, int64_t) { return make_squeezenet1_0(c); });
    return out;
  }();
  return b;
}

}  // namespace

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& [name, _] : builders()) names.push_back(name);
  return names;
}

ModelPtr make_model(const std::string& name, int64_t num_classes, int64_t image_size) {
  for (const auto& [n, build] : builders())
    if (n == name) return build(num_classes, image_size);
  throw UsageError(fmt::format("unknown model '{}'; choose one of: {} (see 'ddpbench models')", name,
                               fmt::join(model_names(), ", ")));
}

int64_t count_parameters(const torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

int64_t count_trainable_parameters(const torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters())
    if (p.requires_grad()) n += p.numel();
  return n;
}

void freeze_backbone(Model& model, const std::string& head, int64_t num_classes, int64_t image_size) {
  if (head != "mlp4096") throw UsageError(fmt::format("--head '{}' is unknown; use mlp4096", head));
  int64_t features = 0;
  {
    torch::NoGradGuard ng;
    flops::CountingScope shapes_only;  // only the feature shape is needed
    const bool training = model.is_training();
    model.eval();
    auto f = model.forward_features(at::zeros({1, 3, image_size, image_size}, model.parameters().front().options()));
    features = f.numel();  // a 4-D map is average-pooled to its channels by the head path
    if (f.dim() == 4) features = f.size(1);
    model.train(training);
  }
  model.attach_frozen_backbone_head(make_mlp4096_head(features, num_classes));
}

}  // namespace ddpbench
