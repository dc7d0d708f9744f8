#include "engine/models/densenet.hpp"

#include <torch/nn/init.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <ATen/ops/adaptive_avg_pool2d.h>
#include <ATen/ops/avg_pool2d.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/max_pool2d.h>
#include <ATen/ops/relu.h>

#include <fmt/format.h>

#include "engine/models/flops.hpp"

namespace ddpbench {
namespace {

namespace nn = torch::nn;

// _DenseLayer: norm1, relu1, conv1 (1x1 to bn_size*growth), norm2, relu2, conv2 (3x3 to growth).
class DenseLayerImpl : public nn::Module {
 public:
  DenseLayerImpl(int64_t in, int64_t growth, int64_t bn_size) {
    norm1_ = register_module("norm1", nn::BatchNorm2d(in));
    conv1_ = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(in, bn_size * growth, 1).bias(false)));
    norm2_ = register_module("norm2", nn::BatchNorm2d(bn_size * growth));
    conv2_ =
        register_module("conv2", nn::Conv2d(nn::Conv2dOptions(bn_size * growth, growth, 3).padding(1).bias(false)));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto y = flops::conv(conv1_, at::relu(norm1_(x)));
    return flops::conv(conv2_, at::relu(norm2_(y)));
  }

 private:
  nn::BatchNorm2d norm1_{nullptr}, norm2_{nullptr};
  nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
};
TORCH_MODULE(DenseLayer);

// _DenseBlock: every layer sees the concatenation of all earlier outputs.
class DenseBlockImpl : public nn::Module {
 public:
  DenseBlockImpl(int num_layers, int64_t in, int64_t growth, int64_t bn_size) {
    for (int i = 0; i < num_layers; ++i)
      layers_.push_back(
          register_module(fmt::format("denselayer{}", i + 1), DenseLayer(in + i * growth, growth, bn_size)));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    std::vector<torch::Tensor> features{x};
    for (auto& l : layers_) features.push_back(l(at::cat(features, 1)));
    return at::cat(features, 1);
  }

 private:
  std::vector<DenseLayer> layers_;
};
TORCH_MODULE(DenseBlock);

// _Transition: norm, relu, conv (1x1), 2x2 average pool.
class TransitionImpl : public nn::Module {
 public:
  TransitionImpl(int64_t in, int64_t out) {
    norm_ = register_module("norm", nn::BatchNorm2d(in));
    conv_ = register_module("conv", nn::Conv2d(nn::Conv2dOptions(in, out, 1).bias(false)));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    return at::avg_pool2d(flops::conv(conv_, at::relu(norm_(x))), {2, 2}, {2, 2});
  }

 private:
  nn::BatchNorm2d norm_{nullptr};
  nn::Conv2d conv_{nullptr};
};
TORCH_MODULE(Transition);

class DenseNet : public Model {
 public:
  explicit DenseNet(int64_t classes) {
    const int64_t growth = 32, bn_size = 4;
    const int blocks[] = {6, 12, 24, 16};
    features_ = register_module("features", std::make_shared<nn::Module>());
    conv0_ =
        features_->register_module("conv0", nn::Conv2d(nn::Conv2dOptions(3, 64, 7).stride(2).padding(3).bias(false)));
    norm0_ = features_->register_module("norm0", nn::BatchNorm2d(64));
    int64_t num = 64;
    for (int i = 0; i < 4; ++i) {
      blocks_.push_back(
          features_->register_module(fmt::format("denseblock{}", i + 1), DenseBlock(blocks[i], num, growth, bn_size)));
      num += blocks[i] * growth;
      if (i != 3) {
        transitions_.push_back(
            features_->register_module(fmt::format("transition{}", i + 1), Transition(num, num / 2)));
        num /= 2;
      }
    }
    norm5_ = features_->register_module("norm5", nn::BatchNorm2d(num));
    classifier_ = register_module("classifier", nn::Linear(num, classes));
    for (size_t i = 0; i < blocks_.size(); ++i) {  // units in forward order: block, transition, ...
      add_unit(blocks_[i].ptr());
      if (i < transitions_.size()) add_unit(transitions_[i].ptr());
    }
    torch::NoGradGuard ng;
    if (!flops::initialising_weights()) return;
    for (auto& m : modules(false)) {
      if (auto* c = m->as<nn::Conv2d>()) {
        nn::init::kaiming_normal_(c->weight);  // torchvision: default mode fan_in, leaky_relu(0)
      } else if (auto* bn = m->as<nn::BatchNorm2d>()) {
        nn::init::ones_(bn->weight);
        nn::init::zeros_(bn->bias);
      } else if (auto* l = m->as<nn::Linear>()) {
        nn::init::zeros_(l->bias);
      }
    }
  }
  torch::Tensor forward_features(torch::Tensor x) override {
    x = at::max_pool2d(at::relu(norm0_(flops::conv(conv0_, x))), {3, 3}, {2, 2}, {1, 1});
    size_t u = 0;
    for (size_t i = 0; i < blocks_.size(); ++i) {
      x = run_unit(u++, x, [this, i](const torch::Tensor& t) { return blocks_[i](t); });
      if (i < transitions_.size())
        x = run_unit(u++, x, [this, i](const torch::Tensor& t) { return transitions_[i](t); });
    }
    return at::adaptive_avg_pool2d(at::relu(norm5_(x)), {1, 1}).flatten(1);
  }
  torch::Tensor classify(torch::Tensor f) override { return flops::linear(classifier_, f); }

 private:
  std::shared_ptr<nn::Module> features_;
  nn::Conv2d conv0_{nullptr};
  nn::BatchNorm2d norm0_{nullptr}, norm5_{nullptr};
  std::vector<DenseBlock> blocks_;
  std::vector<Transition> transitions_;
  nn::Linear classifier_{nullptr};
};

}  // namespace

ModelPtr make_densenet121(int64_t num_classes) { return std::make_shared<DenseNet>(num_classes); }

}  // namespace ddpbench
