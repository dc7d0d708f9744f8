// `ddpbench find-max-bs`: the largest batch per device that trains a few steps, by growing
// then bisecting, with a recommendation backed off by --margin (engine/bench/max_batch.hpp).
#include <ATen/Parallel.h>

#include <fmt/format.h>

#include <memory>
#include <optional>

#include "cli/commands.hpp"
#include "core/config/run_config.hpp"
#include "core/launch/launch_env.hpp"
#include "core/launch/spawn.hpp"
#include "core/result/result.hpp"
#include "core/util/errors.hpp"
#include "core/util/table.hpp"
#include "engine/bench/max_batch.hpp"
#include "engine/bench/measure.hpp"
#include "engine/compat.hpp"
#include "engine/env_info.hpp"
#include "engine/models/registry.hpp"
#include "engine/run/launch.hpp"
#include "engine/train/precision.hpp"

namespace ddpbench::cli {
namespace {

struct Flags {
  RunConfig cfg;
  std::string model;
  int steps = kDefaultSearchSteps;
  long long start = 1, bound = kDefaultMaxBatchBound, trial = 0, memory_limit = 0;
  long long trial_child = 0;  ///< hidden --trial-child B: this process is one trial of a parent's search
  double timeout_s = 600;
  double margin = kDefaultBatchMargin;
  int gpu = 0;
  bool no_cudnn_benchmark = false, overwrite = false;
  CLI::Option *limit_opt = nullptr, *trial_opt = nullptr, *head_opt = nullptr, *json_opt = nullptr,
              *start_opt = nullptr, *bound_opt = nullptr;
};

// Checks the flags (UsageError: one line naming the problem and the fix) and returns the
// trial setup.
TrialSetup validate_flags(Flags& f) {
  RunConfig& c = f.cfg;
  c.models = {f.model};
  c.world_sizes = {1};
  c.batch_size = 1;
  c.cudnn_benchmark = !f.no_cudnn_benchmark;
  const int gpus = device_gpus(c.device);
  const bool use_cuda = gpus > 0;
  validate(c, 1, model_names());  // the ranges and names `run` accepts
  check_model_args(f.model, model_args(c));
  if (f.head_opt->count() && !c.freeze_backbone)
    throw UsageError("--head is the head trained with --freeze-backbone; add --freeze-backbone");
  if (!use_cuda && (c.precision == "fp16" || c.precision == "tf32"))
    throw UsageError(fmt::format("--precision {} needs a GPU; on CPUs use fp32 or bf16", c.precision));
  if (f.steps < 1 || f.steps > kMaxSearchSteps)
    throw UsageError(
        fmt::format("--steps {} is out of range; use 1..{} (training steps per trial)", f.steps, kMaxSearchSteps));
  if (f.bound < 1 || f.bound > kMaxBatchSize)
    throw UsageError(fmt::format("--max-batch {} is out of range; use 1..{}", f.bound, kMaxBatchSize));
  if (f.trial_opt->count()) {
    if (f.start_opt->count() || f.bound_opt->count())
      throw UsageError("--trial N tries one batch; drop --start and --max-batch");
    if (f.trial < 1 || f.trial > kMaxBatchSize)
      throw UsageError(fmt::format("--trial {} is out of range; use 1..{}", f.trial, kMaxBatchSize));
    f.start = f.bound = f.trial;
  }
  if (f.start < 1 || f.start > f.bound)
    throw UsageError(fmt::format("--start {} is out of range; use 1..--max-batch ({})", f.start, f.bound));
  if (!(f.margin >= 0 && f.margin < 1))
    throw UsageError(
        fmt::format("--margin {} is out of range; use a fraction in [0, 1) (0.1 backs off 10%)", f.margin));
  TrialSetup s;
  s.cfg = c;
  s.steps = f.steps;
  if (f.limit_opt->count()) {
    if (f.memory_limit <= 0)
      throw UsageError(
          fmt::format("--memory-limit {} must be a positive size in bytes (K/M/G suffixes, e.g. 2G)", f.memory_limit));
    if (!use_cuda)
      if (const auto avail = mem_available_bytes(); avail && static_cast<double>(f.memory_limit) > *avail)
        throw UsageError(
            fmt::format("--memory-limit {:.2f} GiB is more than the {:.2f} GiB this machine has "
                        "available; use a smaller --memory-limit",
                        f.memory_limit / 1073741824.0, *avail / 1073741824.0));
    s.memory_limit_bytes = f.memory_limit;
  } else if (!use_cuda) {
    throw UsageError(
        "find-max-bs on the CPU needs --memory-limit BYTES (e.g. --memory-limit 2G): without it the "
        "search would grow until it takes the machine's memory");
  }
  if (use_cuda) {
    if (f.gpu < 0 || f.gpu >= gpus)
      throw UsageError(
          fmt::format("--gpu {} is out of range; this machine shows {} GPU(s): use 0..{}", f.gpu, gpus, gpus - 1));
    s.device = c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(f.gpu));
  }
  if (!(f.timeout_s >= 1 && f.timeout_s <= kMaxTimeoutS))
    throw UsageError(fmt::format("--timeout {} is out of range; use 1..{} s", f.timeout_s, kMaxTimeoutS));
  s.timeout_s = f.timeout_s;
  if (f.json_opt->count()) check_result_target(c.json_path, f.overwrite);
  return s;
}

int run_find_max_bs(Flags& f, const std::vector<std::string>& argv) {
  const TrialSetup setup = validate_flags(f);
  if (check_only(current_env())) return kExitOk;
  const RunConfig& c = setup.cfg;
  compat::quiet_torch_logs();
  if (f.trial_child > 0) {  // one trial of a parent's search (try_batch_in_child): its result on stdout
    if (!exit_with_parent(current_env()))
      throw UsageError(
          "--trial-child is started by find-max-bs for one trial, and its parent is gone; "
          "run ddpbench find-max-bs");
    prepare_search(setup);
    print_line(trial_line(try_batch(setup, f.trial_child)));
    return kExitOk;
  }
  std::string limit;
  if (setup.memory_limit_bytes)
    limit = fmt::format(", memory limit {} ({})", *setup.memory_limit_bytes,
                        setup.device.is_cpu() ? "RLIMIT_DATA" : "CUDA allocator fraction");
  const std::string input =
      is_language_model(f.model)
          ? fmt::format("sequences of {} tokens", c.seq_len)
          : fmt::format("{}x{} images{}, {} classes", c.image_size, c.image_size,
                        c.channels_last ? " channels_last" : "", c.num_classes);
  const std::string threads =
      setup.device.is_cpu() ? fmt::format(" with {} intra-op thread(s)", at::get_num_threads()) : "";
  print_line(fmt::format("ddpbench find-max-bs: {} {}, {}, {} step(s) per trial, on {}{}{}", f.model, c.precision,
                         input, f.steps, setup.device.str(), threads, limit));
  print_line(f.trial_opt->count()
                 ? fmt::format("One trial at batch {}", f.trial)
                 : fmt::format("Search: batch {} doubling up to at most {}, then bisection", f.start, f.bound));
  if (!trials_in_child(setup)) prepare_search(setup);
  print_line("");
  print_line(fmt::format("{:>8}  {:<6}{:>12}  {:>8}", "batch", "result", "peak memory", "seconds"));
  const auto t0 = std::chrono::steady_clock::now();
  const auto trial = [&](long long b) {
    BatchTrial tr = run_trial(setup, b);
    print_line(fmt::format("{:>8}  {:<6}{:>12}  {:>8.2f}", b, tr.fits ? "fits" : "OOM",
                           tr.peak_memory_bytes >= 0 ? fmtcol::bytes()(Value(tr.peak_memory_bytes)) : "n/a",
                           tr.seconds));
    return tr;
  };
  MaxBatchSearch search;
  const bool single = f.trial_opt->count() > 0;
  if (single) {  // --trial N: that batch alone, no search
    search.trials.push_back(trial(f.trial));
    search.max_batch = search.trials.back().fits ? f.trial : 0;
  } else {
    search = search_max_batch(f.start, f.bound, trial);
  }
  const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  print_line(setup.device.is_cpu() ? "(peak memory: growth of the peak resident set over the trial's start: model, "
                                     "gradients, optimizer state, activations)"
                                   : "(peak memory: the CUDA caching allocator's peak allocated bytes in the trial, "
                                     "torch.cuda.max_memory_allocated)");
  print_line("");
  const long long rec = recommended_batch(search.max_batch, f.margin);
  if (single && search.max_batch > 0) {
    print_line(fmt::format("Batch {} fits ({:.1f} s)", f.trial, total_s));
  } else if (search.max_batch > 0) {
    print_line(fmt::format("Largest batch that fits: {}{} ({} trial(s), {:.1f} s)", search.max_batch,
                           search.bound_reached ? fmt::format(" (the --max-batch bound; larger ones untried)") : "",
                           search.trials.size(), total_s));
    print_line(fmt::format("Recommended batch size: {} = floor({} x (1 - margin {:g})); use --batch-size {}", rec,
                           search.max_batch, f.margin, rec));
  }

  if (f.json_opt->count()) {
    ResultFile rf = new_result_file("find-max-bs", argv, 0);
    rf.config = {{"model", f.model},
                 {"image_size", c.image_size},
                 {"num_classes", c.num_classes},
                 {"seq_len", c.seq_len},
                 {"model_layers", c.model_layers},
                 {"model_width", c.model_width},
                 {"precision", c.precision},
                 {"channels_last", c.channels_last},
                 {"freeze_backbone", c.freeze_backbone},
                 {"head", c.head},
                 {"seed", c.seed},
                 {"cudnn_benchmark", c.cudnn_benchmark},
                 {"device", setup.device.str()},
                 {"steps", f.steps},
                 {"start", f.start},
                 {"max_batch", f.bound},
                 {"margin", f.margin},
                 {"memory_limit_bytes",
                  setup.memory_limit_bytes ? nlohmann::json(*setup.memory_limit_bytes) : nlohmann::json(nullptr)}};
    EnvironmentFacts facts;
    facts.cuda = setup.device.is_cuda();
    facts.placements = {local_placement(LaunchInfo{}, setup.device)};
    facts.threads_per_rank = at::get_num_threads();
    // What the trials ran under (prepare_search applies them, here or in each trial's child).
    facts.math = math_json(math_modes_for({c.precision, c.cudnn_benchmark}));
    facts.env = env_subset(current_env());
    rf.environment = environment_json(facts);
    rf.max_batch = max_batch_json(setup, f.start, f.bound, f.margin, search);
    commit_result(rf, c.json_path, f.overwrite);
    print_line(fmt::format("Wrote {} (kind find-max-bs, schema {})", c.json_path, kSchemaVersion));
  }
  if (search.max_batch == 0)
    throw UsageError(fmt::format("{} batch {} of {} {} ({}); use a smaller --image-size, --precision bf16{}",
                                 single ? "--trial:" : "not even", search.trials.back().batch, f.model,
                                 single ? "does not fit" : "fits", search.trials.back().error,
                                 setup.memory_limit_bytes ? " or a larger --memory-limit" : " or a larger GPU"));
  return kExitOk;
}

}  // namespace

Command add_find_max_bs_command(CLI::App& parent, const std::vector<std::string>& argv) {
  auto f = std::make_shared<Flags>();
  RunConfig& c = f->cfg;
  auto* app = parent.add_subcommand(
      "find-max-bs", "Largest batch per device that trains --steps steps (grow, then bisect; out of memory is caught)");
  app->footer(
      "The recommendation is floor(max x (1 - --margin)). On the CPU --memory-limit is required: each trial's data "
      "size may grow by at most that much (RLIMIT_DATA), emulating a device of that size. Exit codes: 0 found "
      "(or --trial fits); 1 a runtime failure; 2 bad input, or not even the smallest batch tried fits.");
  app->add_option("--model", f->model, "Model (see 'ddpbench models')")->required();
  app->add_option("--image-size", c.image_size, "Input height = width in pixels")->capture_default_str();
  app->add_option("--num-classes", c.num_classes, "Classifier width")->capture_default_str();
  app->add_option("--seq-len", c.seq_len, "Language models: tokens per sequence (an example is one sequence)")
      ->capture_default_str();
  app->add_option("--model-layers", c.model_layers, "Language models: blocks instead of the published depth (0)")
      ->capture_default_str();
  app->add_option("--model-width", c.model_width, "Language models: width instead of the published one (0)")
      ->capture_default_str();
  app->add_option("--precision", c.precision, "fp32, fp32-strict, tf32, fp16 or bf16, as for run")
      ->capture_default_str();
  app->add_flag("--channels-last", c.channels_last, "NHWC memory format for inputs and convolution weights");
  app->add_flag("--no-cudnn-benchmark", f->no_cudnn_benchmark, "Turn cuDNN autotuning off (on by default)");
  app->add_flag("--freeze-backbone", c.freeze_backbone, "Train only a classifier head on a frozen backbone");
  f->head_opt = app->add_option("--head", c.head, "Head trained with --freeze-backbone")->capture_default_str();
  app->add_option("--seed", c.seed, "Seed of the model and the synthetic batch")
      ->check(whole_number())
      ->capture_default_str();
  app->add_option("--device", c.device, "Device: auto, cpu or cuda")->capture_default_str();
  app->add_option("--gpu", f->gpu, "GPU index searched on (of those CUDA_VISIBLE_DEVICES shows)")
      ->capture_default_str();
  app->add_option("--steps", f->steps, "Training steps (forward, backward, optimizer) per trial")
      ->capture_default_str();
  f->start_opt = app->add_option("--start", f->start, "First batch tried; doubled while it fits")
                     ->check(whole_number())
                     ->capture_default_str();
  f->bound_opt = app->add_option("--max-batch", f->bound, "Never try a batch above this (the search always ends)")
                     ->check(whole_number())
                     ->capture_default_str();
  app->add_option("--margin", f->margin, "Fraction backed off from the largest batch for the recommendation")
      ->capture_default_str();
  f->limit_opt = app->add_option("--memory-limit", f->memory_limit,
                                 "Bytes a trial may use (K/M/G suffixes, 1K = 1024): required on the CPU "
                                 "(RLIMIT_DATA); on a GPU a cap below the device's memory")
                     ->transform(CLI::AsSizeValue(false));
  f->trial_opt = app->add_option("--trial", f->trial, "Try this one batch and say whether it fits (no search)")
                     ->check(whole_number());
  app->add_option("--timeout", f->timeout_s, "Seconds a trial may take (CPU trials run in a child process)")
      ->capture_default_str();
  app->add_option("--trial-child", f->trial_child, "internal: run one trial of a parent's search")
      ->check(whole_number())
      ->group("");
  f->json_opt = app->add_option("--json", c.json_path, "Write the search and the recommendation here");
  app->add_flag("--overwrite", f->overwrite, "Replace an existing --json file");
  return {app, [f, argv]() -> int { return run_find_max_bs(*f, argv); }};
}

}  // namespace ddpbench::cli
