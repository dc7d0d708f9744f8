// Name -> model builder for every model family ddpbench ships.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/models/count.hpp"
#include "engine/models/model.hpp"

namespace ddpbench {

/// Names of all models, in listing order (torchvision's builder names).
std::vector<std::string> model_names();

/// Builds model `name` with a `num_classes`-way classifier on the CPU, for
/// image_size x image_size inputs (only ViTs depend on it: their position embedding).
/// Throws UsageError for an unknown name (the message lists the known ones) or an image
/// size the model cannot take.
ModelPtr make_model(const std::string& name, int64_t num_classes = 1000, int64_t image_size = 224);

/// Throws UsageError, one line naming the fix, for an unknown model name or an
/// image_size x image_size input the model cannot take (too small for its pools, or not a
/// multiple of a ViT's patch size). Cheap: builds nothing, so it runs before ranks start.
void check_model_input(const std::string& name, int64_t image_size);

/// Model `name`'s parameters and forward MACs per example at image_size x image_size,
/// counted from its architecture without building it (engine/models/count.hpp), for the
/// families written out there (ResNets, ViTs, VGG-16, AlexNet); nullopt for a model counted
/// only by building it. Equal to count_parameters and forward_macs of the built model
/// (tests/engine/test_models.cpp). Throws UsageError as check_model_input does.
std::optional<ModelCount> count_without_building(const std::string& name, int64_t num_classes, int64_t image_size);

/// Total number of elements of all parameters (trainable or not).
int64_t count_parameters(const torch::nn::Module& m);

/// Number of elements of the parameters that require gradients.
int64_t count_trainable_parameters(const torch::nn::Module& m);

/// Attaches the head named by `head` ("mlp4096") to a frozen `model`, sized from the
/// model's features at image_size (see Model::attach_frozen_backbone_head).
/// Throws UsageError for an unknown head.
void freeze_backbone(Model& model, const std::string& head, int64_t num_classes, int64_t image_size);

}  // namespace ddpbench
