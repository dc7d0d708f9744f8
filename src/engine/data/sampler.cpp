#include "engine/data/sampler.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ops/randperm.h>

#include <stdexcept>
#include <string>

namespace ddpbench {

std::vector<int64_t> distributed_sampler_indices(int64_t n, int world, int rank, int64_t seed, int64_t epoch,
                                                 bool shuffle) {
  if (n < 1 || world < 1 || rank < 0 || rank >= world || seed + epoch < 0)
    throw std::invalid_argument(
        "distributed_sampler_indices: n >= 1, world >= 1, 0 <= rank < world, seed + epoch >= 0");
  std::vector<int64_t> all(static_cast<size_t>(n));
  if (shuffle) {
    // Python: g = torch.Generator(); g.manual_seed(self.seed + self.epoch); torch.randperm(n, generator=g)
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(seed + epoch));
    const at::Tensor perm = at::randperm(n, g, at::TensorOptions().dtype(at::kLong));
    const int64_t* p = perm.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) all[static_cast<size_t>(i)] = p[i];
  } else {
    for (int64_t i = 0; i < n; ++i) all[static_cast<size_t>(i)] = i;
  }
  const int64_t per_rank = (n + world - 1) / world;  // math.ceil(len / num_replicas)
  const int64_t total = per_rank * world;
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(per_rank));
  // Padding repeats the list from its start (indices * ceil(pad / n))[:pad]: position i >= n is all[i % n].
  for (int64_t i = rank; i < total; i += world) out.push_back(all[static_cast<size_t>(i % n)]);
  return out;
}

std::vector<int64_t> strided_shard(int64_t n, int world, int rank) {
  std::vector<int64_t> out;
  for (int64_t i = rank; i < n; i += world) out.push_back(i);
  return out;
}

}  // namespace ddpbench
