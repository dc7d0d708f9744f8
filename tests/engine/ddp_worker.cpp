// One rank of the DDP correctness test (tests/engine/test_ddp.cpp starts N of them
// over Gloo on 127.0.0.1). Usage: ddp_worker MODE OUT_PREFIX [MODEL]
//   MODE ddp:   gradients reduced by ddpbench's DistributedDataParallel (c10d::Reducer)
//   MODE local: negative control, same start but no reduction
// Writes OUT_PREFIX.rank<r>.json with the measured differences.
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/comm.hpp>
#include <torch/nn/functional/loss.h>

#include <ATen/Parallel.h>
#include <ATen/ops/cat.h>

#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/launch/launch_env.hpp"
#include "core/util/errors.hpp"
#include "engine/dist/collectives.hpp"
#include "engine/dist/ddp.hpp"
#include "engine/dist/process_group.hpp"
#include "engine/models/registry.hpp"
#include "engine/train/workload.hpp"

using namespace ddpbench;

namespace {

constexpr int64_t kBatch = 4, kImage = 32, kClasses = 10;
const auto kTimeout = std::chrono::milliseconds(120000);

SyntheticBatch batch_of(int rank) { return make_synthetic_batch(kBatch, kImage, kClasses, at::kCPU, 7000 + rank); }

double global_max(const c10::intrusive_ptr<c10d::ProcessGroup>& pg, double v) {
  return allreduce_values(pg, {v}, c10d::ReduceOp::MAX, at::kCPU, kTimeout)[0];
}

// Mean over ranks of the gradient each rank's batch gives, computed locally on a copy
// of `model` (no hooks, no communication): what a correct DDP step must produce.
std::vector<at::Tensor> reference_mean_grads(Model& model, const std::string& name, int world) {
  auto copy = make_model(name, kClasses);
  {
    torch::NoGradGuard ng;
    auto src_p = model.parameters(), dst_p = copy->parameters();
    for (size_t i = 0; i < src_p.size(); ++i) dst_p[i].copy_(src_p[i]);
    auto src_b = model.buffers(), dst_b = copy->buffers();
    for (size_t i = 0; i < src_b.size(); ++i) dst_b[i].copy_(src_b[i]);
  }
  copy->train();
  for (int r = 0; r < world; ++r) {
    auto b = batch_of(r);
    torch::nn::functional::cross_entropy(copy->forward(b.input), b.target).backward();
  }
  std::vector<at::Tensor> ref;
  for (auto& p : copy->parameters()) ref.push_back(p.grad() / world);
  return ref;
}

double max_rel_diff(Model& model, const std::vector<at::Tensor>& ref) {
  double diff = 0, mag = 0;
  auto params = model.parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    diff = std::max(diff, (params[i].grad() - ref[i]).abs().max().item<double>());
    mag = std::max(mag, ref[i].abs().max().item<double>());
  }
  return diff / std::max(mag, 1e-30);
}

double param_spread(Model& model, const c10::intrusive_ptr<c10d::ProcessGroup>& pg) {
  std::vector<at::Tensor> flat;
  for (auto& p : model.parameters()) flat.push_back(p.detach().reshape({-1}));
  auto mine = at::cat(flat);
  std::vector<at::Tensor> theirs{mine.clone()};
  c10d::BroadcastOptions o;
  o.rootRank = 0;
  wait_work(pg->broadcast(theirs, o), kTimeout);
  return global_max(pg, (mine - theirs[0]).abs().max().item<double>());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: ddp_worker ddp|local OUT_PREFIX [MODEL]\n";
    return 2;
  }
  const std::string mode = argv[1], out = argv[2], name = argc > 3 ? argv[3] : "resnet18";
  try {
    at::set_num_threads(1);
    const LaunchInfo li = detect_launch(current_env());
    auto store = connect_store(li, kTimeout);
    auto pg = make_process_group(BackendKind::kGloo, c10::make_intrusive<c10d::PrefixStore>("w/", store), li.rank,
                                 li.world_size, at::kCPU, kTimeout);

    torch::manual_seed(100 + static_cast<uint64_t>(li.rank));  // different init per rank
    ModelPtr model = make_model(name, kClasses);
    const double init_spread_before = param_spread(*model, pg);
    std::unique_ptr<DistributedDataParallel> ddp;
    int grad_accum = 1;
    bool set_to_none = default_zero_grad_set_to_none();  // the linked torch's, as run's default
    if (mode.rfind("ddp", 0) == 0) {
      DdpOptions opts;
      if (mode == "ddp-static") opts.static_graph = true;
      else if (mode == "ddp-unused") opts.find_unused_parameters = true;
      else if (mode == "ddp-gabv") opts.gradient_as_bucket_view = true;
      else if (mode == "ddp-accum") grad_accum = 3;
      else if (mode == "ddp-none") set_to_none = true;
      else if (mode == "ddp-zeros") set_to_none = false;
      else if (mode == "ddp-gabv-none") opts.gradient_as_bucket_view = true, set_to_none = true;
      else if (mode != "ddp") throw std::runtime_error("unknown mode " + mode);
      ddp = std::make_unique<DistributedDataParallel>(model, pg, opts, at::kCPU);
    } else {
      torch::NoGradGuard ng;
      std::vector<at::Tensor> states = model->parameters();
      for (auto& b : model->buffers()) states.push_back(b);
      c10d::broadcast_coalesced(pg, states, 250 << 20, 0);
    }
    DistributedDataParallel* ddp_raw = ddp.get();
    const double init_spread = param_spread(*model, pg);
    Trainer trainer(model, std::move(ddp), batch_of(li.rank), at::kCPU, "fp32", grad_accum, set_to_none);

    nlohmann::json result = {{"rank", li.rank},
                             {"world_size", li.world_size},
                             {"mode", mode},
                             {"param_spread_before_init", init_spread_before},
                             {"param_spread_after_init", init_spread}};
    for (int it = 1; it <= 2; ++it) {  // iteration 1: initial buckets; 2: rebuilt buckets
      auto ref = reference_mean_grads(*model, name, li.world_size);
      trainer.forward_backward();
      result["grad_rel_diff_iter" + std::to_string(it)] = global_max(pg, max_rel_diff(*model, ref));
      trainer.optimizer_step();
    }
    for (int it = 0; it < 3; ++it) trainer.step();
    result["param_spread_after_steps"] = param_spread(*model, pg);
    trainer.zero_grad();
    int defined = 0;
    for (const auto& p : model->parameters()) defined += p.grad().defined() ? 1 : 0;
    result["grads_defined_after_zero_grad"] = defined;
    result["parameters"] = model->parameters().size();
    result["buckets_rebuilt"] = ddp_raw ? ddp_raw->buckets_rebuilt() : false;
    result["num_buckets"] = ddp_raw ? ddp_raw->bucket_sizes_bytes().size() : 0;
    std::ofstream(out + ".rank" + std::to_string(li.rank) + ".json") << result.dump(2) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "ddp_worker: " << first_line(e.what()) << "\n";
    return 1;
  }
}
