#include "engine/models/squeezenet.hpp"

#include <torch/nn/init.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/pooling.h>

#include <ATen/ops/cat.h>

#include "engine/models/flops.hpp"

namespace ddpbench {
namespace {

namespace nn = torch::nn;

// Fire: squeeze 1x1 -> ReLU -> [expand 1x1 -> ReLU, expand 3x3 -> ReLU] concatenated.
class FireImpl : public nn::Module {
 public:
  FireImpl(int64_t in, int64_t squeeze, int64_t e1, int64_t e3) {
    squeeze_ = register_module("squeeze", nn::Conv2d(nn::Conv2dOptions(in, squeeze, 1)));
    squeeze_activation_ = register_module("squeeze_activation", nn::ReLU(true));
    expand1x1_ = register_module("expand1x1", nn::Conv2d(nn::Conv2dOptions(squeeze, e1, 1)));
    expand1x1_activation_ = register_module("expand1x1_activation", nn::ReLU(true));
    expand3x3_ = register_module("expand3x3", nn::Conv2d(nn::Conv2dOptions(squeeze, e3, 3).padding(1)));
    expand3x3_activation_ = register_module("expand3x3_activation", nn::ReLU(true));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto s = squeeze_activation_(flops::conv(squeeze_, x));
    return at::cat(
        {expand1x1_activation_(flops::conv(expand1x1_, s)), expand3x3_activation_(flops::conv(expand3x3_, s))}, 1);
  }

 private:
  nn::Conv2d squeeze_{nullptr}, expand1x1_{nullptr}, expand3x3_{nullptr};
  nn::ReLU squeeze_activation_{nullptr}, expand1x1_activation_{nullptr}, expand3x3_activation_{nullptr};
};
TORCH_MODULE(Fire);

class SqueezeNet : public Model {
 public:
  explicit SqueezeNet(int64_t classes) {
    auto pool = [] { return nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).ceil_mode(true)); };
    features_ = register_module(
        "features", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(3, 96, 7).stride(2)), nn::ReLU(true), pool(),
                                   Fire(96, 16, 64, 64), Fire(128, 16, 64, 64), Fire(128, 32, 128, 128), pool(),
                                   Fire(256, 32, 128, 128), Fire(256, 48, 192, 192), Fire(384, 48, 192, 192),
                                   Fire(384, 64, 256, 256), pool(), Fire(512, 64, 256, 256)));
    final_conv_ = nn::Conv2d(nn::Conv2dOptions(512, classes, 1));
    classifier_ =
        register_module("classifier", nn::Sequential(nn::Dropout(0.5), final_conv_, nn::ReLU(true),
                                                     nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({1, 1}))));
    add_unit(features_.ptr());  // one unit: the whole convolution stack
    torch::NoGradGuard ng;
    if (!flops::initialising_weights()) return;
    for (auto& m : modules(false)) {
      if (auto* c = m->as<nn::Conv2d>()) {
        if (c == final_conv_.get()) nn::init::normal_(c->weight, 0.0, 0.01);
        else nn::init::kaiming_uniform_(c->weight);  // torchvision: default a=0, fan_in
        nn::init::zeros_(c->bias);
      }
    }
  }
  torch::Tensor forward_features(torch::Tensor x) override {
    return run_unit(0, x, [this](const torch::Tensor& t) { return flops::run(features_, t); });
  }
  torch::Tensor classify(torch::Tensor f) override { return flops::run(classifier_, f).flatten(1); }

 private:
  nn::Sequential features_{nullptr}, classifier_{nullptr};
  nn::Conv2d final_conv_{nullptr};
};

}  // namespace

ModelPtr make_squeezenet1_0(int64_t num_classes) { return std::make_shared<SqueezeNet>(num_classes); }

}  // namespace ddpbench
