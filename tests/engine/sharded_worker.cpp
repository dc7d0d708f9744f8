// One rank of the sharded data parallel test (tests/engine/test_sharded.cpp starts N of
// them over Gloo on 127.0.0.1). Usage: sharded_worker OUT_PREFIX MODEL IMAGE STEPS
// (a language model: IMAGE is the sequence length, and the model is reduced to 2 blocks of
// width 64, GPT-2's to 96: it trains with AdamW, as `run` trains it)
// From the same initial model and the same per-rank batches it trains STEPS steps with
// plain DDP (c10d::Reducer) and each sharded variant (see VARIANTS below), and
// writes OUT_PREFIX.rank<r>.json: the largest parameter difference of each sharded run
// from DDP's (relative to DDP's largest |p|, max over ranks), how far DDP moved the
// parameters, and each strategy's model_state_bytes after the steps.
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include <ATen/Parallel.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/launch/launch_env.hpp"
#include "core/util/errors.hpp"
#include "engine/dist/collectives.hpp"
#include "engine/dist/ddp.hpp"
#include "engine/dist/process_group.hpp"
#include "engine/dist/sharded.hpp"
#include "engine/models/registry.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/workload.hpp"

using namespace ddpbench;

namespace {

constexpr int64_t kBatch = 4, kClasses = 10;
const auto kTimeout = std::chrono::milliseconds(120000);

std::vector<at::Tensor> snapshot(const std::vector<at::Tensor>& ps) {
  std::vector<at::Tensor> out;
  for (const auto& p : ps) out.push_back(p.detach().clone());
  return out;
}

double max_abs_diff(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, (a[i] - b[i]).abs().max().item<double>());
  return d;
}

double max_abs(const std::vector<at::Tensor>& a) {
  double m = 0;
  for (const auto& t : a) m = std::max(m, t.abs().max().item<double>());
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: sharded_worker OUT_PREFIX MODEL IMAGE STEPS [VARIANTS]\n";
    return 2;
  }
  // VARIANTS: comma list of zero2, fsdp, fsdp+ckpt (activation checkpointing), fsdp+offload
  // (CPU offload, host and device both the CPU), zero2+b1 (1 MiB buckets); default all.
  std::vector<std::string> variants;
  {
    std::stringstream list(argc > 5 ? argv[5] : "zero2,fsdp,fsdp+ckpt,fsdp+offload,zero2+b1");
    for (std::string v; std::getline(list, v, ',');) variants.push_back(v);
  }
  const std::string out = argv[1], name = argv[2];
  const int64_t image = std::stoll(argv[3]);
  const int steps = std::stoi(argv[4]);
  try {
    at::set_num_threads(1);
    const LaunchInfo li = detect_launch(current_env());
    auto store = connect_store(li, kTimeout);
    auto pg = make_process_group(BackendKind::kGloo, c10::make_intrusive<c10d::PrefixStore>("w/", store), li.rank,
                                 li.world_size, at::kCPU, kTimeout);
    ModelArgs args;
    args.num_classes = kClasses;
    args.image_size = image;
    if (is_language_model(name)) {
      args.seq_len = image;
      args.layers = 2;
      args.width = name.rfind("gpt2", 0) == 0 ? 96 : 64;
    }
    auto batch = [&] {
      if (is_language_model(name))
        return make_token_batch(kBatch, image, language_model_spec(name, args).vocab, at::kCPU, 7000 + li.rank);
      return make_synthetic_batch(kBatch, image, kClasses, at::kCPU, 7000 + li.rank);
    };
    auto fresh = [&] {
      torch::manual_seed(5);
      auto m = make_model(name, args);
      m->train();
      return m;
    };
    auto global_max = [&](double v) { return allreduce_values(pg, {v}, c10d::ReduceOp::MAX, at::kCPU, kTimeout)[0]; };
    nlohmann::json result = {{"rank", li.rank}, {"world_size", li.world_size}, {"steps", steps}};

    // Plain DDP: the reference.
    std::vector<at::Tensor> init, ref;
    {
      auto m = fresh();
      auto ddp = std::make_unique<DistributedDataParallel>(m, pg, DdpOptions{}, at::kCPU);
      Trainer t(m, std::move(ddp), batch(), at::kCPU);
      init = snapshot(t.parameters());
      for (int i = 0; i < steps; ++i) t.step();
      ref = snapshot(t.parameters());
      result["ddp_model_state_bytes"] = t.model_state_bytes().to_json();
    }
    const double scale = max_abs(ref);
    result["ddp_param_movement_rel"] = global_max(max_abs_diff(ref, init) / scale);

    for (const std::string& variant : variants) {
      const std::string strategy = variant.substr(0, variant.find('+'));
      auto m = fresh();
      if (variant == "fsdp+ckpt") enable_activation_checkpointing(*m);
      Trainer t(m, nullptr, batch(), at::kCPU);
      ShardedOptions so;
      so.cpu_offload = variant == "fsdp+offload";
      if (variant == "zero2+b1") so.bucket_cap_bytes = 1 << 20;
      t.set_sharded(
          std::make_unique<ShardedDataParallel>(m, pg, strategy, trainer_optimizer(*m), at::kCPU, kTimeout, so));
      for (int i = 0; i < steps; ++i) t.step();
      const auto bytes = t.model_state_bytes();  // between steps
      const auto full = t.sharded()->full_parameters();
      result[variant + "_param_rel_diff"] = global_max(max_abs_diff(full, ref) / scale);
      result[variant + "_param_spread"] = t.sharded()->parameter_spread_across_ranks();
      result[variant + "_model_state_bytes"] = bytes.to_json();
      result[variant + "_communication"] = t.sharded()->communication();
    }
    std::ofstream(out + ".rank" + std::to_string(li.rank) + ".json") << result.dump(2) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "sharded_worker: " << first_line(e.what()) << "\n";
    return 1;
  }
}
