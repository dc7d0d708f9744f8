#include "engine/bench/sweep.hpp"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include <fmt/format.h>

#include <optional>

#include "core/config/instruments.hpp"
#include "core/launch/watchdog.hpp"
#include "core/result/row_finish.hpp"
#include "core/stats/stats.hpp"
#include "core/stats/straggler.hpp"
#include "core/util/errors.hpp"
#include "engine/bench/measure.hpp"
#include "engine/bench/row_kind.hpp"
#include "engine/bench/time_to_loss.hpp"
#include "engine/dist/collectives.hpp"
#include "engine/timing.hpp"
#include "engine/train/workload.hpp"

namespace ddpbench {
namespace {
// Every rank trains its own copy, no communication (CUDA/cuDNN init, allocator warm-up),
// at the batch of the first group.
void warmup_alone(const SweepEnv& env, const std::string& model) {
  if (env.cfg.warmup == 0) return;
  set_phase(fmt::format("warm-up of {} (every rank alone)", model));
  Trainer trainer =
      make_trainer(env, build_model(env, model), nullptr, batch_per_rank(env.cfg, env.cfg.world_sizes.front()), 1);
  for (int it = 0; it < env.cfg.warmup; ++it) trainer.step();
  synchronize(env.device);
}

// The no-DDP baseline of one (batch, micro-steps) point: rank 0's row, and every rank's
// compute-only step (rank 0 only; in rank order) for the straggler scores.
struct Baseline {
  std::optional<BenchResult> row;
  std::vector<double> compute_p50_s;
  /// Rank 0: every rank's p50 over the first and the second half of its series (0 where a
  /// half has fewer than 2 samples): the re-measurement that confirms a straggler.
  std::vector<std::pair<double, double>> compute_halves_s;
};

// The no-DDP baseline at `batch` examples (`grad_accum` micro-steps per step). With several
// ranks, two series: first every rank trains its own copy at the same time (a barrier on the
// world group starts them together; with --iters auto or --duration each rank stops by its own
// series), so each rank's compute-only step is measured under the load the DDP groups see: the
// straggler scores' input, gathered to rank 0 over `world_pg`. Then rank 0 trains alone while
// the other ranks wait at a gate, as PyTorch's benchmark.py measures its "no ddp" row: that
// series is the row. (The row was the concurrent series before: on a CPU machine every rank's
// copy competes for cores and memory bandwidth, so the baseline came out slower than the 1-rank
// DDP row, which trains alone, and every efficiency against it was voided by
// negative_ddp_overhead; docs/METHODOLOGY.md "The sweep".) One rank: one series, rank 0's.
Baseline run_no_ddp(const SweepEnv& env, const c10::intrusive_ptr<c10d::ProcessGroup>& world_pg,
                    const std::string& model, const ModelInfo& info, long long batch, int grad_accum) {
  const std::string what = fmt::format("no-DDP baseline of {} at batch {}{}", model, batch,
                                       grad_accum > 1 ? fmt::format(" x {} micro-steps", grad_accum) : "");
  const int rank = env.launch.rank;
  set_phase("set-up of the " + what + (world_pg ? " (every rank alone, at the same time)" : ""));
  release_free_host_memory(env.device);
  reset_peak_memory(env.device);
  Trainer trainer = make_trainer(env, build_model(env, model), nullptr, batch, grad_accum);
  Baseline out;
  const auto halves_of = [](const std::vector<double>& samples) {
    const size_t half = samples.size() / 2;
    auto half_p50 = [&](size_t from, size_t to) {
      if (to - from < 2) return 0.0;
      return percentile(std::vector<double>(samples.begin() + static_cast<std::ptrdiff_t>(from),
                                            samples.begin() + static_cast<std::ptrdiff_t>(to)),
                        50);
    };
    return std::pair<double, double>{half_p50(0, half), half_p50(half, samples.size())};
  };
  std::optional<double> concurrent_p50;
  std::optional<GroupGate> gate;
  // The straggler series (every rank at once) is an instrument a run can switch off.
  const bool scored = world_pg && instrument_on(env.cfg.instruments_off, "stragglers");
  if (world_pg) {
    {
      Deadline d("every rank, starting the " + what + " together", env.timeout);
      barrier(world_pg, env.device, env.timeout);
    }
  }
  if (scored) {
    // No collective inside the series: each rank decides alone when it stops (--iters auto,
    // --duration), so no rank waits for another between its steps. Not a row: no progress line,
    // no telemetry window.
    SweepEnv together = env;
    together.progress = nullptr;
    together.sampler = nullptr;
    const Series all = run_series(together, trainer, nullptr, nullptr, {}, "the " + what + " (every rank at once)");
    const double p50 = percentile(all.samples, 50);
    const auto [h1, h2] = halves_of(all.samples);
    const std::vector<double> mine{p50, h1, h2};
    set_phase("the gather of every rank's " + what);
    for (const auto& v : gather_to_root(world_pg, mine, mine.size(), env.device, env.timeout)) {
      out.compute_p50_s.push_back(v[0]);
      out.compute_halves_s.push_back({v[1], v[2]});
    }
    concurrent_p50 = p50;
  }
  if (world_pg) {
    // Rank 0 alone: the other ranks wait at a gate (as they wait for a DDP group they are not in).
    gate.emplace(env.store, "noddp-alone/" + model + "/" + baseline_tag(batch, grad_accum), env.timeout,
                 GroupGate::poll_for(env.launch.world_size));
    if (rank != 0) {
      set_phase("the wait for rank 0's " + what + " (rank 0 alone)");
      gate->wait_done();
      return out;
    }
  }
  Series series;
  try {
    SweepEnv alone = env;
    if (scored) alone.cfg.warmup = 0;  // the trainer is warm from the series of every rank
    series = run_series(alone, trainer, gate ? &*gate : nullptr, nullptr, {}, "the " + what);
  } catch (const std::exception& e) {
    if (gate) gate->fail(e.what(), env.launch.world_size - 1);
    throw;
  }
  if (!world_pg) {
    const double p50 = percentile(series.samples, 50);
    out.compute_p50_s.push_back(p50);
    out.compute_halves_s.push_back(halves_of(series.samples));
  }
  const RankStats stats = rank_stats(env.device, env.launch.rank, env.cfg.duration_s, series);
  const nlohmann::json telemetry = own_telemetry(env.sampler.get());
  const auto trace = profile_series(env, trainer, model, baseline_tag(batch, grad_accum), nullptr);
  if (gate) gate->done();
  auto row = make_row(env, model, /*ddp=*/false, 1, batch, grad_accum, {stats}, series.stopping,
                      static_cast<int>(series.samples.size()));
  row.telemetry.baseline =
      scored
          ? fmt::format("rank 0's series alone, the other ranks idle (benchmark.py's no-DDP row); each rank's "
                        "compute-only step for the straggler scores from a series of all {} ranks at once",
                        env.launch.world_size)
          : env.launch.world_size > 1 ? "rank 0's series alone, the other ranks idle (benchmark.py's no-DDP row)"
                                      : "rank 0's series";
  row.telemetry.concurrent_baseline_p50_s = concurrent_p50;
  annotate(env, info, row, trainer, series);
  row.memory.model_state_bytes = trainer.model_state_bytes();
  attach_telemetry(env.cfg, row, {telemetry});
  row.telemetry.profile = trace;
  row.group = model + "/" + baseline_tag(batch, grad_accum);
  add_row_warnings(env, row);
  out.row = std::move(row);
  return out;
}

}  // namespace

c10::intrusive_ptr<c10d::Store> make_group_store(const c10::intrusive_ptr<c10d::Store>& store,
                                                 const std::string& name) {
  return c10::make_intrusive<c10d::PrefixStore>("group/" + name + "/", store);
}

c10::intrusive_ptr<c10d::Store> make_group_store(const SweepEnv& env, const std::string& name) {
  return make_group_store(env.store, name);
}

c10::intrusive_ptr<c10d::ProcessGroup> make_group_process_group(const JobEnv& job, const std::string& name, int n) {
  const auto group_store = make_group_store(job.store, name);
  Deadline d("the store (rank 0), setting up the process group of " + name, job.timeout);
  return make_process_group(job.backend, group_store, job.launch.rank, n, job.device, job.timeout);
}

RankSamples placed_rank(const std::vector<RankPlacement>& placements, int r) {
  const auto& pl = placements.at(static_cast<size_t>(r));
  RankSamples rs;
  rs.rank = r;
  rs.host = pl.host;
  rs.local_rank = pl.local_rank;
  rs.device = pl.device;
  return rs;
}

void run_group(const JobEnv& job, const std::string& name, const std::string& label, int n,
               const std::function<void(c10::intrusive_ptr<c10d::ProcessGroup>&, GroupGate&)>& body) {
  GroupGate gate(job.store, name, job.timeout, GroupGate::poll_for(job.launch.world_size));
  const int rank = job.launch.rank;
  if (rank >= n) {
    set_phase("the wait for " + label);
    gate.wait_done();
    return;
  }
  try {
    set_phase("set-up of " + label);
    auto pg = make_group_process_group(job, name, n);
    body(pg, gate);
    if (pg) destroy_process_group(pg);
    if (rank == 0) gate.done();
  } catch (const std::exception& e) {
    if (rank == 0) gate.fail(e.what(), job.launch.world_size - n);
    throw;
  }
}

SelfCheckHook fault_injection_hook(const std::string& name) {
  if (name == "skew-grad")
    return [](int rank, int n, const std::vector<at::Tensor>& params) {
      torch::NoGradGuard ng;
      if (rank == n - 1) params.front().mutable_grad().add_(1.0);
    };
  if (name == "nan-grad")
    return [](int, int, const std::vector<at::Tensor>& params) {
      torch::NoGradGuard ng;
      params.front().mutable_grad().fill_(NAN);
    };
  if (name == "exit-rank1")
    return [](int rank, int, const std::vector<at::Tensor>&) {
      if (rank == 1) std::_Exit(1);
    };
  throw UsageError(
      fmt::format("DDPBENCH_TEST_FAULT '{}' is unknown (skew-grad, nan-grad, exit-rank1); unset it", name));
}

std::vector<RankScoreInput> straggler_inputs(const std::vector<RankPlacement>& placements,
                                             const std::vector<double>& compute_p50_s,
                                             const std::vector<std::pair<double, double>>& halves,
                                             const BenchResult* largest) {
  std::vector<RankScoreInput> in;
  for (size_t r = 0; r < compute_p50_s.size() && r < placements.size(); ++r) {
    const RankPlacement& p = placements[r];
    RankScoreInput x;
    x.rank = static_cast<int>(r);
    x.host = p.host;
    x.local_rank = p.local_rank;
    x.device = p.device;
    if (p.device.rfind("cuda:", 0) == 0) x.gpu_index = std::stoi(p.device.substr(5));
    x.gpu_uuid = p.gpu_uuid;
    x.bus_id = p.bus_id;
    x.compute_step_s = compute_p50_s[r];
    if (r < halves.size() && halves[r].first > 0 && halves[r].second > 0)
      x.compute_halves_s = {halves[r].first, halves[r].second};
    if (largest && r < largest->ranks.size()) {
      const RankSamples& rs = largest->ranks[r];
      if (rs.step) x.ddp_step_s = rs.step->p50_s;  // every emitted row's ranks have one (keep_per_rank_detail)
      if (const auto wait = largest->ranks[r].breakdown[Phase::exposed_comm]) x.comm_wait_s = *wait;
    }
    in.push_back(std::move(x));
  }
  return in;
}

// The straggler entry of `model` (rank 0): each rank's compute-only p50 from the first
// baseline, its DDP step p50 and exposed communication from the first row of the largest
// DDP group.
nlohmann::json stragglers_of(const SweepEnv& env, const std::string& model, long long batch,
                             const std::vector<double>& compute_p50_s,
                             const std::vector<std::pair<double, double>>& halves,
                             const std::vector<BenchResult>& rows) {
  const BenchResult* largest = nullptr;
  for (const auto& r : rows)
    if (r.ddp && r.model == model && (!largest || r.world_size > largest->world_size)) largest = &r;
  return straggler_entry(model, batch, largest ? largest->world_size : 0,
                         straggler_inputs(env.placements, compute_p50_s, halves, largest),
                         env.cfg.straggler_threshold);
}

// This rank's sampler, one reading every `sample_ms` ms: its GPU by UUID / bus id, the
// interface that reaches rank 0's host.
std::shared_ptr<TelemetrySampler> make_sampler(const JobEnv& job, int sample_ms) {
  TelemetryOptions t;
  t.sample_ms = sample_ms;
  if (job.device.is_cuda()) {
    const RankPlacement& p = job.placements[static_cast<size_t>(job.launch.rank)];
    t.gpu_uuid = p.gpu_uuid;
    t.bus_id = p.bus_id;
  }
  t.net_interface = interface_for_address(job.launch.master_addr, current_env());
  return std::make_shared<TelemetrySampler>(t);
}

std::vector<BenchResult> run_sweep(SweepEnv& env, const RowCallback& on_row,
                                   const std::function<void(const nlohmann::json&)>& on_stragglers,
                                   const SelfCheckHook& self_check_hook) {
  std::vector<BenchResult> rows;
  if (!env.sampler && instrument_on(env.cfg.instruments_off, "telemetry"))
    env.sampler = make_sampler(env, env.cfg.sample_ms);
  const RowFinish finish{env.cfg.per_rank_series == "all", env.row_launch};
  RowCallback emit = [&](const BenchResult& row) {
    rows.push_back(row);
    finish_row(rows.back(), rows, finish);
    if (on_row) on_row(rows.back());
  };
  if (env.cfg.data != "synthetic") {  // --data: time to loss (its own loop of epochs over a loader)
    const TrainTestData data = load_train_test(env.cfg);
    for (const auto& model : env.cfg.models) run_time_to_loss(env, data, model, emit);
    return rows;
  }
  const bool training = env.cfg.mode != "inference";
  // A process group of every rank of the job, for the concurrent no-DDP baselines.
  c10::intrusive_ptr<c10d::ProcessGroup> world_pg;
  if (env.launch.world_size > 1 && training) {
    set_phase("set-up of the world process group (the concurrent no-DDP baselines)");
    Deadline d("the store (rank 0), setting up the world process group", env.timeout);
    auto ws = c10::make_intrusive<c10d::PrefixStore>("group/world/", env.store);
    world_pg = make_process_group(env.backend, ws, env.launch.rank, env.launch.world_size, env.device, env.timeout);
  }
  for (const auto& model : env.cfg.models) {
    if (training) warmup_alone(env, model);
    // Inference rows need no FLOPs, but a language model's tokens/s needs its sequence length
    // (counted from the shape: nothing is built for it).
    const ModelInfo info =
        training || is_language_model(model) ? model_info(env.cfg, env.launch.rank, model) : ModelInfo{};
    const auto kinds = row_kinds(env.cfg, model, info, self_check_hook);
    std::vector<double> compute_p50_s;  // rank 0: every rank's, from the first baseline
    std::vector<std::pair<double, double>> compute_halves_s;
    long long first_batch = 0;
    if (training) {
      // No-DDP baselines at every (per-rank batch, micro-steps) the groups use (one in weak scaling).
      for (const auto& [b, k] : baseline_points(env.cfg)) {
        if (const std::string g = model + "/" + baseline_tag(b, k); env.done_groups.count(g)) {
          emit_kept_rows(env.launch.rank, env.kept_rows, g, emit);  // run --resume: measured by the stopped run
          continue;
        }
        Baseline base = run_no_ddp(env, world_pg, model, info, b, k);
        if (compute_p50_s.empty()) {
          compute_p50_s = std::move(base.compute_p50_s);
          compute_halves_s = std::move(base.compute_halves_s);
          first_batch = b;
        }
        if (base.row) emit(*base.row);
      }
    }
    for (int n : env.cfg.world_sizes)
      for (const auto& kind : kinds) run_row_group(env, *kind, n, emit);
    if (env.launch.rank == 0 && !compute_p50_s.empty() && on_stragglers)
      on_stragglers(stragglers_of(env, model, first_batch, compute_p50_s, compute_halves_s, rows));
  }
  if (world_pg) destroy_process_group(world_pg);
  return rows;
}

}  // namespace ddpbench
