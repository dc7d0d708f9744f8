// AlexNet, the same architecture, initialisation and state_dict names as
// torchvision/models/alexnet.py (Krizhevsky 2014 "one weird trick" variant, arXiv:1404.5997).
#pragma once

#include "engine/models/model.hpp"

namespace ddpbench {

/// alexnet with a `num_classes`-way classifier (PyTorch's default layer initialisation).
ModelPtr make_alexnet(int64_t num_classes);

}  // namespace ddpbench
