// `ddpbench predict`: alpha-beta fits of `ddpbench comm` results and the step time and
// weak-scaling efficiency of measured DDP rows predicted at other world sizes
// (core/analysis/predict.hpp; docs/METHODOLOGY.md "Scaling predictor").
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "core/analysis/predict.hpp"
#include "core/util/errors.hpp"

namespace ddpbench::cli {

Command add_predict_command(CLI::App& parent) {
  struct Flags {
    std::vector<std::string> runs, comms;
    std::vector<int> world_sizes;
    std::string model = "auto", format = "table", json;
    int gpus_per_node = 0;
    CLI::Option *json_opt = nullptr, *sizes_opt = nullptr;
  };
  auto f = std::make_shared<Flags>();
  auto* app = parent.add_subcommand("predict",
                                    "Fit alpha-beta to ddpbench comm results and predict DDP step time "
                                    "and weak-scaling efficiency at other world sizes");
  app->add_option("runs", f->runs, "Result files of ddpbench run --json (DDP rows with a step breakdown)")->required();
  app->add_option("--comm", f->comms, "Result files of ddpbench comm --json (allreduce at two or more sizes)");
  f->sizes_opt = app->add_option("--world-sizes", f->world_sizes,
                                 "World sizes to predict, besides the measured ones (default 8,64,512,4096)")
                     ->delimiter(',');
  app->add_option("--model", f->model,
                  "Allreduce cost model: auto (the backend's: ring for Gloo, ring and tree for NCCL), ring, tree or "
                  "both")
      ->check(CLI::IsMember({"auto", "ring", "tree", "both"}))
      ->capture_default_str();
  app->add_option("--gpus-per-node", f->gpus_per_node,
                  "Ranks per node, to choose intra- or inter-node alpha-beta (default: the most ranks one node ran "
                  "in the run files)")
      ->check(CLI::Range(1, 1'000'000));
  app->add_option("--format", f->format, "Output: table, md, csv or json")
      ->check(CLI::IsMember({"table", "md", "csv", "json"}))
      ->capture_default_str();
  f->json_opt = app->add_option("--json", f->json, "Also write the fits and predictions as JSON to this file");
  app->footer(
      "Exit codes: 0 prediction written; 2 bad input (a file of the wrong kind, no --comm, no DDP row with a "
      "breakdown, no allreduce timings at two or more sizes, a bad option).");

  return {app, [f]() -> int {
            // Given, even as "": an empty path is refused, not read as "no file".
            {
              std::vector<NamedPath> inputs;
              for (const auto& path : f->runs) inputs.push_back({"run file", path});
              for (const auto& path : f->comms) inputs.push_back({"--comm", path});
              check_outputs_apart(inputs, f->json_opt->count() ? std::vector<NamedPath>{{"--json", f->json}}
                                                               : std::vector<NamedPath>{});
            }
            if (f->json_opt->count()) check_writable(f->json, "--json");
            PredictOptions opts;
            if (f->sizes_opt->count()) opts.world_sizes = f->world_sizes;
            opts.models_from_backend = f->model == "auto";
            if (!opts.models_from_backend) opts.models = parse_cost_models(f->model);
            opts.gpus_per_node = f->gpus_per_node;
            std::vector<NamedResult> runs, comms;
            for (const auto& path : f->runs) runs.push_back({path, load_result(path)});
            for (const auto& path : f->comms) comms.push_back({path, load_result(path)});
            const Prediction pred = build_prediction(runs, comms, opts);
            const std::string text = render_prediction(pred, parse_table_format(f->format));
            if (f->json_opt->count()) {
              write_file_atomic(f->json, render_prediction(pred, TableFormat::json));
              std::fprintf(stderr, "ddpbench: wrote %s\n", f->json.c_str());
            }
            write_stdout(text);
            return kExitOk;
          }};
}

}  // namespace ddpbench::cli
