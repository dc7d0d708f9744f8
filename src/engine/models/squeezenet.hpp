// SqueezeNet 1.0, the same architecture, initialisation and state_dict names as
// torchvision/models/squeezenet.py (Iandola et al. 2016, arXiv:1602.07360).
#pragma once

#include "engine/models/model.hpp"

namespace ddpbench {

/// squeezenet1_0 with a `num_classes`-way (convolutional) classifier.
ModelPtr make_squeezenet1_0(int64_t num_classes);

}  // namespace ddpbench
