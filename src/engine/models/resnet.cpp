#include "engine/models/resnet.hpp"

#include "engine/models/flops.hpp"

#include <torch/nn/init.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <ATen/ops/adaptive_avg_pool2d.h>
#include <ATen/ops/max_pool2d.h>

namespace ddpbench {
namespace {

namespace nn = torch::nn;

nn::Conv2d conv3x3(int64_t in, int64_t out, int64_t stride = 1, int64_t groups = 1) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).groups(groups).bias(false));
}

nn::Conv2d conv1x1(int64_t in, int64_t out, int64_t stride = 1) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 1).stride(stride).bias(false));
}

// torchvision.models.resnet.BasicBlock (expansion 1).
class BasicBlockImpl : public nn::Module {
 public:
  BasicBlockImpl(int64_t inplanes, int64_t planes, int64_t stride, nn::Sequential downsample) {
    conv1_ = register_module("conv1", conv3x3(inplanes, planes, stride));
    bn1_ = register_module("bn1", nn::BatchNorm2d(planes));
    conv2_ = register_module("conv2", conv3x3(planes, planes));
    bn2_ = register_module("bn2", nn::BatchNorm2d(planes));
    if (downsample) downsample_ = register_module("downsample", downsample);
  }
  torch::Tensor forward(torch::Tensor x) {
    auto out = bn1_(flops::conv(conv1_, x)).relu_();
    out = bn2_(flops::conv(conv2_, out));
    out += downsample_ ? flops::run(downsample_, x) : x;
    return out.relu_();
  }

 private:
  nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr};
  nn::Sequential downsample_{nullptr};
};
TORCH_MODULE(BasicBlock);

// torchvision.models.resnet.Bottleneck (expansion 4; stride on the 3x3, "ResNet V1.5").
class BottleneckImpl : public nn::Module {
 public:
  BottleneckImpl(int64_t inplanes, int64_t planes, int64_t stride, nn::Sequential downsample, int64_t groups,
                 int64_t base_width) {
    const int64_t width =
        static_cast<int64_t>(static_cast<double>(planes) * (static_cast<double>(base_width) / 64.0)) * groups;
    conv1_ = register_module("conv1", conv1x1(inplanes, width));
    bn1_ = register_module("bn1", nn::BatchNorm2d(width));
    conv2_ = register_module("conv2", conv3x3(width, width, stride, groups));
    bn2_ = register_module("bn2", nn::BatchNorm2d(width));
    conv3_ = register_module("conv3", conv1x1(width, planes * 4));
    bn3_ = register_module("bn3", nn::BatchNorm2d(planes * 4));
    if (downsample) downsample_ = register_module("downsample", downsample);
  }
  torch::Tensor forward(torch::Tensor x) {
    auto out = bn1_(flops::conv(conv1_, x)).relu_();
    out = bn2_(flops::conv(conv2_, out)).relu_();
    out = bn3_(flops::conv(conv3_, out));
    out += downsample_ ? flops::run(downsample_, x) : x;
    return out.relu_();
  }

 private:
  nn::Conv2d conv1_{nullptr}, conv2_{nullptr}, conv3_{nullptr};
  nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr}, bn3_{nullptr};
  nn::Sequential downsample_{nullptr};
};
TORCH_MODULE(Bottleneck);

// torchvision.models.resnet.ResNet.
class ResNet : public Model {
 public:
  ResNet(const ResNetSpec& spec, int64_t num_classes) : spec_(spec) {
    const int64_t expansion = spec.bottleneck ? 4 : 1;
    conv1_ = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(3, 64, 7).stride(2).padding(3).bias(false)));
    bn1_ = register_module("bn1", nn::BatchNorm2d(64));
    const int64_t planes[4] = {64, 128, 256, 512};
    for (int i = 0; i < 4; ++i)
      layers_[i] = register_module("layer" + std::to_string(i + 1),
                                   make_layer(planes[i], spec.layers[static_cast<size_t>(i)], i == 0 ? 1 : 2));
    fc_ = register_module("fc", nn::Linear(512 * expansion, num_classes));
    for (auto& layer : layers_)
      for (auto& block : *layer) {
        blocks_.push_back(block);
        add_unit(block.ptr());
      }

    // torchvision's init: Kaiming-normal (fan_out, relu) convolutions; BatchNorm 1 / 0.
    torch::NoGradGuard no_grad;
    if (!flops::initialising_weights()) return;
    for (auto& m : modules(/*include_self=*/false)) {
      if (auto* conv = m->as<nn::Conv2d>()) {
        nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
      } else if (auto* bn = m->as<nn::BatchNorm2d>()) {
        nn::init::constant_(bn->weight, 1.0);
        nn::init::constant_(bn->bias, 0.0);
      }
    }
  }

  torch::Tensor forward_features(torch::Tensor x) override {
    x = bn1_(flops::conv(conv1_, x)).relu_();
    x = at::max_pool2d(x, {3, 3}, {2, 2}, {1, 1});
    for (size_t i = 0; i < blocks_.size(); ++i)
      x = run_unit(i, x, [this, i](const torch::Tensor& t) { return blocks_[i].forward(t); });
    return at::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
  }
  torch::Tensor classify(torch::Tensor f) override { return flops::linear(fc_, f); }

 private:
  nn::Sequential make_layer(int64_t planes, int blocks, int64_t stride) {
    const int64_t expansion = spec_.bottleneck ? 4 : 1;
    nn::Sequential downsample{nullptr};
    if (stride != 1 || inplanes_ != planes * expansion) {
      downsample = nn::Sequential(conv1x1(inplanes_, planes * expansion, stride), nn::BatchNorm2d(planes * expansion));
    }
    nn::Sequential seq;
    for (int b = 0; b < blocks; ++b) {
      const int64_t s = b == 0 ? stride : 1;
      nn::Sequential ds = b == 0 ? downsample : nn::Sequential{nullptr};
      if (spec_.bottleneck) seq->push_back(Bottleneck(inplanes_, planes, s, ds, spec_.groups, spec_.width_per_group));
      else seq->push_back(BasicBlock(inplanes_, planes, s, ds));
      inplanes_ = planes * expansion;
    }
    return seq;
  }

  ResNetSpec spec_;
  int64_t inplanes_ = 64;
  nn::Conv2d conv1_{nullptr};
  nn::BatchNorm2d bn1_{nullptr};
  nn::Sequential layers_[4] = {nn::Sequential{nullptr}, nn::Sequential{nullptr}, nn::Sequential{nullptr},
                               nn::Sequential{nullptr}};
  nn::Linear fc_{nullptr};
  std::vector<nn::AnyModule> blocks_;  // the units: every block of layer1..layer4
};

}  // namespace

const std::vector<ResNetSpec>& resnet_specs() {
  static const std::vector<ResNetSpec> specs = {
      {"resnet18", false, {2, 2, 2, 2}, 1, 64},         {"resnet34", false, {3, 4, 6, 3}, 1, 64},
      {"resnet50", true, {3, 4, 6, 3}, 1, 64},          {"resnet101", true, {3, 4, 23, 3}, 1, 64},
      {"resnet152", true, {3, 8, 36, 3}, 1, 64},        {"resnext50_32x4d", true, {3, 4, 6, 3}, 32, 4},
      {"resnext101_32x8d", true, {3, 4, 23, 3}, 32, 8}, {"wide_resnet50_2", true, {3, 4, 6, 3}, 1, 128},
  };
  return specs;
}

ModelCount count_resnet(const ResNetSpec& spec, int64_t num_classes, int64_t image_size) {
  ModelCount c;
  const int64_t expansion = spec.bottleneck ? 4 : 1;
  int64_t side = c.conv(3, 64, 7, 2, 3, image_size, false);  // conv1
  c.norm(64);
  side = pooled_side(side, 3, 2, 1);  // max pool
  int64_t inplanes = 64;
  const int64_t planes[4] = {64, 128, 256, 512};
  for (int i = 0; i < 4; ++i) {
    for (int b = 0; b < spec.layers[static_cast<size_t>(i)]; ++b) {
      const int64_t p = planes[i], stride = (b == 0 && i > 0) ? 2 : 1, in_side = side;
      if (spec.bottleneck) {
        const int64_t width = static_cast<int64_t>(static_cast<double>(p) * (static_cast<double>(spec.width_per_group) / 64.0)) *
                              spec.groups;
        c.conv(inplanes, width, 1, 1, 0, in_side, false);
        c.norm(width);
        side = c.conv(width, width, 3, stride, 1, in_side, false, spec.groups);
        c.norm(width);
        c.conv(width, p * 4, 1, 1, 0, side, false);
        c.norm(p * 4);
      } else {
        side = c.conv(inplanes, p, 3, stride, 1, in_side, false);
        c.norm(p);
        c.conv(p, p, 3, 1, 1, side, false);
        c.norm(p);
      }
      if (b == 0 && (stride != 1 || inplanes != p * expansion)) {  // downsample
        c.conv(inplanes, p * expansion, 1, stride, 0, in_side, false);
        c.norm(p * expansion);
      }
      inplanes = p * expansion;
    }
  }
  c.linear(512 * expansion, num_classes);  // fc
  return c;
}

ModelPtr make_resnet(const ResNetSpec& spec, int64_t num_classes) {
  return std::make_shared<ResNet>(spec, num_classes);
}

}  // namespace ddpbench
