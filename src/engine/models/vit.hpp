// Vision Transformer, the same architecture, initialisation and state_dict names as
// torchvision/models/vision_transformer.py (Dosovitskiy et al. 2021, arXiv:2010.11929).
#pragma once

#include "engine/models/count.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "engine/models/model.hpp"

namespace ddpbench {

/// Shape of one ViT variant.
struct ViTSpec {
  std::string name;  ///< "vit_b_16", "vit_b_32", "vit_l_16"
  int64_t patch_size, num_layers, num_heads, hidden_dim, mlp_dim;
};

const std::vector<ViTSpec>& vit_specs();

/// Builds `spec` for image_size x image_size inputs (the position embedding has
/// (image_size / patch_size)^2 + 1 entries, as torchvision's image_size argument).
/// image_size must be a multiple of the patch size (make_model checks it: check_model_input).
/// Attention uses the linked torch's fused scaled_dot_product_attention where it has one.
ModelPtr make_vit(const ViTSpec& spec, int64_t num_classes, int64_t image_size);
/// make_vit's parameters and forward MACs per example, counted from the architecture without
/// building it (engine/models/count.hpp); image_size a multiple of the patch size.
ModelCount count_vit(const ViTSpec& spec, int64_t num_classes, int64_t image_size);

}  // namespace ddpbench
