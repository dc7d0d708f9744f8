// The per-rank shard of an epoch exactly as torch.utils.data.DistributedSampler makes it
// (torch/utils/data/distributed.py, PyTorch 1.13; drop_last=False).
#pragma once

#include <cstdint>
#include <vector>

namespace ddpbench {

/// Indices rank `rank` of `world` ranks visits in epoch `epoch` of a dataset of `n`
/// examples, as DistributedSampler(dataset, world, rank, shuffle, seed).set_epoch(epoch):
///  1. shuffle: torch.randperm(n, generator=g) with a CPU torch.Generator seeded seed + epoch
///     (libtorch's own randperm and generator, so the sequence is torch's); else 0..n-1;
///  2. pad by repeating the list from its start to total = ceil(n / world) * world;
///  3. take indices[rank], indices[rank + world], ... (ceil(n / world) of them, equal on every rank).
/// Throws std::invalid_argument when n < 1, world < 1, rank outside 0..world-1 or seed + epoch < 0.
std::vector<int64_t> distributed_sampler_indices(int64_t n, int world, int rank, int64_t seed, int64_t epoch,
                                                 bool shuffle = true);

/// The evaluation shard: rank r takes r, r + world, ... below n, without padding, so every
/// example is evaluated exactly once over the ranks (shard sizes differ by at most one).
std::vector<int64_t> strided_shard(int64_t n, int world, int rank);

}  // namespace ddpbench
