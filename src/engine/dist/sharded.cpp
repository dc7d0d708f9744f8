#include "engine/dist/sharded.hpp"

#include <sys/mman.h>

#include <torch/autograd.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <ATen/ops/cat.h>
#include <ATen/ops/zeros.h>

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "core/util/errors.hpp"
#include "engine/compat.hpp"
#include "engine/dist/collectives.hpp"
#include "engine/memory.hpp"

namespace ddpbench {

int64_t ring_wire_bytes(int64_t padded_bytes, int n) { return n <= 1 ? 0 : padded_bytes / n * (n - 1); }

struct ShardedDataParallel::Group {
  std::string name;                   // "unit 3", "root", "bucket 0"
  std::vector<torch::Tensor> params;  // module order
  std::vector<int64_t> offsets;
  int64_t numel = 0, padded = 0, shard = 0;
  torch::Tensor full;         // [padded] fp32; the params are views into it (fsdp: freed between uses)
  torch::Tensor shard_param;  // [shard]: zero2 a view of `full`, fsdp its own tensor (offload: on the host)
  torch::Tensor grad_shard;   // [shard] (offload: on the host)
  torch::Tensor momentum;     // [shard] (offload: on the host): SGD's momentum, AdamW's exp_avg
  torch::Tensor exp_avg_sq;   // [shard] AdamW only (offload: on the host)
  std::vector<c10::intrusive_ptr<c10d::Work>> pending;  // an all-gather in flight (the emulation: its broadcasts)
  torch::Tensor gather_in;                              // its input, alive until it finished
  bool gathered = false;
  size_t ready = 0;      // parameters whose gradient was accumulated this backward
  bool reduced = false;  // gradients reduce-scattered this step
};

namespace {

struct Mapping {
  void* addr;
  size_t bytes;
};

void unmap(void* ctx) {
  auto* m = static_cast<Mapping*>(ctx);
  ::munmap(m->addr, m->bytes);
  delete m;
}

// compat::alloc_storage, except that on the CPU the memory is pages of its own (mmap) that go
// back to the kernel when the storage is freed (munmap): a unit's gathered parameters then
// leave the process's resident set when it is resharded, as a freed block leaves the CUDA
// caching allocator's allocated bytes, instead of staying in glibc's heap (below the 32 MiB
// mmap threshold run sets) as free memory that later allocations fragment.
void alloc_flat_storage(const at::Tensor& t, size_t nbytes) {
  if (!t.device().is_cpu() || nbytes == 0) {
    compat::alloc_storage(t, nbytes);
    return;
  }
  c10::StorageImpl* s = t.storage().unsafeGetStorageImpl();
  if (s->nbytes() == nbytes) return;
  void* addr = ::mmap(nullptr, nbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (addr == MAP_FAILED) throw std::bad_alloc();
  s->set_data_ptr_noswap(at::DataPtr(addr, new Mapping{addr, nbytes}, &unmap, t.device()));
  s->set_nbytes(nbytes);
}

// The post-hook of a unit parameter's AccumulateGrad node: counts the unit's accumulated
// gradients and calls `done` when all have arrived (PyTorch FSDP's _post_backward_hook,
// registered on the flat parameter's AccumulateGrad in torch/distributed/fsdp/_runtime_utils.py).
class CountingPostHook : public torch::autograd::FunctionPostHook {
 public:
  explicit CountingPostHook(std::function<void()> done) : done_(std::move(done)) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list& /*inputs*/) override {
    done_();
    return outputs;
  }

 private:
  std::function<void()> done_;
};

// Identity on a unit's output whose backward runs before the unit's backward: it gathers
// the unit's parameters again (FSDP's _pre_backward_hook).
struct PreBackward : public torch::autograd::Function<PreBackward> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& out,
                               const std::function<void()>* hook) {
    ctx->saved_data["hook"] = reinterpret_cast<int64_t>(hook);
    return out;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad) {
    (*reinterpret_cast<const std::function<void()>*>(ctx->saved_data["hook"].toInt()))();
    return {grad.front(), torch::Tensor()};
  }
};

}  // namespace

ShardedDataParallel::ShardedDataParallel(ModelPtr model, c10::intrusive_ptr<c10d::ProcessGroup> pg,
                                         const std::string& strategy, const ShardOptimizer& optimizer,
                                         const at::Device& device, std::chrono::milliseconds timeout,
                                         const ShardedOptions& opts)
    : model_(std::move(model)),
      pg_(std::move(pg)),
      strategy_(strategy),
      optimizer_(optimizer),
      device_(device),
      timeout_(timeout),
      opts_(opts) {
  if (strategy_ != "zero2" && strategy_ != "fsdp")
    throw UsageError("unknown sharded strategy '" + strategy_ + "': use zero2 or fsdp");
  if (opts_.cpu_offload && strategy_ != "fsdp") throw UsageError("CPU offload applies to fsdp only");
  if (opts_.bucket_cap_bytes < 1) throw UsageError("the zero2 bucket cap must be at least one byte");
  if (optimizer_.kind == ShardOptimizer::Kind::kAdamW && optimizer_.adamw.amsgrad())
    throw UsageError("sharded strategies implement AdamW without amsgrad only");
  if (optimizer_.kind == ShardOptimizer::Kind::kSgd && (optimizer_.sgd.dampening() != 0 || optimizer_.sgd.nesterov()))
    throw UsageError("sharded strategies implement SGD with dampening 0 and without Nesterov only");
  n_ = pg_->getSize();
  rank_ = pg_->getRank();
  std::vector<torch::Tensor> trainable;
  for (auto& p : model_->parameters())
    if (p.requires_grad()) {
      if (p.scalar_type() != at::kFloat)
        throw UsageError("sharded strategies need float32 parameters (use --precision fp32 or bf16 autocast)");
      trainable.push_back(p);
    }
  // Groups: fsdp one per unit (parameters of the unit that require grad), then the root
  // (the rest); zero2 one per bucket.
  if (strategy_ == "fsdp") {
    std::unordered_set<const void*> in_unit;
    const auto& units = model_->units();
    for (size_t u = 0; u < units.size(); ++u) {
      auto g = std::make_unique<Group>();
      g->name = fmt::format("unit {}", u);
      for (auto& p : units[u]->parameters())
        if (p.requires_grad() && in_unit.insert(p.unsafeGetTensorImpl()).second) g->params.push_back(p);
      groups_.push_back(std::move(g));
    }
    auto root = std::make_unique<Group>();
    root->name = "root";
    for (auto& p : trainable)
      if (!in_unit.count(p.unsafeGetTensorImpl())) root->params.push_back(p);
    root_ = groups_.size();
    groups_.push_back(std::move(root));
  } else {
    // Consecutive parameters in reverse module order (the order the backward produces
    // their gradients; DDP's Reducer buckets the same way), at most the cap each.
    std::vector<std::vector<torch::Tensor>> buckets;
    int64_t bytes = 0;
    for (auto it = trainable.rbegin(); it != trainable.rend(); ++it) {
      const int64_t b = it->numel() * static_cast<int64_t>(sizeof(float));
      if (buckets.empty() || (bytes > 0 && bytes + b > opts_.bucket_cap_bytes)) {
        buckets.emplace_back();
        bytes = 0;
      }
      buckets.back().push_back(*it);
      bytes += b;
    }
    for (size_t k = 0; k < buckets.size(); ++k) {
      auto g = std::make_unique<Group>();
      g->name = fmt::format("bucket {}", k);
      g->params.assign(buckets[k].rbegin(), buckets[k].rend());  // module order inside the bucket
      groups_.push_back(std::move(g));
    }
    root_ = groups_.size();  // no root group
  }
  const auto dev = at::TensorOptions().dtype(at::kFloat).device(device_);
  // Offloaded shards: on the host, page-locked when the device is a GPU (faster copies).
  const auto host = at::TensorOptions().dtype(at::kFloat).device(at::kCPU).pinned_memory(device_.is_cuda());
  const auto shard_opts = opts_.cpu_offload ? host : dev;
  torch::NoGradGuard ng;
  for (auto& gp : groups_) {
    Group& g = *gp;
    for (auto& p : g.params) {
      g.offsets.push_back(g.numel);
      g.numel += p.numel();
    }
    g.padded = (g.numel + n_ - 1) / n_ * n_;
    g.shard = g.padded / n_;
    g.full = at::zeros({g.padded}, dev);
    for (size_t k = 0; k < g.params.size(); ++k)
      g.full.slice(0, g.offsets[k], g.offsets[k] + g.params[k].numel()).copy_(g.params[k].reshape({-1}));
    // Rank 0's model on every rank (as DDP's construction broadcasts it).
    std::vector<at::Tensor> ts{g.full};
    c10d::BroadcastOptions bo;
    bo.rootRank = 0;
    bo.timeout = timeout_;
    wait_work(pg_->broadcast(ts, bo), timeout_);
    for (size_t k = 0; k < g.params.size(); ++k) {
      auto& p = g.params[k];
      // A tensor aliasing the flat buffer's storage with a version counter of its own:
      // writes into the flat buffer (the all-gather) must not look like in-place changes of
      // the parameters that autograd saved for the backward.
      auto alias = at::empty({0}, dev);
      std::vector<int64_t> strides(static_cast<size_t>(p.dim()), 1);  // contiguous, as the flat layout
      for (int64_t d = p.dim() - 2; d >= 0; --d)
        strides[static_cast<size_t>(d)] = strides[static_cast<size_t>(d + 1)] * p.size(d + 1);
      alias.set_(g.full.storage(), g.offsets[k], p.sizes(), strides);
      p.set_data(alias);
    }
    auto mine = g.full.slice(0, rank_ * g.shard, (rank_ + 1) * g.shard);
    if (strategy_ == "zero2") g.shard_param = mine;
    else g.shard_param = at::empty({g.shard}, shard_opts).copy_(mine);
    g.grad_shard = at::zeros({g.shard}, shard_opts);
    g.momentum = at::zeros({g.shard}, shard_opts);
    if (optimizer_.kind == ShardOptimizer::Kind::kAdamW) g.exp_avg_sq = at::zeros({g.shard}, shard_opts);
    g.gathered = true;
  }
  // A unit's (fsdp) or a bucket's (zero2) gradients are reduce-scattered once they all
  // arrived; fsdp's root group waits for finish_backward.
  for (size_t u = 0; u < groups_.size(); ++u) {
    if (u == root_) continue;
    reshard(u);
    for (auto& p : groups_[u]->params) {
      auto acc = torch::autograd::impl::grad_accumulator(p);
      acc->add_post_hook(std::make_unique<CountingPostHook>([this, u] {
        Group& g = *groups_[u];
        if (++g.ready == g.params.size() && !g.reduced) {
          reduce_grads(u);
          reshard(u);
        }
      }));
      accumulators_.push_back(std::move(acc));
    }
  }
  if (strategy_ == "fsdp") {
    reshard(root_);
    for (size_t u = 0; u < root_; ++u)
      pre_backward_hooks_.push_back(std::make_unique<std::function<void()>>([this, u] { pre_backward(u); }));
    Model::UnitRunner inner = model_->unit_runner();
    previous_runner_ = model_->set_unit_runner(
        [this, inner](size_t i, const torch::Tensor& x, const Model::UnitFn& fn) { return run_unit(i, x, fn, inner); });
  }
}

ShardedDataParallel::~ShardedDataParallel() {
  if (strategy_ == "fsdp") model_->set_unit_runner(previous_runner_);
  try {
    finish_reduce();
  } catch (...) {  // a failed group: nothing left to do with the data
  }
  for (auto& g : groups_)
    if (!g->pending.empty()) {
      try {
        wait_gather(static_cast<size_t>(&g - &groups_.front()));
      } catch (...) {  // a failed group: nothing left to do with the data
      }
    }
}

void ShardedDataParallel::gather(size_t gi, bool async) {
  Group& g = *groups_[gi];
  if (!g.gathered && g.pending.empty()) {
    alloc_flat_storage(g.full, static_cast<size_t>(g.padded) * sizeof(float));
    if (!broadcast_gather_) {
      // zero2's shard is a view of the output: gather from a copy; an offloaded shard is
      // copied to the device.
      g.gather_in = strategy_ == "zero2" ? g.shard_param.clone()
                    : opts_.cpu_offload  ? to_device(g.shard_param)
                                         : g.shard_param;
      c10d::AllgatherOptions o;
      o.timeout = timeout_;
      try {
        g.pending = {pg_->_allgather_base(g.full, g.gather_in, o)};
      } catch (const c10::Error& e) {
        if (!unsupported_by_backend(e)) throw;
        broadcast_gather_ = true;  // Gloo in torch 1.13: "no support for _allgather_base"
        g.gather_in = torch::Tensor();
      }
    }
    if (broadcast_gather_) {
      // In place into the flat buffer (engine/dist/collectives): Gloo's list all-gather would
      // allocate a buffer of the whole output on its worker thread for every gather.
      auto mine = g.full.slice(0, rank_ * g.shard, (rank_ + 1) * g.shard);
      if (strategy_ != "zero2") mine.copy_(g.shard_param);  // zero2's shard is that chunk already
      g.pending = allgather_in_place_start(pg_, g.full, timeout_);
    }
    wire_bytes_ += ring_wire_bytes(g.padded * static_cast<int64_t>(sizeof(float)), n_);
  }
  if (!async) wait_gather(gi);
}

torch::Tensor ShardedDataParallel::largest_group_buffer() const {
  int64_t largest = 0;
  for (const auto& x : groups_) largest = std::max(largest, x->padded);
  return at::empty({largest}, at::TensorOptions().dtype(at::kFloat).device(device_));
}

void ShardedDataParallel::wait_gather(size_t gi) {
  Group& g = *groups_[gi];
  if (g.pending.empty()) return;
  auto works = std::move(g.pending);
  g.pending.clear();
  for (auto& w : works) wait_work(w, timeout_);
  g.gather_in = torch::Tensor();
  g.gathered = true;
}

void ShardedDataParallel::reshard(size_t gi) {
  if (strategy_ != "fsdp") return;
  Group& g = *groups_[gi];
  wait_gather(gi);
  compat::free_storage(g.full);
  g.gathered = false;
}

torch::Tensor ShardedDataParallel::to_device(const torch::Tensor& host) const {
  // Always a copy of its own, also when the device is the CPU (the offload logic runs there too).
  return at::empty(host.sizes(), host.options().device(device_).pinned_memory(false)).copy_(host);
}

void ShardedDataParallel::reduce_grads(size_t gi) {
  finish_reduce();  // one in flight: the staging buffers are free again
  Group& g = *groups_[gi];
  torch::NoGradGuard ng;
  if (!stage_in_.defined()) stage_in_ = largest_group_buffer();
  auto flat = stage_in_.slice(0, 0, g.padded);
  for (size_t k = 0; k < g.params.size(); ++k) {
    auto& p = g.params[k];
    auto& grad = p.mutable_grad();
    auto dst = flat.slice(0, g.offsets[k], g.offsets[k] + p.numel());
    if (grad.defined()) {
      dst.copy_(grad.reshape({-1}));
      grad = torch::Tensor();  // the full gradient is not kept: this rank keeps its shard only
    } else {
      dst.zero_();
    }
  }
  if (g.padded > g.numel) flat.slice(0, g.numel, g.padded).zero_();
  flat.div_(n_);  // average as the Reducer does: divide by the world size, then sum
  // The backend's reduce-scatter, or (Gloo) ddpbench comm's emulation: all-to-all of the n
  // chunks, then the local sum in rank order; (n-1)/n of the buffer on the wire per rank.
  // Offloaded: into a device buffer, copied to the host shard when it finished.
  const auto out = opts_.cpu_offload ? at::empty({g.shard}, flat.options()) : g.grad_shard;
  if (emulate_rs_ && !stage_tmp_.defined()) stage_tmp_ = largest_group_buffer();
  rs_ = reduce_scatter_start(pg_, out, flat, c10d::ReduceOp::SUM, emulate_rs_, timeout_,
                             emulate_rs_ ? stage_tmp_.slice(0, 0, g.padded) : at::Tensor());
  rs_group_ = gi;
  wire_bytes_ += ring_wire_bytes(g.padded * static_cast<int64_t>(sizeof(float)), n_);
  g.reduced = true;
}

void ShardedDataParallel::finish_reduce() {
  if (!rs_) return;
  const auto out = rs_.out;
  reduce_scatter_finish(rs_, timeout_);
  Group& g = *groups_[rs_group_];
  if (opts_.cpu_offload) g.grad_shard.copy_(out);
}

torch::Tensor ShardedDataParallel::run_unit(size_t i, const torch::Tensor& x, const Model::UnitFn& fn,
                                            const Model::UnitRunner& inner) {
  gather(i, /*async=*/false);
  if (i + 1 < root_) gather(i + 1, /*async=*/true);  // prefetch the next unit's parameters
  auto out = inner ? inner(i, x, fn) : fn(x);
  if (torch::GradMode::is_enabled() && out.requires_grad()) {
    out = PreBackward::apply(out, pre_backward_hooks_.at(i).get());
  }
  reshard(i);
  return out;
}

void ShardedDataParallel::pre_backward(size_t unit) {
  gather(unit, /*async=*/false);
  if (unit > 0 && !groups_[unit - 1]->reduced) gather(unit - 1, /*async=*/true);  // prefetch the previous unit
}

torch::Tensor ShardedDataParallel::forward(const torch::Tensor& x) {
  for (auto& g : groups_) {
    g->ready = 0;
    g->reduced = false;
  }
  if (strategy_ == "fsdp") {
    gather(root_, /*async=*/true);
    if (root_ > 0) gather(0, /*async=*/true);
    wait_gather(root_);
  }
  return model_->forward(x);
}

void ShardedDataParallel::finish_backward() {
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    if (!groups_[gi]->reduced) reduce_grads(gi);
    reshard(gi);
  }
  finish_reduce();
}

void ShardedDataParallel::optimizer_step() {
  torch::NoGradGuard ng;
  ++steps_;
  if (optimizer_.kind == ShardOptimizer::Kind::kAdamW) {
    // torch.optim.AdamW's single-tensor update (amsgrad off), as libtorch's AdamW::step.
    const auto& o = optimizer_.adamw;
    const double lr = o.lr(), wd = o.weight_decay(), b1 = std::get<0>(o.betas()), b2 = std::get<1>(o.betas());
    const double bias1 = 1 - std::pow(b1, static_cast<double>(steps_));
    const double bias2 = 1 - std::pow(b2, static_cast<double>(steps_));
    for (auto& gp : groups_) {
      Group& g = *gp;
      g.shard_param.mul_(1 - lr * wd);
      g.momentum.mul_(b1).add_(g.grad_shard, 1 - b1);
      g.exp_avg_sq.mul_(b2).addcmul_(g.grad_shard, g.grad_shard, 1 - b2);
      const auto denom = (g.exp_avg_sq.sqrt() / std::sqrt(bias2)).add_(o.eps());
      g.shard_param.addcdiv_(g.momentum, denom, -lr / bias1);
    }
  } else {
    const double lr = optimizer_.sgd.lr(), momentum = optimizer_.sgd.momentum(), wd = optimizer_.sgd.weight_decay();
    for (auto& gp : groups_) {
      Group& g = *gp;
      auto& d = g.grad_shard;
      if (wd != 0) d.add_(g.shard_param, wd);
      if (momentum != 0) {
        g.momentum.mul_(momentum).add_(d);  // zero-initialised: the first step gives m = d, as torch.optim.SGD
        g.shard_param.add_(g.momentum, -lr);
      } else {
        g.shard_param.add_(d, -lr);
      }
    }
  }
  if (strategy_ == "zero2") {
    // The shards changed: gather every bucket's new parameters, one bucket at a time (a
    // backend may stage a bucket's whole output in a buffer of its own, as Gloo does).
    for (size_t gi = 0; gi < groups_.size(); ++gi) {
      groups_[gi]->gathered = false;
      gather(gi, /*async=*/false);
    }
  }
}

ModelStateBytes ShardedDataParallel::model_state_bytes() const {
  std::vector<torch::Tensor> params, grads, opt;
  for (auto& p : model_->parameters()) {
    params.push_back(p);
    grads.push_back(p.grad());
  }
  for (const auto& g : groups_) {
    params.push_back(g->shard_param);
    grads.push_back(g->grad_shard);
    opt.push_back(g->momentum);
    if (g->exp_avg_sq.defined()) opt.push_back(g->exp_avg_sq);
  }
  return ddpbench::model_state_bytes(params, grads, opt);  // engine/memory: each storage once
}

nlohmann::json ShardedDataParallel::communication() const {
  const int64_t f = sizeof(float);
  int64_t numel = 0, padded = 0, unit_padded = 0;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    numel += groups_[gi]->numel;
    padded += groups_[gi]->padded;
    if (strategy_ == "fsdp" && gi != root_) unit_padded += groups_[gi]->padded;
  }
  // Payload bytes (the full flat buffers) per step; the wire bytes per rank are (n-1)/n of them.
  const int64_t rs = padded * f;
  const int64_t ag = strategy_ == "zero2" ? padded * f : (padded + unit_padded) * f;  // fsdp: units twice
  int64_t wire = 0;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    const int64_t b = groups_[gi]->padded * f;
    const int gathers = strategy_ == "zero2" ? 1 : (gi == root_ ? 1 : 2);
    wire += ring_wire_bytes(b, n_) * (1 + gathers);
  }
  nlohmann::json j{
      {"strategy", strategy_},
      {"world_size", n_},
      {"flat_parameters", static_cast<int64_t>(groups_.size())},
      {"units", strategy_ == "fsdp" ? static_cast<int64_t>(root_) : 0},
      {"buckets", strategy_ == "zero2" ? static_cast<int64_t>(groups_.size()) : 0},
      {"cpu_offload", opts_.cpu_offload},
      {"parameter_elements", numel},
      {"padded_elements", padded},
      {"reduce_scatter_bytes_per_step", rs},
      {"all_gather_bytes_per_step", ag},
      {"wire_bytes_per_step_formula", wire},
      {"all_gather_api", broadcast_gather_ ? "broadcast of each rank's chunk, in place" : "_allgather_base"},
      {"all_gather_emulated", broadcast_gather_},
      {"reduce_scatter_api", emulate_rs_ ? "alltoall_base + local sum" : "reduce_scatter"},
      {"reduce_scatter_emulated", emulate_rs_},
      {"formula", strategy_ == "zero2"
                      ? "reduce-scatter of each bucket as its gradients are ready, all-gather of each bucket "
                        "after the step: 4P + 4P bytes of payload per step (P padded fp32 elements); each rank "
                        "sends (N-1)/N of each: 2(N-1)/N 4P, the allreduce's volume (ZeRO, arXiv:1910.02054, "
                        "sec. 7.2.1)"
                      : "all-gather of every unit before its forward and again before its backward, of the root "
                        "once, reduce-scatter of all gradients: (N-1)/N (3 4P - 4P_root) bytes sent per rank, "
                        "1.5x DDP's allreduce (FSDP, arXiv:2304.11277, sec. 3.2.2; ZeRO stage 3: 3 4P)"}};
  if (strategy_ == "zero2") j["bucket_cap_bytes"] = opts_.bucket_cap_bytes;
  if (emulate_rs_)
    j["emulated"] =
        "reduce_scatter: all_to_all (alltoall_base) of the N chunks, then a local sum of the N received "
        "chunks: the same bytes on the wire per rank as a ring reduce-scatter, (N-1)/N of the buffer";
  if (broadcast_gather_)
    j["all_gather_emulation"] =
        "all_gather: N broadcasts, chunk j from rank j, in place in the flat buffer as NCCL's all-gather (no "
        "buffer allocated per gather): the same bytes on the wire per rank as a ring all-gather, (N-1)/N of "
        "the buffer";
  return j;
}

std::vector<torch::Tensor> ShardedDataParallel::full_parameters() {
  for (size_t gi = 0; gi < groups_.size(); ++gi) gather(gi, false);
  std::vector<torch::Tensor> out;
  {
    torch::NoGradGuard ng;
    for (auto& p : model_->parameters())
      if (p.requires_grad()) out.push_back(p.detach().clone());
  }
  for (size_t gi = 0; gi < groups_.size(); ++gi) reshard(gi);
  return out;
}

double ShardedDataParallel::parameter_spread_across_ranks() {
  const auto params = full_parameters();
  if (params.empty()) return 0;
  const auto [hi, lo] = max_min_across_ranks(params, pg_, timeout_);  // engine/dist/collectives
  return (hi - lo).max().item<double>();
}

}  // namespace ddpbench
