// DenseNet-121, the same architecture, initialisation and state_dict names as
// torchvision/models/densenet.py (Huang et al. 2017, arXiv:1608.06993).
#pragma once

#include "engine/models/model.hpp"

namespace ddpbench {

/// densenet121 (growth 32, blocks 6-12-24-16, 64 initial features, bottleneck 4) with a
/// `num_classes`-way classifier.
ModelPtr make_densenet121(int64_t num_classes);

}  // namespace ddpbench
