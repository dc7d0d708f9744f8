#include "engine/bench/time_to_loss.hpp"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>

#include "core/analysis/convergence.hpp"
#include "core/launch/watchdog.hpp"
#include "core/result/bench_table.hpp"
#include "core/stats/stats.hpp"
#include "core/util/errors.hpp"
#include "core/util/install_dirs.hpp"
#include "engine/data/loader.hpp"
#include "engine/data/sampler.hpp"
#include "engine/dist/collectives.hpp"
#include "engine/dist/ddp.hpp"
#include "engine/train/precision.hpp"
#include "engine/train/workload.hpp"

namespace ddpbench {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Rank 0's lines between the table rows (`progress`, rank 0's display or nullptr, cleared
// around them); nothing where `rank` (this rank of the job) is not 0.
void say(int rank, Progress* progress, const std::string& line) {
  if (rank != 0) return;
  if (progress) progress->suspend();
  std::fprintf(stdout, "%s\n", line.c_str());
  std::fflush(stdout);
  if (progress) progress->resume();
}

// Every rank evaluates with rank 0's BatchNorm statistics (ranks' running statistics drift
// apart between DDP's per-forward broadcasts).
void broadcast_buffers(Model& m, const c10::intrusive_ptr<c10d::ProcessGroup>& pg, std::chrono::milliseconds timeout) {
  if (pg->getSize() < 2) return;
  for (auto& b : m.buffers()) {
    std::vector<at::Tensor> v{b};
    c10d::BroadcastOptions o;
    o.rootRank = 0;
    o.timeout = timeout;
    wait_work(pg->broadcast(v, o), timeout);
  }
}

struct Eval {
  double loss_sum = 0, correct = 0, count = 0;
};

// One group's fixed values: the run's settings, where it runs (rank 0's progress display, else
// nullptr), the group size, this rank, the batch per rank and the optimizer steps per epoch.
struct GroupRun {
  const RunConfig& cfg;
  c10::Device device;
  std::chrono::milliseconds timeout;
  Progress* progress;
  int n, rank;
  long long batch;
  int64_t steps_per_epoch;
};

// This rank's (g.rank of g.n) part of the test split in batches of g.batch: sums of
// cross-entropy, correct top-1, examples.
Eval evaluate(const GroupRun& g, Model& m, const ImageDataset& test) {
  torch::NoGradGuard ng;
  m.eval();
  Eval e;
  BatchLoader loader(test, strided_shard(test.n, g.n, g.rank), g.batch, g.cfg.loader_workers, g.timeout);
  while (auto b = loader.next()) {
    at::Tensor x = preprocess_images(b->images, g.cfg.image_size, kFashionMnistMean, kFashionMnistStd, g.device);
    if (g.cfg.channels_last) x = x.contiguous(at::MemoryFormat::ChannelsLast);
    const at::Tensor y = b->labels.to(g.device);
    at::Tensor out;
    {
      AutocastScope autocast(g.device, g.cfg.precision);
      out = m.forward(x);
    }
    out = out.to(at::kFloat);
    e.loss_sum += torch::nn::functional::cross_entropy(
                      out, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                      .item<double>();
    e.correct += out.argmax(1).eq(y).sum().item<double>();
    e.count += static_cast<double>(y.size(0));
  }
  m.train();
  return e;
}

nlohmann::json baselines_for(double accuracy, const std::string& model, std::string* source) {
  std::string exe;
  try {
    exe = self_exe_path();
  } catch (const std::runtime_error&) {  // no /proc: only $DDPBENCH_BASELINES can name the file
  }
  const std::string path = find_baselines_file(exe);
  if (path.empty()) {
    *source = "not found (set DDPBENCH_BASELINES to benchmark/baselines.json)";
    return nlohmann::json::array();
  }
  const nlohmann::json file = load_baselines(path);
  *source = file.value("source", path);
  return nearby_baselines(file, accuracy, model);
}

// The trainable parameters of `m` (those that require a gradient), in module order.
std::vector<at::Tensor> trainable_parameters(Model& m) {
  std::vector<at::Tensor> params;
  for (auto& p : m.parameters())
    if (p.requires_grad()) params.push_back(p);
  return params;
}

// Optimizer steps per epoch of `rank` of n: its shard of the training split (epoch 0's) in
// batches of `batch`, the last one partial.
int64_t steps_per_epoch_of(const ImageDataset& train, int n, int rank, long long seed, long long batch) {
  return (static_cast<int64_t>(distributed_sampler_indices(train.n, n, rank, seed, 0, false).size()) + batch - 1) /
         batch;
}

// The target's outcome before training: its metric and value (no value for "none"), not reached.
TargetOutcome unreached_outcome(const ConvergenceTarget& target) {
  TargetOutcome tgt;
  tgt.metric = target.metric;
  if (target.metric != "none") tgt.value = target.value;
  tgt.reached = false;
  return tgt;
}

// What one group's training produced. Per step: this rank's time (s); mean loss over ranks;
// rank 0's wall (s from the first step's start). Per epoch its record; the target's outcome;
// the last test accuracy.
struct GroupTraining {
  std::vector<double> step_s, loss_mean, loss_wall;
  std::vector<ConvergenceEpoch> epochs;
  TargetOutcome tgt;
  double last_acc = 0;
};

// This rank's side of one epoch's training: per step its loss and data-loader wait (s).
struct EpochSteps {
  std::vector<double> losses, waits;
};

// Trains epoch `e` (0-based) on this rank's shard: per step the loss and data wait (s); appends
// each step's time (s) and wall (s since t0) to `tr`; rank 0 beats the gate after every step.
EpochSteps train_epoch(const GroupRun& g, const ImageDataset& train, int e, DistributedDataParallel& ddp,
                       const std::vector<at::Tensor>& params, torch::optim::SGD& opt, GroupGate& gate,
                       Clock::time_point t0, GroupTraining& tr) {
  const RunConfig& cfg = g.cfg;
  BatchLoader loader(train, distributed_sampler_indices(train.n, g.n, g.rank, cfg.seed, e), g.batch, cfg.loader_workers,
                     g.timeout);
  EpochSteps out;
  for (;;) {
    const auto ts = Clock::now();
    auto b = loader.next();
    if (!b) break;
    out.waits.push_back(loader.last_wait_s());
    at::Tensor x = preprocess_images(b->images, cfg.image_size, kFashionMnistMean, kFashionMnistStd, g.device);
    if (cfg.channels_last) x = x.contiguous(at::MemoryFormat::ChannelsLast);
    const at::Tensor y = b->labels.to(g.device);
    zero_grads(params, zero_grad_set_to_none(cfg));
    at::Tensor loss;
    {
      AutocastScope autocast(g.device, cfg.precision);
      loss = torch::nn::functional::cross_entropy(ddp.forward(x), y);
    }
    loss.backward();
    opt.step();
    out.losses.push_back(loss.item<double>());
    tr.step_s.push_back(since(ts));
    tr.loss_wall.push_back(since(t0));
    if (g.rank == 0) gate.beat();
    if (g.progress)
      g.progress->iteration(static_cast<int>(tr.step_s.size()), static_cast<int>(g.steps_per_epoch * cfg.epochs));
  }
  return out;
}

// One epoch's totals over the group's ranks. sums: test loss sum, correct, test examples, data
// wait (s), steps, then each step's loss; wait_max: the longest data wait (s); steps: per rank.
struct EpochTotals {
  std::vector<double> sums;
  double wait_max = 0;
  size_t steps = 0;
};

// Reduces this rank's evaluation and epoch over the group: an allreduce SUM, then one MAX, issued
// in this order on every rank.
EpochTotals reduce_epoch(const c10::intrusive_ptr<c10d::ProcessGroup>& pg, const c10::Device& device,
                         std::chrono::milliseconds timeout, const Eval& ev, const EpochSteps& local) {
  double wait_sum = 0, wait_max = 0;
  for (double w : local.waits) {
    wait_sum += w;
    wait_max = std::max(wait_max, w);
  }
  EpochTotals t;
  t.steps = local.losses.size();  // equal on every rank: equal shards
  std::vector<double> sums = {ev.loss_sum, ev.correct, ev.count, wait_sum, static_cast<double>(t.steps)};
  sums.insert(sums.end(), local.losses.begin(), local.losses.end());
  t.sums = allreduce_values(pg, sums, c10d::ReduceOp::SUM, device, timeout);
  t.wait_max = allreduce_values(pg, {wait_max}, c10d::ReduceOp::MAX, device, timeout)[0];
  return t;
}

// Epoch e's record (s; losses in nats; accuracy a fraction; data wait per step, s) from the totals
// over the n ranks, wall_s taken now from t0; appends each step's mean loss over ranks to `loss_mean`.
ConvergenceEpoch epoch_record(const EpochTotals& t, int n, int e, double train_s, double eval_s, Clock::time_point t0,
                              std::vector<double>& loss_mean) {
  const std::vector<double>& sums = t.sums;
  const size_t steps = t.steps;
  double train_loss = 0;
  for (size_t i = 0; i < steps; ++i) {
    loss_mean.push_back(sums[5 + i] / n);
    train_loss += sums[5 + i] / n;
  }
  train_loss /= std::max<size_t>(1, steps);
  const double test_loss = sums[2] > 0 ? sums[0] / sums[2] : NAN;
  const double acc = sums[2] > 0 ? sums[1] / sums[2] : NAN;
  const double wall = since(t0);
  ConvergenceEpoch ep;
  ep.epoch = e + 1;
  ep.wall_s = wall;
  ep.train_s = train_s;
  ep.eval_s = eval_s;
  ep.steps = static_cast<long long>(steps);
  ep.train_loss = train_loss;
  ep.test_loss = test_loss;
  ep.test_accuracy = acc;
  ep.data_wait_s_mean = sums[4] > 0 ? sums[3] / sums[4] : 0.0;
  ep.data_wait_s_max = t.wait_max;
  return ep;
}

// Rank 0's line after epoch e: train and test loss, test accuracy, wall and eval (s), data wait (ms/step).
std::string epoch_line(const std::string& model, int n, int e, const ConvergenceEpoch& ep) {
  return fmt::format(
      "  {} on {} rank{}, epoch {}: train loss {:.4f}, test loss {:.4f}, test accuracy {:.4f}, "
      "{:.1f} s (eval {:.1f} s), data wait {:.2f} ms/step",
      model, n, n > 1 ? "s" : "", e + 1, *ep.train_loss, *ep.test_loss, *ep.test_accuracy, *ep.wall_s, *ep.eval_s,
      1e3 * *ep.data_wait_s_mean);
}

// The row's identity and setup: model, group (world size, nodes, label), batch, scaling, image
// size, precision and why it stopped.
BenchResult group_row(const RunConfig& cfg, const std::vector<RankPlacement>& placements, const c10::Device& device,
                      const std::string& model, int n, long long batch, bool reached) {
  BenchResult row;
  row.model = model;
  row.world_size = n;
  row.nodes = distinct_hosts(placements, n);
  row.ddp = true;
  row.label = group_label(row.nodes, n, device.is_cuda() ? 'G' : 'C');
  row.batch_per_rank = batch;
  row.global_batch = batch * n;
  row.scaling = cfg.scaling;
  row.image_size = cfg.image_size;
  row.precision = cfg.precision;
  row.stopping.mode = "fixed";
  row.stopping.reason = reached ? "target" : "epochs";
  return row;
}

// Each rank's samples into row.ranks (its placement from `placements`, every rank's in rank order,
// and step times, s, at the positions `keep` of the gathered ones) and, where a step is kept, the
// row's summary over them.
void add_rank_samples(BenchResult& row, const std::vector<RankPlacement>& placements,
                      const std::vector<std::vector<double>>& gathered, const std::vector<size_t>& keep,
                      long long batch, int n) {
  std::vector<std::vector<double>> per_rank;
  for (int r = 0; r < n; ++r) {
    RankSamples rs = placed_rank(placements, r);
    for (size_t i : keep) rs.samples_s.push_back(gathered[static_cast<size_t>(r)][i]);
    per_rank.push_back(rs.samples_s);
    row.ranks.push_back(std::move(rs));
  }
  if (!keep.empty()) row.summary = summarize(per_rank, batch, n);
}

// The training loss curve at the kept steps `keep`: step number (1-based), wall (s from the first
// step's start, rank 0) and loss (nats, mean over ranks).
LossCurve loss_curve(const GroupTraining& tr, const std::vector<size_t>& keep) {
  LossCurve loss;
  loss.step.emplace();
  loss.wall_s.emplace();
  loss.value.emplace();
  for (size_t i : keep) {
    loss.step->push_back(static_cast<long long>(i) + 1);
    loss.wall_s->push_back(tr.loss_wall[i]);
    loss.value->push_back(tr.loss_mean[i]);
  }
  loss.steps_total = static_cast<long long>(tr.step_s.size());
  loss.subsample_stride = static_cast<long long>(keep.size() > 1 ? keep[1] - keep[0] : 1);
  loss.note =
      "training cross-entropy of each optimizer step, mean over the ranks' batches; wall_s from the "
      "first step's start (rank 0); every subsample_stride-th step and the last";
  return loss;
}

// The row's convergence section: dataset, preprocessing, optimizer, per-epoch records, loss curve,
// target outcome and the nearby baselines (with their source).
void fill_convergence(RowConvergence& c, const RunConfig& cfg, const TrainTestData& data, int64_t steps_per_epoch,
                      const GroupTraining& tr, LossCurve loss, const nlohmann::json& nearby,
                      const std::string& source) {
  c.dataset = data.name;
  c.train_examples = static_cast<long long>(data.train.n);
  c.test_examples = static_cast<long long>(data.test.n);
  c.image_size = cfg.image_size;
  c.normalization = {{"mean", kFashionMnistMean},
                     {"std", kFashionMnistStd},
                     {"source", "per-pixel mean/std of the 60000 training images in [0, 1]"}};
  c.loader_workers = cfg.loader_workers;
  c.optimizer = {{"name", "sgd"}, {"lr", cfg.lr}, {"momentum", 0.9}, {"weight_decay", 1e-4}};
  c.steps_per_epoch = static_cast<long long>(steps_per_epoch);
  c.epochs = tr.epochs;
  c.loss = std::move(loss);
  c.target = tr.tgt;
  c.baselines = nearby;
  c.baselines_source = source;
  c.reference = "the 1-rank DDP row of the same file (no separate no-DDP row)";
  c.note =
      "wall_s from the first training step's start, evaluations included (eval_s says how much); test_loss and "
      "test_accuracy over the whole (limited) test split";
}

// Rank 0's line after the group: the last test accuracy, epochs run, wall (s) and the target's outcome.
std::string group_line(const std::string& model, int n, const GroupTraining& tr, const ConvergenceTarget& target) {
  return fmt::format("  {} on {} rank{}: test accuracy {:.4f} after {} epoch(s), {:.1f} s; target {}", model, n,
                     n > 1 ? "s" : "", tr.last_acc, tr.epochs.size(), tr.epochs.back().wall_s.value_or(0.0),
                     target.metric == "none" ? std::string("none")
                     : *tr.tgt.reached       ? fmt::format("{} {:g} reached in epoch {}", target.metric, target.value,
                                                           tr.tgt.epoch.value_or(0))
                                             : fmt::format("{} {:g} not reached", target.metric, target.value));
}

// One group of n ranks (this rank < n): train, evaluate per epoch, emit the row on rank 0.
void train_group(const SweepEnv& env, const TrainTestData& data, const std::string& model, int n,
                 const c10::intrusive_ptr<c10d::ProcessGroup>& pg, GroupGate& gate, const RowCallback& emit) {
  const RunConfig& cfg = env.cfg;
  const int rank = env.launch.rank;
  const long long batch = batch_per_rank(cfg, n);
  const ConvergenceTarget target = make_target(cfg.target_loss, cfg.target_accuracy);
  const std::string label = fmt::format("time-to-loss {}/ddp{}", model, n);

  auto module = build_model(cfg, model, env.device);
  // Strategy hook: with helper "sharded"'s --strategy (cfg.strategies), build that strategy's
  // trainer here instead of DistributedDataParallel and name it in the row (row.strategy);
  // the loop below only needs forward(x) and the trainable parameters.
  DistributedDataParallel ddp(module, pg, ddp_options_of(cfg, ddp_variants(cfg).front()), env.device);
  std::vector<at::Tensor> params = trainable_parameters(*module);
  torch::optim::SGD opt(params, torch::optim::SGDOptions(cfg.lr).momentum(0.9).weight_decay(1e-4));

  const GroupRun g{cfg, env.device, env.timeout, env.progress,
                   n,   rank,       batch,       steps_per_epoch_of(data.train, n, rank, cfg.seed, batch)};
  GroupTraining tr;
  tr.tgt = unreached_outcome(target);
  if (env.progress) env.progress->next_row(label, static_cast<int>(g.steps_per_epoch * cfg.epochs));
  set_phase("training of " + label);
  const auto t0 = Clock::now();
  for (int e = 0; e < cfg.epochs; ++e) {
    const auto te = Clock::now();
    const EpochSteps local = train_epoch(g, data.train, e, ddp, params, opt, gate, t0, tr);
    const double train_s = since(te);
    const auto tv = Clock::now();
    broadcast_buffers(*module, pg, env.timeout);
    const Eval ev = evaluate(g, *module, data.test);
    const double eval_s = since(tv);
    const EpochTotals totals = reduce_epoch(pg, env.device, env.timeout, ev, local);
    const ConvergenceEpoch& ep = tr.epochs.emplace_back(epoch_record(totals, n, e, train_s, eval_s, t0, tr.loss_mean));
    tr.last_acc = *ep.test_accuracy;
    say(rank, env.progress, epoch_line(model, n, e, ep));
    if (target_reached(target, *ep.test_loss, *ep.test_accuracy)) {
      tr.tgt.reached = true;
      tr.tgt.epoch = e + 1;
      tr.tgt.wall_s = *ep.wall_s;
      break;
    }
  }
  if (env.progress) env.progress->row_finished();

  // Step times of every rank (equal counts), subsampled to at most kMaxLossPoints.
  set_phase("the result gather of " + label);
  const auto gathered = gather_to_root(pg, tr.step_s, tr.step_s.size(), env.device, env.timeout);
  if (rank != 0) return;
  const auto keep = subsample_positions(tr.step_s.size());
  BenchResult row = group_row(cfg, env.placements, env.device, model, n, batch, *tr.tgt.reached);
  add_rank_samples(row, env.placements, gathered, keep, batch, n);
  row.ddp_options = row_ddp_options(cfg, ddp_variants(cfg).front());
  LossCurve loss = loss_curve(tr, keep);
  std::string source;
  const nlohmann::json nearby = baselines_for(tr.last_acc, model, &source);
  fill_convergence(row.convergence, cfg, data, g.steps_per_epoch, tr, std::move(loss), nearby, source);
  emit(row);
  say(rank, env.progress, group_line(model, n, tr, target));
  for (const auto& l : baseline_lines(nearby)) say(rank, env.progress, l);
}

}  // namespace

TrainTestData load_train_test(const RunConfig& cfg) {
  TrainTestData d;
  d.name = cfg.data;
  d.dir = cfg.data_dir;
  d.train = load_idx_split(cfg.data_dir, "train", cfg.train_limit, cfg.num_classes);
  d.test = load_idx_split(cfg.data_dir, "test", cfg.test_limit, cfg.num_classes);
  return d;
}

void run_time_to_loss(const SweepEnv& env, const TrainTestData& data, const std::string& model,
                      const RowCallback& emit) {
  for (int n : env.cfg.world_sizes) {
    const std::string name = fmt::format("{}/ttl{}", model, n);
    run_group(env, name, "time-to-loss group " + name, n,
              [&](c10::intrusive_ptr<c10d::ProcessGroup>& pg, GroupGate& gate) {
                train_group(env, data, model, n, pg, gate, emit);
              });
  }
}

}  // namespace ddpbench
