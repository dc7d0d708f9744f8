#include "engine/dist/collectives.hpp"

#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/minimum.h>
#include <ATen/ops/zeros.h>

#include <fmt/format.h>

#include <algorithm>

#include "core/launch/watchdog.hpp"
#include "core/util/errors.hpp"

#include <stdexcept>
#include <thread>

namespace ddpbench {

void wait_work(const c10::intrusive_ptr<c10d::Work>& work, std::chrono::milliseconds timeout) { work->wait(timeout); }

bool unsupported_by_backend(const c10::Error& e) {
  const std::string w = e.what_without_backtrace();
  return w.find("not support") != std::string::npos || w.find("no support") != std::string::npos;
}

PendingReduceScatter reduce_scatter_start(const c10::intrusive_ptr<c10d::ProcessGroup>& pg, const at::Tensor& out,
                                          const at::Tensor& in, c10d::ReduceOp op, bool& emulate,
                                          std::chrono::milliseconds timeout, const at::Tensor& tmp) {
  const int n = pg->getSize();
  const int64_t c = out.numel();
  PendingReduceScatter p;
  p.in = in;
  p.out = out;
  p.op = op;
  if (!emulate) {
    try {
      std::vector<at::Tensor> outs{out};
      std::vector<std::vector<at::Tensor>> ins(1);
      for (int j = 0; j < n; ++j) ins[0].push_back(in.slice(0, j * c, (j + 1) * c));
      c10d::ReduceScatterOptions o;
      o.reduceOp = op;
      o.timeout = timeout;
      p.work = pg->reduce_scatter(outs, ins, o);
      return p;
    } catch (const c10::Error& e) {
      if (!unsupported_by_backend(e)) throw;  // Gloo: "ProcessGroupGloo does not support reduce_scatter"
      emulate = true;
    }
  }
  p.emulated = true;
  p.tmp = tmp.defined() ? tmp : at::empty_like(in);
  std::vector<int64_t> splits;
  c10d::AllToAllOptions o;
  o.timeout = timeout;
  p.work = pg->alltoall_base(p.tmp, p.in, splits, splits, o);
  return p;
}

void reduce_scatter_finish(PendingReduceScatter& p, std::chrono::milliseconds timeout) {
  if (!p.work) return;
  auto work = std::move(p.work);
  p.work.reset();
  wait_work(work, timeout);
  if (p.emulated) {
    const int64_t c = p.out.numel();
    const int64_t n = p.tmp.numel() / std::max<int64_t>(c, 1);
    p.out.copy_(p.tmp.slice(0, 0, c));
    for (int64_t j = 1; j < n; ++j) {
      const auto part = p.tmp.slice(0, j * c, (j + 1) * c);
      switch (p.op) {
        case c10d::ReduceOp::PRODUCT: p.out.mul_(part); break;
        case c10d::ReduceOp::MAX: at::maximum_out(p.out, p.out, part); break;
        case c10d::ReduceOp::MIN: at::minimum_out(p.out, p.out, part); break;
        default: p.out.add_(part);
      }
    }
  }
  p = PendingReduceScatter();
}

void reduce_scatter_or_emulate(const c10::intrusive_ptr<c10d::ProcessGroup>& pg, at::Tensor& out, const at::Tensor& in,
                               c10d::ReduceOp op, at::Tensor& tmp, bool& emulate, std::chrono::milliseconds timeout) {
  auto p = reduce_scatter_start(pg, out, in, op, emulate, timeout, tmp);
  if (p.emulated) tmp = p.tmp;  // the caller keeps the receive buffer for its next call
  reduce_scatter_finish(p, timeout);
}

std::vector<c10::intrusive_ptr<c10d::Work>> allgather_in_place_start(const c10::intrusive_ptr<c10d::ProcessGroup>& pg,
                                                                     const at::Tensor& out,
                                                                     std::chrono::milliseconds timeout) {
  const int n = pg->getSize();
  const int64_t c = out.numel() / std::max(n, 1);
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
  for (int j = 0; j < n; ++j) {
    std::vector<at::Tensor> chunk{out.slice(0, j * c, (j + 1) * c)};
    c10d::BroadcastOptions o;
    o.rootRank = j;
    o.timeout = timeout;
    works.push_back(pg->broadcast(chunk, o));
  }
  return works;
}

std::pair<at::Tensor, at::Tensor> max_min_across_ranks(const std::vector<at::Tensor>& tensors,
                                                       const c10::intrusive_ptr<c10d::ProcessGroup>& pg,
                                                       std::chrono::milliseconds timeout) {
  if (tensors.empty()) return {};
  std::vector<at::Tensor> flat;
  for (const auto& t : tensors) flat.push_back(t.detach().reshape({-1}).to(at::kDouble));
  auto hi = at::cat(flat);
  auto lo = hi.clone();
  std::vector<at::Tensor> hv{hi}, lv{lo};
  c10d::AllreduceOptions o;
  o.timeout = timeout;
  o.reduceOp = c10d::ReduceOp::MAX;
  wait_work(pg->allreduce(hv, o), timeout);
  o.reduceOp = c10d::ReduceOp::MIN;
  wait_work(pg->allreduce(lv, o), timeout);
  return {hi, lo};
}

std::vector<double> allreduce_values(const c10::intrusive_ptr<c10d::ProcessGroup>& pg, std::vector<double> values,
                                     c10d::ReduceOp op, const at::Device& device, std::chrono::milliseconds timeout) {
  if (values.empty()) return values;
  auto cpu = at::empty({static_cast<int64_t>(values.size())}, at::TensorOptions().dtype(at::kDouble));
  std::copy(values.begin(), values.end(), cpu.data_ptr<double>());
  std::vector<at::Tensor> ts{cpu.to(device)};
  c10d::AllreduceOptions opts;
  opts.reduceOp = op;
  opts.timeout = timeout;
  wait_work(pg->allreduce(ts, opts), timeout);
  auto back = ts[0].to(at::kCPU);
  std::copy(back.data_ptr<double>(), back.data_ptr<double>() + values.size(), values.begin());
  return values;
}

std::vector<std::vector<double>> gather_to_root(const c10::intrusive_ptr<c10d::ProcessGroup>& pg,
                                                const std::vector<double>& mine, size_t len, const at::Device& device,
                                                std::chrono::milliseconds timeout) {
  const auto opts_d = at::TensorOptions().dtype(at::kDouble);
  auto cpu = at::zeros({static_cast<int64_t>(len)}, opts_d);
  std::copy(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(std::min(len, mine.size())),
            cpu.data_ptr<double>());
  std::vector<at::Tensor> input{cpu.to(device)};
  std::vector<std::vector<at::Tensor>> outputs;
  const bool root = pg->getRank() == 0;
  if (root) {
    outputs.emplace_back();
    for (int r = 0; r < pg->getSize(); ++r)
      outputs[0].push_back(at::zeros({static_cast<int64_t>(len)}, opts_d.device(device)));
  }
  c10d::GatherOptions opts;
  opts.rootRank = 0;
  opts.timeout = timeout;
  wait_work(pg->gather(outputs, input, opts), timeout);
  std::vector<std::vector<double>> result;
  if (root) {
    for (auto& t : outputs[0]) {
      auto c = t.to(at::kCPU);
      result.emplace_back(c.data_ptr<double>(), c.data_ptr<double>() + len);
    }
  }
  return result;
}

void barrier(const c10::intrusive_ptr<c10d::ProcessGroup>& pg, const at::Device& device,
             std::chrono::milliseconds timeout) {
  c10d::BarrierOptions opts;
  opts.timeout = timeout;
  if (device.is_cuda()) opts.device_ids = {device.index()};
  wait_work(pg->barrier(opts), timeout);
}

std::chrono::milliseconds GroupGate::poll_for(int world_size) {
  const double s = std::clamp(world_size / 1000.0, 0.5, 5.0);
  return std::chrono::milliseconds(static_cast<long long>(s * 1000));
}

GroupGate::GroupGate(c10::intrusive_ptr<c10d::Store> store, std::string name, std::chrono::milliseconds timeout,
                     std::chrono::milliseconds poll)
    : store_(std::move(store)),
      hb_key_("gate/" + name + "/hb"),
      state_key_("gate/" + name + "/state"),
      ack_key_("gate/" + name + "/acks"),
      name_(std::move(name)),
      timeout_(timeout),
      poll_(poll) {}

void GroupGate::beat() { store_->add(hb_key_, 1); }

void GroupGate::done() {
  const std::string v = "done";
  store_->set(state_key_, std::vector<uint8_t>(v.begin(), v.end()));
}

void GroupGate::fail(const std::string& reason, int waiters) {
  const std::string v = "fail:" + first_line(reason).substr(0, 1024);
  store_->set(state_key_, std::vector<uint8_t>(v.begin(), v.end()));
  const auto deadline =
      std::chrono::steady_clock::now() + std::min<std::chrono::milliseconds>(timeout_, std::chrono::seconds(30));
  while (store_->add(ack_key_, 0) < waiters && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

void GroupGate::wait_done() {
  using Clock = std::chrono::steady_clock;
  int64_t last = -1;
  auto last_progress = Clock::now();
  for (;;) {
    int64_t beats = 0;
    {
      // Rank 0 serves the store: if it stops (SIGSTOP, a hung host) the store accepts
      // and never answers, which no store call times out on.
      Deadline d("the store (rank 0's process)", timeout_);
      if (store_->check({state_key_})) {
        const auto raw = store_->get(state_key_);
        const std::string state(raw.begin(), raw.end());
        if (state == "done") return;
        store_->add(ack_key_, 1);
        throw GroupFailedElsewhere(fmt::format("benchmark group '{}' failed: {}", name_, state.substr(5)));
      }
      beats = store_->add(hb_key_, 0);
    }
    if (beats != last) {
      last = beats;
      last_progress = Clock::now();
    } else if (Clock::now() - last_progress > timeout_) {
      throw std::runtime_error(fmt::format(
          "benchmark group '{}' made no progress for {} s: a rank in it died or hangs (raise --timeout if a step "
          "legitimately takes longer)",
          name_, std::chrono::duration_cast<std::chrono::seconds>(timeout_).count()));
    }
    std::this_thread::sleep_for(poll_);
  }
}

}  // namespace ddpbench
