// Common interface of the benchmark models, and the optional trainable head of the
// fixed-feature-extractor study (--freeze-backbone --head mlp4096).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ddpbench {

/// A benchmark model. An image classifier: forward maps a float tensor [N, 3, H, W] to logits
/// [N, num_classes] as classify(forward_features(x)). Parameter and buffer names follow
/// torchvision's state_dict ("conv1.weight", "layer1.0.bn1.running_mean", ...). A language
/// model (engine/models/transformer.hpp, vocab_size() > 0) maps token ids [N, T] to logits
/// [N, T, vocab] the same way: forward_features is the embedding and the blocks, classify
/// the final norm's output through the head.
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

  /// The training loss of forward's output against the batch's target, a scalar: the mean
  /// cross-entropy of logits [N, classes] against int64 labels [N]; a language model's over
  /// the vocabulary at every position (logits [N, T, vocab], targets [N, T]).
  virtual torch::Tensor loss(const torch::Tensor& output, const torch::Tensor& target);
  /// Tokens in a language model's vocabulary (its input is int64 token ids [N, T]); 0 for an
  /// image classifier.
  virtual int64_t vocab_size() const { return 0; }

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

  // ---- Units: the model's natural blocks, the granularity of activation checkpointing
  // (engine/train/checkpoint.hpp) and of FSDP's parameter sharding (engine/dist/sharded.hpp).
  // Which blocks each family exposes (in forward order):
  //   ResNet family: every BasicBlock / Bottleneck of layer1..layer4 (resnet50: 16 units);
  //   ViT: every encoder layer (vit_b_16: 12);
  //   DenseNet: every dense block and transition (densenet121: 7);
  //   VGG, AlexNet, SqueezeNet: the whole `features` Sequential as one unit (their
  //     parameters sit mostly in the classifier, which stays in the root group; finer units
  //     would save little and split the convolution stack at arbitrary points).
  // Parameters outside every unit (stem, final norms, classifier, an attached head) form
  // the "root" group. A unit maps one tensor to one tensor.

  /// One unit's computation: input -> output, with the unit's own parameters.
  using UnitFn = std::function<torch::Tensor(const torch::Tensor&)>;
  /// How a unit is run: (unit index, input, the unit's computation) -> output. The default
  /// (no runner) is fn(x). A runner may run fn more than once (checkpointing recomputes it).
  using UnitRunner = std::function<torch::Tensor(size_t, const torch::Tensor&, const UnitFn&)>;

  /// The units in forward order (registered submodules of this model).
  const std::vector<std::shared_ptr<torch::nn::Module>>& units() const { return units_; }
  /// Installs `runner` for every unit (null: back to fn(x)). The previous one is returned
  /// so a wrapper can call it (FSDP's runner wraps the checkpointing one).
  UnitRunner set_unit_runner(UnitRunner runner);
  /// The installed runner (null when none).
  const UnitRunner& unit_runner() const { return runner_; }

 protected:
  /// Declares `m` (already registered) as the next unit; the constructors call it in forward order.
  void add_unit(std::shared_ptr<torch::nn::Module> m) { units_.push_back(std::move(m)); }
  /// Runs unit `i` on `x`: forward_features calls it for each unit. Default: the installed
  /// runner, or fn(x) without one; a family may override it (e.g. to add per-unit work).
  virtual torch::Tensor run_unit(size_t i, const torch::Tensor& x, const UnitFn& fn);

 private:
  torch::nn::Sequential head_{nullptr};
  std::vector<std::shared_ptr<torch::nn::Module>> units_;
  UnitRunner runner_;
};

using ModelPtr = std::shared_ptr<Model>;

/// The MLP head of the fixed-feature-extractor study ("mlp4096"): Linear(in, 4096),
/// ReLU, Dropout(0.5), Linear(4096, 4096), ReLU, Dropout(0.5), Linear(4096, classes),
/// the shape of torchvision's VGG classifier. Parameter names "0.weight", "3.weight", "6.weight".
torch::nn::Sequential make_mlp4096_head(int64_t in_features, int64_t num_classes);

}  // namespace ddpbench
