#include "engine/models/model.hpp"

#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/activation.h>

#include <ATen/ops/adaptive_avg_pool2d.h>
#include <torch/nn/functional/loss.h>

#include "engine/models/flops.hpp"

namespace ddpbench {

torch::Tensor Model::forward(torch::Tensor x) {
  auto f = forward_features(std::move(x));
  if (!head_) return classify(f);
  if (f.dim() == 4) f = at::adaptive_avg_pool2d(f, {1, 1}).flatten(1);
  return flops::run(head_, f);
}

torch::Tensor Model::loss(const torch::Tensor& output, const torch::Tensor& target) {
  return torch::nn::functional::cross_entropy(output, target);
}

void Model::attach_frozen_backbone_head(torch::nn::Sequential head) {
  for (auto& p : parameters()) p.set_requires_grad(false);
  head_ = register_module("head", std::move(head));
  train(is_training());
}

void Model::train(bool on) {
  torch::nn::Module::train(on);  // this module, so is_training() reports `on`, and every child
  if (!head_) return;
  for (auto& child : named_children())  // a frozen backbone stays in eval mode
    if (child.key() != "head") child.value()->train(false);
}

Model::UnitRunner Model::set_unit_runner(UnitRunner runner) {
  std::swap(runner_, runner);
  return runner;
}

torch::Tensor Model::run_unit(size_t i, const torch::Tensor& x, const UnitFn& fn) {
  return runner_ ? runner_(i, x, fn) : fn(x);
}

torch::nn::Sequential make_mlp4096_head(int64_t in_features, int64_t num_classes) {
  namespace nn = torch::nn;
  return nn::Sequential(nn::Linear(in_features, 4096), nn::ReLU(), nn::Dropout(0.5), nn::Linear(4096, 4096), nn::ReLU(),
                        nn::Dropout(0.5), nn::Linear(4096, num_classes));
}

}  // namespace ddpbench
