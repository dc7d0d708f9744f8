#include "engine/models/alexnet.hpp"

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

class AlexNet : public Model {
 public:
  explicit AlexNet(int64_t classes) {
    auto pool = [] { return nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2)); };
    features_ = register_module(
        "features", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(3, 64, 11).stride(4).padding(2)), nn::ReLU(true),
                                   pool(), nn::Conv2d(nn::Conv2dOptions(64, 192, 5).padding(2)), nn::ReLU(true), pool(),
                                   nn::Conv2d(nn::Conv2dOptions(192, 384, 3).padding(1)), nn::ReLU(true),
                                   nn::Conv2d(nn::Conv2dOptions(384, 256, 3).padding(1)), nn::ReLU(true),
                                   nn::Conv2d(nn::Conv2dOptions(256, 256, 3).padding(1)), nn::ReLU(true), pool()));
    classifier_ = register_module(
        "classifier", nn::Sequential(nn::Dropout(0.5), nn::Linear(256 * 6 * 6, 4096), nn::ReLU(true), nn::Dropout(0.5),
                                     nn::Linear(4096, 4096), nn::ReLU(true), nn::Linear(4096, classes)));
    add_unit(features_.ptr());  // one unit: the whole convolution stack
  }
  torch::Tensor forward_features(torch::Tensor x) override {
    return at::adaptive_avg_pool2d(run_unit(0, x, [this](const torch::Tensor& t) { return flops::run(features_, t); }),
                                   {6, 6})
        .flatten(1);
  }
  torch::Tensor classify(torch::Tensor f) override { return flops::run(classifier_, f); }

 private:
  nn::Sequential features_{nullptr}, classifier_{nullptr};
};

}  // namespace

ModelCount count_alexnet(int64_t num_classes, int64_t image_size) {
  ModelCount c;
  int64_t side = c.conv(3, 64, 11, 4, 2, image_size, true);
  side = c.conv(64, 192, 5, 1, 2, pooled_side(side, 3, 2), true);
  side = c.conv(192, 384, 3, 1, 1, pooled_side(side, 3, 2), true);
  side = c.conv(384, 256, 3, 1, 1, side, true);
  c.conv(256, 256, 3, 1, 1, side, true);
  c.linear(256 * 6 * 6, 4096);  // after the adaptive pool to 6 x 6
  c.linear(4096, 4096);
  c.linear(4096, num_classes);
  return c;
}

ModelPtr make_alexnet(int64_t num_classes) { return std::make_shared<AlexNet>(num_classes); }

}  // namespace ddpbench
