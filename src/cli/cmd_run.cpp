// `ddpbench run`: the DDP training benchmark sweep (see engine/bench/sweep.hpp).
#include <ATen/Parallel.h>
#include <malloc.h>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <type_traits>
#include <variant>

#include "cli/commands.hpp"
#include "core/analysis/convergence.hpp"
#include "core/config/instruments.hpp"
#include "core/config/run_config.hpp"
#include "core/config/run_options.hpp"
#include "core/launch/launch_env.hpp"
#include "core/launch/progress.hpp"
#include "core/launch/spawn.hpp"
#include "core/launch/watchdog.hpp"
#include "core/result/bench_table.hpp"
#include "core/result/result.hpp"
#include "core/stats/straggler.hpp"
#include "core/util/errors.hpp"
#include "core/util/version.hpp"
#include "engine/bench/max_batch.hpp"
#include "engine/bench/sweep.hpp"
#include "engine/bench/time_to_loss.hpp"
#include "engine/compat.hpp"
#include "engine/data/idx.hpp"
#include "engine/dist/process_group.hpp"
#include "engine/dist/rendezvous.hpp"
#include "engine/env_info.hpp"
#include "engine/models/registry.hpp"
#include "engine/run/launch.hpp"
#include "engine/timing.hpp"
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

// run --resume's one line when this launch's measurement environment is not the stopped
// run's (`why`: resume_environment_mismatch): its rows and ours would not be comparable.
std::string resume_environment_refusal(const std::string& partial, const std::string& why) {
  return fmt::format(
      "--resume '{}' was measured in another environment: {}; resume it with the stopped run's settings, on its "
      "hosts, or run the sweep again without --resume",
      partial, why);
}

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
};

// glibc returns large freed blocks to the OS on every iteration (mmap/munmap, heap trims,
// page faults); raising the thresholds keeps them in the heap. On this project's 2-core
// CPU machine an untuned step of resnet18 spends most of its time in page faults, and by
// an amount that depends on the process's allocation history (docs/METHODOLOGY.md,
// "ddpbench and Python DDP"). Skipped when the user set MALLOC_* tunables or passed
// --no-malloc-tuning.
nlohmann::json tune_malloc(const EnvMap& env, bool disabled) {
  if (disabled) return {{"applied", false}, {"reason", "--no-malloc-tuning"}};
  for (const char* k : {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES"})
    if (env.count(k)) return {{"applied", false}, {"reason", std::string("user set ") + k}};
  const int mmap_threshold = 32 << 20;  // glibc's maximum on 64-bit
  const int trim_threshold = 1024 << 20;
  const bool ok = mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1 && mallopt(M_TRIM_THRESHOLD, trim_threshold) == 1;
  return {{"applied", ok}, {"M_MMAP_THRESHOLD", mmap_threshold}, {"M_TRIM_THRESHOLD", trim_threshold}};
}

// --profile DIR: created (with parents) where missing; must be a writable directory that
// holds no trace of an earlier run (DIR/*-rank<R>.json), unless `overwrite`. Every rank calls
// it on its own host, before the rendezvous (so before any trace of this run exists).
void prepare_profile_dir(const std::string& dir, bool overwrite) {
  if (dir.empty()) throw UsageError("--profile needs a directory; pass e.g. --profile traces");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw UsageError(
        fmt::format("--profile '{}' is not a directory that can be created ({}); pass a writable directory", dir,
                    ec ? ec.message() : "a file is in the way"));
  if (::access(dir.c_str(), W_OK) != 0)
    throw UsageError(fmt::format("--profile '{}' is not writable; pass a writable directory", dir));
  static const std::regex trace(R"(.*-rank[0-9]+\.json)");
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!std::regex_match(name, trace)) continue;
    // A link or special file where a trace would go is refused before the run, --overwrite
    // or not (the trace's rename would refuse it after the row was measured).
    if (e.is_symlink(ec) || !e.is_regular_file(ec))
      throw UsageError(
          fmt::format("--profile '{}': '{}' is a link or not a regular file; remove it or pass another "
                      "directory",
                      dir, name));
    if (!overwrite)
      throw UsageError(fmt::format(
          "--profile '{}' holds traces of an earlier run ({}); pass another directory or --overwrite to replace them",
          dir, name));
  }
}

// Resolves the defaults that depend on the machine and says what it chose and why.
std::string resolve_defaults(RunFlags& f, bool use_cuda) {
  std::string note;
  if (!f.model_opt->count()) f.cfg.models = {use_cuda ? kGpuModel : kCpuModel};
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

void print_header(const ResultFile& rf, const std::vector<RankPlacement>& placements, const std::string& note) {
  const auto& e = rf.environment;
  const auto& c = rf.config;
  print_line("-----------------------------------------");
  print_line(fmt::format("ddpbench {} (git {}) -- PyTorch DDP benchmark", tool_version(), git_sha()));
  print_line("-----------------------------------------");
  print_line("");
  print_line(fmt::format("* PyTorch version: {}", e["torch"].get<std::string>()));
  print_line(fmt::format("* CUDA version: {}", e["cuda"].get<std::string>()));
  print_line(fmt::format("* NCCL version: {}", e["nccl"].get<std::string>()));
  print_line(fmt::format("* Distributed backend: {}", e["backend"].get<std::string>()));
  {
    // Each is one number, or one per swept bucket cap.
    const auto mib = [](const nlohmann::json& v) {
      return v.is_array() ? fmt::format("{}", fmt::join(v.get<std::vector<double>>(), ", "))
                          : fmt::format("{}", v.get<double>());
    };
    print_line(fmt::format("* Maximum bucket size: {} MiB (first bucket {} MiB)", mib(c["bucket_cap_mb"]),
                           mib(c["first_bucket_cap_mb"])));
  }
  {
    std::vector<std::string> knobs;
    for (const auto& d : ddp_flag_settings())  // the flag settings other than DDP's defaults
      if (c[d.name].get<bool>() != d.ddp_default) knobs.push_back(fmt::format("{}={}", d.name, d.ddp_default ? "False" : "True"));
    if (c["comm_hook"] != nlohmann::json::array({"none"}))
      knobs.push_back(fmt::format("comm hook {}", fmt::join(c["comm_hook"].get<std::vector<std::string>>(), " / ")));
    if (c["grad_accum"] != nlohmann::json::array({1}))
      knobs.push_back(fmt::format("gradient accumulation {} micro-steps",
                                  fmt::join(c["grad_accum"].get<std::vector<int>>(), " / ")));
    if (!knobs.empty()) print_line(fmt::format("* DDP: {}", fmt::join(knobs, ", ")));
  }
  print_line(fmt::format("* World size: {} (launcher: {}), {}", e["world_size"].get<int>(),
                         e["launcher"].get<std::string>(), hosts_summary(placements)));
  print_line(fmt::format("* Device: {}, {} intra-op thread(s) per rank", e["device_type"].get<std::string>(),
                         e["threads_per_rank"].get<int>()));
  const auto& m = e["math"];
  std::string precision = c["precision"].get<std::string>();
  if (precision == "fp32" && e["device_type"] == "cuda") precision += " (PyTorch's default math)";
  if (c["channels_last"].get<bool>()) precision += ", channels_last";
  if (e["device_type"] == "cuda")
    print_line(fmt::format(
        "* Precision: {}; TF32 cuBLAS {} / cuDNN {}; cuDNN benchmark {}; {} attention", precision,
        m["cublas_allow_tf32"].get<bool>() ? "on" : "off", m["cudnn_allow_tf32"].get<bool>() ? "on" : "off",
        m["cudnn_benchmark"].get<bool>() ? "on" : "off", m["fused_attention"].get<bool>() ? "fused" : "unfused"));
  else print_line(fmt::format("* Precision: {}", precision));
  if (const auto z = c.find("zero_grad_set_to_none"); z != c.end() && z->is_boolean())
    print_line(fmt::format("* Optimizer.zero_grad(set_to_none={}){}", z->get<bool>() ? "True" : "False",
                           z->get<bool>() == default_zero_grad_set_to_none() ? ", the linked torch's default"
                                                                             : " (--zero-grad-set-to-none)"));
  const auto& mt = e["malloc_tuning"];
  if (mt.value("applied", false))
    print_line(
        "* glibc malloc tuned (M_MMAP_THRESHOLD 32 MiB, M_TRIM_THRESHOLD 1 GiB): a Python job matches these "
        "numbers only with MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824 (METHODOLOGY)");
  if (c.contains("duration_s") && c["duration_s"].is_number())
    print_line(
        fmt::format("* Burn-in: each series runs {:g} s after {} warm-up iterations (--duration), throughput per "
                    "rank per window in the row's burn_in",
                    c["duration_s"].get<double>(), c["warmup"].get<int>()));
  else if (c["iters"].is_string())
    print_line(
        fmt::format("* Iterations: auto, until the 95% CI of the mean is within {}% ({} to {}, at most {} s "
                    "per series)",
                    c["target_ci_pct"].get<double>(), c["min_iters"].get<int>(), c["max_iters"].get<int>(),
                    c["max_time_s"].get<double>()));
  else
    print_line(
        fmt::format("* Iterations: {} measured after {} warm-up", c["iters"].get<int>(), c["warmup"].get<int>()));
  if (const auto off = c.find("instruments_off"); off != c.end())
    print_line("* Instruments: " +
               instruments_line(off->get<std::vector<std::string>>(), c["sample_ms"].get<int>()));
  if (c["freeze_backbone"].get<bool>())
    print_line(
        fmt::format("* Frozen backbone: only the {} head trains (and is allreduced)", c["head"].get<std::string>()));
  if (!note.empty()) print_line("* " + note);
  const std::string topo = e.value("topology", std::string());
  if (!topo.empty()) {
    print_line("");
    print_line("--- nvidia-smi topo -m ---");
    print_line(topo);
  }
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

// --batch-size max: every rank searches its own device (find-max-bs); the minimum over ranks,
// less the margin, becomes cfg.batch_size, and the search goes into the result's config.
void resolve_batch_max(RunFlags& f, const LaunchInfo& li, const c10::Device& device,
                       const c10::intrusive_ptr<c10d::Store>& store, std::chrono::milliseconds timeout,
                       nlohmann::json& cfg_json) {
  RunConfig& cfg = f.cfg;
  TrialSetup ts;
  ts.cfg = cfg;
  ts.device = device;
  ts.timeout_s = cfg.timeout_s;
  if (f.memory_limit_opt->count()) ts.memory_limit_bytes = f.memory_limit;
  nlohmann::json found;
  validate_on_rank0(li, [&] { found = resolve_max_batch_over_ranks(ts, kDefaultBatchMargin, li, store, timeout); });
  cfg.batch_size = found.at("batch").get<long long>();
  (void)apply_math_modes({cfg.precision, cfg.cudnn_benchmark});  // as before the search
  cfg_json = to_json(cfg);
  cfg_json["batch_size_search"] = found;
  if (li.rank == 0)
    print_line(fmt::format("--batch-size max: {} fits on every rank (find-max-bs), {} per rank used (margin {:g})",
                           found.at("max_batch_min_over_ranks").get<long long>(), cfg.batch_size, kDefaultBatchMargin));
}

// run --resume on rank 0 when this launch may continue the stopped run (`prior`): its rows go
// into senv.kept_rows (each with the launch that measured it) and its straggler entries into
// `rf`; returns the benchmark groups it measured, one per line.
std::string keep_prior_rows(const RunFlags& f, const ResultFile& prior, SweepEnv& senv, ResultFile& rf) {
  const nlohmann::json prior_launch{{"job_id", prior.environment.is_object() && prior.environment.contains("rendezvous")
                                                   ? prior.environment["rendezvous"].value("job_id", std::string())
                                                   : std::string()},
                                    {"started_utc", prior.created_utc}};
  for (BenchResult r : prior.results) {
    if (!r.launch.is_object()) r.launch = prior_launch;
    senv.kept_rows[r.group].push_back(std::move(r));
  }
  std::string groups;
  for (const auto& kv : senv.kept_rows) groups += kv.first + "\n";
  rf.stragglers = prior.stragglers;
  print_line(
      fmt::format("* Resuming {}: {} row(s) of {} benchmark group(s) kept as the stopped run measured "
                  "them; the rest is measured now",
                  f.resume, prior.results.size(), senv.kept_rows.size()));
  return groups;
}

// run --resume: the groups the stopped run measured go from rank 0 (the one rank that must
// see its file) to every rank through the store, into senv.done_groups; none of them is
// measured again, and rank 0 emits their rows as they were written. A launch whose
// environment differs from the stopped run's (`refused`, rank 0: hosts, devices, versions,
// the NCCL_* and thread settings) is refused by rank 0, which tells the other ranks through
// the same key ("!" and the reason instead of the groups): each says one line and exits 2.
void share_resume_groups(const RunFlags& f, const LaunchInfo& li, c10d::Store& store, std::chrono::milliseconds timeout,
                         const std::optional<ResultFile>& prior, const std::string& refused, SweepEnv& senv,
                         ResultFile& rf) {
  std::string groups;
  if (li.rank == 0) {
    if (!refused.empty()) {
      const std::string refusal = "!" + refused;
      store.set("resume/groups", std::vector<uint8_t>(refusal.begin(), refusal.end()));
      // Rank 0 serves the store: it stays until every other rank read the refusal (or 30 s).
      const auto until =
          std::chrono::steady_clock::now() + std::min<std::chrono::milliseconds>(timeout, std::chrono::seconds(30));
      while (store.add("resume/refusal_read", 0) < li.world_size - 1 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      throw UsageError(resume_environment_refusal(f.resume, refused));
    }
    groups = keep_prior_rows(f, *prior, senv, rf);
    store.set("resume/groups", std::vector<uint8_t>(groups.begin(), groups.end()));
  } else {
    Deadline d("the store (rank 0), the groups run --resume keeps", timeout);
    const auto v = store.get("resume/groups");
    groups.assign(v.begin(), v.end());
    if (!groups.empty() && groups.front() == '!') {
      store.add("resume/refusal_read", 1);
      // Under the built-in launcher rank 0's line is on this terminal already.
      if (li.launcher == Launcher::kLocalSpawner) throw SilentExit{kExitUsage};
      throw UsageError(
          fmt::format("rank {}: rank 0 refused --resume '{}': the stopped run was measured in another "
                      "environment ({})",
                      li.rank, f.resume, groups.substr(1)));
    }
  }
  std::istringstream in(groups);
  for (std::string g; std::getline(in, g);)
    if (!g.empty()) senv.done_groups.insert(g);
}

// Rank 0's output of the sweep: each finished row (core/result/row_finish) printed under its
// model's header, then appended to the result file and saved to PATH.partial; each model's
// straggler entry printed and saved likewise. Nothing here changes a row.
class RowPrinter {
 public:
  /// `launch`: this launch's stamp (SweepEnv::row_launch); a row with another was kept by --resume.
  RowPrinter(const RunConfig& cfg, bool use_cuda, ResultFile& rf, std::optional<Progress>& progress,
             const nlohmann::json& launch)
      : cfg_(cfg), use_cuda_(use_cuda), rf_(rf), progress_(progress), launch_(launch) {}

  void row(const BenchResult& row) {
    if (progress_) progress_->suspend();
    const bool strong = cfg_.scaling == "strong";
    if (row.model != current_model_) {
      current_model_ = row.model;
      print_line("");
      print_line(strong ? fmt::format("Benchmark: {}, strong scaling, global batch {} ({}x{} images, {})", row.model,
                                      cfg_.global_batch_size, row.image_size, row.image_size, row.precision)
                        : fmt::format("Benchmark: {}{} with batch size {} ({}x{} images, {})", row.model,
                                      row.mode == "inference" ? " inference (forward only, no DDP)" : "",
                                      row.batch_per_rank, row.image_size, row.image_size, row.precision));
      print_line("");
      print_line(table_header());
    }
    const std::string line = table_row(row, use_cuda_ ? "GPUs" : "CPUs") + table_row_extras(row) +
                             (row.launch.is_object() && row.launch != launch_ ? "  (kept from the stopped run)" : "");
    print_line(strong ? fmt::format("{}  (batch {} per rank)", line, row.batch_per_rank) : line);
    if (cfg_.print_breakdown)
      if (const std::string b = table_row_breakdown(row); !b.empty()) print_line(b);
    for (const auto& w : table_row_warnings(row)) print_line(w);
    rf_.results.push_back(row);
    save_partial(rf_, cfg_.json_path);  // the rows so far; PATH itself only ever holds a complete run
    if (progress_) progress_->resume();
  }

  // The slow rank named, after the model's table (docs/METHODOLOGY.md "Stragglers").
  void stragglers(const nlohmann::json& entry) {
    print_line("");
    for (const auto& l : straggler_lines(entry)) print_line(l);
    rf_.stragglers.push_back(entry);
    save_partial(rf_, cfg_.json_path);
  }

 private:
  const RunConfig& cfg_;
  bool use_cuda_;
  ResultFile& rf_;
  std::optional<Progress>& progress_;
  const nlohmann::json& launch_;
  std::string current_model_;
};

// Rank 0, after the sweep: a model whose no-DDP baseline the stopped run measured has
// straggler scores only if that run got as far as scoring them (every rank's baseline, of one
// launch, makes the scores); says so for each model left without them.
void note_unscored_models(const RunConfig& cfg, const std::set<std::string>& done_groups, const ResultFile& rf) {
  for (const auto& m : cfg.models) {
    const bool kept_baseline = std::any_of(done_groups.begin(), done_groups.end(),
                                           [&](const std::string& g) { return g.rfind(m + "/noddp-", 0) == 0; });
    const bool scored = std::any_of(rf.stragglers.begin(), rf.stragglers.end(), [&](const nlohmann::json& e) {
      return e.is_object() && e.value("model", std::string()) == m;
    });
    if (kept_baseline && !scored)
      print_line(
          fmt::format("# {}: no straggler scores: its no-DDP baseline, which every rank measures for "
                      "them, was measured by the stopped run, which stopped before scoring",
                      m));
  }
}

// The configuration every rank of the job must share (the rendezvous compares it): the
// configuration without json_path, which only rank 0 uses.
std::string shared_config(nlohmann::json cfg_json) {
  cfg_json.erase("json_path");
  return cfg_json.dump();
}

// The test seam of the self-check (tests/e2e): the fault DDPBENCH_TEST_FAULT names, or none.
SelfCheckHook test_fault_hook(const EnvMap& env) {
  const auto it = env.find("DDPBENCH_TEST_FAULT");
  return it != env.end() && !it->second.empty() ? fault_injection_hook(it->second) : SelfCheckHook();
}

// What every rank's sweep runs with (SweepEnv): the job's shared part and run's own.
SweepEnv sweep_env(JobEnv job, const RunConfig& cfg, int threads, const MathModes& math) {
  SweepEnv senv;
  static_cast<JobEnv&>(senv) = std::move(job);
  senv.cfg = cfg;
  senv.threads_per_rank = threads;
  senv.math = math;
  return senv;
}

int run_rank(RunFlags& f, const LaunchInfo& li, const EnvMap& env, bool use_cuda, BackendKind backend, int threads,
             const std::string& note, const std::vector<std::string>& argv) {
  RunConfig& cfg = f.cfg;
  at::set_num_threads(threads);
  if (f.profile_opt->count()) prepare_profile_dir(cfg.profile_dir, f.overwrite);  // on this rank's host
  const SelfCheckHook fault_hook = test_fault_hook(env);  // named once here, never inside the measured code
  c10::Device device(c10::kCPU);
  if (use_cuda) {
    device = rank_device(li, backend);
    set_current_device(device);
  }
  const MathModes math = apply_math_modes({cfg.precision, cfg.cudnn_benchmark});
  const auto timeout = std::chrono::milliseconds(static_cast<long long>(cfg.timeout_s * 1000));
  const nlohmann::json malloc_info =
      use_cuda ? nlohmann::json{{"applied", false}, {"reason", "GPU run"}} : tune_malloc(env, f.no_malloc_tuning);

  // The ranks of this job find each other; every rank must run the same configuration,
  // or the sweep would deadlock.
  nlohmann::json cfg_json = to_json(cfg);
  JobEnv job = join_job(li, env, backend, device, timeout, shared_config(cfg_json));
  if (f.batch_max) resolve_batch_max(f, li, device, job.store, timeout, cfg_json);
  SweepEnv senv = sweep_env(std::move(job), cfg, threads, math);

  // Each host's environment, once per host (its local rank 0 probes it); rank 0 collects them.
  const NodeEnvironments node_envs = gather_node_environments(senv.store, li, env, senv.placements, timeout, senv.store_prefix);
  ResultFile rf;
  std::optional<ResultFile> prior;  // rank 0, run --resume: the stopped run's file
  std::string resume_refused;       // rank 0: why this launch cannot continue it ("" if it can)
  if (li.rank == 0) {
    rf = new_result_file("run", argv, planned_rows(cfg));
    rf.config = cfg_json;
    rf.config["defaults_note"] = note;
    EnvironmentFacts facts = job_environment_facts(li, senv.job_id, backend, use_cuda, threads, senv.placements, env,
                                                   node_envs, senv.store_server);
    facts.math = math_json(math);
    facts.malloc_tuning = malloc_info;
    rf.environment = environment_json(facts);
    senv.row_launch = {{"job_id", senv.job_id}, {"started_utc", rf.created_utc}};  // the launch of every row
    if (f.resume_opt->count()) {
      prior = read_result_file(f.resume);
      resume_refused = resume_environment_mismatch(prior->environment, rf.environment);
    }
    if (resume_refused.empty()) print_header(rf, senv.placements, note);
  }
  if (f.resume_opt->count()) share_resume_groups(f, li, *senv.store, timeout, prior, resume_refused, senv, rf);

  // Rank 0's progress on stderr (core/launch/progress): a live line on a terminal, a line per row
  // otherwise, nothing with --quiet. Cleared around the table lines.
  std::optional<Progress> progress;
  if (li.rank == 0 && !cfg.quiet && instrument_on(cfg.instruments_off, "progress")) {
    progress.emplace(std::cerr, progress_mode(false, isatty(STDERR_FILENO) != 0), planned_rows(cfg));
    senv.progress = &*progress;
  }
  RowPrinter out(cfg, use_cuda, rf, progress, senv.row_launch);
  try {
    run_sweep(
        senv, [&](const BenchResult& row) { out.row(row); }, [&](const nlohmann::json& e) { out.stragglers(e); },
        fault_hook);
    if (li.rank == 0 && cfg.mode != "inference") note_unscored_models(cfg, senv.done_groups, rf);
    finish_barrier(senv.store, li, timeout);
    if (li.rank == 0 && !cfg.json_path.empty()) {
      commit_result(rf, cfg.json_path, f.overwrite);
      print_line("");
      print_line(fmt::format("Wrote {} ({} rows, schema {})", cfg.json_path, rf.results.size(), kSchemaVersion));
    }
  } catch (...) {
    note_partial_rows(li, cfg.json_path);
    throw;
  }
  return kExitOk;
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
              for (const auto& m : cfg.models) check_model_input(m, cfg.image_size);
              if (!use_cuda)  // GPU memory is the device's, unknown here
                if (const auto avail = mem_available_bytes())
                  check_input_fits(cfg, spawner ? world : li.local_world_size, *avail);
              backend = choose_backend(cfg.backend, use_cuda);
              check_nccl_ranks(backend, spawner, world, gpus);
              threads = rank_threads(li, env, world);
              if (f->resume_opt->count()) {
                // run --resume PATH.partial: writes PATH; the stopped run's flags must be these.
                if (f->batch_max)
                  throw UsageError("--resume needs the --batch-size the stopped run used, not max (see its config)");
                if (cfg.data != "synthetic")
                  throw UsageError(
                      "--resume continues synthetic-data sweeps; a --data run trains one time-to-loss row per model, "
                      "run it again");
                const std::string path = resume_result_path(f->resume);
                if (f->json_opt->count() && cfg.json_path != path)
                  throw UsageError(
                      fmt::format("--resume '{}' writes '{}'; drop --json or pass --json {}", f->resume, path, path));
                cfg.json_path = path;
                if (li.rank == 0) {
                  const ResultFile prior = read_result_file(f->resume);
                  if (const std::string why = resume_mismatch(prior, to_json(cfg), world); !why.empty())
                    throw UsageError(fmt::format(
                        "--resume '{}' cannot be continued by this run: {}; pass the stopped run's flags (its argv "
                        "is in the file)",
                        f->resume, why));
                  if (const std::string why = resume_rows_problem(prior, planned_groups(cfg)); !why.empty())
                    throw UsageError(fmt::format("--resume '{}' cannot be continued: {}", f->resume, why));
                  // What is known of this launch's environment before a rank starts; rank 0
                  // compares the rest (hosts, devices, each host's versions) once they met.
                  const nlohmann::json here{{"threads_per_rank", threads},
                                            {"device_type", use_cuda ? "cuda" : "cpu"},
                                            {"torch", torch_version()},
                                            {"env", env_subset(env)}};
                  if (const std::string why = resume_environment_mismatch(prior.environment, here); !why.empty())
                    throw UsageError(resume_environment_refusal(f->resume, why));
                }
              }
              if ((f->json_opt->count() || f->resume_opt->count()) && li.rank == 0)
                check_result_target(cfg.json_path, f->overwrite, f->resume_opt->count() > 0);
              if (auto it = env.find("DDPBENCH_TEST_FAULT"); it != env.end() && !it->second.empty())
                (void)fault_injection_hook(it->second);  // an unknown name is bad input, said once
            });

            if (check_only(env)) return kExitOk;
            if (spawner) return spawn_ranks(env, li, world, argv, cfg.timeout_s, cfg.json_path);
            return run_this_rank(li, env, cfg.timeout_s, "the batch does not fit in memory",
                                 "use a smaller --batch-size or --image-size",
                                 [&] { return run_rank(*f, li, env, use_cuda, backend, threads, note, argv); });
          }};
}

}  // namespace ddpbench::cli
