// Name -> model builder for every model family ddpbench ships.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/models/model.hpp"

namespace ddpbench {

/// Names of all models, in listing order (torchvision's builder names).
std::vector<std::string> model_names();

/// Builds model `name` with a `num_classes`-way classifier on the CPU.
/// Throws UsageError for an unknown name (the message lists the known ones).
ModelPtr make_model(const std::string& name, int64_t num_classes = 1000);

/// Total number of elements of all parameters (trainable or not).
int64_t count_parameters(const torch::nn::Module& m);

}  // namespace ddpbench
