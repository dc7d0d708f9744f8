// VGG-16, the same architecture, initialisation and state_dict names as
// torchvision/models/vgg.py, configuration "D" without batch norm (Simonyan &
// Zisserman 2015, arXiv:1409.1556).
#pragma once

#include "engine/models/count.hpp"
#include "engine/models/model.hpp"

namespace ddpbench {

/// vgg16 with a `num_classes`-way classifier.
ModelPtr make_vgg16(int64_t num_classes);
/// make_vgg16's parameters and forward MACs per example at image_size x image_size, counted
/// from the architecture without building it (engine/models/count.hpp).
ModelCount count_vgg16(int64_t num_classes, int64_t image_size);

}  // namespace ddpbench
