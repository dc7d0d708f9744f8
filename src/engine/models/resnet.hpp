// ResNet, ResNeXt and Wide ResNet, the same architecture, initialisation and
// state_dict names as torchvision/models/resnet.py (He et al. 2016, arXiv:1512.03385;
// Xie et al. 2017, arXiv:1611.05431; Zagoruyko & Komodakis 2016, arXiv:1605.07146).
#pragma once

#include "engine/models/count.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "engine/models/model.hpp"

namespace ddpbench {

/// Shape of one ResNet variant.
struct ResNetSpec {
  std::string name;         ///< torchvision's builder name, e.g. "resnet50"
  bool bottleneck = false;  ///< Bottleneck (expansion 4) or BasicBlock (expansion 1)
  std::vector<int> layers;  ///< blocks in layer1..layer4
  int64_t groups = 1;       ///< grouped 3x3 convolutions (ResNeXt cardinality)
  int64_t width_per_group = 64;
};

/// The variants ddpbench ships: resnet18/34/50/101/152, resnext50_32x4d,
/// resnext101_32x8d, wide_resnet50_2.
const std::vector<ResNetSpec>& resnet_specs();

/// Builds `spec` with a `num_classes`-way classifier, initialised as torchvision
/// does (Kaiming-normal fan_out convolutions, BatchNorm weight 1 / bias 0, default
/// Linear init). Draws from torch's global generator: seed it first for determinism.
ModelPtr make_resnet(const ResNetSpec& spec, int64_t num_classes);
/// make_resnet's parameters and forward MACs per example at image_size x image_size,
/// counted from the architecture without building it (engine/models/count.hpp).
ModelCount count_resnet(const ResNetSpec& spec, int64_t num_classes, int64_t image_size);

}  // namespace ddpbench
