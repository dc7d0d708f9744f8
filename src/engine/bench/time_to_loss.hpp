// Time-to-loss training on real data (--data fashion-mnist): per DDP group size, train
// until a target on the test split is reached or --epochs run out, and record the loss per
// iteration, the test loss and accuracy per epoch and the time each step waited for the
// data loader. docs/METHODOLOGY.md "Real data and time-to-loss".
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "engine/bench/sweep.hpp"
#include "engine/data/idx.hpp"

namespace ddpbench {

/// The two splits of a run's dataset, as loaded by every rank.
struct TrainTestData {
  std::string name;  ///< "fashion-mnist"
  std::string dir;   ///< the folder read
  ImageDataset train, test;
};

/// Loads cfg.data from cfg.data_dir with cfg.train_limit / cfg.test_limit. Throws UsageError
/// (one line, exit 2) for a missing or corrupt file (engine/data/idx.hpp).
TrainTestData load_train_test(const RunConfig& cfg);

/// Time-to-loss of `model` on every world size n of env.cfg.world_sizes, in order. Collective
/// over the job: ranks >= n wait at a GroupGate while the first n train. Per group: the
/// model seeded with cfg.seed, wrapped in DDP (the first --bucket-cap-mb; every DDP knob of
/// cfg), SGD(lr cfg.lr, momentum 0.9, weight decay 1e-4); each epoch e (0-based) a rank
/// visits distributed_sampler_indices(train.n, n, rank, cfg.seed, e) in batches of
/// batch_per_rank(cfg, n) from a BatchLoader with cfg.loader_workers threads, preprocessed
/// on the device to 3 x image_size^2; after each epoch the test split is evaluated (every
/// example once over the ranks, rank 0's BatchNorm buffers broadcast first) and the group
/// stops once make_target(cfg) is met. Rank 0 passes one row per group to `emit`, with
/// BenchResult::convergence filled (keys in docs/METHODOLOGY.md) and the step times
/// (data wait included; at most kMaxLossPoints per rank, subsampled) as the rank samples.
/// The 1-rank group is the reference (no separate no-DDP row). Throws as the sweep does.
void run_time_to_loss(const SweepEnv& env, const TrainTestData& data, const std::string& model,
                      const RowCallback& emit);

}  // namespace ddpbench
