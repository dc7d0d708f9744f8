#include "engine/models/flops.hpp"

#include <torch/csrc/autograd/grad_mode.h>

#include <ATen/ops/linear.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>

#include "engine/compat.hpp"
#include "engine/models/model.hpp"

namespace ddpbench {
namespace flops {

Counter& counter() {
  thread_local Counter c;
  return c;
}

namespace {

// Output of a convolution without computing it: PyTorch's shape rule
// floor((in + 2 pad - dilation (kernel - 1) - 1) / stride) + 1 per spatial dimension.
torch::Tensor conv_shape_only(const torch::nn::Conv2dImpl& c, const torch::Tensor& x) {
  const auto& o = c.options;
  std::vector<int64_t> shape = {x.size(0), o.out_channels()};
  const auto pads = compat::conv2d_padding(o);  // the models use explicit padding only
  for (int d = 0; d < 2; ++d) {
    const int64_t p = pads[static_cast<size_t>(d)];
    TORCH_CHECK(p >= 0, "FLOP counting supports explicit convolution padding only, not 'same'/'valid'");
    const int64_t in = x.size(2 + d), k = (*o.kernel_size())[d], s = (*o.stride())[d], dil = (*o.dilation())[d];
    shape.push_back((in + 2 * p - dil * (k - 1) - 1) / s + 1);
  }
  return at::zeros(shape, x.options());
}

// While counting: the convolution's output shape (zeros) and its MACs,
// output elements x (in_channels / groups) x kernel area.
torch::Tensor counted_conv(const torch::nn::Conv2dImpl& c, const torch::Tensor& x) {
  auto y = conv_shape_only(c, x);
  const auto& o = c.options;
  const auto k = o.kernel_size();
  counter().macs += static_cast<double>(y.numel()) * static_cast<double>(o.in_channels() / o.groups()) *
                    static_cast<double>(k->at(0) * k->at(1));
  return y;
}

}  // namespace

namespace {
bool& count_only_build() {
  thread_local bool on = false;
  return on;
}
}  // namespace

CountOnlyBuild::CountOnlyBuild() : saved_(count_only_build()) { count_only_build() = true; }
CountOnlyBuild::~CountOnlyBuild() { count_only_build() = saved_; }
bool initialising_weights() { return !count_only_build(); }

CountingScope::CountingScope() : saved_(counter()) { counter() = Counter{true, 0.0}; }
CountingScope::~CountingScope() { counter() = saved_; }

torch::Tensor conv(torch::nn::Conv2d& m, const torch::Tensor& x) { return counter().on ? counted_conv(*m, x) : m(x); }

torch::Tensor linear(torch::nn::Linear& m, const torch::Tensor& x) {
  return counter().on ? linear(x, m->weight, m->bias) : m(x);
}

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  if (!counter().on) return at::linear(x, weight, bias);
  auto shape = x.sizes().vec();
  shape.back() = weight.size(0);
  auto y = at::zeros(shape, x.options());
  counter().macs += static_cast<double>(y.numel()) * static_cast<double>(weight.size(1));
  return y;
}

torch::Tensor attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  if (!counter().on) return compat::attention(q, k, v);
  counter().macs += 2.0 * static_cast<double>(q.size(0) * q.size(1)) * static_cast<double>(q.size(2)) *
                    static_cast<double>(k.size(2)) * static_cast<double>(q.size(3));
  return at::zeros_like(q);
}

torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  if (!counter().on) return compat::causal_attention(q, k, v);
  counter().macs += 2.0 * static_cast<double>(q.size(0) * q.size(1)) * static_cast<double>(q.size(2)) *
                    static_cast<double>(k.size(2)) * static_cast<double>(q.size(3));
  return at::zeros_like(q);
}

torch::Tensor run(torch::nn::Sequential& seq, torch::Tensor x) {
  for (auto& any : *seq) {
    if (counter().on) {
      if (auto* c = any.ptr()->as<torch::nn::Conv2d>()) {
        x = counted_conv(*c, x);
        continue;
      }
      if (auto* l = any.ptr()->as<torch::nn::Linear>()) {
        x = linear(x, l->weight, l->bias);
        continue;
      }
    }
    x = any.forward<torch::Tensor>(x);
  }
  return x;
}

}  // namespace flops

double forward_macs(Model& model, int image_size) {
  torch::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  double macs = 0;
  {
    flops::CountingScope counting;
    model.forward(at::zeros({1, 3, image_size, image_size}, model.parameters().front().options()));
    macs = counting.macs();
  }
  model.train(was_training);
  return macs;
}

}  // namespace ddpbench
