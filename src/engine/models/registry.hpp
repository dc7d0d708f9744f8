// Name -> model builder for every model family ddpbench ships.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/models/count.hpp"
#include "engine/models/model.hpp"
#include "engine/models/transformer.hpp"

namespace ddpbench {

/// Names of all models, in listing order: the image classifiers (torchvision's builder
/// names), then the language models (engine/models/transformer.hpp).
std::vector<std::string> model_names();
/// The image classifiers' names alone (torchvision's), in listing order.
std::vector<std::string> image_model_names();
/// The language models' names alone ("gpt2", ..., "llama3.1-8b"), in listing order.
std::vector<std::string> language_model_names();
/// Whether `name` is a language model (token ids in, logits over the vocabulary out).
bool is_language_model(const std::string& name);

/// What a model is built for: an image classifier's classes and input side, a language
/// model's sequence length (tokens) and the optional reductions of its depth and width
/// (0 keeps the published shape: transformer.hpp reshaped).
struct ModelArgs {
  int64_t num_classes = 1000;
  int64_t image_size = 224;
  int64_t seq_len = 1024;
  int64_t layers = 0;
  int64_t width = 0;
};

/// The language model `name`'s shape with `a`'s reductions applied. Throws UsageError for
/// a name that is not a language model, a width its heads do not divide, or a sequence
/// length it cannot take (transformer.hpp check_sequence_length).
TransformerSpec language_model_spec(const std::string& name, const ModelArgs& a);

/// Builds model `name` on the CPU for `a`. Throws UsageError as check_model_args does.
ModelPtr make_model(const std::string& name, const ModelArgs& a);

/// Throws UsageError, one line naming the fix, for an unknown name or arguments the model
/// cannot take (check_model_input; a language model's language_model_spec). Builds nothing.
void check_model_args(const std::string& name, const ModelArgs& a);

/// count_without_building for `a`: a language model's count is one sequence of a.seq_len
/// tokens (count_transformer).
std::optional<ModelCount> count_without_building(const std::string& name, const ModelArgs& a);

/// Builds model `name` (a language model: its published shape at ModelArgs' defaults) with a `num_classes`-way classifier on the CPU, for
/// image_size x image_size inputs (only ViTs depend on it: their position embedding).
/// Throws UsageError for an unknown name (the message lists the known ones) or an image
/// size the model cannot take.
ModelPtr make_model(const std::string& name, int64_t num_classes = 1000, int64_t image_size = 224);

/// Throws UsageError, one line naming the fix, for an unknown model name or an
/// image_size x image_size input the model cannot take (too small for its pools, or not a
/// multiple of a ViT's patch size). A language model takes any image size (it reads tokens). Cheap: builds nothing, so it runs before ranks start.
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
