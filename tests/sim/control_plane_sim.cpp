// The control plane of a `ddpbench run` sweep measured with N thin ranks on one machine
// (docs/results/control_plane_simulation.md): rank 0 is this process's main thread and serves
// the real c10d::TCPStore; ranks 1..N-1 are threads of one forked process (or of K, with
// --rank-procs K), each with its own TCPStore client. Nodes of 8 ranks (host "node<i>", local
// ranks 0..7). No model is built. Each phase records rank 0's wall time and its process's CPU
// time: rank 0's own work and the store server's, the part a cluster's rank-0 host carries
// (the other ranks' clients run on their own hosts there, here on the same 2 cores).
//
// Real (ddpbench's own code, unchanged): rendezvous(), gather_node_environments() on rank 0,
// make_group_store(), GroupGate (the wait of ranks outside a group), gather_to_root() (its
// tensors and c10d::ProcessGroup::gather call), RankStats::pack/unpack, make_row(),
// collect_telemetry(), attach_telemetry(), keep_per_rank_detail(), straggler_entry(),
// save_partial() after every row, commit_result(), finish_barrier().
// Stand-ins: the process groups are SimGroup below, a c10d backend whose gather and barrier
// exchange through shared memory (futexes), and whose creation does the store traffic of
// ProcessGroupNCCL's unique-id exchange (rank 0 sets a 128-byte key, every other rank gets
// it), not NCCL's own initialisation; a Gloo group of 4,096 ranks (a full mesh of TCP pairs)
// does not fit one machine. The per-rank payloads are synthetic, of realistic size: the
// RankStats of a 20-iteration series with every field set, a real CPU rank's telemetry
// (docs/examples/cluster-validation/straggler_cpu.json), and this host's real
// host_environment() for every node, padded to 8 KiB.
//
// Usage: control_plane_sim [--ranks N[,N...]] [--json FILE] [--out DIR] [--check-linear A,B]
//                          [--factor F] [--rank-procs K]
//   --ranks: sizes to simulate, each in a fresh process (default 64,256,1024,4096)
//   --check-linear A,B: simulate A and B and exit 1 unless, per rank, B's store keys, store
//     bytes in and out, and result-file bytes are within F (default 2) times A's.
//   --rank-procs: run ranks 1..N-1 in K processes instead of one (whole nodes each, K at most
//     the nodes): threads of one process share its scheduler, memory map and allocator,
//     which a cluster's ranks on their own hosts do not.
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <dlfcn.h>
#include <unistd.h>

#if __has_include(<torch/csrc/distributed/c10d/Backend.hpp>)
#include <torch/csrc/distributed/c10d/Backend.hpp>
#endif
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/config/run_config.hpp"
#include "core/result/per_rank_detail.hpp"
#include "core/result/result.hpp"
#include "core/stats/straggler.hpp"
#include "core/telemetry/telemetry.hpp"
#include "engine/bench/measure.hpp"
#include "engine/bench/sweep.hpp"
#include "engine/compat.hpp"
#include "engine/dist/collectives.hpp"
#include "engine/dist/process_group.hpp"
#include "engine/dist/rendezvous.hpp"
#include "engine/env_info.hpp"
#include "engine/run/launch.hpp"

namespace ddpbench {
namespace {

constexpr int kRanksPerNode = 8;
constexpr int kMaxGroups = 64;
constexpr size_t kMaxLen = 256;         // doubles a rank gathers at most in one call
constexpr int kIters = 20;              // `run`'s default measured iterations
constexpr size_t kNodeEnvBytes = 8192;  // a node's environment as published (kMaxNodeEnvBytes / 2)
const std::chrono::milliseconds kTimeout{600000};

// ---- the shared-memory stand-in backend ---------------------------------------------------

struct alignas(64) GroupBlock {
  std::atomic<uint32_t> arrive{0}, done{0}, bar{0};
};

struct Shared {
  GroupBlock blocks[kMaxGroups];
  /// Store traffic of every rank's TCPStore client (both processes): bytes sent (requests)
  /// and received (answers) on sockets whose peer is the store's port.
  std::atomic<uint64_t> store_sent{0}, store_received{0}, store_sends{0};
  /// steady_clock ns (CLOCK_MONOTONIC, the same in both processes) when the last rank other
  /// than 0 returned from rendezvous(), and when the last node published its environment.
  std::atomic<int64_t> last_joined_ns{0}, last_published_ns{0};
};

void note_latest(std::atomic<int64_t>& at) {
  const int64_t t = std::chrono::steady_clock::now().time_since_epoch().count();
  for (int64_t v = at.load(); v < t && !at.compare_exchange_weak(v, t);) {
  }
}

Shared* g_shared = nullptr;
double* g_data = nullptr;  // kMaxGroups x world x kMaxLen doubles
int g_world = 0;

int g_store_port = 0;
int rank_procs = 1;          // processes the ranks 1..N-1 run in (--rank-procs)
std::string g_store_server;  // rank 0's TCPStore server backend (Rendezvous::store_server)

// Counts `bytes` moved on `fd` when it is a client socket of the store (its peer's port is the
// store's); the answer is cached per descriptor (store sockets live until the end).
void count_io(int fd, ssize_t bytes, bool sent) {
  if (!g_shared || bytes <= 0 || fd < 0 || fd >= 65536) return;
  static std::atomic<int8_t> kind[65536];
  int8_t k = kind[fd].load(std::memory_order_relaxed);
  if (k == 0) {
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    int port = -1;  // the TCPStore client connects over IPv4 or IPv6 (a v4-mapped address)
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) == 0) {
      if (peer.ss_family == AF_INET) port = ntohs(reinterpret_cast<sockaddr_in*>(&peer)->sin_port);
      if (peer.ss_family == AF_INET6) port = ntohs(reinterpret_cast<sockaddr_in6*>(&peer)->sin6_port);
    }
    k = port == g_store_port ? 1 : 2;
    kind[fd].store(k, std::memory_order_relaxed);
  }
  if (k != 1) return;
  if (sent) {
    g_shared->store_sent.fetch_add(static_cast<uint64_t>(bytes), std::memory_order_relaxed);
    g_shared->store_sends.fetch_add(1, std::memory_order_relaxed);
  } else {
    g_shared->store_received.fetch_add(static_cast<uint64_t>(bytes), std::memory_order_relaxed);
  }
}

void futex_wait(std::atomic<uint32_t>* a, uint32_t v) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(a), FUTEX_WAIT, v, nullptr, nullptr, 0);
}
void futex_wake(std::atomic<uint32_t>* a) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(a), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}
void wait_at_least(std::atomic<uint32_t>* a, uint32_t target) {
  for (uint32_t v; (v = a->load()) < target;) futex_wait(a, v);
}

struct DoneWork : c10d::Work {
  bool isCompleted() override { return true; }
  bool wait(std::chrono::milliseconds) override { return true; }
};

template <typename T, typename = void>
struct has_set_backend : std::false_type {};
template <typename T>
struct has_set_backend<T, std::void_t<decltype(&T::setBackend)>> : std::true_type {};
template <typename T, bool backend>
struct pick_base {
  using type = c10d::ProcessGroup;
};
template <typename T>
struct pick_base<T, true> {
  using type = c10d::Backend;
};
// torch 1.13: a backend is a c10d::ProcessGroup; torch 2.x: a c10d::Backend in a ProcessGroup.
using SimBase = pick_base<c10d::ProcessGroup, has_set_backend<c10d::ProcessGroup>::value>::type;

/// The stand-in process group of `size` ranks (group `id`, the same on every rank): gather to
/// rank 0 and barrier through shared memory; created with ProcessGroupNCCL's store traffic.
class SimGroup : public SimBase {
 public:
  SimGroup(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, int id)
      : SimBase(rank, size), blk_(&g_shared->blocks[id]), data_(g_data + static_cast<size_t>(id) * g_world * kMaxLen) {
    // ProcessGroupNCCL::broadcastUniqueNCCLID: rank 0 sets the 128-byte ncclUniqueId under
    // "0" of the group's store, every other rank gets it (waiting for it).
    if (rank == 0) store->set("0", std::vector<uint8_t>(128, 7));
    else (void)store->get("0");
  }
  const std::string getBackendName() const override { return "sim"; }

  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions&) override {
    const auto len = static_cast<size_t>(inputs.at(0).numel());
    TORCH_CHECK(len <= kMaxLen, "SimGroup: gather of more than kMaxLen values");
    const uint32_t k = gathers_++;
    wait_at_least(&blk_->done, k);  // rank 0 read the previous one
    std::memcpy(data_ + static_cast<size_t>(getRank()) * kMaxLen, inputs[0].data_ptr<double>(), len * sizeof(double));
    const uint32_t all = (k + 1) * static_cast<uint32_t>(getSize());
    const uint32_t arrived = blk_->arrive.fetch_add(1) + 1;
    if (getRank() == 0) {
      wait_at_least(&blk_->arrive, all);
      for (int r = 0; r < getSize(); ++r)
        std::memcpy(outputs.at(0).at(static_cast<size_t>(r)).data_ptr<double>(),
                    data_ + static_cast<size_t>(r) * kMaxLen, len * sizeof(double));
      blk_->done.store(k + 1);
      futex_wake(&blk_->done);
    } else if (arrived == all) {
      futex_wake(&blk_->arrive);  // the last to arrive wakes rank 0, once
    }
    return c10::make_intrusive<DoneWork>();
  }

  // The last rank to arrive wakes the others, once: a wake on every arrival would wake every
  // waiting thread N times (N^2 wake-ups, which at 4,096 threads on 2 cores took seconds and
  // is no cost of the real code path).
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions&) override {
    const uint32_t k = barriers_++;
    const uint32_t all = (k + 1) * static_cast<uint32_t>(getSize());
    if (blk_->bar.fetch_add(1) + 1 == all) futex_wake(&blk_->bar);
    else wait_at_least(&blk_->bar, all);
    return c10::make_intrusive<DoneWork>();
  }

 private:
  GroupBlock* blk_;
  double* data_;
  uint32_t gathers_ = 0, barriers_ = 0;
};

c10::intrusive_ptr<c10d::ProcessGroup> sim_group(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                                 int id) {
  auto b = c10::make_intrusive<SimGroup>(store, rank, size, id);
  return compat::as_process_group(b, store, rank, size, c10::Device(c10::kCPU), /*is_nccl=*/false);
}

// ---- rank 0's counters ----------------------------------------------------------------------

struct Counters {
  double t = 0;             ///< s since the start
  double cpu = 0;           ///< s of CPU time of this process (rank 0 and the store server), all threads
  long long sent = 0;       ///< bytes every rank's store client sent (requests)
  long long received = 0;   ///< bytes they received (answers)
  long long hwm_bytes = 0;  ///< peak resident memory of this process
  long long keys = 0;       ///< keys the store holds
};

long long proc_field(const char* file, const char* name) {
  std::ifstream in(file);
  std::string line;
  const size_t n = std::strlen(name);
  while (std::getline(in, line))
    if (line.compare(0, n, name) == 0) return std::atoll(line.c_str() + n);
  return 0;
}

using Clock = std::chrono::steady_clock;
Clock::time_point g_t0;

Counters now(const c10::intrusive_ptr<c10d::Store>& store) {
  Counters c;
  c.t = std::chrono::duration<double>(Clock::now() - g_t0).count();
  c.cpu = process_cpu_s();
  c.sent = static_cast<long long>(g_shared->store_sent.load());
  c.received = static_cast<long long>(g_shared->store_received.load());
  c.hwm_bytes = proc_field("/proc/self/status", "VmHWM:") * 1024;
  if (store) c.keys = store->getNumKeys();
  return c;
}

nlohmann::json delta(const Counters& a, const Counters& b) {
  return {{"s", b.t - a.t},
          {"rank0_process_cpu_s", b.cpu - a.cpu},
          {"store_request_bytes", b.sent - a.sent},
          {"store_answer_bytes", b.received - a.received},
          {"keys", b.keys},
          {"peak_rss_bytes", b.hwm_bytes}};
}

// ---- synthetic per-rank payloads -------------------------------------------------------------

nlohmann::json g_telemetry;  // one rank's sampled telemetry (a real CPU rank's)
nlohmann::json g_node_env;   // this host's host_environment()

RankPlacement placement_of(int r) {
  RankPlacement p;
  p.rank = r;
  p.local_rank = r % kRanksPerNode;
  p.host = fmt::format("node{:04d}", r / kRanksPerNode);
  p.device = fmt::format("cuda:{}", p.local_rank);
  p.gpu_name = "NVIDIA H100 80GB HBM3";
  p.gpu_uuid = fmt::format("GPU-{:08x}-1111-2222-3333-{:012x}", r, r * 7919);
  p.bus_id = fmt::format("0000:{:02x}:00.0", 0x18 + 0x10 * p.local_rank);
  p.cpus = fmt::format("{}-{}", p.local_rank * 12, p.local_rank * 12 + 11);
  return p;
}

LaunchInfo launch_of(int r, int world, int port) {
  LaunchInfo li;
  li.launcher = Launcher::kTorchrun;
  li.rank = r;
  li.world_size = world;
  li.local_rank = r % kRanksPerNode;
  li.local_world_size = kRanksPerNode;
  li.master_addr = "127.0.0.1";
  li.master_port = port;
  return li;
}

RankStats synthetic_stats(int r) {
  RankStats s;
  for (int i = 0; i < kIters; ++i) s.samples_s.push_back(0.1 + 1e-4 * ((r * 31 + i * 17) % 97));
  for (auto& b : s.breakdown_s) b = 0.01 + 1e-5 * (r % 13);
  s.peak_memory_bytes = 2.0e10;
  s.peak_allocated_bytes = 1.9e10;
  s.peak_reserved_bytes = 2.1e10;
  s.peak_rss_bytes = 3.0e9;
  s.memory_reset_ok = 1;
  return s;
}

// ---- one rank's control plane of a sweep -----------------------------------------------------

struct RankResult {
  nlohmann::json phases = nlohmann::json::object();
  nlohmann::json rows = nlohmann::json::array();
  long long result_bytes = 0;
};

RankResult run_rank(int r, int world, int port, const std::string& json_path) {
  RankResult out;
  const LaunchInfo li = launch_of(r, world, port);
  JoinRequest join;
  join.job_id = "sim";
  join.config = std::string(600, 'c');  // the run configuration as the ranks compare it
  join.placement = placement_of(r);
  const bool root = r == 0;
  Counters c0 = root ? now(c10::intrusive_ptr<c10d::Store>()) : Counters{};

  // 1. Rendezvous (real).
  Rendezvous rv = rendezvous(li, join, kTimeout);
  if (!root) note_latest(g_shared->last_joined_ns);
  const auto store = rv.store;
  Counters c1 = root ? now(store) : Counters{};
  if (root) out.phases["rendezvous"] = delta(c0, c1);
  if (root) g_store_server = rv.store_server;
  if (root && c1.sent == 0)
    throw std::runtime_error("no store traffic was counted: libtorch did not bind to this executable's send/recv");

  // 2. Node environments: each node's local rank 0 publishes its environment (the key and
  // bytes gather_node_environments publishes), rank 0 gathers them (real).
  NodeEnvironments nodes;
  if (!root && li.local_rank == 0) {
    nlohmann::json mine = g_node_env;
    mine["host"] = join.placement.host;
    const std::string text = mine.dump();
    store->set(fmt::format("node/{}", r), std::vector<uint8_t>(text.begin(), text.end()));
    note_latest(g_shared->last_published_ns);
  }
  if (root) {
    nodes = gather_node_environments(store, li, current_env(), rv.placements, kTimeout, rv.prefix);
    (void)job_environment_facts(li, join.job_id, BackendKind::kNccl, true, 1, rv.placements, current_env(), nodes,
                                rv.store_server);
  }
  Counters c2 = root ? now(store) : Counters{};
  if (root) {
    out.phases["node_environments"] = delta(c1, c2);
    auto since_start = [](int64_t ns) {
      return std::chrono::duration<double>(Clock::time_point(Clock::duration(ns)) - g_t0).count();
    };
    // When rank 0 returned from the rendezvous and from the node gather, against when the
    // last other rank joined and the last node published: the rest is rank 0's own reading.
    out.phases["rendezvous"]["last_other_rank_joined_s"] = since_start(g_shared->last_joined_ns.load());
    out.phases["node_environments"]["last_node_published_s"] = since_start(g_shared->last_published_ns.load());
    out.phases["node_environments"]["rank0_started_s"] = c1.t;
  }

  SweepEnv env;
  env.launch = li;
  env.cfg.models = {"resnet50"};
  for (int n = 1; n <= world; n *= 2) env.cfg.world_sizes.push_back(n);
  env.backend = BackendKind::kNccl;
  env.timeout = kTimeout;
  env.store = store;
  env.store_prefix = rv.prefix;
  env.placements = rv.placements;

  ResultFile rf =
      new_result_file("run", {"ddpbench", "run", "--model", "resnet50"}, 1 + (int)env.cfg.world_sizes.size());
  if (root) {
    rf.environment = environment_json(job_environment_facts(li, join.job_id, BackendKind::kNccl, true, 1, rv.placements,
                                                            current_env(), nodes, rv.store_server));
  }

  // 3. The world group and the no-DDP baseline's gather of every rank's compute p50s.
  auto world_pg = sim_group(c10::make_intrusive<c10d::PrefixStore>("group/world/", store), r, world, 0);
  barrier(world_pg, env.device, kTimeout);
  const std::vector<double> mine{0.1 + 1e-4 * (r % 50), 0.1, 0.1};
  const auto base = gather_to_root(world_pg, mine, mine.size(), env.device, kTimeout);
  Counters c3 = root ? now(store) : Counters{};
  if (root) out.phases["world_group_and_baseline_gather"] = delta(c2, c3);

  // 4. One DDP row per group size n: ranks outside wait at the group's gate (real GroupGate).
  int gid = 1;
  double rows_s = 0;
  BenchResult largest;
  for (int n : env.cfg.world_sizes) {
    const std::string name = fmt::format("resnet50/ddp{}", n);
    GroupGate gate(store, name, kTimeout, GroupGate::poll_for(world));
    const int id = gid++;
    if (r >= n) {
      gate.wait_done();
      continue;
    }
    Counters a = root ? now(store) : Counters{};
    auto pg = sim_group(make_group_store(env, name), r, n, id);
    Counters b = root ? now(store) : Counters{};
    // publish_telemetry's key and bytes, then the stats gather (real gather_to_root).
    const std::string tkey = "telemetry/" + name;
    {
      const std::string text = g_telemetry.dump();
      store->set(fmt::format("{}/{}", tkey, r), std::vector<uint8_t>(text.begin(), text.end()));
    }
    const auto payload = synthetic_stats(r).pack();
    const auto gathered = gather_to_root(pg, payload, payload.size(), env.device, kTimeout);
    Counters c = root ? now(store) : Counters{};
    if (root) {
      std::vector<RankStats> stats;
      for (const auto& v : gathered) stats.push_back(RankStats::unpack(v, kIters));
      BenchResult row = make_row(env, "resnet50", true, n, 32, 1, stats, Stopping{}, kIters);
      Counters d = now(store);
      attach_telemetry(env, row, collect_telemetry(env, tkey, n));
      add_row_warnings(env, row);
      row.group = name;
      keep_per_rank_detail(row, false);
      Counters e = now(store);
      rf.results.push_back(row);
      rf.results.back().launch = {{"job_id", join.job_id}, {"started_utc", rf.created_utc}};
      save_partial(rf, json_path);
      Counters f = now(store);
      gate.done();
      Counters g = now(store);
      out.rows.push_back(
          {{"n", n},
           {"group_creation", delta(a, b)},
           {"stats_gather", delta(b, c)},
           {"make_row", delta(c, d)},
           {"telemetry_collect_and_attach", delta(d, e)},
           {"save_partial", delta(e, f)},
           {"partial_bytes",
            static_cast<long long>(std::ifstream(partial_path(json_path), std::ios::binary | std::ios::ate).tellg())},
           {"total", delta(a, g)}});
      rows_s += g.t - a.t;
      if (n == world) largest = row;
    }
    destroy_process_group(pg);
  }
  Counters c4 = root ? now(store) : Counters{};
  if (root) out.phases["rows"] = delta(c3, c4);

  // 5. Straggler scores over every rank (real core/stats), then the result file (real).
  if (root) {
    std::vector<double> compute(static_cast<size_t>(world));
    std::vector<std::pair<double, double>> halves(static_cast<size_t>(world));
    for (size_t q = 0; q < compute.size(); ++q) {
      compute[q] = base[q][0];
      halves[q] = {base[q][1], base[q][2]};
    }
    const std::vector<RankScoreInput> in = straggler_inputs(rv.placements, compute, halves, &largest);
    rf.stragglers.push_back(straggler_entry("resnet50", 32, world, in, 0.95));
    Counters c5 = now(store);
    out.phases["stragglers"] = delta(c4, c5);
    commit_result(rf, json_path, /*overwrite=*/true);
    Counters c6 = now(store);
    out.phases["result_commit"] = delta(c5, c6);
    out.result_bytes = static_cast<long long>(std::ifstream(json_path, std::ios::binary | std::ios::ate).tellg());
  }
  Counters c7 = root ? now(store) : Counters{};
  finish_barrier(store, li, kTimeout);
  destroy_process_group(world_pg);
  if (root) {
    Counters c8 = now(store);
    out.phases["finish_barrier"] = delta(c7, c8);
    out.phases["total"] = delta(c0, c8);
  }
  return out;
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

void raise_nofile() {
  rlimit rl{};
  ::getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &rl);
}

// One size, in this (fresh) process: ranks 1..N-1 in a forked child, rank 0 here. Writes
// the measurement as JSON to `report`.
int simulate(int world, const std::string& dir, const std::string& report) {
  raise_nofile();
  const size_t data_bytes = static_cast<size_t>(kMaxGroups) * world * kMaxLen * sizeof(double);
  void* mem = ::mmap(nullptr, sizeof(Shared) + data_bytes, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) {
    std::perror("mmap");
    return 1;
  }
  g_shared = new (mem) Shared();
  g_data = reinterpret_cast<double*>(static_cast<char*>(mem) + sizeof(Shared));
  g_world = world;
  const int port = free_port();
  g_store_port = port;
  const std::string json_path = fmt::format("{}/sim-{}.json", dir, world);
  std::remove(json_path.c_str());
  // Ranks 1..N-1 in `procs` forked processes of whole nodes each (process i runs the ranks
  // [first(i), first(i + 1))); at most one process per node.
  const int nodes = (world + kRanksPerNode - 1) / kRanksPerNode;
  const int procs = std::max(1, std::min(rank_procs, nodes));
  auto first = [&](int i) {
    if (i == procs) return world;
    return std::max(1, static_cast<int>(static_cast<long long>(nodes) * i / procs) * kRanksPerNode);
  };
  std::vector<pid_t> others;
  for (int i = 0; i < procs; ++i) {
    const int lo = first(i), hi = first(i + 1);
    if (lo >= hi) continue;
    const pid_t pid = ::fork();
    if (pid == 0) {
      std::vector<std::thread> ts;
      std::atomic<int> failed{0};
      for (int r = lo; r < hi; ++r)
        ts.emplace_back([&, r] {
          try {
            run_rank(r, world, port, "");
          } catch (const std::exception& e) {
            if (failed.fetch_add(1) == 0) std::cerr << "rank " << r << ": " << e.what() << "\n";
          }
        });
      for (auto& t : ts) t.join();
      std::cout.flush();
      ::_exit(failed.load() ? 1 : 0);
    }
    others.push_back(pid);
  }
  g_t0 = Clock::now();
  RankResult res;
  try {
    res = run_rank(0, world, port, json_path);
  } catch (const std::exception& e) {
    std::cerr << "rank 0: " << e.what() << "\n";
    for (pid_t pid : others) ::kill(pid, SIGKILL);
    for (pid_t pid : others) ::waitpid(pid, nullptr, 0);
    return 1;
  }
  int status = 0;
  for (pid_t pid : others) {
    int st = 0;
    ::waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) status = st ? st : 1;
  }
  nlohmann::json j = {{"ranks", world},
                      {"ranks_per_node", kRanksPerNode},
                      {"phases", res.phases},
                      {"rows", res.rows},
                      {"result_bytes", res.result_bytes},
                      {"telemetry_bytes_per_rank", g_telemetry.dump().size()},
                      {"node_env_bytes_per_node", g_node_env.dump().size()},
                      {"stats_payload_doubles", synthetic_stats(0).pack().size()},
                      {"rank_processes", static_cast<int>(others.size())},
                      {"store_server", g_store_server},
                      {"others_exit", WIFEXITED(status) ? WEXITSTATUS(status) : -1}};
  std::ofstream(report) << j.dump(1) << "\n";
  release_stores();
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

// Runs simulate(world) in a fresh child process (its own peak memory); returns its JSON.
nlohmann::json simulate_in_child(int world, const std::string& dir) {
  const std::string report = fmt::format("{}/sim-{}.report.json", dir, world);
  std::remove(report.c_str());
  std::cout.flush();
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(simulate(world, dir, report));
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(fmt::format("the simulation of {} ranks failed (status {})", world, status));
  std::ifstream in(report);
  return nlohmann::json::parse(in);
}

double mib(double b) { return b / (1024.0 * 1024.0); }

std::string table(const std::vector<nlohmann::json>& runs) {
  std::ostringstream o;
  o << "| N | phase | s | rank-0 process CPU s | store request bytes | store answer bytes | keys after | rank-0 peak "
       "RSS MiB |\n|---:|---|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& j : runs) {
    for (const char* p : {"rendezvous", "node_environments", "world_group_and_baseline_gather", "rows", "stragglers",
                          "result_commit", "finish_barrier", "total"}) {
      const auto& d = j["phases"][p];
      o << fmt::format("| {} | {} | {:.3f} | {:.3f} | {} | {} | {} | {:.0f} |\n", j["ranks"].get<int>(), p,
                       d["s"].get<double>(), d["rank0_process_cpu_s"].get<double>(),
                       d["store_request_bytes"].get<long long>(), d["store_answer_bytes"].get<long long>(),
                       d["keys"].get<long long>(), mib(d["peak_rss_bytes"].get<double>()));
    }
  }
  o << "\n| N | row of N ranks: s | group creation s | stats gather s | make_row s | telemetry s | save_partial s | "
       "result file bytes | bytes per rank |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& j : runs) {
    const auto& last = j["rows"].back();
    o << fmt::format("| {} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {} | {:.0f} |\n",
                     j["ranks"].get<int>(), last["total"]["s"].get<double>(), last["group_creation"]["s"].get<double>(),
                     last["stats_gather"]["s"].get<double>(), last["make_row"]["s"].get<double>(),
                     last["telemetry_collect_and_attach"]["s"].get<double>(), last["save_partial"]["s"].get<double>(),
                     j["result_bytes"].get<long long>(), j["result_bytes"].get<double>() / j["ranks"].get<double>());
  }
  return o.str();
}

// Per-rank measures compared across sizes: counts and bytes, never wall time.
std::vector<std::pair<std::string, double>> per_rank(const nlohmann::json& j) {
  const double n = j["ranks"].get<double>();
  const auto& t = j["phases"]["total"];
  return {{"store keys", t["keys"].get<double>() / n},
          {"store request bytes", t["store_request_bytes"].get<double>() / n},
          {"store answer bytes", t["store_answer_bytes"].get<double>() / n},
          {"result-file bytes", j["result_bytes"].get<double>() / n}};
}

}  // namespace
}  // namespace ddpbench

// Every TCPStore client's send and recv pass here (libtorch's c10d calls ::send / ::recv);
// the executable exports them (CMake: --export-dynamic-symbol), so libtorch binds to these.
extern "C" ssize_t send(int fd, const void* buf, size_t n, int flags) {
  using Fn = ssize_t (*)(int, const void*, size_t, int);
  static const Fn real = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, "send"));
  const ssize_t r = real(fd, buf, n, flags);
  ddpbench::count_io(fd, r, true);
  return r;
}
extern "C" ssize_t recv(int fd, void* buf, size_t n, int flags) {
  using Fn = ssize_t (*)(int, void*, size_t, int);
  static const Fn real = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, "recv"));
  const ssize_t r = real(fd, buf, n, flags);
  ddpbench::count_io(fd, r, false);
  return r;
}

int main(int argc, char** argv) {
  using namespace ddpbench;
  std::vector<int> sizes{64, 256, 1024, 4096};
  std::string json_out, dir = "/tmp";
  std::vector<int> check;
  double factor = 2.0;
  auto ints = [](const std::string& s) {
    std::vector<int> v;
    std::stringstream ss(s);
    for (std::string x; std::getline(ss, x, ',');) v.push_back(std::stoi(x));
    return v;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const std::string v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--ranks") sizes = ints(v), ++i;
    else if (a == "--json") json_out = v, ++i;
    else if (a == "--out") dir = v, ++i;
    else if (a == "--check-linear") check = ints(v), ++i;
    else if (a == "--factor") factor = std::stod(v), ++i;
    else if (a == "--rank-procs") rank_procs = std::stoi(v), ++i;
    else {
      std::cerr << "usage: control_plane_sim [--ranks N,...] [--json FILE] [--out DIR] [--check-linear A,B] "
                   "[--factor F] [--rank-procs K]\n";
      return 2;
    }
  }
  if (!check.empty()) sizes = check;
  std::error_code made;
  std::filesystem::create_directories(dir, made);  // --out: the result files' folder
  compat::quiet_torch_logs();
  // The payloads, made before any rank starts.
  {
    std::ifstream in(std::string(DDPBENCH_SOURCE_DIR) + "/docs/examples/cluster-validation/straggler_cpu.json");
    const auto f = nlohmann::json::parse(in);
    g_telemetry = f["results"].back()["ranks"][0]["telemetry"]["sampled"];
    g_node_env = host_environment(current_env());
    // A GPU node's probe (nvidia-smi's GPUs and topology, versions) is kilobytes where this
    // machine's is a few hundred bytes: padded to kNodeEnvBytes, half the bound a node may publish.
    const size_t have = g_node_env.dump().size();
    if (have < kNodeEnvBytes) g_node_env["sim_padding"] = std::string(kNodeEnvBytes - have - 20, 'x');
  }
  std::vector<nlohmann::json> runs;
  try {
    for (int n : sizes) {
      std::cerr << "simulating " << n << " ranks...\n";
      runs.push_back(simulate_in_child(n, dir));
    }
  } catch (const std::exception& e) {
    std::cerr << "control_plane_sim: " << e.what() << "\n";
    return 1;
  }
  std::cout << table(runs);
  if (!json_out.empty()) std::ofstream(json_out) << nlohmann::json(runs).dump(1) << "\n";
  if (check.size() == 2) {
    bool ok = true;
    const auto a = per_rank(runs[0]), b = per_rank(runs[1]);
    for (size_t i = 0; i < a.size(); ++i) {
      const bool fine = b[i].second <= factor * a[i].second;
      ok = ok && fine;
      std::cout << fmt::format("{}: {} per rank at N={}: {:.1f}, at N={}: {:.1f} ({:.2f}x; limit {:g}x)\n",
                               fine ? "linear" : "NOT LINEAR", a[i].first, check[0], a[i].second, check[1], b[i].second,
                               b[i].second / a[i].second, factor);
    }
    std::cout << (ok ? "control plane grows linearly\n" : "control plane grows faster than linearly\n");
    return ok ? 0 : 1;
  }
  return 0;
}
