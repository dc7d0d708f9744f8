// `ddpbench models`: the model zoo with parameters, trainable parameters and FLOPs.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>

#include "cli/commands.hpp"
#include "core/result/bench_table.hpp"
#include "core/util/errors.hpp"
#include "engine/models/flops.hpp"
#include "engine/models/registry.hpp"
#include "engine/models/transformer.hpp"

namespace ddpbench::cli {
namespace {
// The largest --image-size `models` counts at: the count is a forward pass of every model at
// that size (convolutions and linear layers are not computed, the layers between them are),
// so its time and memory grow with the pixel count: at 4096 VGG-16's first activation alone
// is 4 GiB, at 1024 a quarter of one.
constexpr int kMaxCountedImageSize = 1024;
}  // namespace

namespace {
struct ModelsFlags {
  std::string format = "table", head = "mlp4096";
  int classes = 1000, image = 224, seq_len = 1024;
  bool freeze = false;
};

// The language models: shape, parameters (all, and the PaLM formula's N), forward FLOPs per
// token (2 x MACs, engine/models/count.hpp conventions) and training FLOPs per token by the
// PaLM formula, at --seq-len (GPT-2's at most its 1,024 positions). JSON entries go to `out`.
void list_language_models(const ModelsFlags& f, nlohmann::json& out) {
  if (f.format == "table")
    fmt::print(
        "\n{:<13} {:>6} {:>5} {:>9} {:>7} {:>15} {:>15} {:>7} {:>14} {:>14}   (language models; FLOPs per token "
        "at --seq-len, forward 2 x MACs, training by the PaLM formula 6N + 12 L H Q T)\n",
        "model", "layers", "width", "heads/kv", "vocab", "parameters", "N (PaLM)", "seq", "fwd GFLOP/tok",
        "train GFLOP/tok");
  for (const auto& spec : transformer_specs()) {
    const int64_t seq = std::min<int64_t>(f.seq_len, spec.context);
    const ModelCount c = count_transformer(spec, seq);
    const double fwd = 2.0 * c.forward_macs / static_cast<double>(seq);
    const double train = palm_training_flops_per_token(spec, seq);
    if (f.format == "table")
      fmt::print("{:<13} {:>6} {:>5} {:>9} {:>7} {:>15} {:>15} {:>7} {:>14.3f} {:>14.3f}\n", spec.name, spec.layers,
                 spec.dim, fmt::format("{}/{}", spec.heads, spec.kv_heads), spec.vocab,
                 with_thousands(c.parameters), with_thousands(palm_parameters(spec)), seq, fwd / 1e9, train / 1e9);
    else
      out.push_back({{"name", spec.name},
                     {"kind", "language"},
                     {"parameters", c.parameters},
                     {"trainable_parameters", c.parameters},
                     {"palm_parameters", palm_parameters(spec)},
                     {"layers", spec.layers},
                     {"width", spec.dim},
                     {"heads", spec.heads},
                     {"kv_heads", spec.kv_heads},
                     {"vocab", spec.vocab},
                     {"seq_len", seq},
                     {"forward_gflops_per_token", fwd / 1e9},
                     {"train_gflops_per_token", train / 1e9}});
  }
}
}  // namespace

Command add_models_command(CLI::App& parent) {
  auto f = std::make_shared<ModelsFlags>();
  auto* app = parent.add_subcommand(
      "models", "List the models: parameters, trainable parameters, forward GMACs (multiply-adds) per example");
  app->footer("Exit codes: 0 listed; 2 bad input (one line names it; --image-size above 1024 included).");
  app->add_option("--format", f->format, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  app->add_option("--num-classes", f->classes, "Classifier width")
      ->check(CLI::Range(2, 1000000))
      ->capture_default_str();
  app->add_option("--image-size", f->image, "Input side in pixels, for FLOPs (at most 1024)")
      ->check(CLI::Range(32, 4096))
      ->capture_default_str();
  app->add_option("--seq-len", f->seq_len, "Language models: tokens per sequence, for FLOPs per token")
      ->check(CLI::Range(2, 131072))
      ->capture_default_str();
  app->add_flag("--freeze-backbone", f->freeze, "Count a frozen backbone behind the --head (trainable = head)");
  auto* head_opt = app->add_option("--head", f->head, "Head for --freeze-backbone")->capture_default_str();
  return {app, [f, head_opt] {
            if (head_opt->count() && !f->freeze)
              throw UsageError("--head is the head trained with --freeze-backbone; add --freeze-backbone");
            if (f->image > kMaxCountedImageSize)
              throw UsageError(fmt::format(
                  "--image-size {} is above {}, the largest size models counts at (a forward pass of every model "
                  "at that size); pass --image-size {} or less",
                  f->image, kMaxCountedImageSize, kMaxCountedImageSize));
            nlohmann::json out = nlohmann::json::array();
            if (f->format == "table")
              fmt::print(
                  "{:<18} {:>13} {:>13} {:>11}   (GMACs: multiply-adds per example, forward, at {}x{}; "
                  "torchvision's \"GFLOPS\")\n",
                  "model", "parameters", "trainable", "GMACs", f->image, f->image);
            for (const auto& name : image_model_names()) {
              try {
                check_model_input(name, f->image);
              } catch (const UsageError& e) {  // e.g. a ViT at a size that is not a multiple of its patch
                if (f->format == "table") fmt::print("{:<18} n/a: {}\n", name, e.what());
                else out.push_back({{"name", name}, {"image_size", f->image}, {"unavailable", e.what()}});
                continue;
              }
              int64_t params = 0, trainable = 0;
              double gmacs = 0;
              if (const auto counted = f->freeze ? std::nullopt : count_without_building(name, f->classes, f->image)) {
                params = trainable = counted->parameters;  // every parameter trains without --freeze-backbone
                gmacs = counted->forward_macs / 1e9;
              } else {
                const flops::CountOnlyBuild count_only;  // counted, never trained: no torchvision init
                auto model = make_model(name, f->classes, f->image);
                if (f->freeze) freeze_backbone(*model, f->head, f->classes, f->image);
                params = count_parameters(*model);
                trainable = count_trainable_parameters(*model);
                gmacs = forward_macs(*model, f->image) / 1e9;
              }
              if (f->format == "table")
                fmt::print("{:<18} {:>13} {:>13} {:>11.3f}\n", name, with_thousands(params), with_thousands(trainable),
                           gmacs);
              else
                out.push_back({{"name", name},
                               {"parameters", params},
                               {"trainable_parameters", trainable},
                               {"forward_gmacs", gmacs},
                               {"image_size", f->image}});
              std::fflush(stdout);
            }
            list_language_models(*f, out);
            if (f->format == "json") fmt::print("{}\n", out.dump(2));
            return kExitOk;
          }};
}

}  // namespace ddpbench::cli
