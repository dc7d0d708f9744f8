#include "engine/bench/sweep.hpp"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>

#include "core/bench_table.hpp"
#include "core/errors.hpp"
#include "core/gpu_peaks.hpp"
#include "core/stats.hpp"
#include "engine/dist/collectives.hpp"
#include "engine/dist/ddp.hpp"
#include "engine/models/flops.hpp"
#include "engine/models/registry.hpp"
#include "engine/timing.hpp"
#include "engine/train/workload.hpp"

namespace ddpbench {
namespace {

// Per-rank values gathered to rank 0 after the samples (fixed layout, bounded size).
enum Extra : size_t {
  kFwdNs = 0,
  kBwdComputeNs,
  kBwdCommNs,
  kOverlapNs,
  kPeakMem,
  kNumExtras,
};
const char* kTimerKeys[4] = {"avg_forward_compute_time", "avg_backward_compute_time", "avg_backward_comm_time",
                             "avg_backward_compute_comm_overlap_time"};

// Fault injection for the end-to-end tests, from DDPBENCH_TEST_FAULT (recorded in the
// result's environment.env; never set it in a real run):
//   skew-grad   the last rank of a DDP group of >= 2 ranks perturbs its gradients before
//               the self-check, which must then fail (exit code 3);
//   nan-grad    every rank of a DDP group of >= 2 ranks gets NaN gradients (a diverged
//               model): the self-check must fail, not pass on NaN comparisons;
//   exit-rank1  rank 1 exits abruptly after its first DDP step in a group of >= 2 ranks;
//               the other ranks must fail, not hang.
bool test_fault(const char* name) {
  const char* f = std::getenv("DDPBENCH_TEST_FAULT");
  return f && std::strcmp(f, name) == 0;
}

// The model as configured, on the CPU: torchvision initialisation from the run's seed,
// frozen behind an MLP head for --freeze-backbone.
ModelPtr build_cpu_model(const RunConfig& cfg, const std::string& name) {
  torch::manual_seed(cfg.seed);
  auto model = make_model(name, cfg.num_classes, cfg.image_size);
  if (cfg.freeze_backbone) freeze_backbone(*model, cfg.head, cfg.num_classes, cfg.image_size);
  return model;
}

ModelPtr build_model(const SweepEnv& env, const std::string& name) {
  auto model = build_cpu_model(env.cfg, name);
  model->to(env.device);
  if (env.cfg.channels_last) to_channels_last(*model);
  model->train();
  return model;
}

SyntheticBatch rank_batch(const SweepEnv& env, long long batch) {
  auto b = make_synthetic_batch(batch, env.cfg.image_size, env.cfg.num_classes, env.device,
                                env.cfg.seed + 1000 + static_cast<unsigned long long>(env.launch.rank));
  if (env.cfg.channels_last) b.input = b.input.contiguous(at::MemoryFormat::ChannelsLast);
  return b;
}

Trainer make_trainer(const SweepEnv& env, ModelPtr model, std::unique_ptr<DistributedDataParallel> ddp,
                     long long batch) {
  return Trainer(std::move(model), std::move(ddp), rank_batch(env, batch), env.device, env.cfg.precision);
}

// Runs `warmup` untimed then `iters` timed iterations; after each one the gate (if
// any) gets a heartbeat. `check` (the self-check) runs after each iteration, untimed,
// until it returns true (it defers a step whose fp16 gradients overflowed).
// Requires warmup + iters >= 1.
struct Series {
  std::vector<double> samples;
  int64_t skipped_measured = 0;  ///< fp16 steps skipped for overflow among the timed ones
};

Series run_series(const SweepEnv& env, Trainer& trainer, GroupGate* gate, const std::function<bool()>& check) {
  StepTimer timer(env.device);
  Series out;
  std::vector<double>& samples = out.samples;
  samples.reserve(static_cast<size_t>(env.cfg.iters));
  const auto skipped = [&] { return trainer.scaler() ? trainer.scaler()->skipped_steps() : 0; };
  int64_t skipped_before = 0;
  const int total = env.cfg.warmup + env.cfg.iters;
  bool checked = false;
  for (int it = 0; it < total; ++it) {
    if (it == env.cfg.warmup) skipped_before = skipped();
    timer.start();
    trainer.step();
    const double s = timer.stop_s();
    if (it >= env.cfg.warmup) samples.push_back(s);
    const bool checked_now = !checked && check && (checked = check());
    if (it == 0 || checked_now) {
      // The peak memory reported is that of the steady state: the first iteration holds
      // the bucket rebuild, the self-check's iteration its copies of all gradients.
      reset_peak_memory(env.device);
    }
    if (gate) gate->beat();
  }
  out.skipped_measured = skipped() - skipped_before;
  return out;
}

int distinct_hosts(const std::vector<RankPlacement>& placements, int n) {
  std::set<std::string> hosts;
  for (int r = 0; r < n && r < static_cast<int>(placements.size()); ++r)
    hosts.insert(placements[static_cast<size_t>(r)].host);
  return std::max<int>(1, static_cast<int>(hosts.size()));
}

BenchResult make_row(const SweepEnv& env, const std::string& model, bool ddp, int n, long long batch,
                     const std::vector<std::vector<double>>& gathered) {
  BenchResult row;
  row.model = model;
  row.batch_per_rank = batch;
  row.scaling = env.cfg.scaling;
  row.global_batch = batch * n;
  row.image_size = env.cfg.image_size;
  row.precision = env.cfg.precision;
  row.world_size = n;
  row.nodes = distinct_hosts(env.placements, n);
  row.ddp = ddp;
  row.label = ddp ? group_label(row.nodes, n, env.device.is_cuda() ? 'G' : 'C') : "no ddp";
  const auto iters = static_cast<size_t>(env.cfg.iters);
  std::vector<std::vector<double>> per_rank;
  double timer_sum[4] = {0, 0, 0, 0};
  int timer_n[4] = {0, 0, 0, 0};
  long long peak_max = -1;
  for (int r = 0; r < n; ++r) {
    const auto& v = gathered[static_cast<size_t>(r)];
    RankSamples rs;
    rs.rank = r;
    const auto& pl = env.placements[static_cast<size_t>(r)];
    rs.host = pl.host;
    rs.local_rank = pl.local_rank;
    rs.device = pl.device;
    rs.samples_s.assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(iters));
    per_rank.push_back(rs.samples_s);
    const double* extra = v.data() + iters;
    if (ddp) {
      nlohmann::json timers = nlohmann::json::object();
      for (int k = 0; k < 4; ++k) {
        if (extra[k] >= 0) {
          timers[kTimerKeys[k]] = static_cast<long long>(extra[k]);
          timer_sum[k] += extra[k];
          ++timer_n[k];
        }
      }
      rs.telemetry["reducer_timers_ns"] = timers;
    }
    if (extra[kPeakMem] >= 0) {
      rs.telemetry["peak_memory_bytes"] = static_cast<long long>(extra[kPeakMem]);
      peak_max = std::max(peak_max, static_cast<long long>(extra[kPeakMem]));
    }
    row.ranks.push_back(std::move(rs));
  }
  row.summary = summarize(per_rank, row.batch_per_rank, n);
  if (ddp) {
    nlohmann::json mean_timers = nlohmann::json::object();
    for (int k = 0; k < 4; ++k)
      if (timer_n[k] > 0) mean_timers[kTimerKeys[k]] = timer_sum[k] / timer_n[k];
    row.telemetry["reducer_timers_ns_mean_over_ranks"] = mean_timers;
    row.telemetry["reducer_timers_note"] =
        "c10d::Logger averages over the iterations the Reducer samples (the first 10, then every 100th), "
        "warm-up included";
  }
  if (peak_max >= 0) row.telemetry["peak_memory_bytes_max_over_ranks"] = peak_max;
  return row;
}

// The self-check passes when every gradient is finite and the ranks agree within the
// limit; written so that NaN anywhere fails it.
bool check_passed(const std::optional<GradSpread>& s, double limit) {
  return s && std::isfinite(s->max_abs_grad) && s->max_abs_diff <= limit;
}

// Outside ranks poll the store that rank 0's process serves while rank 0 may be
// measuring: two small requests per poll, at most about 2000 requests/s however large the job
// (0.5 s for up to 500 ranks, 4 s for 4096, at most 5 s).
std::chrono::milliseconds gate_poll(const SweepEnv& env) {
  const double s = std::clamp(env.launch.world_size / 1000.0, 0.5, 5.0);
  return std::chrono::milliseconds(static_cast<long long>(s * 1000));
}

std::vector<double> rank_payload(const SweepEnv& env, const std::vector<double>& samples,
                                 DistributedDataParallel* ddp) {
  std::vector<double> payload(samples);
  payload.resize(static_cast<size_t>(env.cfg.iters) + kNumExtras, -1.0);
  double* extra = payload.data() + env.cfg.iters;
  if (ddp) {
    auto timers = ddp->reducer_timers_ns();
    for (int k = 0; k < 4; ++k) {
      auto it = timers.find(kTimerKeys[k]);
      if (it != timers.end()) extra[k] = static_cast<double>(it->second);
    }
  }
  extra[kPeakMem] = static_cast<double>(peak_memory_bytes(env.device));
  return payload;
}

// What rank 0 knows about a model before measuring it (computed once, on the CPU).
struct ModelInfo {
  double forward_macs = 0;       ///< per example, whole forward (head included)
  double head_macs = 0;          ///< per example, of the MLP head (frozen backbone only)
  double head_first_macs = 0;    ///< of the head's first layer
  int64_t parameters = 0, trainable_parameters = 0;
};

ModelInfo model_info(const SweepEnv& env, const std::string& name) {
  ModelInfo info;
  if (env.launch.rank != 0) return info;
  auto m = build_cpu_model(env.cfg, name);
  info.forward_macs = forward_macs(*m, env.cfg.image_size);
  info.parameters = count_parameters(*m);
  info.trainable_parameters = count_trainable_parameters(*m);
  if (m->has_head()) {
    for (const auto& any : *m->head()) {
      if (const auto* l = any.ptr()->as<torch::nn::Linear>()) {
        const double macs = static_cast<double>(l->options.in_features() * l->options.out_features());
        if (info.head_macs == 0) info.head_first_macs = macs;
        info.head_macs += macs;
      }
    }
  }
  return info;
}

// Adds the compute (FLOPs, MFU) and loss-scaling sections to a row (rank 0).
void annotate(const SweepEnv& env, const ModelInfo& info, BenchResult& row, const Trainer& trainer,
              const Series& series) {
  const double train_flops = training_flops_per_example(info.forward_macs, info.head_macs, info.head_first_macs);
  const double achieved = achieved_tflops(train_flops, row.summary.ex_per_s_per_gpu);
  const std::string gpu = env.placements.empty() ? std::string() : env.placements.front().gpu_name;
  const auto peak = env.device.is_cuda() ? peak_tflops(gpu, row.precision) : std::nullopt;
  const GpuPeak* entry = env.device.is_cuda() ? find_gpu_peak(gpu) : nullptr;
  row.compute = {{"forward_macs_per_example", info.forward_macs},
                 {"train_flops_per_example", train_flops},
                 {"achieved_tflops_per_gpu", achieved},
                 {"peak_tflops", peak ? nlohmann::json(*peak) : nlohmann::json(nullptr)},
                 {"mfu", peak ? nlohmann::json(achieved / *peak) : nlohmann::json(nullptr)},
                 {"peak_source", entry ? entry->source : "unknown device: no MFU"},
                 {"parameters", info.parameters},
                 {"trainable_parameters", info.trainable_parameters}};
  if (const LossScaler* s = trainer.scaler()) {
    row.telemetry["loss_scaling"] = {{"final_scale", s->current_scale()},
                                     {"skipped_steps", s->skipped_steps()},
                                     {"skipped_steps_measured", series.skipped_measured},
                                     {"note", "rank 0's scaler, warm-up included in skipped_steps; DDP ranks share "
                                              "gradients, so they skip the same steps"}};
    // A skipped step does no optimizer update: timed ones make the row look faster.
    row.checks["fp16_skipped_steps_in_measurement"] = series.skipped_measured;
  }
}

// Every rank trains its own copy, no communication (CUDA/cuDNN init, allocator warm-up),
// at the batch of the first group.
void warmup_alone(const SweepEnv& env, const std::string& model) {
  if (env.cfg.warmup == 0) return;
  Trainer trainer = make_trainer(env, build_model(env, model), nullptr, batch_per_rank(env.cfg, env.cfg.world_sizes.front()));
  for (int it = 0; it < env.cfg.warmup; ++it) trainer.step();
  synchronize(env.device);
}

// Rank 0 trains without DDP at `batch` examples while the others wait at the gate.
std::optional<BenchResult> run_no_ddp(const SweepEnv& env, const std::string& model, const ModelInfo& info,
                                      long long batch) {
  GroupGate gate(env.store, fmt::format("{}/noddp-b{}", model, batch), env.timeout, gate_poll(env));
  if (env.launch.rank != 0) {
    gate.wait_done();
    return std::nullopt;
  }
  try {
    reset_peak_memory(env.device);
    Trainer trainer = make_trainer(env, build_model(env, model), nullptr, batch);
    const Series series = run_series(env, trainer, &gate, nullptr);
    auto row = make_row(env, model, /*ddp=*/false, 1, batch, {rank_payload(env, series.samples, nullptr)});
    annotate(env, info, row, trainer, series);
    gate.done();
    return row;
  } catch (const std::exception& e) {
    gate.fail(e.what(), env.launch.world_size - 1);
    throw;
  }
}

// The first n ranks train under DDP on their own sub-group; the others wait.
// Rank 0 emits the row (with the self-check values) even when the check fails, then
// every rank of the group throws SelfCheckError and the waiting ranks are released
// with the failure.
void run_ddp_group(const SweepEnv& env, const std::string& model, const ModelInfo& info, int n,
                   const RowCallback& emit) {
  const std::string name = fmt::format("{}/ddp{}", model, n);
  GroupGate gate(env.store, name, env.timeout, gate_poll(env));
  const int rank = env.launch.rank;
  if (rank >= n) {
    gate.wait_done();
    return;
  }
  try {
    auto group_store = c10::make_intrusive<c10d::PrefixStore>("group/" + name + "/", env.store);
    auto pg = make_process_group(env.backend, group_store, rank, n, env.device, env.timeout);
    std::optional<GradSpread> spread;  // set once the self-check ran
    double limit = 0;
    {
      reset_peak_memory(env.device);
      DdpOptions opts;
      opts.bucket_cap_bytes = static_cast<int64_t>(env.cfg.bucket_cap_mb * 1024 * 1024);
      opts.first_bucket_cap_bytes = static_cast<int64_t>(env.cfg.first_bucket_cap_mb * 1024 * 1024);
      opts.broadcast_buffers = env.cfg.broadcast_buffers;
      auto module = build_model(env, model);
      auto ddp = std::make_unique<DistributedDataParallel>(module, pg, opts, env.device);
      DistributedDataParallel* ddp_raw = ddp.get();
      Trainer trainer = make_trainer(env, module, std::move(ddp), batch_per_rank(env.cfg, n));

      auto check = [&]() -> bool {
        // A step skipped for fp16 overflow has inf/NaN gradients by design (identical on
        // every rank, since found_inf comes from the reduced gradients): check the next one.
        if (trainer.scaler() && !trainer.scaler()->last_step_finite()) return false;
        torch::NoGradGuard ng;
        if (n > 1 && rank == n - 1 && test_fault("skew-grad")) ddp_raw->parameters().front().mutable_grad().add_(1.0);
        if (n > 1 && test_fault("nan-grad")) ddp_raw->parameters().front().mutable_grad().fill_(NAN);
        if (n > 1 && rank == 1 && test_fault("exit-rank1")) std::_Exit(1);
        spread = grad_spread_across_ranks(ddp_raw->parameters(), pg, env.timeout);
        return true;
      };
      const Series series = run_series(env, trainer, rank == 0 ? &gate : nullptr, check);
      const GradSpread measured = spread.value_or(GradSpread{});
      limit = env.cfg.grad_check_tol * std::max(1.0, measured.max_abs_grad);
      auto payload = rank_payload(env, series.samples, ddp_raw);
      auto gathered = gather_to_root(pg, payload, payload.size(), env.device, env.timeout);
      if (rank == 0) {
        BenchResult row = make_row(env, model, /*ddp=*/true, n, batch_per_rank(env.cfg, n), gathered);
        const auto buckets = ddp_raw->bucket_sizes_bytes();
        row.checks = nlohmann::json{{"grad_max_abs_diff_across_ranks", measured.max_abs_diff},
                                    {"grad_max_abs", measured.max_abs_grad},
                                    {"grad_check_limit", limit},
                                    {"grad_check_passed", check_passed(spread, limit)},
                                    {"grad_check_ran", spread.has_value()},
                                    {"buckets_rebuilt", ddp_raw->buckets_rebuilt()},
                                    {"bucket_sizes_bytes", buckets}};
        annotate(env, info, row, trainer, series);
        // What DDP reduces: every bucket once per step (the gradients of the trainable
        // parameters). Steps per epoch at this group's global batch.
        long long per_step = 0;
        for (auto b : buckets) per_step += b;
        const long long steps = (env.cfg.dataset_size + row.global_batch - 1) / row.global_batch;
        row.communication = {{"trainable_parameters", info.trainable_parameters},
                             {"allreduce_bytes_per_step", per_step},
                             {"dataset_size", env.cfg.dataset_size},
                             {"steps_per_epoch", steps},
                             {"allreduce_bytes_per_epoch", per_step * steps}};
        emit(row);
      }
    }
    destroy_process_group(pg);
    if (!spread)
      throw SelfCheckError(fmt::format("{} on {} ranks: every step's fp16 gradients overflowed, so the self-check never "
                                       "ran; the loss scaler did not recover",
                                       model, n));
    if (!check_passed(spread, limit))
      throw SelfCheckError(fmt::format(
          "{} on {} ranks: gradients differ across ranks by {:.3g} after the first DDP step (limit {:.3g}); "
          "the allreduce is not averaging, so no timing of this group is valid",
          model, n, spread->max_abs_diff, limit));
    if (rank == 0) gate.done();
  } catch (const std::exception& e) {
    if (rank == 0) gate.fail(e.what(), env.launch.world_size - n);
    throw;
  }
}

}  // namespace

std::vector<BenchResult> run_sweep(SweepEnv& env, const RowCallback& on_row) {
  std::vector<BenchResult> rows;
  RowCallback emit = [&](const BenchResult& row) {
    rows.push_back(row);
    if (on_row) on_row(rows.back());
  };
  for (const auto& model : env.cfg.models) {
    warmup_alone(env, model);
    // No-DDP baselines at every per-rank batch the groups use (one in weak scaling).
    std::vector<long long> batches;
    for (int n : env.cfg.world_sizes)
      if (std::find(batches.begin(), batches.end(), batch_per_rank(env.cfg, n)) == batches.end())
        batches.push_back(batch_per_rank(env.cfg, n));
    const ModelInfo info = model_info(env, model);
    for (long long b : batches)
      if (auto row = run_no_ddp(env, model, info, b)) emit(*row);
    for (int n : env.cfg.world_sizes) run_ddp_group(env, model, info, n, emit);
  }
  return rows;
}

}  // namespace ddpbench
