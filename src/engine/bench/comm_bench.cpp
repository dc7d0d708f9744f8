#include "engine/bench/comm_bench.hpp"

#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <ATen/ATen.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "core/launch/watchdog.hpp"
#include "core/result/bench_table.hpp"
#include "core/stats/stats.hpp"
#include "core/telemetry/telemetry.hpp"
#include "core/util/errors.hpp"
#include "engine/dist/collectives.hpp"
#include "engine/timing.hpp"

namespace ddpbench {
namespace {

// Elements filled or checked per slice: the int64 arithmetic behind the closed forms never
// holds more than this many elements (8 MiB), whatever the buffer size.
constexpr int64_t kSlice = 1 << 20;

c10d::ReduceOp reduce_op(const std::string& op) {
  if (op == "prod") return c10d::ReduceOp::PRODUCT;
  if (op == "max") return c10d::ReduceOp::MAX;
  if (op == "min") return c10d::ReduceOp::MIN;
  return c10d::ReduceOp::SUM;
}

// The deterministic input of rank `s` at global element indices `idx` (int64): small
// integers, exact in every dtype, so the closed-form results below are exact too.
//   reducing collectives, by --op:
//     sum   (idx % 4) + (s % 4)         -> n (idx % 4) + sum_s (s % 4)
//     prod  1 + ((idx + s) mod 2)       -> 2^(number of s < n with idx + s odd)
//     max   (idx % 5) + (s % 8)         -> (idx % 5) + min(n - 1, 7)
//     min   (idx % 5) + (s % 8)         -> idx % 5
//   moving collectives (broadcast, all_gather, all_to_all): (idx + 7 s) % 97.
at::Tensor reduce_input(const at::Tensor& idx, int s, const std::string& op) {
  if (op == "sum") return idx.remainder(4) + (s % 4);
  if (op == "prod") return (idx + s).remainder(2) + 1;
  return idx.remainder(5) + (s % 8);
}

at::Tensor reduce_expected(const at::Tensor& idx, int n, const std::string& op, c10::ScalarType dtype) {
  if (op == "sum") {
    int64_t s4 = 0;
    for (int s = 0; s < n; ++s) s4 += s % 4;
    return idx.remainder(4) * n + s4;
  }
  if (op == "prod") {
    // idx even: the odd s count (n / 2); idx odd: the even s count ((n + 1) / 2).
    const auto k = at::where(idx.remainder(2).eq(0), at::full_like(idx, n / 2), at::full_like(idx, (n + 1) / 2));
    auto p = at::pow(2.0, k.to(at::kDouble));
    if (!at::isFloatingType(dtype)) {
      // Integers wrap: 2^k mod 2^bits is 0 once k reaches the dtype's width.
      const int bits = static_cast<int>(c10::elementSize(dtype)) * 8;
      p = at::where(k.ge(bits), at::zeros_like(p), p);
      return p.to(at::kLong);
    }
    return p;
  }
  if (op == "max") return idx.remainder(5) + std::min(n - 1, 7);
  return idx.remainder(5);
}

at::Tensor move_input(const at::Tensor& idx, int s) { return (idx + static_cast<int64_t>(7) * s).remainder(97); }

at::Tensor arange_slice(int64_t from, int64_t len) {
  return at::arange(from, from + len, at::TensorOptions().dtype(at::kLong));
}

// Writes f(idx) for idx = base .. base + numel - 1 into `buf` (any dtype, any device), by slices.
void fill(at::Tensor buf, int64_t base, const std::function<at::Tensor(const at::Tensor&)>& f) {
  const int64_t n = buf.numel();
  for (int64_t off = 0; off < n; off += kSlice) {
    const int64_t len = std::min(kSlice, n - off);
    buf.slice(0, off, off + len).copy_(f(arange_slice(base + off, len)).to(buf.scalar_type()));
  }
}

// Elements of `buf` that differ from f(idx) (converted to buf's dtype, so integer results
// wrap as the collective's arithmetic does), by slices.
long long count_wrong(const at::Tensor& buf, int64_t base, const std::function<at::Tensor(const at::Tensor&)>& f) {
  const int64_t n = buf.numel();
  long long wrong = 0;
  for (int64_t off = 0; off < n; off += kSlice) {
    const int64_t len = std::min(kSlice, n - off);
    const auto expected = f(arange_slice(base + off, len)).to(buf.scalar_type());
    const auto got = buf.slice(0, off, off + len).to(at::kCPU);
    wrong += got.ne(expected).sum().item<int64_t>();
  }
  return wrong;
}

void corrupt(at::Tensor buf) {
  auto e = buf.slice(0, 0, 1);
  e.add_(64);
}

// One collective at one size on one group: its buffers and its operation.
class Op {
 public:
  Op(const CommEnv& env, const c10::intrusive_ptr<c10d::ProcessGroup>& pg, Collective c, const CommSize& size)
      : env_(env), pg_(pg), c_(c), n_(pg->getSize()), rank_(pg->getRank()), size_(size) {
    const auto opts = at::TensorOptions().dtype(comm_dtype(env.cfg.dtype)).device(env.device);
    const int64_t count = size.count, total = size.buffer_elements;
    switch (c) {
      case Collective::kAllreduce:
      case Collective::kBroadcast:
      case Collective::kReduce: in_ = at::empty({count}, opts); break;
      case Collective::kAllGather:
        in_ = at::empty({count}, opts);
        out_ = at::empty({total}, opts);
        break;
      case Collective::kAllToAll:
        in_ = at::empty({total}, opts);
        out_ = at::empty({total}, opts);
        break;
      case Collective::kReduceScatter:
        in_ = at::empty({total}, opts);
        out_ = at::empty({count}, opts);
        break;
      case Collective::kBarrier: break;
    }
  }

  /// How the operation was carried out where it is not the backend's native collective.
  std::string emulated() const { return emulated_; }
  std::string api() const { return api_; }

  /// Issues the operation and waits for it (CPU: until done; NCCL: the current stream waits).
  void run() {
    const auto t = env_.timeout;
    const auto op = reduce_op(env_.cfg.op);
    switch (c_) {
      case Collective::kAllreduce: {
        std::vector<at::Tensor> ts{in_};
        c10d::AllreduceOptions o;
        o.reduceOp = op;
        o.timeout = t;
        wait_work(pg_->allreduce(ts, o), t);
        api_ = "allreduce";
        break;
      }
      case Collective::kBroadcast: {
        std::vector<at::Tensor> ts{in_};
        c10d::BroadcastOptions o;
        o.rootRank = env_.cfg.root;
        o.timeout = t;
        wait_work(pg_->broadcast(ts, o), t);
        api_ = "broadcast";
        break;
      }
      case Collective::kReduce: {
        std::vector<at::Tensor> ts{in_};
        c10d::ReduceOptions o;
        o.rootRank = env_.cfg.root;
        o.reduceOp = op;
        o.timeout = t;
        wait_work(pg_->reduce(ts, o), t);
        api_ = "reduce";
        break;
      }
      case Collective::kAllGather: run_all_gather(); break;
      case Collective::kAllToAll: {
        std::vector<int64_t> splits;  // empty: equal chunks
        c10d::AllToAllOptions o;
        o.timeout = t;
        wait_work(pg_->alltoall_base(out_, in_, splits, splits, o), t);
        api_ = "alltoall_base";
        break;
      }
      case Collective::kReduceScatter: run_reduce_scatter(); break;
      case Collective::kBarrier:
        barrier(pg_, env_.device, t);
        api_ = "barrier";
        break;
    }
  }

  /// Fills the inputs deterministically (test seam: corrupts one rank), runs the operation
  /// once and returns the elements of this rank's result that differ from the closed form.
  long long check() {
    const auto& cfg = env_.cfg;
    const int n = n_, r = rank_;
    const int64_t chunk = size_.count;
    const std::string opname = cfg.op;
    const c10::ScalarType dtype = comm_dtype(cfg.dtype);
    const int corrupted = has_root(c_) ? cfg.root : n - 1;
    const bool bad = env_.corrupt_one_rank && r == corrupted;
    switch (c_) {
      case Collective::kAllreduce:
      case Collective::kReduce: {
        fill(in_, 0, [&](const at::Tensor& i) { return reduce_input(i, r, opname); });
        if (bad) corrupt(in_);
        run();
        if (c_ == Collective::kReduce && r != cfg.root) return 0;  // only the root's result is defined
        return count_wrong(in_, 0, [&](const at::Tensor& i) { return reduce_expected(i, n, opname, dtype); });
      }
      case Collective::kBroadcast: {
        if (r == cfg.root) fill(in_, 0, [&](const at::Tensor& i) { return move_input(i, r); });
        else in_.fill_(101);  // never produced by move_input
        if (bad) corrupt(in_);
        run();
        return count_wrong(in_, 0, [&](const at::Tensor& i) { return move_input(i, cfg.root); });
      }
      case Collective::kAllGather: {
        fill(in_, 0, [&](const at::Tensor& i) { return move_input(i, r); });
        if (bad) corrupt(in_);
        out_.fill_(101);
        run();
        long long wrong = 0;
        for (int j = 0; j < n; ++j)
          wrong += count_wrong(out_.slice(0, j * chunk, (j + 1) * chunk), 0,
                               [&](const at::Tensor& i) { return move_input(i, j); });
        return wrong;
      }
      case Collective::kAllToAll: {
        // Rank s's input at global index d*chunk + k goes to rank d's output chunk s, element k.
        fill(in_, 0, [&](const at::Tensor& i) { return move_input(i, r); });
        if (bad) corrupt(in_);
        out_.fill_(101);
        run();
        long long wrong = 0;
        for (int s = 0; s < n; ++s)
          wrong += count_wrong(out_.slice(0, s * chunk, (s + 1) * chunk), int64_t(r) * chunk,
                               [&](const at::Tensor& i) { return move_input(i, s); });
        return wrong;
      }
      case Collective::kReduceScatter: {
        fill(in_, 0, [&](const at::Tensor& i) { return reduce_input(i, r, opname); });
        if (bad) corrupt(in_);
        out_.fill_(101);
        run();
        return count_wrong(out_, int64_t(r) * chunk,
                           [&](const at::Tensor& i) { return reduce_expected(i, n, opname, dtype); });
      }
      case Collective::kBarrier: return 0;
    }
    return 0;
  }

 private:
  void run_all_gather() {
    const auto t = env_.timeout;
    c10d::AllgatherOptions o;
    o.timeout = t;
    if (!list_allgather_) {
      try {
        wait_work(pg_->_allgather_base(out_, in_, o), t);
        api_ = "_allgather_base";
        return;
      } catch (const c10::Error& e) {
        if (!unsupported_by_backend(e)) throw;
        list_allgather_ = true;  // e.g. Gloo in torch 1.13: "no support for _allgather_base"
      }
    }
    // The list form writes into views of the flat output, so the data lands in place.
    std::vector<std::vector<at::Tensor>> outs(1);
    for (int j = 0; j < n_; ++j) outs[0].push_back(out_.slice(0, j * size_.count, (j + 1) * size_.count));
    std::vector<at::Tensor> ins{in_};
    wait_work(pg_->allgather(outs, ins, o), t);
    api_ = "allgather (list of per-rank outputs)";
  }

  void run_reduce_scatter() {
    const auto t = env_.timeout;
    const auto op = reduce_op(env_.cfg.op);
    reduce_scatter_or_emulate(pg_, out_, in_, op, tmp_, emulate_rs_, t);  // engine/dist/collectives
    if (emulate_rs_) {
      emulated_ =
          "all_to_all (alltoall_base) of the n chunks, then a local element-wise reduction of the n "
          "received chunks in the dtype: the same bytes on the wire per rank as a ring "
          "reduce-scatter, (n-1)/n of the size";
      api_ = "alltoall_base + local reduction";
    } else {
      api_ = "reduce_scatter";
    }
  }

  const CommEnv& env_;
  c10::intrusive_ptr<c10d::ProcessGroup> pg_;
  Collective c_;
  int n_, rank_;
  CommSize size_;
  at::Tensor in_, out_, tmp_;
  bool list_allgather_ = false, emulate_rs_ = false;
  std::string emulated_, api_;
};

// One collective on one group, every size; rank 0 gets the rows.
void run_collective(const CommEnv& env, const c10::intrusive_ptr<c10d::ProcessGroup>& pg, Collective c, GroupGate* gate,
                    const CommCallbacks& cb, std::vector<CommResult>& all_rows) {
  const CommConfig& cfg = env.cfg;
  const int n = pg->getSize();
  const int rank = pg->getRank();
  const int elem = dtype_size(cfg.dtype);
  std::vector<CommResult> rows;
  for (const CommSize& size : comm_sizes(c, cfg.sizes, elem, n)) {
    const std::string what = fmt::format("{} of {} B on {} ranks", collective_name(c), size.bytes, n);
    Op op(env, pg, c, size);
    set_phase("warm-up of " + what);
    for (int i = 0; i < cfg.warmup; ++i) op.run();
    long long wrong = -1;
    if (cfg.check && c != Collective::kBarrier) {
      set_phase("check of " + what);
      wrong = op.check();
    }
    set_phase("measurement of " + what);
    synchronize(env.device);
    barrier(pg, env.device, env.timeout);  // the ranks start the timed span together, as nccl-tests' Barrier()
    StepTimer timer(env.device);
    const double cpu_before = process_cpu_s();
    const auto wall_before = std::chrono::steady_clock::now();
    timer.start();
    for (int i = 0; i < cfg.iters; ++i) op.run();
    const double per_op_s = timer.stop_s() / cfg.iters;
    // The CPU the timed span kept busy (process CPU time / its wall time; NaN if unreadable).
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_before).count();
    const double cpu_cores = wall_s > 0 ? (process_cpu_s() - cpu_before) / wall_s : std::nan("");
    set_phase("the result gather of " + what);
    const auto gathered =
        gather_to_root(pg, {per_op_s, static_cast<double>(wrong), cpu_cores}, 3, env.device, env.timeout);
    if (gate) gate->beat();
    if (rank != 0) continue;
    CommResult row;
    row.collective = collective_name(c);
    row.dtype = c == Collective::kBarrier ? "none" : cfg.dtype;
    row.redop = reduces(c) ? cfg.op : "none";
    row.root = has_root(c) ? cfg.root : -1;
    row.bytes = size.bytes;
    row.count = size.count;
    row.world_size = n;
    row.nodes = distinct_hosts(env.placements, n);
    row.label = group_label(row.nodes, n, env.device.is_cuda() ? 'G' : 'C');
    row.warmup = cfg.warmup;
    row.iters = cfg.iters;
    double sum = 0, mx = 0, cpu_sum = 0;
    int cpu_n = 0;
    long long wrong_sum = 0;
    nlohmann::json per_rank = nlohmann::json::array();
    for (const auto& g : gathered) {
      sum += g[0];
      mx = std::max(mx, g[0]);
      if (g[1] >= 0) wrong_sum += static_cast<long long>(g[1]);
      if (std::isfinite(g[2]) && g[2] >= 0) {
        cpu_sum += g[2];
        ++cpu_n;
      }
      per_rank.push_back(g[0] * 1e6);
    }
    if (cpu_n == n) row.cpu_cores = cpu_sum / n;
    const double mean_s = sum / n;  // nccl-tests' default: the time averaged over ranks
    row.time_us = mean_s * 1e6;
    row.time_us_max_over_ranks = mx * 1e6;
    row.algbw_gbps = algbw_gbps(size.bytes, mean_s);
    row.busbw_gbps = row.algbw_gbps * busbw_factor(c, n);
    row.wrong = wrong < 0 ? -1 : wrong_sum;
    row.extra["time_us_per_rank"] = per_rank;
    row.extra["backend_call"] = op.api();
    row.extra["checked"] = wrong >= 0;
    row.extra["timing"] = env.device.is_cuda() ? "CUDA events around iters back-to-back operations"
                                               : "steady_clock around iters operations, each waited for";
    if (!op.emulated().empty()) {
      row.extra["emulated"] = op.emulated();
      row.label += " (emulated)";
    }
    rows.push_back(row);
    all_rows.push_back(row);
    if (cb.on_row) cb.on_row(row);
  }
  if (rank == 0 && cb.on_collective_done && !rows.empty()) cb.on_collective_done(rows);
}

}  // namespace

nlohmann::json to_json(const CommConfig& c) {
  std::vector<std::string> names;
  for (Collective x : c.collectives) names.push_back(collective_name(x));
  nlohmann::json j{{"collectives", names},
                   {"sizes_bytes", c.sizes},
                   {"dtype", c.dtype},
                   {"op", c.op},
                   {"root", c.root},
                   {"warmup", c.warmup},
                   {"iters", c.iters},
                   {"check", c.check},
                   {"world_sizes", c.world_sizes},
                   {"timeout_s", c.timeout_s}};
  if (c.pairs) {  // --pairs: sendrecv and allreduce of one size between pairs, no sweep
    for (const char* k : {"collectives", "sizes_bytes", "root", "world_sizes"}) j.erase(k);
    j["pairs"] = true;
    j["pair_unit"] = c.pair_unit;
    j["pair_bytes"] = c.pair_bytes;
    j["slow_fraction"] = c.slow_fraction;
  }
  return j;
}

c10::ScalarType comm_dtype(const std::string& name) {
  static const std::map<std::string, c10::ScalarType> types{
      {"float32", at::kFloat}, {"float16", at::kHalf}, {"bfloat16", at::kBFloat16}, {"float64", at::kDouble},
      {"int32", at::kInt},     {"int64", at::kLong},   {"int8", at::kChar},         {"uint8", at::kByte}};
  if (auto it = types.find(name); it != types.end()) return it->second;
  (void)dtype_size(name);  // throws the one-line UsageError naming the accepted names
  throw UsageError("-d/--datatype '" + name + "' is not supported");
}

void check_backend_dtype(BackendKind backend, const std::string& dtype) {
  if (backend != BackendKind::kGloo) return;
  const auto type = comm_dtype(dtype);
  auto store = c10::make_intrusive<c10d::HashStore>();
  auto pg = make_process_group(backend, store, 0, 1, c10::Device(c10::kCPU), std::chrono::seconds(30));
  std::vector<at::Tensor> ts{at::zeros({1}, at::TensorOptions().dtype(type))};
  try {
    wait_work(pg->allreduce(ts), std::chrono::seconds(30));
  } catch (const c10::Error& e) {
    destroy_process_group(pg);
    throw UsageError(
        fmt::format("-d/--datatype {}: this torch's Gloo cannot move it ({}); use float32, float16, "
                    "float64, int32, int64, int8 or uint8",
                    dtype, first_line(e.what_without_backtrace())));
  }
  destroy_process_group(pg);
}

int planned_comm_rows(const CommConfig& cfg) {
  size_t rows = 0;
  for (int n : cfg.world_sizes)
    for (Collective c : cfg.collectives) rows += comm_sizes(c, cfg.sizes, dtype_size(cfg.dtype), n).size();
  return static_cast<int>(rows);
}

void to_json(nlohmann::json& j, const PairsPlan& p) {
  nlohmann::json rounds = nlohmann::json::array();
  for (const auto& r : p.rounds) {
    nlohmann::json jr = nlohmann::json::array();
    for (const auto& [a, b] : r) jr.push_back({a, b});
    rounds.push_back(jr);
  }
  j = {{"unit", p.unit},   {"ranks", p.ranks}, {"names", p.names},
       {"hosts", p.hosts}, {"rounds", rounds}, {"error", p.error}};
}

void from_json(const nlohmann::json& j, PairsPlan& p) {
  j.at("unit").get_to(p.unit);
  j.at("ranks").get_to(p.ranks);
  j.at("names").get_to(p.names);
  j.at("hosts").get_to(p.hosts);
  j.at("error").get_to(p.error);
  p.rounds.clear();
  for (const auto& r : j.at("rounds")) {
    std::vector<PairIdx> round;
    for (const auto& x : r) round.emplace_back(x.at(0).get<int>(), x.at(1).get<int>());
    p.rounds.push_back(round);
  }
}

PairsPlan make_pairs_plan(const std::vector<RankPlacement>& placements, const std::string& unit) {
  PairsPlan plan;
  plan.unit = unit;
  std::set<std::string> seen;
  for (const auto& p : placements) {
    if (unit == "node") {
      if (!seen.insert(p.host).second) continue;  // placements are in rank order: the host's lowest rank
      plan.names.push_back(p.host);
    } else {
      plan.names.push_back(fmt::format("{}/rank{}", p.host, p.rank));
    }
    plan.ranks.push_back(p.rank);
    plan.hosts.push_back(p.host);
  }
  if (plan.ranks.size() < 2) {
    plan.error = unit == "node" ? fmt::format(
                                      "comm --pairs pairs nodes, but all {} rank(s) run on one host ({}); start ranks "
                                      "on >= 2 hosts, or add --pair-unit rank to pair the ranks of this host",
                                      placements.size(), placements.empty() ? "?" : placements.front().host)
                                : "comm --pairs --pair-unit rank needs >= 2 ranks; start at least 2";
    plan.ranks.clear();
    plan.names.clear();
    plan.hosts.clear();
    return plan;
  }
  plan.rounds = round_robin_rounds(static_cast<int>(plan.ranks.size()));
  return plan;
}

PairsPlan share_pairs_plan(const c10::intrusive_ptr<c10d::Store>& store, const LaunchInfo& li, const PairsPlan& plan,
                           std::chrono::milliseconds timeout) {
  set_phase("the exchange of the pair schedule");
  Deadline d("the store (rank 0), exchanging the pair schedule", timeout + std::chrono::seconds(5));
  if (li.rank == 0) {
    const std::string text = nlohmann::json(plan).dump();
    store->set("pairs/plan", std::vector<uint8_t>(text.begin(), text.end()));
    if (!plan.error.empty()) {
      // Rank 0 serves the store: it leaves only after every rank read the error.
      const auto deadline = std::chrono::steady_clock::now() + timeout;
      while (store->add("pairs/plan_read", 0) < li.world_size - 1 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return plan;
  }
  const auto v = store->get("pairs/plan");  // waits up to the store's timeout
  PairsPlan out = nlohmann::json::parse(std::string(v.begin(), v.end())).get<PairsPlan>();
  store->add("pairs/plan_read", 1);
  return out;
}

namespace {

// Seconds per operation of `iters` calls of `op`: on the CPU, where each operation is
// waited for anyway, the median of the per-operation times (a persistently slow link is slow
// in every message; a rank descheduled for a few ms by another process spoils only a few);
// on a GPU the span of back-to-back operations / iters (CUDA events), as the sweep.
double time_per_op(const CommEnv& env, int iters, const std::function<void()>& op) {
  if (env.device.is_cuda()) {
    StepTimer timer(env.device);
    timer.start();
    for (int i = 0; i < iters; ++i) op();
    return timer.stop_s() / iters;
  }
  std::vector<double> t;
  t.reserve(static_cast<size_t>(iters));
  for (int i = 0; i < iters; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    op();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return percentile(t, 50);
}

// Wire times of one pair, as each participant reports them to rank 0 (gather_to_root):
// seconds per message a->b, b->a, per allreduce; #wrong of each check (-1: not checked).
constexpr size_t kPairValues = 6;

// One direction of one pair: `iters` messages of `buf` from pair rank `src` to the other,
// each waited for; returns this rank's seconds per message and (with a check) #wrong.
std::pair<double, long long> p2p_direction(const CommEnv& env, const c10::intrusive_ptr<c10d::ProcessGroup>& pg,
                                           at::Tensor& buf, int src, int tag, const std::string& what) {
  const CommConfig& cfg = env.cfg;
  const int me = pg->getRank(), peer = 1 - me;
  const bool sending = me == src;
  auto once = [&] {
    std::vector<at::Tensor> ts{buf};
    if (sending) wait_work(pg->send(ts, peer, tag), env.timeout);
    else wait_work(pg->recv(ts, peer, tag), env.timeout);
  };
  set_phase("warm-up of " + what);
  for (int i = 0; i < cfg.warmup; ++i) once();
  long long wrong = -1;
  if (cfg.check) {
    set_phase("check of " + what);
    if (sending) {
      fill(buf, 0, [&](const at::Tensor& i) { return move_input(i, src); });
      if (env.corrupt_one_rank && src == 1) corrupt(buf);  // the seam: the pair's last rank
      once();
      wrong = 0;
    } else {
      buf.fill_(101);  // never produced by move_input
      once();
      wrong = count_wrong(buf, 0, [&](const at::Tensor& i) { return move_input(i, src); });
    }
  }
  set_phase("measurement of " + what);
  synchronize(env.device);
  barrier(pg, env.device, env.timeout);
  return {time_per_op(env, cfg.iters, once), wrong};
}

// This participant's part of one pair (pair rank `me` of 2): both directions, then allreduce.
std::vector<double> measure_pair(const CommEnv& env, const c10::intrusive_ptr<c10d::ProcessGroup>& pg,
                                 const std::string& what, GroupGate* gate) {
  const CommConfig& cfg = env.cfg;
  const int elem = dtype_size(cfg.dtype);
  const CommSize size = comm_size(Collective::kAllreduce, cfg.pair_bytes, elem, 2);
  auto buf = at::empty({size.count}, at::TensorOptions().dtype(comm_dtype(cfg.dtype)).device(env.device));
  const auto ab = p2p_direction(env, pg, buf, 0, 0, "p2p a->b of " + what);
  if (gate) gate->beat();
  const auto ba = p2p_direction(env, pg, buf, 1, 1, "p2p b->a of " + what);
  if (gate) gate->beat();
  const std::string arw = "allreduce of " + what;
  Op op(env, pg, Collective::kAllreduce, size);
  set_phase("warm-up of " + arw);
  for (int i = 0; i < cfg.warmup; ++i) op.run();
  long long wrong = -1;
  if (cfg.check) {
    set_phase("check of " + arw);
    wrong = op.check();
  }
  set_phase("measurement of " + arw);
  synchronize(env.device);
  barrier(pg, env.device, env.timeout);
  const double ar = time_per_op(env, cfg.iters, [&] { op.run(); });
  if (gate) gate->beat();
  return {ab.first,
          ba.first,
          ar,
          static_cast<double>(ab.second),
          static_cast<double>(ba.second),
          static_cast<double>(wrong)};
}

CommResult pair_row(const CommEnv& env, const PairsPlan& plan, int round, int a, int b, const std::string& collective,
                    int src) {
  const CommConfig& cfg = env.cfg;
  const int elem = dtype_size(cfg.dtype);
  const CommSize size = comm_size(Collective::kAllreduce, cfg.pair_bytes, elem, 2);
  CommResult row;
  row.collective = collective;
  row.dtype = cfg.dtype;
  row.redop = collective == "allreduce" ? cfg.op : "none";
  row.root = -1;
  row.bytes = size.bytes;
  row.count = size.count;
  row.world_size = 2;
  row.nodes = plan.hosts[a] == plan.hosts[b] ? 1 : 2;
  row.label = group_label(row.nodes, 2, env.device.is_cuda() ? 'G' : 'C');
  row.warmup = cfg.warmup;
  row.iters = cfg.iters;
  row.extra["pair"] = {plan.names[a], plan.names[b]};
  row.extra["hosts"] = {plan.hosts[a], plan.hosts[b]};
  row.extra["ranks"] = {plan.ranks[a], plan.ranks[b]};
  row.extra["round"] = round;
  if (src >= 0) {
    const int s = src == 0 ? a : b, d = src == 0 ? b : a;
    row.extra["direction"] = fmt::format("{}->{}", plan.names[s], plan.names[d]);
    row.extra["src_rank"] = plan.ranks[s];
    row.extra["dst_rank"] = plan.ranks[d];
  }
  return row;
}

}  // namespace

// Rank 0: a pair's bandwidths from both participants' measure_pair values (`va` of pair
// rank a, `vb` of b) into `pm`; with `rows`, its three result rows too (sendrecv a->b,
// b->a, allreduce).
void pair_measurement(const CommEnv& env, const PairsPlan& plan, const std::vector<double>& va,
                      const std::vector<double>& vb, PairMeasurement& pm, std::vector<CommResult>* rows) {
  const int a = pm.a, b = pm.b, k = pm.round;
  auto wrong = [](double x, double y) {
    return x < 0 && y < 0 ? -1LL : static_cast<long long>(std::max(0.0, x) + std::max(0.0, y));
  };
  // Point to point: the message has arrived when the receiver's recv returns, so its
  // time is the one that counts (the sender's may end early, with bytes still in
  // socket buffers); the larger of the two is kept as the max.
  for (int dir = 0; dir < 2; ++dir) {
    CommResult row = pair_row(env, plan, k, a, b, "sendrecv", dir);
    const double t_recv = dir == 0 ? vb[0] : va[1];
    const double t_send = dir == 0 ? va[0] : vb[1];
    row.time_us = t_recv * 1e6;
    row.time_us_max_over_ranks = std::max(t_recv, t_send) * 1e6;
    row.algbw_gbps = algbw_gbps(row.bytes, t_recv);
    row.busbw_gbps = row.algbw_gbps;  // nccl-tests' sendrecv: factor 1
    row.wrong = wrong(dir == 0 ? va[3] : va[4], dir == 0 ? vb[3] : vb[4]);
    row.extra["time_us_per_rank"] = {va[dir] * 1e6, vb[dir] * 1e6};
    row.extra["timing"] = env.device.is_cuda()
                              ? "the receiver's time per message: CUDA events around iters messages / iters"
                              : "the receiver's time per message: the median over iters messages, each "
                                "waited for";
    (dir == 0 ? pm.p2p_ab_gbps : pm.p2p_ba_gbps) = row.algbw_gbps;
    if (rows) rows->push_back(row);
  }
  CommResult row = pair_row(env, plan, k, a, b, "allreduce", -1);
  const double mean_s = (va[2] + vb[2]) / 2;  // nccl-tests: averaged over the ranks
  row.time_us = mean_s * 1e6;
  row.time_us_max_over_ranks = std::max(va[2], vb[2]) * 1e6;
  row.algbw_gbps = algbw_gbps(row.bytes, mean_s);
  row.busbw_gbps = row.algbw_gbps * busbw_factor(Collective::kAllreduce, 2);
  row.wrong = wrong(va[5], vb[5]);
  row.extra["time_us_per_rank"] = {va[2] * 1e6, vb[2] * 1e6};
  row.extra["timing"] = env.device.is_cuda() ? "CUDA events around iters back-to-back operations / iters"
                                             : "the median over iters operations, each waited for";
  pm.allreduce_busbw_gbps = row.busbw_gbps;
  if (rows) rows->push_back(row);
}

// The second pass of run_comm_pairs: every participant takes part (pair rank `me`); rank 0
// (gate set) fills out.measured's alone_* fields.
void confirm_suspects(const CommEnv& env, const PairsPlan& plan, const c10::intrusive_ptr<c10d::ProcessGroup>& all,
                      int me, GroupGate* gate, const CommCallbacks& cb, PairsOutcome& out) {
  const int runs = env.cfg.confirm_runs;
  if (runs < 1 || plan.names.size() < 3) return;  // two participants: nothing is compared
  // Rank 0 lists the suspects: [count, index of the pair in out.measured, a, b, ...].
  const size_t cap = static_cast<size_t>(kMaxPairConfirmations);
  std::vector<double> list(1 + 3 * cap, 0.0);
  if (env.launch.rank == 0) {
    const PairsAnalysis first = analyze_pairs(plan.names, out.measured, env.cfg.slow_fraction);
    size_t c = 0;
    for (size_t i = 0; i < out.measured.size() && c < cap; ++i)
      if (!first.first_slow[i].empty()) {
        list[1 + 3 * c] = static_cast<double>(i);
        list[2 + 3 * c] = out.measured[i].a;
        list[3 + 3 * c] = out.measured[i].b;
        ++c;
      }
    list[0] = static_cast<double>(c);
  }
  set_phase("the list of the pairs to measure again alone");
  list = allreduce_values(all, list, c10d::ReduceOp::SUM, env.device, env.timeout);  // rank 0's, to everyone
  const size_t count = static_cast<size_t>(list[0]);
  for (size_t c = 0; c < count; ++c) {
    const size_t i = static_cast<size_t>(list[1 + 3 * c]);
    const int a = static_cast<int>(list[2 + 3 * c]), b = static_cast<int>(list[3 + 3 * c]);
    set_phase(fmt::format("the start of the alone measurement of {} - {}", plan.names[a], plan.names[b]));
    barrier(all, env.device, env.timeout);  // nobody else measures meanwhile
    std::vector<double> best(kPairValues, -1.0);
    if (me == a || me == b) {
      const std::string what =
          fmt::format("{} B between {} and {} (alone)", env.cfg.pair_bytes, plan.names[a], plan.names[b]);
      auto store = c10::make_intrusive<c10d::PrefixStore>(fmt::format("pairs/c{}/{}-{}/", c, a, b), env.store);
      c10::intrusive_ptr<c10d::ProcessGroup> pg;
      {
        Deadline d("the store (rank 0), setting up the pair group of " + what, env.timeout);
        pg = make_process_group(env.backend, store, me == a ? 0 : 1, 2, env.device, env.timeout);
      }
      for (int r = 0; r < runs; ++r) {
        const auto v = measure_pair(env, pg, what, gate);
        for (size_t x = 0; x < 3; ++x) best[x] = best[x] < 0 ? v[x] : std::min(best[x], v[x]);  // times: the best
        for (size_t x = 3; x < kPairValues; ++x) best[x] = std::max(best[x], v[x]);             // #wrong: the worst
      }
      destroy_process_group(pg);
    }
    set_phase(fmt::format("the result gather of the alone measurement of {} - {}", plan.names[a], plan.names[b]));
    const auto got = gather_to_root(all, best, kPairValues, env.device, env.timeout);
    if (gate) gate->beat();
    if (env.launch.rank != 0) continue;
    PairMeasurement alone = out.measured.at(i);
    pair_measurement(env, plan, got[static_cast<size_t>(a)], got[static_cast<size_t>(b)], alone, nullptr);
    PairMeasurement& pm = out.measured[i];
    pm.alone_runs = runs;
    pm.alone_p2p_ab_gbps = alone.p2p_ab_gbps;
    pm.alone_p2p_ba_gbps = alone.p2p_ba_gbps;
    pm.alone_allreduce_busbw_gbps = alone.allreduce_busbw_gbps;
    if (cb.on_pair_alone) cb.on_pair_alone(pm);
  }
}

PairsOutcome run_comm_pairs(const CommEnv& env, const PairsPlan& plan, const CommCallbacks& cb) {
  PairsOutcome out;
  const int rank = env.launch.rank;
  const int P = static_cast<int>(plan.ranks.size());
  const auto it = std::find(plan.ranks.begin(), plan.ranks.end(), rank);
  const int me = it == plan.ranks.end() ? -1 : static_cast<int>(it - plan.ranks.begin());
  // Rank 0 beats after each direction, allreduce and round; a slow pair elsewhere may keep
  // it waiting at the round's gather up to the timeout, so the gate allows twice that.
  GroupGate gate(env.store, "comm/pairs", 2 * env.timeout, GroupGate::poll_for(env.launch.world_size));
  if (me < 0) {
    set_phase("the wait for the pair measurements (this rank is not its host's lowest)");
    gate.wait_done();
    return out;
  }
  try {
    set_phase("set-up of the group of the pair participants");
    auto all_store = c10::make_intrusive<c10d::PrefixStore>("pairs/all/", env.store);
    c10::intrusive_ptr<c10d::ProcessGroup> all;
    {
      Deadline d("the store (rank 0), setting up the group of the pair participants", env.timeout);
      all = make_process_group(env.backend, all_store, me, P, env.device, env.timeout);
    }
    const int elem = dtype_size(env.cfg.dtype);
    const CommSize size = comm_size(Collective::kAllreduce, env.cfg.pair_bytes, elem, 2);
    for (size_t k = 0; k < plan.rounds.size(); ++k) {
      const auto& round = plan.rounds[k];
      std::optional<PairIdx> mine;
      for (const auto& p : round)
        if (p.first == me || p.second == me) mine = p;
      set_phase(fmt::format("the start of round {} of the pairs", k));
      barrier(all, env.device, env.timeout);  // the round's pairs start together
      std::vector<double> values(kPairValues, -1.0);
      if (mine) {
        const auto [a, b] = *mine;
        const std::string what =
            fmt::format("{} B between {} and {} (round {})", size.bytes, plan.names[a], plan.names[b], k);
        set_phase("set-up of the pair group of " + what);
        auto store = c10::make_intrusive<c10d::PrefixStore>(fmt::format("pairs/r{}/{}-{}/", k, a, b), env.store);
        c10::intrusive_ptr<c10d::ProcessGroup> pg;
        {
          Deadline d("the store (rank 0), setting up the pair group of " + what, env.timeout);
          pg = make_process_group(env.backend, store, me == a ? 0 : 1, 2, env.device, env.timeout);
        }
        values = measure_pair(env, pg, what, rank == 0 ? &gate : nullptr);
        destroy_process_group(pg);
      }
      set_phase(fmt::format("the result gather of round {} of the pairs", k));
      const auto got = gather_to_root(all, values, kPairValues, env.device, env.timeout);
      if (rank == 0) gate.beat();
      if (rank != 0) continue;
      std::vector<CommResult> round_rows;
      for (const auto& [a, b] : round) {
        PairMeasurement pm;
        pm.a = a;
        pm.b = b;
        pm.round = static_cast<int>(k);
        pair_measurement(env, plan, got[static_cast<size_t>(a)], got[static_cast<size_t>(b)], pm, &round_rows);
        out.measured.push_back(pm);
      }
      for (const auto& r : round_rows) {
        out.rows.push_back(r);
        if (cb.on_row) cb.on_row(r);
      }
      if (cb.on_collective_done) cb.on_collective_done(round_rows);
    }
    confirm_suspects(env, plan, all, me, rank == 0 ? &gate : nullptr, cb, out);
    destroy_process_group(all);
    if (rank == 0) gate.done();
  } catch (const std::exception& e) {
    if (rank == 0) gate.fail(e.what(), env.launch.world_size - P);
    throw;
  }
  return out;
}

std::vector<CommResult> run_comm_sweep(const CommEnv& env, const CommCallbacks& cb) {
  std::vector<CommResult> rows;
  const int rank = env.launch.rank;
  for (int n : env.cfg.world_sizes) {
    const std::string name = fmt::format("comm/{}ranks", n);
    GroupGate gate(env.store, name, env.timeout, GroupGate::poll_for(env.launch.world_size));
    if (rank >= n) {
      set_phase(fmt::format("the wait for the group of {} ranks", n));
      gate.wait_done();
      continue;
    }
    try {
      set_phase(fmt::format("set-up of the group of {} ranks", n));
      auto group_store = c10::make_intrusive<c10d::PrefixStore>("group/" + name + "/", env.store);
      c10::intrusive_ptr<c10d::ProcessGroup> pg;
      {
        Deadline d("the store (rank 0), setting up the process group of " + name, env.timeout);
        pg = make_process_group(env.backend, group_store, rank, n, env.device, env.timeout);
      }
      for (Collective c : env.cfg.collectives) run_collective(env, pg, c, rank == 0 ? &gate : nullptr, cb, rows);
      destroy_process_group(pg);
      if (rank == 0) gate.done();
    } catch (const std::exception& e) {
      if (rank == 0) gate.fail(e.what(), env.launch.world_size - n);
      throw;
    }
  }
  return rows;
}

}  // namespace ddpbench
