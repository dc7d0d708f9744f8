// VGG-16, the same architecture, initialisation and state_dict names as
// torchvision/models/vgg.py, configuration "D" without batch norm (Simonyan &
// Zisserman 2015, arXiv:1409.1556).
#pragma once

#include "engine/models/model.hpp"

namespace ddpbench {

/// vgg16 with a `num_classes`-way classifier.
ModelPtr make_vgg16(int64_t num_classes);

}  // namespace ddpbench
