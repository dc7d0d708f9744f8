// `ddpbench models`: the model zoo with parameter counts.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>

#include "cli/commands.hpp"
#include "core/bench_table.hpp"
#include "core/errors.hpp"
#include "engine/models/registry.hpp"

namespace ddpbench::cli {

Command add_models_command(CLI::App& parent) {
  auto* app = parent.add_subcommand("models", "List the benchmark models and their parameter counts");
  auto format = std::make_shared<std::string>("table");
  auto classes = std::make_shared<int>(1000);
  app->add_option("--format", *format, "Output format")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  app->add_option("--num-classes", *classes, "Classifier width")->check(CLI::Range(2, 1000000))->capture_default_str();
  return {app, [format, classes] {
            nlohmann::json out = nlohmann::json::array();
            if (*format == "table") fmt::print("{:<20} {:>14}\n", "model", "parameters");
            for (const auto& name : model_names()) {
              const auto model = make_model(name, *classes);
              const int64_t params = count_parameters(*model);
              if (*format == "table")
                fmt::print("{:<20} {:>14}\n", name, with_thousands(params));
              else
                out.push_back({{"name", name}, {"parameters", params}});
              std::fflush(stdout);
            }
            if (*format == "json") fmt::print("{}\n", out.dump(2));
            return kExitOk;
          }};
}

}  // namespace ddpbench::cli
