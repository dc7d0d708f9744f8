// `ddpbench comm`: nccl-tests-style collective benchmark (engine/bench/comm_bench.hpp) on the
// launchers, process groups and sub-group sweep of `run`.
#include <ATen/Parallel.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

#include "cli/commands.hpp"
#include "core/analysis/busbw.hpp"
#include "core/analysis/pairs.hpp"
#include "core/config/run_config.hpp"
#include "core/launch/launch_env.hpp"
#include "core/launch/watchdog.hpp"
#include "core/result/bench_table.hpp"
#include "core/result/result.hpp"
#include "core/util/errors.hpp"
#include "core/util/table.hpp"
#include "core/util/version.hpp"
#include "engine/bench/comm_bench.hpp"
#include "engine/dist/process_group.hpp"
#include "engine/dist/rendezvous.hpp"
#include "engine/env_info.hpp"
#include "engine/run/launch.hpp"
#include "engine/timing.hpp"

namespace ddpbench::cli {
namespace {

struct CommFlags {
  long long min_bytes = 32LL << 20, max_bytes = 32LL << 20;  // nccl-tests' defaults: -b 32M -e 32M
  long long step_factor = 1, step_bytes = 1LL << 20;         // -f 1: step by -i 1M
  std::string dtype = "float32", op = "sum", collectives = "all", world_sizes, backend = "auto", device = "auto";
  int root = 0, warmup = 5, iters = 20, check = 1, nproc_per_node = 0;
  double timeout_s = 300, min_busbw = 0;
  std::string json_path;
  bool overwrite = false;
  // --pairs (core/analysis/pairs.hpp, run_comm_pairs)
  bool pairs = false;
  std::string pair_unit = "node";
  long long pair_bytes = 0;
  double slow_fraction = 0.7;
  int confirm_runs = 3;
  CLI::Option *nproc_opt = nullptr, *json_opt = nullptr, *min_busbw_opt = nullptr, *factor_opt = nullptr;
  CLI::Option *pair_unit_opt = nullptr, *pair_bytes_opt = nullptr, *slow_fraction_opt = nullptr,
              *confirm_runs_opt = nullptr;
  std::vector<CLI::Option*> sweep_opts;  ///< the collective sweep's options, which --pairs refuses
};

constexpr int kMaxConfirmRuns = 20;  // --confirm-runs

// Message size of --pairs when --pair-bytes is not given: 64 MiB on GPUs, where NCCL's
// inter-node busbw reaches its plateau (nccl-tests' large sizes), 8 MiB on CPUs, over ten
// times the bandwidth-delay product of a 100 Gb/s TCP path (12.5 GB/s x 50 us = 625 kB).
constexpr long long kPairBytesGpu = 64LL << 20, kPairBytesCpu = 8LL << 20;

// The --pairs part of the configuration (the collective sweep's options are refused).
void make_pairs_config(const CommFlags& f, bool use_cuda, CommConfig& c) {
  for (const CLI::Option* o : f.sweep_opts)
    if (o->count())
      throw UsageError(
          fmt::format("--pairs measures sendrecv and allreduce of one size (--pair-bytes) between pairs; "
                      "drop {}",
                      o->get_name()));
  if (f.pair_unit != "node" && f.pair_unit != "rank")
    throw UsageError(fmt::format("--pair-unit '{}' is unknown; use node or rank", f.pair_unit));
  const int elem = dtype_size(f.dtype);
  const long long bytes = f.pair_bytes_opt->count() ? f.pair_bytes : (use_cuda ? kPairBytesGpu : kPairBytesCpu);
  if (bytes < elem || bytes % elem != 0 || bytes > (16LL << 30))
    throw UsageError(
        fmt::format("--pair-bytes {} must be a whole number of {} elements ({} B each), 1 to 16G "
                    "bytes; e.g. 8M",
                    bytes, f.dtype, elem));
  if (!(f.slow_fraction > 0 && f.slow_fraction < 1))
    throw UsageError(fmt::format("--slow-fraction {:g} must be between 0 and 1 (e.g. 0.7)", f.slow_fraction));
  if (f.confirm_runs < 0 || f.confirm_runs > kMaxConfirmRuns)
    throw UsageError(fmt::format("--confirm-runs {} is out of range; use 0..{} (0: judge the first pass alone)",
                                 f.confirm_runs, kMaxConfirmRuns));
  c.pairs = true;
  c.confirm_runs = f.confirm_runs;
  c.pair_unit = f.pair_unit;
  c.pair_bytes = bytes;
  c.slow_fraction = f.slow_fraction;
  c.collectives = {Collective::kAllreduce};
  c.sizes = {bytes};
  c.world_sizes = {2};
}

// Group-size sweep: every n of default_world_sizes(world) from 2 up (one rank moves no data);
// {1} for a job of one rank.
std::vector<int> default_comm_world_sizes(int world) {
  std::vector<int> out;
  for (int n : default_world_sizes(world))
    if (n >= 2) out.push_back(n);
  if (out.empty()) out.push_back(1);
  return out;
}

CommConfig make_config(const CommFlags& f, int world, bool use_cuda) {
  CommConfig c;
  if (!f.pairs)
    for (const CLI::Option* o : {f.pair_unit_opt, f.pair_bytes_opt, f.slow_fraction_opt, f.confirm_runs_opt})
      if (o->count()) throw UsageError(fmt::format("{} belongs to --pairs; add --pairs or drop it", o->get_name()));
  (void)dtype_size(f.dtype);
  check_redop(f.op);
  c.dtype = f.dtype;
  c.op = f.op;
  c.root = f.root;
  if (f.warmup < 0 || f.warmup > kMaxIters)
    throw UsageError(fmt::format("-w/--warmup_iters {} is out of range; use 0..{}", f.warmup, kMaxIters));
  if (f.iters < 1 || f.iters > kMaxIters)
    throw UsageError(fmt::format("-n/--iters {} is out of range; use 1..{}", f.iters, kMaxIters));
  if (f.check != 0 && f.check != 1) throw UsageError(fmt::format("-c/--check {} must be 0 or 1", f.check));
  if (!(f.timeout_s >= 1 && f.timeout_s <= kMaxTimeoutS))
    throw UsageError(fmt::format("--timeout {:g} is out of range; use 1..{:g} s", f.timeout_s, kMaxTimeoutS));
  c.warmup = f.warmup;
  c.iters = f.iters;
  c.check = f.check == 1;
  c.timeout_s = f.timeout_s;
  if (f.pairs) {
    make_pairs_config(f, use_cuda, c);
    return c;
  }
  c.collectives = f.collectives == "all" ? all_collectives() : parse_collectives(f.collectives);
  // -f given: factor steps (nccl-tests: -f N > 1); else -i steps.
  c.sizes = size_sweep(f.min_bytes, f.max_bytes, f.step_factor, f.step_bytes);
  c.world_sizes =
      f.world_sizes.empty() ? default_comm_world_sizes(world) : parse_int_list(f.world_sizes, "--world-sizes");
  for (int n : c.world_sizes)
    if (n < 1 || n > world)
      throw UsageError(fmt::format("--world-sizes {} is outside this job of {} rank(s); use 1..{}", n, world, world));
  bool rooted = false;
  for (Collective x : c.collectives) rooted = rooted || has_root(x);
  const int smallest = *std::min_element(c.world_sizes.begin(), c.world_sizes.end());
  if (rooted && (c.root < 0 || c.root >= smallest))
    throw UsageError(fmt::format("-r/--root {} is not a rank of the smallest group ({} rank(s)); use 0..{}", c.root,
                                 smallest, smallest - 1));
  // A collective and group size whose every requested size is below one element (per rank)
  // would measure nothing and still write a complete result.
  const int elem = dtype_size(f.dtype);
  for (Collective x : c.collectives)
    for (int n : c.world_sizes)
      if (comm_sizes(x, c.sizes, elem, n).empty())
        throw UsageError(
            fmt::format("-e/--maxbytes {} moves nothing in {} on {} rank(s): below one {} element ({} B) per rank; "
                        "raise -e/--maxbytes (e.g. -e 8M)",
                        c.sizes.back(), collective_name(x), n, f.dtype, elem));
  if (f.min_busbw_opt->count()) {
    if (!(f.min_busbw > 0) || !std::isfinite(f.min_busbw))
      throw UsageError(fmt::format("--min-busbw {:g} must be a bandwidth > 0 in GB/s", f.min_busbw));
    if (std::find(c.collectives.begin(), c.collectives.end(), Collective::kAllreduce) == c.collectives.end())
      throw UsageError("--min-busbw judges allreduce; add allreduce to --collectives");
    if (*std::max_element(c.world_sizes.begin(), c.world_sizes.end()) < 2)
      throw UsageError("--min-busbw judges allreduce on >= 2 ranks; start at least 2 ranks");
  }
  return c;
}

void print_header(const ResultFile& rf, const std::vector<RankPlacement>& placements) {
  const auto& e = rf.environment;
  const auto& c = rf.config;
  print_line(
      fmt::format("# ddpbench {} (git {}) comm -- nccl-tests-style collective benchmark", tool_version(), git_sha()));
  print_line(fmt::format("# PyTorch {}, backend {}, device {}, {} intra-op thread(s) per rank",
                         e["torch"].get<std::string>(), e["backend"].get<std::string>(),
                         e["device_type"].get<std::string>(), e["threads_per_rank"].get<int>()));
  print_line(fmt::format("# World size {} (launcher {}), {}", e["world_size"].get<int>(),
                         e["launcher"].get<std::string>(), hosts_summary(placements)));
  print_line(
      fmt::format("# warmup iters: {} iters: {} validation: {} (time: mean over ranks of the mean per "
                  "operation; algbw = size / time; busbw = algbw x nccl-tests' factor)",
                  c["warmup"].get<int>(), c["iters"].get<int>(), c["check"].get<bool>() ? 1 : 0));
}

// The table of one collective on one group; an emulated collective says so in the title and
// how in a note.
Table collective_table(const std::vector<CommResult>& rows, const std::string& backend) {
  const CommResult& r = rows.front();
  const bool emulated = r.extra.contains("emulated");
  std::string label = r.label;
  if (emulated) label = label.substr(0, label.find(" (emulated)"));
  Table t =
      comm_table(fmt::format("{} on {} ({} rank(s), {}){}", r.collective, label, r.world_size, backend,
                             emulated ? fmt::format(" -- EMULATED, not {}'s native {}", backend, r.collective) : ""),
                 rows);
  if (emulated) t.notes.push_back("emulated: " + r.extra["emulated"].get<std::string>());
  return t;
}

// Rank 0's report of --pairs: a line per round as it ends, then the table with the flags,
// the named outliers and the verdict; ResultFile.comm_pairs holds the summary.
int run_pairs(const CommFlags& f, const CommConfig& cfg, const LaunchInfo& li, const CommEnv& cenv,
              const PairsPlan& plan, ResultFile& rf, std::chrono::milliseconds timeout) {
  CommCallbacks cb;
  cb.on_row = [&](const CommResult& row) {
    rf.comm_results.push_back(row);
    save_partial(rf, f.json_path);
  };
  cb.on_collective_done = [&](const std::vector<CommResult>& rows) {
    // Rows come in threes per pair: sendrecv a->b, sendrecv b->a, allreduce.
    for (size_t i = 0; i + 2 < rows.size(); i += 3)
      print_line(fmt::format("# round {}: {} - {}: p2p {:.3g} / {:.3g} GB/s, allreduce busbw {:.3g} GB/s",
                             rows[i].extra["round"].get<int>(), rows[i].extra["pair"][0].get<std::string>(),
                             rows[i].extra["pair"][1].get<std::string>(), rows[i].algbw_gbps, rows[i + 1].algbw_gbps,
                             rows[i + 2].busbw_gbps));
  };
  cb.on_pair_alone = [&](const PairMeasurement& m) {
    print_line(fmt::format(
        "# alone, best of {}: {} - {}: p2p {:.3g} / {:.3g} GB/s, allreduce busbw {:.3g} GB/s "
        "(first pass {:.3g} / {:.3g}, {:.3g})",
        m.alone_runs, plan.names[static_cast<size_t>(m.a)], plan.names[static_cast<size_t>(m.b)], m.alone_p2p_ab_gbps,
        m.alone_p2p_ba_gbps, m.alone_allreduce_busbw_gbps, m.p2p_ab_gbps, m.p2p_ba_gbps, m.allreduce_busbw_gbps));
  };
  PairsOutcome outcome;
  try {
    outcome = run_comm_pairs(cenv, plan, cb);
    finish_barrier(cenv.store, li, timeout);
  } catch (...) {
    note_partial_rows(li, f.json_path);
    throw;
  }
  if (li.rank != 0) return kExitOk;

  const PairsAnalysis a = analyze_pairs(plan.names, outcome.measured, cfg.slow_fraction);
  rf.comm_pairs = pairs_summary_json(plan.unit, plan.names, plan.hosts, plan.ranks, cfg.pair_bytes, cfg.slow_fraction,
                                     plan.rounds, outcome.measured, a);
  long long wrong = 0;
  for (const auto& r : rf.comm_results) wrong += std::max(0LL, r.wrong);
  std::string verdict;
  if (a.outliers()) {
    std::vector<std::string> named;
    for (const auto& n : a.slow_nodes) named.push_back("node " + plan.names[static_cast<size_t>(n.index)]);
    for (const auto& l : a.slow_links)
      named.push_back(
          fmt::format("link {} <-> {}", plan.names[static_cast<size_t>(l.a)], plan.names[static_cast<size_t>(l.b)]));
    std::string list;
    for (size_t i = 0; i < named.size(); ++i) list += (i ? ", " : "") + named[i];
    verdict = fmt::format(
        "pairs: FAIL: slow {} (below {:g} x the reference{})", list, cfg.slow_fraction,
        cfg.confirm_runs > 0 ? fmt::format(", confirmed alone in the best of {} runs", cfg.confirm_runs) : "");
  } else if (plan.names.size() < kMinPairParticipants) {
    // Two participants: a slow pair would name neither, so nothing is judged (validate's pairs
    // step says the same).
    verdict = fmt::format("pairs: not evaluated: {} participants; at least {} are needed to tell a slow node from "
                          "its peer",
                          plan.names.size(), kMinPairParticipants);
  } else {
    verdict = fmt::format("pairs: PASS: no pair below {:g} x the reference", cfg.slow_fraction);
  }
  rf.comm_pairs["verdict"] = verdict;
  print_line("");
  print_line(render_tables({pairs_table(rf.comm_pairs)}, TableFormat::text));
  if (!f.json_path.empty()) {
    commit_result(rf, f.json_path, f.overwrite);
    print_line(fmt::format("Wrote {} ({} rows, schema {})", f.json_path, rf.comm_results.size(), kSchemaVersion));
  }
  if (cfg.check) print_line(fmt::format("# Out of bounds values : {} {}", wrong, wrong ? "FAILED" : "OK"));
  else print_line("# Out of bounds values : not checked (-c 0)");
  print_line(verdict);
  if (wrong > 0)
    throw SelfCheckError(
        fmt::format("{} element(s) differed from the expected result (#wrong column); the "
                    "messages or allreduces returned wrong data, so no bandwidth is valid",
                    wrong));
  return a.outliers() ? kExitFailure : kExitOk;
}

int run_rank(const CommFlags& f, const CommConfig& cfg, const LaunchInfo& li, const EnvMap& env, bool use_cuda,
             BackendKind backend, int threads, const std::vector<std::string>& argv) {
  at::set_num_threads(threads);
  c10::Device device(c10::kCPU);
  if (use_cuda) {
    device = rank_device(li, backend);
    set_current_device(device);
  }
  const auto timeout = std::chrono::milliseconds(static_cast<long long>(cfg.timeout_s * 1000));
  const nlohmann::json cfg_json = to_json(cfg);
  CommEnv cenv;
  static_cast<JobEnv&>(cenv) =
      join_job(li, env, backend, device, timeout, nlohmann::json{{"command", "comm"}, {"config", cfg_json}}.dump());
  cenv.cfg = cfg;
  if (auto it = env.find("DDPBENCH_TEST_FAULT"); it != env.end() && it->second == "corrupt-comm")
    cenv.corrupt_one_rank = true;

  // --pairs: rank 0 (which alone knows every rank's host) decides who takes part; one host
  // with --pair-unit node is bad input, said once by rank 0.
  PairsPlan plan;
  int rows_planned = 0;
  if (cfg.pairs) {
    if (li.rank == 0) plan = make_pairs_plan(cenv.placements, cfg.pair_unit);
    plan = share_pairs_plan(cenv.store, li, plan, timeout);
    if (!plan.error.empty()) {
      if (li.rank == 0) throw UsageError(plan.error);
      throw SilentExit{kExitUsage};
    }
    for (const auto& r : plan.rounds) rows_planned += 3 * static_cast<int>(r.size());
  } else {
    rows_planned = planned_comm_rows(cfg);
  }

  // Each host's environment, once per host (its local rank 0 probes it); rank 0 collects them.
  const NodeEnvironments node_envs = gather_node_environments(cenv.store, li, env, cenv.placements, timeout, cenv.store_prefix);
  ResultFile rf;
  rf.kind = "comm";
  if (li.rank == 0) {
    rf = new_result_file("comm", argv, rows_planned);
    rf.config = cfg_json;
    rf.config["backend"] = f.backend;
    rf.config["device"] = f.device;
    if (f.min_busbw_opt->count()) rf.config["min_busbw_gbps"] = f.min_busbw;
    rf.environment = environment_json(job_environment_facts(li, cenv.job_id, backend, use_cuda, threads, cenv.placements,
                                                            env, node_envs, cenv.store_server));
    print_header(rf, cenv.placements);
    if (cfg.pairs) {
      std::string names;
      for (size_t i = 0; i < plan.names.size(); ++i)
        names += (i ? ", " : "") + fmt::format("{} (rank {})", plan.names[i], plan.ranks[i]);
      print_line(
          fmt::format("# pairs: {} {}s: {}; {} round(s) of disjoint pairs, {} B per message and allreduce, "
                      "p2p one direction at a time",
                      plan.names.size(), plan.unit, names, plan.rounds.size(), cfg.pair_bytes));
    }
  }
  if (cfg.pairs) return run_pairs(f, cfg, li, cenv, plan, rf, timeout);

  CommCallbacks cb;
  cb.on_row = [&](const CommResult& row) {
    rf.comm_results.push_back(row);
    save_partial(rf, f.json_path);
  };
  cb.on_collective_done = [&](const std::vector<CommResult>& rows) {
    print_line("");
    print_line(render_tables({collective_table(rows, backend_name(backend))}, TableFormat::text));
  };
  try {
    run_comm_sweep(cenv, cb);
    finish_barrier(cenv.store, li, timeout);
  } catch (...) {
    note_partial_rows(li, f.json_path);
    throw;
  }
  if (li.rank != 0) return kExitOk;

  long long wrong = 0;
  for (const auto& r : rf.comm_results) wrong += std::max(0LL, r.wrong);
  std::optional<BusbwVerdict> verdict;
  if (f.min_busbw_opt->count()) verdict = min_busbw_verdict(rf.comm_results, f.min_busbw);
  if (!f.json_path.empty()) {
    if (verdict) rf.config["min_busbw_verdict"] = verdict->line;  // next to min_busbw_gbps
    commit_result(rf, f.json_path, f.overwrite);
    print_line(fmt::format("Wrote {} ({} rows, schema {})", f.json_path, rf.comm_results.size(), kSchemaVersion));
  }
  if (cfg.check) print_line(fmt::format("# Out of bounds values : {} {}", wrong, wrong ? "FAILED" : "OK"));
  else print_line("# Out of bounds values : not checked (-c 0)");
  if (verdict) print_line(verdict->line);
  if (wrong > 0)
    throw SelfCheckError(
        fmt::format("{} element(s) differed from the expected result (#wrong column); the "
                    "collectives returned wrong data, so no timing is valid",
                    wrong));
  return verdict && !verdict->pass ? kExitFailure : kExitOk;
}

}  // namespace

Command add_comm_command(CLI::App& parent, const std::vector<std::string>& argv) {
  auto f = std::make_shared<CommFlags>();
  auto* app = parent.add_subcommand(
      "comm",
      "Benchmark collectives as nccl-tests does (allreduce, reduce_scatter, all_gather, broadcast, reduce, "
      "all_to_all, barrier): time, algbw, busbw, #wrong per size");
  app->footer(
      "Sizes take K, M, G (powers of 1024), as nccl-tests. Exit codes: 0 every result checked and, with "
      "--min-busbw, the large allreduce sizes reach it; 1 a runtime failure, --min-busbw not reached, or --pairs named "
      "a slow node or link; 2 bad input "
      "(one line names it); 3 a collective returned wrong data (#wrong > 0).");
  const auto size = CLI::AsSizeValue(false);
  app->option_defaults()->group("Sizes and operations (as nccl-tests)");
  f->sweep_opts.push_back(
      app->add_option("-b,--minbytes", f->min_bytes, "Smallest size in bytes (default 32M)")->transform(size));
  f->sweep_opts.push_back(
      app->add_option("-e,--maxbytes", f->max_bytes, "Largest size in bytes (default 32M)")->transform(size));
  f->factor_opt = app->add_option("-f,--stepfactor", f->step_factor,
                                  "Multiply the size by this whole number per step (1: add --stepbytes)")
                      ->check(whole_number());
  f->sweep_opts.push_back(f->factor_opt);
  f->sweep_opts.push_back(
      app->add_option("-i,--stepbytes", f->step_bytes, "Bytes added per step when --stepfactor is 1 (default 1M)")
          ->transform(size));
  app->add_option("-d,--datatype", f->dtype,
                  "float32, float16, bfloat16, float64, int32, int64, int8 or uint8 (what the backend supports)")
      ->capture_default_str();
  app->add_option("-o,--op", f->op, "Reduction of allreduce, reduce_scatter, reduce: sum, prod, max, min")
      ->capture_default_str();
  f->sweep_opts.push_back(
      app->add_option("-r,--root", f->root, "Root rank of broadcast and reduce")->capture_default_str());
  app->add_option("-w,--warmup_iters", f->warmup, "Untimed operations per size")->capture_default_str();
  app->add_option("-n,--iters", f->iters, "Timed operations per size")->capture_default_str();
  app->add_option("-c,--check", f->check, "1: check one operation per size against the expected data (#wrong); 0: off")
      ->capture_default_str();
  f->sweep_opts.push_back(
      app->add_option(
             "--collectives", f->collectives,
             "Comma list of allreduce, reduce_scatter, all_gather, broadcast, reduce, all_to_all, barrier, or all")
          ->capture_default_str());
  f->sweep_opts.push_back(app->add_option(
      "--world-sizes", f->world_sizes,
      "Group sizes, comma list: groups of the first n ranks (default 2,4,8,... up to the world size, plus "
      "the world size)"));
  app->option_defaults()->group("Launch");
  app->add_option("--backend", f->backend, "Process group backend: auto, nccl or gloo")->capture_default_str();
  app->add_option("--device", f->device, "Device of the buffers: auto, cpu or cuda")->capture_default_str();
  app->add_option("--timeout", f->timeout_s, "Seconds before a store access or collective fails")
      ->capture_default_str();
  app->option_defaults()->group("Output and verdict");
  f->json_opt = app->add_option("--json", f->json_path,
                                "Write the result file (kind comm) here once the run completes (rows so far go to "
                                "PATH.partial); an existing PATH needs --overwrite");
  app->add_flag("--overwrite", f->overwrite, "Replace an existing --json file once the new run completes");
  f->min_busbw_opt = app->add_option("--min-busbw", f->min_busbw,
                                     "Exit 1 unless the mean allreduce busbw (GB/s) over the sizes >= 1/4 of the "
                                     "largest reaches this on every group of >= 2 ranks");
  f->sweep_opts.push_back(f->min_busbw_opt);
  app->option_defaults()->group("Pair bandwidth (--pairs)");
  app->add_flag("--pairs", f->pairs,
                "Pair bandwidth instead of the sweep: point-to-point (each direction) and 2-rank allreduce between "
                "every pair of nodes, in rounds of disjoint pairs; names the slow node or link (exit 1)");
  f->pair_unit_opt = app->add_option("--pair-unit", f->pair_unit,
                                     "With --pairs: pair nodes (the lowest rank of each host) or all ranks: "
                                     "node or rank")
                         ->capture_default_str();
  f->pair_bytes_opt = app->add_option("--pair-bytes", f->pair_bytes,
                                      "With --pairs: bytes per message and per allreduce (default 64M on GPUs, 8M on CPUs)")
                          ->transform(size);
  f->slow_fraction_opt = app->add_option("--slow-fraction", f->slow_fraction,
                                         "With --pairs: a pair below this fraction of the reference bandwidth is slow")
                             ->capture_default_str();
  f->confirm_runs_opt =
      app->add_option("--confirm-runs", f->confirm_runs,
                      "With --pairs: a pair slow in the first pass is measured again alone this many times and named only "
                      "if its best run is still slow (0: judge the first pass alone)")
          ->capture_default_str();
  app->option_defaults()->group("Launch");
  f->nproc_opt = app->add_option("--nproc-per-node", f->nproc_per_node,
                                 "Ranks to start on this machine with the built-in launcher (default: one per GPU, "
                                 "2 without GPUs)");
  app->option_defaults()->group("Options");

  return {app, [f, argv]() -> int {
            const EnvMap env = current_env();
            const LaunchInfo li = detect_launch(env);
            check_spawner_parent(li, env);
            const int gpus = device_gpus(f->device);
            const bool use_cuda = gpus > 0;
            const bool spawner = li.launcher == Launcher::kNone;
            const int world = launch_world_size(li, f->nproc_opt->count() > 0, f->nproc_per_node, use_cuda ? gpus : 2);

            CommConfig cfg;
            BackendKind backend = BackendKind::kGloo;
            int threads = 1;
            validate_on_rank0(li, [&] {
              if (f->backend != "auto" && f->backend != "gloo" && f->backend != "nccl")
                throw UsageError(fmt::format("--backend '{}' is unknown; use auto, gloo or nccl", f->backend));
              cfg = make_config(*f, world, use_cuda);
              backend = choose_backend(f->backend, use_cuda);
              check_nccl_ranks(backend, spawner, world, gpus);
              threads = rank_threads(li, env, world);
              if (!use_cuda)
                if (const auto avail = mem_available_bytes()) {
                  long long per_rank = 0;
                  for (Collective c : cfg.collectives)
                    for (long long s : cfg.sizes) per_rank = std::max(per_rank, buffer_bytes_per_rank(c, s, 1));
                  if (cfg.pairs) per_rank = 2 * cfg.pair_bytes;  // the message and the allreduce buffer
                  const int local = spawner ? world : li.local_world_size;
                  if (static_cast<double>(per_rank) * local > *avail)
                    throw UsageError(
                        fmt::format("{} needs up to {} bytes of buffers per rank, {} rank(s) "
                                    "here, but {:.0f} bytes are available; use a smaller {}",
                                    cfg.pairs ? "--pair-bytes" : "-e/--maxbytes", per_rank, local, *avail,
                                    cfg.pairs ? "--pair-bytes" : "-e"));
                }
              if (f->json_opt->count() && li.rank == 0) check_result_target(f->json_path, f->overwrite);
              if (auto it = env.find("DDPBENCH_TEST_FAULT");
                  it != env.end() && !it->second.empty() && it->second != "corrupt-comm")
                throw UsageError(
                    fmt::format("DDPBENCH_TEST_FAULT '{}' is unknown to comm (corrupt-comm); unset it", it->second));
              check_backend_dtype(backend, cfg.dtype);  // every rank: each must refuse alone
            });
            if (check_only(env)) return kExitOk;
            if (spawner) return spawn_ranks(env, li, world, argv, cfg.timeout_s, f->json_path);
            return run_this_rank(li, env, cfg.timeout_s, "the buffers do not fit in memory",
                                 "use a smaller -e/--maxbytes",
                                 [&] { return run_rank(*f, cfg, li, env, use_cuda, backend, threads, argv); });
          }};
}

}  // namespace ddpbench::cli
