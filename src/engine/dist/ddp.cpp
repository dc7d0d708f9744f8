#include "engine/dist/ddp.hpp"

#include <torch/csrc/autograd/engine.h>
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

  // 3. _ddp_init_helper: with static_graph or find_unused_parameters=False the first
  //    iteration uses a single bucket ([sys.maxsize]), since parameter order need not be
  //    execution order, and the Reducer rebuilds buckets with the caps after iteration 1, in
  //    gradient-ready order; with find_unused_parameters (dynamic graph) it never rebuilds, so
  //    the buckets are [first bucket cap, bucket cap] in reversed parameter order from the start.
  std::vector<bool> expect_sparse(params_.size(), false);
  const std::vector<size_t> limits = opts_.static_graph || !opts_.find_unused_parameters
                                         ? std::vector<size_t>{std::numeric_limits<size_t>::max()}
                                         : std::vector<size_t>{static_cast<size_t>(opts_.first_bucket_cap_bytes),
                                                               static_cast<size_t>(opts_.bucket_cap_bytes)};
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
  args.find_unused_parameters = opts_.find_unused_parameters;
  args.gradient_as_bucket_view = opts_.gradient_as_bucket_view;
  args.param_names = std::move(names);
  args.first_bucket_bytes_cap = opts_.first_bucket_cap_bytes;
  args.skip_all_reduce_unused_params = opts_.skip_all_reduce_unused_params;
  reducer_ = compat::make_reducer(std::move(args));
  logger_ = std::make_shared<c10d::Logger>(reducer_);
  reducer_->set_logger(logger_);
  std::vector<int> device_ids;
  if (device.is_cuda()) device_ids.push_back(device.index());
  logger_->set_construction_data_and_log("ddpbench." + module_->name(), device_ids,
                                         device.is_cuda() ? device.index() : -1, opts_.broadcast_buffers,
                                         /*has_sync_bn=*/false, opts_.static_graph);
  // Every iteration's timers, as Python's _set_ddp_runtime_logging_sample_rate(1)
  // (default: the first 10 iterations, then every 100th).
  if (opts_.runtime_stats_every_iteration) reducer_->set_ddp_runtime_logging_sample_rate(1);
  // DistributedDataParallel._set_static_graph.
  if (opts_.static_graph) {
    reducer_->set_static_graph();
    logger_->set_static_graph();
  }
}

void DistributedDataParallel::register_comm_hook(std::unique_ptr<c10d::CommHookInterface> hook,
                                                 const std::string& name) {
  if (!hook) return;
  logger_->set_comm_hook(name);
  reducer_->register_comm_hook(std::move(hook));
}

std::optional<ReducerIterationTimes> DistributedDataParallel::last_iteration_times() {
  if (sync_iterations_ == 0) return std::nullopt;
  logger_->set_runtime_stats_and_log();
  const auto data = logger_->get_ddp_logging_data();
  const auto get = [&](const char* key) -> std::optional<double> {
    const auto it = data.ints_map.find(key);
    if (it == data.ints_map.end() || it->second < 0) return std::nullopt;
    return static_cast<double>(it->second) * 1e-9;
  };
  const auto fwd = get("forward_compute_time"), bwd = get("backward_compute_time"), comm = get("backward_comm_time"),
             overlap = get("backward_compute_comm_overlap_time");
  if (!fwd || !bwd || !comm || !overlap) return std::nullopt;
  return ReducerIterationTimes{*fwd, *bwd, *comm, *overlap};
}

DistributedDataParallel::~DistributedDataParallel() {
  // The Logger refers to the Reducer: drop it first, as Python's DDP does.
  logger_.reset();
  reducer_.reset();
}

torch::Tensor DistributedDataParallel::forward(const torch::Tensor& x, bool sync) {
  const bool grad = torch::GradMode::is_enabled();
  const bool synced = grad && sync;
  if (synced) {
    // Python calls logger.set_runtime_stats_and_log() here, recording the previous
    // iteration; last_iteration_times() records it right after its backward instead, so
    // the Logger sees each iteration once and its timers are read per iteration.
    ++sync_iterations_;
    reducer_->prepare_for_forward();
  }
  if (grad && reducer_->rebuild_buckets()) rebuilt_ = true;
  if (param_sync_ && opts_.broadcast_buffers && !buffers_.empty()) {
    torch::NoGradGuard no_grad;
    c10d::broadcast_coalesced(pg_, buffers_, static_cast<size_t>(opts_.broadcast_bucket_bytes), 0);
  }
  auto out = module_->forward(x);
  if (synced) {
    param_sync_ = true;
    if (opts_.find_unused_parameters && !opts_.static_graph) reducer_->prepare_for_backward({out});
    else reducer_->prepare_for_backward({});
    if (opts_.static_graph && sync_iterations_ == 1 && out.requires_grad()) {
      // _DDPSink: in the first static-graph iteration the Reducer defers every allreduce
      // to delay_all_reduce, queued to run when the backward pass ends.
      std::weak_ptr<c10d::Reducer> weak = reducer_;
      out.register_hook([weak](const at::Tensor& g) {
        torch::autograd::Engine::get_default_engine().queue_callback([weak] {
          if (auto r = weak.lock()) r->delay_all_reduce();
        });
        return g;
      });
    }
  } else {
    param_sync_ = false;
  }
  return out;
}

std::vector<int64_t> DistributedDataParallel::bucket_sizes_bytes() { return logger_->get_bucket_sizes(); }

}  // namespace ddpbench
