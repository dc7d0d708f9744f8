// Multiply-accumulate (MAC) counting of a forward pass, by layer. Models call conv(),
// linear(), attention() and run() around their layers; counting is off (one thread-local branch)
// unless forward_macs() runs the model.
//
// Method (docs/METHODOLOGY.md): MACs of convolutions (output elements x in/groups x
// kernel area), linear layers (output elements x in_features) and attention matrix
// products (QK^T and AV); normalisation, activations, pooling, softmax and additions
// are not counted. torchvision's documentation counts "GFLOPS" the same way (one
// multiply-add = one operation): 4.09 for resnet50, 17.56 for vit_b_16 at 224x224.
// FLOPs = 2 x MACs; a training step is 3 x the forward FLOPs (forward + 2 x backward).
#pragma once

#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

namespace ddpbench {

class Model;

namespace flops {

/// Whether the current thread is counting, and the count so far. While counting,
/// convolutions and linear layers are not computed: they return zeros of the shape they
/// would produce (the count needs only shapes), so counting a 60-GMAC model is fast.
struct Counter {
  bool on = false;
  double macs = 0;
};
Counter& counter();

/// Counting on the current thread for the scope's lifetime; the count it collected.
class CountingScope {
 public:
  CountingScope();
  ~CountingScope();
  CountingScope(const CountingScope&) = delete;
  CountingScope& operator=(const CountingScope&) = delete;
  double macs() const { return counter().macs; }

 private:
  Counter saved_;
};

/// While alive on this thread, the models skip torchvision's initialisation of their
/// weights (libtorch's default initialisation in each layer's constructor remains), which
/// is most of the time of building one: for `ddpbench models`, which counts parameters and
/// multiply-adds and never trains. Never around a model that runs for a measurement.
class CountOnlyBuild {
 public:
  CountOnlyBuild();
  ~CountOnlyBuild();
  CountOnlyBuild(const CountOnlyBuild&) = delete;
  CountOnlyBuild& operator=(const CountOnlyBuild&) = delete;

 private:
  bool saved_;
};
/// Whether the models' own weight initialisation runs on this thread (no CountOnlyBuild alive).
bool initialising_weights();

/// Runs `m` on `x` (or, while counting, returns zeros of its output shape) and counts its MACs.
torch::Tensor conv(torch::nn::Conv2d& m, const torch::Tensor& x);
torch::Tensor linear(torch::nn::Linear& m, const torch::Tensor& x);
/// at::linear(x, weight, bias) for a weight held outside a Linear module (attention's
/// in_proj), counted and, while counting, not computed.
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);
/// Attention softmax(q k^T / sqrt(d)) v for [N, H, S, d] inputs (compat::attention: fused
/// where the linked torch has it), counting QK^T and AV (2 N H S^2 d MACs); while
/// counting, zeros of q's shape.
torch::Tensor attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);
/// Causal attention (compat::causal_attention) of [N, H, T, d] inputs, counted as attention()
/// counts (the full 2 N H T^2 d MACs, the convention of the PaLM paper's FLOPs formula, which
/// does not halve for the mask); while counting, zeros of q's shape.
torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);
/// Runs `x` through every module of `seq` in order, counting convolutions and linear layers.
torch::Tensor run(torch::nn::Sequential& seq, torch::Tensor x);

}  // namespace flops

/// MACs per example of one forward pass of `model` on image_size x image_size inputs:
/// one batch-1 forward on the model's device without gradients, counting as above.
double forward_macs(Model& model, int image_size);

}  // namespace ddpbench
