#include "engine/models/registry.hpp"

#include <torch/csrc/autograd/grad_mode.h>

#include <ATen/ops/zeros.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <utility>

#include "core/util/errors.hpp"
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

// A model and the input sizes it takes: at least `min_image` pixels (the smallest size
// torchvision's model runs at; every model here runs at 32, AlexNet's pools need 63),
// and a multiple of `multiple` (a ViT's patch size).
struct Entry {
  std::string name;
  Builder build;
  int64_t min_image = 32, multiple = 1;
  /// The count from the architecture (engine/models/count.hpp); empty: counted by building.
  std::function<ModelCount(int64_t classes, int64_t image)> count;
};

const std::vector<Entry>& builders() {
  static const std::vector<Entry> b = [] {
    std::vector<Entry> out;
    for (const auto& s : resnet_specs())
      out.push_back({s.name, [s](int64_t c, int64_t) { return make_resnet(s, c); }, 32, 1,
                     [s](int64_t c, int64_t image) { return count_resnet(s, c, image); }});
    for (const auto& s : vit_specs())
      out.push_back({s.name, [s](int64_t c, int64_t image) { return make_vit(s, c, image); }, 32, s.patch_size,
                     [s](int64_t c, int64_t image) { return count_vit(s, c, image); }});
    out.push_back({"vgg16", [](int64_t c, int64_t) { return make_vgg16(c); }, 32, 1, count_vgg16});
    out.push_back({"alexnet", [](int64_t c, int64_t) { return make_alexnet(c); }, 63, 1, count_alexnet});
    out.push_back({"densenet121", [](int64_t c, int64_t) { return make_densenet121(c); }, 32, 1, {}});
    out.push_back({"squeezenet1_0", [](int64_t c, int64_t) { return make_squeezenet1_0(c); }, 32, 1, {}});
    return out;
  }();
  return b;
}

}  // namespace

std::vector<std::string> image_model_names() {
  std::vector<std::string> names;
  for (const auto& e : builders()) names.push_back(e.name);
  return names;
}

std::vector<std::string> language_model_names() {
  std::vector<std::string> names;
  for (const auto& s : transformer_specs()) names.push_back(s.name);
  return names;
}

std::vector<std::string> model_names() {
  auto names = image_model_names();
  for (auto& n : language_model_names()) names.push_back(std::move(n));
  return names;
}

bool is_language_model(const std::string& name) { return find_transformer(name) != nullptr; }

TransformerSpec language_model_spec(const std::string& name, const ModelArgs& a) {
  const TransformerSpec* spec = find_transformer(name);
  if (!spec)
    throw UsageError(fmt::format("'{}' is not a language model; choose one of: {}", name,
                                 fmt::join(language_model_names(), ", ")));
  TransformerSpec s = reshaped(*spec, a.layers, a.width);
  check_sequence_length(s, a.seq_len);
  return s;
}

void check_model_args(const std::string& name, const ModelArgs& a) {
  if (is_language_model(name)) language_model_spec(name, a);
  else check_model_input(name, a.image_size);
}

ModelPtr make_model(const std::string& name, const ModelArgs& a) {
  if (is_language_model(name)) return make_transformer(language_model_spec(name, a));
  return make_model(name, a.num_classes, a.image_size);
}

std::optional<ModelCount> count_without_building(const std::string& name, const ModelArgs& a) {
  if (is_language_model(name)) return count_transformer(language_model_spec(name, a), a.seq_len);
  return count_without_building(name, a.num_classes, a.image_size);
}

void check_model_input(const std::string& name, int64_t image_size) {
  if (is_language_model(name)) return;
  const auto it = std::find_if(builders().begin(), builders().end(), [&](const Entry& e) { return e.name == name; });
  if (it == builders().end())
    throw UsageError(fmt::format("unknown model '{}'; choose one of: {} (see 'ddpbench models')", name,
                                 fmt::join(model_names(), ", ")));
  if (image_size < it->min_image)
    throw UsageError(fmt::format("{} needs images of at least {} pixels (got {}); use --image-size {}", name,
                                 it->min_image, image_size, it->min_image));
  if (image_size % it->multiple != 0)
    throw UsageError(
        fmt::format("{} needs an image size that is a multiple of its patch size {} (got {}); use "
                    "--image-size {}",
                    name, it->multiple, image_size, std::max(it->multiple, image_size / it->multiple * it->multiple)));
}

ModelPtr make_model(const std::string& name, int64_t num_classes, int64_t image_size) {
  if (is_language_model(name)) return make_model(name, ModelArgs{});
  check_model_input(name, image_size);
  for (const auto& e : builders())
    if (e.name == name) return e.build(num_classes, image_size);
  throw std::logic_error("unreachable: check_model_input accepted " + name);
}

std::optional<ModelCount> count_without_building(const std::string& name, int64_t num_classes, int64_t image_size) {
  if (is_language_model(name)) return count_without_building(name, ModelArgs{});
  check_model_input(name, image_size);
  for (const auto& e : builders())
    if (e.name == name && e.count) return e.count(num_classes, image_size);
  return std::nullopt;
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
  if (model.vocab_size() > 0)
    throw UsageError("--freeze-backbone trains an image classifier's head; drop it for a language model");
  if (head != "mlp4096") throw UsageError(fmt::format("--head '{}' is unknown; use mlp4096", head));
  int64_t features = 0;
  {
    torch::NoGradGuard ng;
    flops::CountingScope shapes_only;  // only the feature shape is needed
    const bool training = model.is_training();
    model.eval();
    auto f = model.forward_features(at::zeros({1, 3, image_size, image_size}, model.parameters().front().options()));
    features = f.size(1);  // [1, D], or a [1, C, H, W] map the head path pools to its C channels
    model.train(training);
  }
  model.attach_frozen_backbone_head(make_mlp4096_head(features, num_classes));
}

}  // namespace ddpbench
