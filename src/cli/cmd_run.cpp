// `ddpbench run`: its options (core/config/run_options.hpp), the checks of a launch before any
// rank starts, and one call into engine/run/run_job.hpp (one rank of the sweep).

#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>
#include <map>
#include <memory>
#include <optional>
#include <type_traits>
#include <variant>

#include "cli/commands.hpp"
#include "core/analysis/convergence.hpp"
#include "core/config/instruments.hpp"
#include "core/config/run_config.hpp"
#include "core/config/run_options.hpp"
#include "core/launch/launch_env.hpp"
#include "core/launch/spawn.hpp"
#include "core/result/result.hpp"
#include "core/util/errors.hpp"
#include "engine/bench/measure.hpp"
#include "engine/bench/time_to_loss.hpp"
#include "engine/compat.hpp"
#include "engine/data/idx.hpp"
#include "engine/dist/process_group.hpp"
#include "engine/env_info.hpp"
#include "engine/models/registry.hpp"
#include "engine/run/launch.hpp"
#include "engine/run/run_job.hpp"
#include "engine/train/precision.hpp"
#include "engine/train/workload.hpp"

namespace ddpbench::cli {
namespace {

// Defaults of the main job. On a GPU: benchmark.py's resnet50, batch 32, 224x224, fp32.
// On a CPU-only machine resnet50 at 224 takes seconds per iteration per core, so the
// default shrinks the work until the whole sweep (2 ranks) ends within about two minutes
// on 2 cores; docs/METHODOLOGY.md records the measurement behind these numbers.
constexpr const char* kGpuModel = "resnet50";
constexpr long long kGpuBatch = 32;
constexpr int kGpuImage = 224;
constexpr const char* kCpuModel = "resnet18";
constexpr long long kCpuBatch = 16;
constexpr int kCpuImage = 64;
// Language models (every --model one): on a GPU bf16 autocast, 1,024-token sequences, 8 per
// rank (nanoGPT's GPT-2 run: bf16, block 1024, 12 per GPU with accumulation); on a CPU 2
// sequences of 64 tokens (GPT-2 small: about 0.1 TFLOP per step, seconds on 2 cores).
constexpr long long kGpuLmBatch = 8;
constexpr int kGpuLmSeqLen = 1024;
constexpr const char* kGpuLmPrecision = "bf16";
constexpr long long kCpuLmBatch = 2;
constexpr int kCpuLmSeqLen = 64;


struct RunFlags {
  std::string models, world_sizes;
  std::string bucket_caps = "25", comm_hooks = "none", grad_accums = "1";  ///< comma lists, one row each
  std::string strategies = "ddp";                                          ///< --strategy comma list
  std::string iters = "20";                                                ///< a count, or "auto"
  std::string duration;  ///< --duration: "" (off) or a duration ("30m")
  std::string instruments_off;  ///< --instruments-off comma list (core/config/instruments)
  RunConfig cfg;
  int nproc_per_node = 0;
  bool no_malloc_tuning = false;
  CLI::Option *model_opt = nullptr, *batch_opt = nullptr, *image_opt = nullptr, *nproc_opt = nullptr,
              *head_opt = nullptr, *iters_opt = nullptr, *target_ci_opt = nullptr, *min_iters_opt = nullptr,
              *max_iters_opt = nullptr, *max_time_opt = nullptr;
  CLI::Option* json_opt = nullptr;
  CLI::Option* profile_opt = nullptr;
  std::string resume;  ///< --resume PATH.partial: continue the sweep that left it
  CLI::Option* resume_opt = nullptr;
  bool overwrite = false;  ///< --overwrite: an existing --json file is replaced once the new run completes
  // --batch-size N or max (find-max-bs on every rank before the sweep; --memory-limit bounds it on CPUs)
  std::string batch_text;
  bool batch_max = false;
  long long memory_limit = 0;
  CLI::Option* memory_limit_opt = nullptr;
  CLI::Option* bucket_caps_opt = nullptr;  ///< given: DDP(bucket_cap_mb=...), not its default
  CLI::Option* num_classes_opt = nullptr;  ///< --data fashion-mnist sets 10 classes unless given
  CLI::Option *seq_len_opt = nullptr, *precision_opt = nullptr;  ///< language models' defaults unless given
};

// The language models' defaults where every --model is one: sequence length, batch and (GPUs)
// bf16, each unless given; the header's note says what was chosen.
// nullopt where some --model is an image model (the image defaults apply).
std::optional<std::string> resolve_language_model_defaults(RunFlags& f, bool use_cuda) {
  const auto& m = f.cfg.models;
  if (m.empty() || !std::all_of(m.begin(), m.end(), [](const std::string& n) { return is_language_model(n); }))
    return std::nullopt;
  std::vector<std::string> chosen;
  if (!f.seq_len_opt->count()) {
    f.cfg.seq_len = use_cuda ? kGpuLmSeqLen : kCpuLmSeqLen;
    chosen.push_back(fmt::format("{}-token sequences", f.cfg.seq_len));
  }
  if (!f.batch_opt->count() && f.cfg.scaling != "strong") {
    f.cfg.batch_size = use_cuda ? kGpuLmBatch : kCpuLmBatch;
    chosen.push_back(fmt::format("batch {}", f.cfg.batch_size));
  }
  if (use_cuda && !f.precision_opt->count()) {
    f.cfg.precision = kGpuLmPrecision;
    chosen.push_back("bf16 autocast");
  }
  if (chosen.empty()) return std::string();
  return fmt::format("{}language-model defaults {}; pass --seq-len/--batch-size{} to change",
                     use_cuda ? "" : "no GPU: CPU ", fmt::join(chosen, ", "),
                     use_cuda ? "/--precision" : " (and --model-layers/--model-width to shrink the model)");
}


// Resolves the defaults that depend on the machine and says what it chose and why.
std::string resolve_defaults(RunFlags& f, bool use_cuda) {
  std::string note;
  if (!f.model_opt->count()) f.cfg.models = {use_cuda ? kGpuModel : kCpuModel};
  f.cfg.language_models.clear();
  for (const auto& m : f.cfg.models)
    if (is_language_model(m)) f.cfg.language_models.push_back(m);
  if (auto lm = resolve_language_model_defaults(f, use_cuda)) return *lm;
  const bool batch_defaulted = !f.batch_opt->count() && f.cfg.scaling != "strong";
  if (batch_defaulted) f.cfg.batch_size = use_cuda ? kGpuBatch : kCpuBatch;
  if (!f.image_opt->count()) f.cfg.image_size = use_cuda ? kGpuImage : kCpuImage;
  if (!use_cuda && (!f.model_opt->count() || batch_defaulted || !f.image_opt->count()))
    note = fmt::format(
        "no GPU: CPU defaults {}{} at {}x{} (PyTorch's benchmark.py default resnet50 batch 32 at 224x224 "
        "takes minutes per sweep on a few cores); pass --model/--batch-size/--image-size to change",
        f.cfg.models.front(), batch_defaulted ? fmt::format(" batch {}", f.cfg.batch_size) : "", f.cfg.image_size,
        f.cfg.image_size);
  return note;
}


// --iters N or auto; --target-ci implies auto; the auto-only flags need auto.
void parse_iters(RunFlags& f) {
  RunConfig& c = f.cfg;
  c.iters_auto = f.iters == "auto" || (f.target_ci_opt->count() && !f.iters_opt->count());
  if (!c.iters_auto) {
    size_t used = 0;
    long long n = 0;
    try {
      n = std::stoll(f.iters, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != f.iters.size() || n < 1 || n > 100'000'000)
      throw UsageError(fmt::format("--iters '{}' must be a count >= 1 or auto", f.iters));
    c.iters = static_cast<int>(n);
    for (const CLI::Option* o : {f.target_ci_opt, f.min_iters_opt, f.max_iters_opt, f.max_time_opt})
      if (o->count())
        throw UsageError(fmt::format("{} needs --iters auto; drop it or use --iters auto", o->get_name()));
  }
}


// The CLI's own variable of each catalogue option without a RunConfig member (RunOption::field
// is monostate): the text it parses, or a launcher setting.
using FlagsField = std::variant<std::string RunFlags::*, bool RunFlags::*, int RunFlags::*, long long RunFlags::*>;
const std::map<std::string, FlagsField>& cli_parsed_options() {
  static const std::map<std::string, FlagsField> kFields = {
      {"--model", &RunFlags::models},
      {"--batch-size", &RunFlags::batch_text},
      {"--memory-limit", &RunFlags::memory_limit},
      {"--iters", &RunFlags::iters},
      {"--world-sizes", &RunFlags::world_sizes},
      {"--duration", &RunFlags::duration},
      {"--bucket-cap-mb", &RunFlags::bucket_caps},
      {"--comm-hook", &RunFlags::comm_hooks},
      {"--grad-accum", &RunFlags::grad_accums},
      {"--strategy", &RunFlags::strategies},
      {"--instruments-off", &RunFlags::instruments_off},
      {"--resume", &RunFlags::resume},
      {"--overwrite", &RunFlags::overwrite},
      {"--nproc-per-node", &RunFlags::nproc_per_node},
      {"--no-malloc-tuning", &RunFlags::no_malloc_tuning},
  };
  return kFields;
}

// Registers one catalogue option (core/config/run_options.hpp) with CLI11: a switch or a value,
// into its RunConfig member or the CLI's own variable, with its check and help.
CLI::Option* add_run_option(CLI::App* app, const RunOption& o, RunFlags& f) {
  RunConfig& c = f.cfg;
  CLI::Option* opt = nullptr;
  const auto add = [&](auto& target) {
    using T = std::decay_t<decltype(target)>;
    if constexpr (std::is_same_v<T, bool>) {
      if (!o.flag_only) throw std::logic_error("run option " + o.name() + ": a bool member is a switch");
      if (o.negated) opt = app->add_flag_callback(o.flag, [&target] { target = false; }, o.help);
      else opt = app->add_flag(o.flag, target, o.help);
    } else {
      opt = app->add_option(o.flag, target, o.help);
    }
  };
  if (std::holds_alternative<std::monostate>(o.field)) {
    const auto it = cli_parsed_options().find(o.name());
    if (it == cli_parsed_options().end())
      throw std::logic_error("run option " + o.name() + " has neither a RunConfig member nor a CLI variable");
    std::visit([&](auto member) { add(f.*member); }, it->second);
  } else {
    std::visit(
        [&](auto member) {
          if constexpr (!std::is_same_v<decltype(member), std::monostate>) add(c.*member);
        },
        o.field);
  }
  opt->group(o.group);
  if (o.show_default) opt->capture_default_str();
  switch (o.check) {
    case RunOption::Check::kNone: break;
    case RunOption::Check::kWholeNumber: opt->check(whole_number()); break;
    case RunOption::Check::kWholeOrMax:
      opt->check(CLI::Validator([](std::string& t) { return t == "max" ? std::string() : whole_number()(t); }, "",
                                "whole number or max"));
      break;
    case RunOption::Check::kSize: opt->transform(CLI::AsSizeValue(false)); break;
  }
  return opt;
}

// Every `run` option, from the catalogue; the handles the callback asks (was it given?).
void add_run_options(CLI::App* app, RunFlags& f) {
  for (const auto& o : run_options()) (void)add_run_option(app, o, f);
  const auto get = [&](const char* name) { return app->get_option(name); };
  f.model_opt = get("--model");
  f.batch_opt = get("--batch-size");
  f.memory_limit_opt = get("--memory-limit");
  f.image_opt = get("--image-size");
  f.seq_len_opt = get("--seq-len");
  f.precision_opt = get("--precision");
  f.head_opt = get("--head");
  f.iters_opt = get("--iters");
  f.target_ci_opt = get("--target-ci");
  f.min_iters_opt = get("--min-iters");
  f.max_iters_opt = get("--max-iters");
  f.max_time_opt = get("--max-time");
  f.bucket_caps_opt = get("--bucket-cap-mb");
  f.json_opt = get("--json");
  f.resume_opt = get("--resume");
  f.profile_opt = get("--profile");
  f.nproc_opt = get("--nproc-per-node");
  f.num_classes_opt = get("--num-classes");
}

// run --resume PATH.partial: writes PATH; the stopped run's flags must be these, its rows ones
// this run can keep, and (rank 0) what is known of this launch's environment before a rank
// starts its own. Throws UsageError naming what differs. Sets cfg.json_path to PATH.
void check_resume(RunFlags& f, const LaunchInfo& li, const EnvMap& env, int world, int threads, bool use_cuda) {
  RunConfig& cfg = f.cfg;
  if (f.batch_max) throw UsageError("--resume needs the --batch-size the stopped run used, not max (see its config)");
  if (cfg.data != "synthetic")
    throw UsageError(
        "--resume continues synthetic-data sweeps; a --data run trains one time-to-loss row per model, "
        "run it again");
  const std::string path = resume_result_path(f.resume);
  if (f.json_opt->count() && cfg.json_path != path)
    throw UsageError(fmt::format("--resume '{}' writes '{}'; drop --json or pass --json {}", f.resume, path, path));
  cfg.json_path = path;
  if (li.rank == 0) {
    const ResultFile prior = read_result_file(f.resume);
    if (const std::string why = resume_mismatch(prior, to_json(cfg), world); !why.empty())
      throw UsageError(
          fmt::format("--resume '{}' cannot be continued by this run: {}; pass the stopped run's flags (its argv "
                      "is in the file)",
                      f.resume, why));
    if (const std::string why = resume_rows_problem(prior, planned_groups(cfg)); !why.empty())
      throw UsageError(fmt::format("--resume '{}' cannot be continued: {}", f.resume, why));
    // What is known of this launch's environment before a rank starts; rank 0
    // compares the rest (hosts, devices, each host's versions) once they met.
    const nlohmann::json here{{"threads_per_rank", threads},
                              {"device_type", use_cuda ? "cuda" : "cpu"},
                              {"torch", torch_version()},
                              {"env", env_subset(env)}};
    if (const std::string why = resume_environment_mismatch(prior.environment, here); !why.empty())
      throw UsageError(resume_environment_refusal(f.resume, why));
  }
}

// What this rank of `run` is asked to do (engine/run/run_job.hpp), from the checked flags.
RunJob run_job_of(const RunFlags& f, const std::string& note, const std::vector<std::string>& argv) {
  RunJob job;
  job.cfg = f.cfg;
  job.defaults_note = note;
  job.argv = argv;
  job.resume = f.resume;
  job.overwrite = f.overwrite;
  job.batch_max = f.batch_max;
  if (f.memory_limit_opt->count()) job.memory_limit_bytes = f.memory_limit;
  job.no_malloc_tuning = f.no_malloc_tuning;
  job.profile = f.profile_opt->count() > 0;
  return job;
}

}  // namespace

Command add_run_command(CLI::App& parent, const std::vector<std::string>& argv) {
  auto f = std::make_shared<RunFlags>();
  auto* app = parent.add_subcommand("run", "Benchmark DDP training: no-DDP baseline, then DDP on 1, 2, 4, ... ranks");
  app->footer(
      "Exit codes: 0 every row measured and every self-check passed; 1 a runtime failure (a rank died, a timeout, "
      "a torch error, a file that appeared at the --json path while the run went); 2 bad input (one line names "
      "it); 3 the gradient self-check failed (the rows so far are in PATH.partial of --json PATH).");
  add_run_options(app, *f);

  return {app, [f, argv]() -> int {
            RunConfig& cfg = f->cfg;
            const EnvMap env = current_env();
            const LaunchInfo li = detect_launch(env);
            check_spawner_parent(li, env);
            if (f->model_opt->count()) cfg.models = split_list(f->models);
            f->batch_max = f->batch_text == "max";  // resolved by find-max-bs in run_rank; 1 until then
            if (f->batch_opt->count()) cfg.batch_size = f->batch_max ? 1 : std::stoll(f->batch_text);
            parse_iters(*f);
            cfg.zero_grad_set_to_none = zero_grad_set_to_none(cfg);  // recorded resolved
            const int gpus = device_gpus(cfg.device);
            const bool use_cuda = gpus > 0;
            const std::string note = resolve_defaults(*f, use_cuda);

            const bool spawner = li.launcher == Launcher::kNone;
            const int world = launch_world_size(li, f->nproc_opt->count() > 0, f->nproc_per_node, use_cuda ? gpus : 2);

            // Configuration errors are the same on every rank: rank 0 reports them.
            BackendKind backend = BackendKind::kGloo;
            int threads = 1;
            validate_on_rank0(li, [&] {
              if (cfg.scaling == "strong" && f->batch_opt->count())
                throw UsageError("--batch-size is per rank; with --scaling strong give --global-batch-size only");
              if (!use_cuda && cfg.cpu_offload)
                throw UsageError(
                    "--cpu-offload moves fsdp's shards from GPU memory to the host, and this run has no GPU; drop "
                    "--cpu-offload");
              if (!use_cuda && (cfg.precision == "fp16" || cfg.precision == "tf32"))
                throw UsageError(fmt::format("--precision {} needs a GPU; on CPUs use fp32 or bf16", cfg.precision));
              if (f->batch_max && cfg.models.size() != 1)
                throw UsageError("--batch-size max searches one model; give one --model");
              if (f->memory_limit_opt->count() && (!f->batch_max || f->memory_limit <= 0))
                throw UsageError(
                    "--memory-limit bounds the search of --batch-size max; give a positive size with "
                    "--batch-size max, or drop it");
              if (f->batch_max && !use_cuda && !f->memory_limit_opt->count())
                throw UsageError(
                    "--batch-size max on CPUs needs --memory-limit BYTES per rank (e.g. 2G): without it "
                    "the search would take the machine's memory");
              if (f->head_opt->count() && !cfg.freeze_backbone)
                throw UsageError("--head is the head trained with --freeze-backbone; add --freeze-backbone");
              if (f->world_sizes == "world") cfg.world_sizes = {world};  // the whole job only (a burn-in)
              else if (!f->world_sizes.empty()) cfg.world_sizes = parse_int_list(f->world_sizes, "--world-sizes");
              else cfg.world_sizes = default_world_sizes(world);
              cfg.bucket_caps_mb = parse_mb_list(f->bucket_caps, "--bucket-cap-mb");
              cfg.bucket_cap_caps_first_bucket =
                  f->bucket_caps_opt->count() > 0 && ddp_explicit_cap_caps_first_bucket();
              cfg.comm_hooks = parse_comm_hook_list(f->comm_hooks);
              cfg.grad_accums = parse_count_list(f->grad_accums, "--grad-accum", kMaxGradAccum);
              cfg.strategies = parse_strategy_list(f->strategies);
              if (!f->duration.empty()) cfg.duration_s = parse_duration_s(f->duration, "--duration");
              cfg.instruments_off = parse_instruments_off(f->instruments_off);
              if (f->profile_opt->count() && cfg.profile_dir.empty())
                throw UsageError("--profile needs a directory; pass e.g. --profile traces");
              if (cfg.data == "fashion-mnist" && !f->num_classes_opt->count()) cfg.num_classes = 10;
              validate(cfg, world, model_names());
              check_ddp_settings_supported(cfg);
              if (f->profile_opt->count()) prepare_profile_dir(cfg.profile_dir, f->overwrite);  // after validate:
              // a refused flag leaves no directory behind
              if (f->json_opt->count() || f->resume_opt->count()) {
                // The result and its rows never replace a file the run reads (the dataset, the
                // baselines; --resume's PATH.partial is the file it continues), checked before
                // any is read.
                const std::string out = f->resume_opt->count() ? resume_result_path(f->resume) : cfg.json_path;
                std::vector<NamedPath> inputs;
                if (cfg.data != "synthetic") {
                  for (const char* name : {kTrainImagesFile, kTrainLabelsFile, kTestImagesFile, kTestLabelsFile})
                    inputs.push_back({"--data-dir file", (std::filesystem::path(cfg.data_dir) / name).string()});
                  std::error_code ec;
                  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
                  if (const std::string b = find_baselines_file(ec ? std::string() : exe.string()); !b.empty())
                    inputs.push_back({"baselines file", b});
                }
                check_outputs_apart(inputs, {{"--json", out}, {"--json's rows file", partial_path(out)}});
              }
              // A missing or corrupt dataset file: one line, exit 2, before ranks start (ranks launched by
              // torchrun or srun find it when they load the data, with the same line).
              if (spawner && cfg.data != "synthetic") (void)load_train_test(cfg);
              for (const auto& m : cfg.models) check_model_args(m, model_args(cfg));
              if (!cfg.language_models.empty() && cfg.freeze_backbone)
                throw UsageError(fmt::format("--freeze-backbone trains an image classifier's head, and {} is a "
                                             "language model; drop --freeze-backbone or the language model",
                                             cfg.language_models.front()));
              if (!cfg.language_models.empty() && cfg.data != "synthetic")
                throw UsageError(fmt::format("--data {} trains an image classifier, and {} is a language model; "
                                             "drop --data or the language model",
                                             cfg.data, cfg.language_models.front()));
              if (!use_cuda)  // GPU memory is the device's, unknown here
                if (const auto avail = mem_available_bytes())
                  check_input_fits(cfg, spawner ? world : li.local_world_size, *avail);
              backend = choose_backend(cfg.backend, use_cuda);
              check_nccl_ranks(backend, spawner, world, gpus);
              threads = rank_threads(li, env, world);
              if (f->resume_opt->count()) check_resume(*f, li, env, world, threads, use_cuda);
              if ((f->json_opt->count() || f->resume_opt->count()) && li.rank == 0)
                check_result_target(cfg.json_path, f->overwrite, f->resume_opt->count() > 0);
              if (auto it = env.find("DDPBENCH_TEST_FAULT"); it != env.end() && !it->second.empty())
                (void)fault_injection_hook(it->second);  // an unknown name is bad input, said once
            });

            if (check_only(env)) return kExitOk;
            if (spawner) return spawn_ranks(env, li, world, argv, cfg.timeout_s, cfg.json_path);
            return run_this_rank(li, env, cfg.timeout_s, "the batch does not fit in memory",
                                 "use a smaller --batch-size or --image-size",
                                 [&] {
                                   RunJob job = run_job_of(*f, note, argv);
                                   return run_rank(job, li, env, use_cuda, backend, threads);
                                 });
          }};
}

}  // namespace ddpbench::cli
