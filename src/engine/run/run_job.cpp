#include "engine/run/run_job.hpp"

#include <ATen/Parallel.h>
#include <malloc.h>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "core/config/instruments.hpp"
#include "core/launch/progress.hpp"
#include "core/launch/watchdog.hpp"
#include "core/result/bench_table.hpp"
#include "core/result/result.hpp"
#include "core/stats/straggler.hpp"
#include "core/util/errors.hpp"
#include "core/util/version.hpp"
#include "engine/bench/max_batch.hpp"
#include "engine/bench/sweep.hpp"
#include "engine/dist/job_env.hpp"
#include "engine/env_info.hpp"
#include "engine/run/launch.hpp"
#include "engine/timing.hpp"
#include "engine/train/precision.hpp"
#include "engine/train/workload.hpp"

namespace ddpbench {

std::string resume_environment_refusal(const std::string& partial, const std::string& why) {
  return fmt::format(
      "--resume '{}' was measured in another environment: {}; resume it with the stopped run's settings, on its "
      "hosts, or run the sweep again without --resume",
      partial, why);
}


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


namespace {

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

// --batch-size max: every rank searches its own device (find-max-bs); the minimum over ranks,
// less the margin, becomes cfg.batch_size, and the search goes into the result's config.
void resolve_batch_max(RunJob& f, const LaunchInfo& li, const c10::Device& device,
                       const c10::intrusive_ptr<c10d::Store>& store, std::chrono::milliseconds timeout,
                       nlohmann::json& cfg_json) {
  RunConfig& cfg = f.cfg;
  TrialSetup ts;
  ts.cfg = cfg;
  ts.device = device;
  ts.timeout_s = cfg.timeout_s;
  ts.memory_limit_bytes = f.memory_limit_bytes;
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
std::string keep_prior_rows(const RunJob& f, const ResultFile& prior, SweepEnv& senv, ResultFile& rf) {
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
void share_resume_groups(const RunJob& f, const LaunchInfo& li, c10d::Store& store, std::chrono::milliseconds timeout,
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
    {
      Deadline d("the store (rank 0), the groups run --resume keeps", timeout);
      const auto v = store.get("resume/groups");
      groups.assign(v.begin(), v.end());
    }
    if (!groups.empty() && groups.front() == '!') {
      store.add("resume/refusal_read", 1);
      // Under the built-in launcher rank 0's line goes to this terminal, and the launcher ends
      // the other ranks at the first exit: this rank stays until rank 0, which serves the
      // store, has said it and exited (the wait for a key nobody sets then fails), so that
      // line is never cut off. Bounded as rank 0's own wait, by --timeout or 30 s.
      if (li.launcher == Launcher::kLocalSpawner) {
        try {
          store.wait({"resume/rank0_exited"}, std::min<std::chrono::milliseconds>(timeout, std::chrono::seconds(30)));
        } catch (const std::exception&) {  // rank 0 exited (its store closed), or the bound ran out
        }
        throw SilentExit{kExitUsage};
      }
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
      // An example is an image, or a language model's sequence (its optimizer is AdamW).
      const std::string input =
          row.compute.seq_len ? fmt::format("{}-token sequences{}", *row.compute.seq_len,
                                            row.mode == "inference" ? "" : ", AdamW")
                              : fmt::format("{}x{} images", row.image_size, row.image_size);
      print_line(strong ? fmt::format("Benchmark: {}, strong scaling, global batch {} ({}, {})", row.model,
                                      cfg_.global_batch_size, input, row.precision)
                        : fmt::format("Benchmark: {}{} with batch size {} ({}, {})", row.model,
                                      row.mode == "inference" ? " inference (forward only, no DDP)" : "",
                                      row.batch_per_rank, input, row.precision));
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

}  // namespace

int run_rank(RunJob& f, const LaunchInfo& li, const EnvMap& env, bool use_cuda, BackendKind backend, int threads) {
  RunConfig& cfg = f.cfg;
  const std::string& note = f.defaults_note;
  const std::vector<std::string>& argv = f.argv;
  at::set_num_threads(threads);
  if (f.profile) prepare_profile_dir(cfg.profile_dir, f.overwrite);  // on this rank's host
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
    if (!f.resume.empty()) {
      prior = read_result_file(f.resume);
      resume_refused = resume_environment_mismatch(prior->environment, rf.environment);
    }
    if (resume_refused.empty()) print_header(rf, senv.placements, note);
  }
  if (!f.resume.empty()) share_resume_groups(f, li, *senv.store, timeout, prior, resume_refused, senv, rf);

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

}  // namespace ddpbench
