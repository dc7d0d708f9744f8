#include "engine/dist/ddp.hpp"

#include <torch/csrc/autograd/grad_mode.h>
#include <torch/csrc/distributed/c10d/comm.hpp>

#include <algorithm>
#include <limits>

#include "engine/compat.hpp"

namespace ddpbench {

DistributedDataParallel::DistributedDataParallel(ModelPtr module, c10::intrusive_ptr<c10d::ProcessGroup> pg,
                                                 const DdpOptions& opts, const at::Device& device)
    : module_(std::move(module)), pg_(std::move(pg)), opts_(opts) {
  std::unordered_map<size_t, std::string> names;
  for (const auto& kv : module_->named_parameters()) {
    if (!kv.value().requires_grad()) continue;
    names[params_.size()] = kv.key();
    params_.push_back(kv.value());
  }
  buffers_ = module_->buffers();

  // 1. _verify_param_shape_across_processes
  c10d::verify_params_across_processes(pg_, params_, {});

  // 2. _sync_module_states: parameters (and buffers with broadcast_buffers) from rank 0.
  {
    torch::NoGradGuard no_grad;
    std::vector<at::Tensor> states;
    for (const auto& p : module_->parameters()) states.push_back(p.detach());
    if (opts_.broadcast_buffers)
      for (const auto& b : buffers_) states.push_back(b.detach());
    c10d::broadcast_coalesced(pg_, states, static_cast<size_t>(opts_.broadcast_bucket_bytes), 0);
  }

  // 3. _ddp_init_helper: with find_unused_parameters=False the first iteration uses a
  //    single bucket ([sys.maxsize]), since parameter order need not be execution order;
  //    the Reducer rebuilds buckets with the caps after iteration 1, in gradient-ready order.
  std::vector<bool> expect_sparse(params_.size(), false);
  const std::vector<size_t> limits = {std::numeric_limits<size_t>::max()};
  auto assignment = c10d::compute_bucket_assignment_by_size(params_, limits, expect_sparse);
  auto bucket_indices = std::get<0>(assignment);
  auto per_bucket_limits = std::get<1>(assignment);
  std::reverse(bucket_indices.begin(), bucket_indices.end());
  std::reverse(per_bucket_limits.begin(), per_bucket_limits.end());

  // 4. Reducer + Logger (a weak reference from the Reducer, as Python sets it).
  compat::ReducerArgs args;
  args.params = params_;
  args.bucket_indices = std::move(bucket_indices);
  args.per_bucket_size_limits = std::move(per_bucket_limits);
  args.process_group = pg_;
  args.expect_sparse_gradients = expect_sparse;
  args.bucket_bytes_cap = opts_.bucket_cap_bytes;
  args.find_unused_parameters = false;
  args.gradient_as_bucket_view = opts_.gradient_as_bucket_view;
  args.param_names = std::move(names);
  args.first_bucket_bytes_cap = opts_.first_bucket_cap_bytes;
  reducer_ = compat::make_reducer(std::move(args));
  logger_ = std::make_shared<c10d::Logger>(reducer_);
  reducer_->set_logger(logger_);
  std::vector<int> device_ids;
  if (device.is_cuda()) device_ids.push_back(device.index());
  logger_->set_construction_data_and_log("ddpbench." + module_->name(), device_ids,
                                         device.is_cuda() ? device.index() : -1, opts_.broadcast_buffers,
                                         /*has_sync_bn=*/false, /*static_graph=*/false);
}

DistributedDataParallel::~DistributedDataParallel() {
  // The Logger refers to the Reducer: drop it first, as Python's DDP does.
  logger_.reset();
  reducer_.reset();
}

torch::Tensor DistributedDataParallel::forward(const torch::Tensor& x) {
  const bool grad = torch::GradMode::is_enabled();
  if (grad) {
    logger_->set_runtime_stats_and_log();
    reducer_->prepare_for_forward();
    if (reducer_->rebuild_buckets()) rebuilt_ = true;
  }
  if (opts_.broadcast_buffers && !buffers_.empty()) {
    torch::NoGradGuard no_grad;
    c10d::broadcast_coalesced(pg_, buffers_, static_cast<size_t>(opts_.broadcast_bucket_bytes), 0);
  }
  auto out = module_->forward(x);
  if (grad) reducer_->prepare_for_backward({});
  return out;
}

std::vector<int64_t> DistributedDataParallel::bucket_sizes_bytes() { return logger_->get_bucket_sizes(); }

std::map<std::string, int64_t> DistributedDataParallel::reducer_timers_ns() {
  std::map<std::string, int64_t> out;
  const auto data = logger_->get_ddp_logging_data();
  for (const char* key : kReducerTimerKeys) {
    auto it = data.ints_map.find(key);
    if (it != data.ints_map.end()) out[key] = it->second;
  }
  return out;
}

}  // namespace ddpbench
