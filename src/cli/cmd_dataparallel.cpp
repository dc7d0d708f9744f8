// `ddpbench dataparallel`: single-process multi-GPU DataParallel, libtorch's data_parallel
// ("dp") and the same step from replicate / scatter / parallel_apply / gather ("dp-manual"),
// training and inference, rows next to `run`'s DDP rows (engine/bench/data_parallel.hpp).
#include <ATen/Parallel.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "core/analysis/data_parallel_model.hpp"
#include "core/config/run_config.hpp"
#include "core/launch/launch_env.hpp"
#include "core/result/bench_table.hpp"
#include "core/result/result.hpp"
#include "core/util/errors.hpp"
#include "engine/bench/data_parallel.hpp"
#include "engine/compat.hpp"
#include "engine/env_info.hpp"
#include "engine/models/registry.hpp"
#include "engine/run/launch.hpp"
#include "engine/timing.hpp"
#include "engine/train/precision.hpp"

namespace ddpbench::cli {
namespace {

struct DpFlags {
  RunConfig cfg;
  std::string models = "resnet50", gpus, world_sizes, mode = "both", path = "both";
  bool no_cudnn_benchmark = false, overwrite = false;
  CLI::Option *head_opt = nullptr, *json_opt = nullptr;
};

std::vector<std::string> both_or(const std::string& text, const std::string& flag, const std::string& a,
                                 const std::string& b) {
  if (text == "both") return {a, b};
  if (text == a || text == b) return {text};
  throw UsageError(fmt::format("{} '{}' is unknown; use {}, {} or both", flag, text, a, b));
}

// ms of a phase for the line under a row; "-" where the path cannot separate it.
std::string ms(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? fmt::format("{:.2f}", j[key].get<double>() * 1e3) : "-";
}

std::string split_line(const BenchResult& row) {
  const auto& d = row.breakdown.extra.value("data_parallel", nlohmann::json::object());
  const auto& s = row.breakdown.extra.value("banerjee_shah_split", nlohmann::json::object());
  std::string line =
      row.strategy == "dp"
          ? fmt::format(
                "      {} {}: forward (data_parallel) {} ms, loss {}, backward (with ReduceAdd) {}, other {} ms",
                row.strategy, row.mode, ms(d, "forward_s"), ms(d, "loss_s"), ms(d, "backward_s"), ms(d, "other_s"))
          : fmt::format(
                "      {} {}: communication {} ms (replicate {}, scatter {}, gather {}, reduce {}), "
                "computation {} ms, other {} ms",
                row.strategy, row.mode, ms(d, "communication_s"), ms(d, "replicate_s"), ms(d, "scatter_s"),
                ms(d, "gather_s"), ms(d, "reduce_s"), ms(d, "computation_s"), ms(d, "other_s"));
  return line + fmt::format("; Banerjee and Shah's split: calls {} ms + synchronize {} ms", ms(s, "call_return_s"),
                            ms(s, "sync_wait_s"));
}

int run_dataparallel(DpFlags& f, const std::vector<std::string>& argv) {
  // GPU only: said before anything else is looked at.
  const int visible = cuda_device_count();
  if (visible == 0)
    throw UsageError(
        "dataparallel runs one process on GPUs (torch::nn::parallel::data_parallel) and this machine "
        "shows none (or this ddpbench has no CUDA); compare DDP on CPUs with 'ddpbench run'");
  RunConfig& c = f.cfg;
  const std::vector<int> gpus = parse_gpu_selection(f.gpus, visible);
  const int k = static_cast<int>(gpus.size());
  c.models = split_list(f.models);
  c.device = "cuda";
  c.cudnn_benchmark = !f.no_cudnn_benchmark;
  c.world_sizes = f.world_sizes.empty() ? default_world_sizes(k) : parse_int_list(f.world_sizes, "--world-sizes");
  if (f.head_opt->count() && !c.freeze_backbone)
    throw UsageError("--head is the head trained with --freeze-backbone; add --freeze-backbone");
  validate(c, k, model_names());
  for (const auto& m : c.models) {
    if (is_language_model(m))
      throw UsageError(fmt::format("dataparallel measures the image models, and {} is a language model; use "
                                   "'ddpbench run --model {}' (DDP, zero2, fsdp)",
                                   m, m));
    check_model_input(m, c.image_size);
  }
  DpJob job;
  job.modes = both_or(f.mode, "--mode", "train", "inference");
  for (const auto& p : both_or(f.path, "--path", "native", "manual"))
    job.paths.push_back(p == "native" ? DpPath::kNative : DpPath::kManual);
  if (f.json_opt->count()) check_result_target(c.json_path, f.overwrite);
  for (int g : gpus) job.devices.emplace_back(c10::kCUDA, static_cast<c10::DeviceIndex>(g));
  job.prims = libtorch_primitives();
  job.host = host_name();
  job.cfg = c;

  compat::quiet_torch_logs();
  set_current_device(job.devices.front());
  const MathModes math = apply_math_modes({c.precision, c.cudnn_benchmark});
  // parallel_apply runs the replicas on at::parallel_for's threads: with fewer intra-op
  // threads than devices, the host launches them one after the other.
  if (at::get_num_threads() < k) at::set_num_threads(k);

  const int planned = static_cast<int>(c.models.size() * c.world_sizes.size() * job.modes.size() * job.paths.size());
  ResultFile rf = new_result_file("run", argv, planned);
  rf.config = to_json(c);
  rf.config["data_parallel"] = {
      {"gpus", gpus}, {"modes", job.modes}, {"paths", f.path}, {"intra_op_threads", at::get_num_threads()}};
  EnvironmentFacts facts;
  facts.cuda = true;
  facts.placements = {local_placement(LaunchInfo{}, job.devices.front())};
  facts.gpus = nlohmann::json::array();
  for (const auto& d : job.devices) {
    const RankPlacement p = local_placement(LaunchInfo{}, d);
    facts.gpus.push_back({{"rank", 0},
                          {"host", p.host},
                          {"index", d.index()},
                          {"name", p.gpu_name},
                          {"uuid", p.gpu_uuid},
                          {"bus_id", p.bus_id}});
  }
  facts.threads_per_rank = at::get_num_threads();
  facts.math = math_json(math);
  facts.env = env_subset(current_env());
  rf.environment = environment_json(facts);
  print_line(fmt::format(
      "ddpbench dataparallel: one process on GPU(s) {}, batch {} per GPU, {}x{} images, {}, {} "
      "warm-up + {} measured + {} phase-timed steps per row",
      fmt::join(gpus, ","), c.batch_size, c.image_size, c.image_size, c.precision, c.warmup, c.iters, c.iters));
  print_line("");
  print_line(table_header());
  const auto on_row = [&](const BenchResult& row) {
    print_line(fmt::format("{}  {} {}", table_row(row, "GPUs"), row.strategy, row.mode) + table_row_extras(row));
    print_line(split_line(row));
    for (const auto& w : table_row_warnings(row)) print_line(w);
    rf.results.push_back(row);
    save_partial(rf, c.json_path);
  };
  try {
    run_data_parallel(job, on_row);
  } catch (...) {
    note_partial_rows(LaunchInfo{}, c.json_path);
    throw;
  }
  if (!c.json_path.empty()) {
    commit_result(rf, c.json_path, f.overwrite);
    print_line(fmt::format("Wrote {} ({} rows, schema {})", c.json_path, rf.results.size(), kSchemaVersion));
  }
  return kExitOk;
}

}  // namespace

Command add_dataparallel_command(CLI::App& parent, const std::vector<std::string>& argv) {
  auto f = std::make_shared<DpFlags>();
  RunConfig& c = f->cfg;
  c.batch_size = 32;
  c.image_size = 224;
  auto* app = parent.add_subcommand(
      "dataparallel",
      "Single-process multi-GPU DataParallel: libtorch's data_parallel (dp) vs replicate/scatter/parallel_apply/gather "
      "by hand (dp-manual), training and inference (GPU only)");
  app->footer(
      "Rows are `run` rows (strategy dp / dp-manual, mode train / inference): `ddpbench report` and `diff` read them "
      "with a DDP run of the same GPUs and batch. Exit codes: 0 measured; 1 a runtime failure; 2 bad input or no GPU; "
      "3 a path's output or gradients differ from the model alone (self-check).");
  app->add_option("--model", f->models, "Model(s), comma list (see 'ddpbench models')")->capture_default_str();
  app->add_option("--batch-size", c.batch_size, "Examples per GPU per step (B; the global batch is B x GPUs)")
      ->check(whole_number())
      ->capture_default_str();
  app->add_option("--image-size", c.image_size, "Input height = width in pixels")->capture_default_str();
  app->add_option("--num-classes", c.num_classes, "Classifier width")->capture_default_str();
  app->add_option("--gpus", f->gpus,
                  "GPUs: a count N (the first N visible) or a comma list of indices (0,2); default every visible GPU");
  app->add_option("--world-sizes", f->world_sizes,
                  "GPU counts measured, comma list, each the first n of --gpus (default 1,2,4,... up to all)");
  app->add_option("--mode", f->mode, "train, inference or both")->capture_default_str();
  app->add_option("--path", f->path, "native (data_parallel), manual (the primitives) or both")->capture_default_str();
  app->add_option("--warmup", c.warmup, "Untimed steps before each measured series")->capture_default_str();
  app->add_option("--iters", c.iters, "Measured steps per row (then as many again, timed per phase)")
      ->capture_default_str();
  app->add_option("--precision", c.precision, "fp32, fp32-strict, tf32, fp16 or bf16, as for run")
      ->capture_default_str();
  app->add_flag("--channels-last", c.channels_last, "NHWC memory format for inputs and convolution weights");
  app->add_flag("--no-cudnn-benchmark", f->no_cudnn_benchmark, "Turn cuDNN autotuning off (on by default)");
  app->add_flag("--freeze-backbone", c.freeze_backbone,
                "Train only a classifier head on a frozen backbone (Banerjee and Shah's fixed feature extractor)");
  f->head_opt = app->add_option("--head", c.head, "Head trained with --freeze-backbone")->capture_default_str();
  app->add_option("--seed", c.seed, "Seed of the model and the synthetic batch")
      ->check(whole_number())
      ->capture_default_str();
  app->add_option("--dataset-size", c.dataset_size,
                  "Examples per epoch (N) for the bytes per epoch (Banerjee and Shah's MNIST: 60000)")
      ->check(whole_number())
      ->capture_default_str();
  f->json_opt = app->add_option("--json", c.json_path, "Write the rows here (kind run); PATH.partial while it runs");
  app->add_flag("--overwrite", f->overwrite, "Replace an existing --json file");
  return {app, [f, argv]() -> int { return run_dataparallel(*f, argv); }};
}

}  // namespace ddpbench::cli
