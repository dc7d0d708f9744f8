// Common interface of the benchmark models.
#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

#include <memory>
#include <string>

namespace ddpbench {

/// An image classifier: forward maps a float tensor [N, 3, H, W] to logits
/// [N, num_classes]. Parameter and buffer names follow torchvision's state_dict
/// ("conv1.weight", "layer1.0.bn1.running_mean", ...).
class Model : public torch::nn::Module {
 public:
  using torch::nn::Module::Module;
  ~Model() override = default;
  virtual torch::Tensor forward(torch::Tensor x) = 0;
};

using ModelPtr = std::shared_ptr<Model>;

}  // namespace ddpbench
