// Common interface of the benchmark models, and the optional trainable head of the
// fixed-feature-extractor study (--freeze-backbone --head mlp4096).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/types.h>

#include <memory>
#include <string>

namespace ddpbench {

/// An image classifier: forward maps a float tensor [N, 3, H, W] to logits
/// [N, num_classes] as classify(forward_features(x)). Parameter and buffer names follow
/// torchvision's state_dict ("conv1.weight", "layer1.0.bn1.running_mean", ...).
class Model : public torch::nn::Module {
 public:
  using torch::nn::Module::Module;
  ~Model() override = default;

  /// Logits [N, classes]: the attached head on the pooled features when there is one,
  /// else the model's own classifier.
  torch::Tensor forward(torch::Tensor x);

  /// Everything before the classifier: [N, D] or, for models whose classifier is
  /// convolutional (SqueezeNet), [N, C, H, W].
  virtual torch::Tensor forward_features(torch::Tensor x) = 0;
  /// The model's own classifier on forward_features' output.
  virtual torch::Tensor classify(torch::Tensor features) = 0;

  /// Freezes every parameter of the model (requires_grad false, BatchNorm in eval mode
  /// via train()) and routes forward through `head`, registered as "head", on the
  /// features average-pooled to [N, D]. The model's own classifier stays registered
  /// (frozen, unused). Only the head's parameters then require gradients.
  void attach_frozen_backbone_head(torch::nn::Sequential head);
  bool has_head() const { return static_cast<bool>(head_); }
  /// The attached head (null without one).
  const torch::nn::Sequential& head() const { return head_; }

  /// Switches train/eval mode; a frozen backbone always stays in eval mode (its
  /// BatchNorm statistics are part of the fixed feature extractor), the head follows.
  void train(bool on = true) override;

 private:
  torch::nn::Sequential head_{nullptr};
};

using ModelPtr = std::shared_ptr<Model>;

/// The MLP head of the fixed-feature-extractor study ("mlp4096"): Linear(in, 4096),
/// ReLU, Dropout(0.5), Linear(4096, 4096), ReLU, Dropout(0.5), Linear(4096, classes),
/// the shape of torchvision's VGG classifier. Parameter names "0.weight", "3.weight", "6.weight".
torch::nn::Sequential make_mlp4096_head(int64_t in_features, int64_t num_classes);

}  // namespace ddpbench
