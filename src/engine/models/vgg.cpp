#include "engine/models/vgg.hpp"

#include <torch/nn/init.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>

#include <ATen/ops/adaptive_avg_pool2d.h>

#include "engine/models/flops.hpp"

namespace ddpbench {
namespace {

namespace nn = torch::nn;

class VGG : public Model {
 public:
  explicit VGG(int64_t classes) {
    // cfg "D": 64 64 M 128 128 M 256 256 256 M 512 512 512 M 512 512 512 M; ReLU after each conv.
    const int cfg[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};
    nn::Sequential features;
    int64_t in = 3;
    for (int v : cfg) {
      if (v == 0) {
        features->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2).stride(2)));
      } else {
        features->push_back(nn::Conv2d(nn::Conv2dOptions(in, v, 3).padding(1)));
        features->push_back(nn::ReLU(nn::ReLUOptions(true)));
        in = v;
      }
    }
    features_ = register_module("features", features);
    classifier_ = register_module("classifier", nn::Sequential(nn::Linear(512 * 7 * 7, 4096), nn::ReLU(true),
                                                               nn::Dropout(0.5), nn::Linear(4096, 4096), nn::ReLU(true),
                                                               nn::Dropout(0.5), nn::Linear(4096, classes)));
    add_unit(features_.ptr());  // one unit: the whole convolution stack
    torch::NoGradGuard ng;
    if (!flops::initialising_weights()) return;
    for (auto& m : modules(false)) {
      if (auto* c = m->as<nn::Conv2d>()) {
        nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
        nn::init::zeros_(c->bias);
      } else if (auto* l = m->as<nn::Linear>()) {
        nn::init::normal_(l->weight, 0.0, 0.01);
        nn::init::zeros_(l->bias);
      }
    }
  }
  torch::Tensor forward_features(torch::Tensor x) override {
    return at::adaptive_avg_pool2d(run_unit(0, x, [this](const torch::Tensor& t) { return flops::run(features_, t); }),
                                   {7, 7})
        .flatten(1);
  }
  torch::Tensor classify(torch::Tensor f) override { return flops::run(classifier_, f); }

 private:
  nn::Sequential features_{nullptr}, classifier_{nullptr};
};

}  // namespace

ModelCount count_vgg16(int64_t num_classes, int64_t image_size) {
  ModelCount c;
  const int cfg[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};
  int64_t in = 3, side = image_size;
  for (int v : cfg) {
    if (v == 0) {
      side = pooled_side(side, 2, 2);
    } else {
      c.conv(in, v, 3, 1, 1, side, true);
      in = v;
    }
  }
  c.linear(512 * 7 * 7, 4096);  // after the adaptive pool to 7 x 7
  c.linear(4096, 4096);
  c.linear(4096, num_classes);
  return c;
}

ModelPtr make_vgg16(int64_t num_classes) { return std::make_shared<VGG>(num_classes); }

}  // namespace ddpbench
