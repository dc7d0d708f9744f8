#include "engine/models/registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.hpp"
#include "engine/models/resnet.hpp"

namespace ddpbench {

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& s : resnet_specs()) names.push_back(s.name);
  return names;
}

ModelPtr make_model(const std::string& name, int64_t num_classes) {
  for (const auto& s : resnet_specs())
    if (s.name == name) return make_resnet(s, num_classes);
  throw UsageError(fmt::format("unknown model '{}'; choose one of: {} (see 'ddpbench models')", name,
                               fmt::join(model_names(), ", ")));
}

int64_t count_parameters(const torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

}  // namespace ddpbench
