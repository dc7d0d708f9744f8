// AlexNet, the same architecture, initialisation and state_dict names as
// torchvision/models/alexnet.py (Krizhevsky 2014 "one weird trick" variant, arXiv:1404.5997).
#pragma once

#include "engine/models/count.hpp"
#include "engine/models/model.hpp"

namespace ddpbench {

/// alexnet with a `num_classes`-way classifier (PyTorch's default layer initialisation).
ModelPtr make_alexnet(int64_t num_classes);
/// make_alexnet's parameters and forward MACs per example at image_size x image_size (at
/// least 63), counted from the architecture without building it (engine/models/count.hpp).
ModelCount count_alexnet(int64_t num_classes, int64_t image_size);

}  // namespace ddpbench
