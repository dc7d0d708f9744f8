#include "engine/dist/rendezvous.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <c10/util/Exception.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <random>
#include <thread>

#include "core/launch/watchdog.hpp"
#include "core/util/errors.hpp"
#include "engine/compat.hpp"
#include "engine/dist/process_group.hpp"
#include "engine/dist/store_reads.hpp"

namespace ddpbench {
namespace {

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string text(const std::vector<uint8_t>& v) { return {v.begin(), v.end()}; }

std::string random_token() {
  std::random_device rd;
  const unsigned long long hi = rd(), lo = rd();
  return fmt::format("{:016x}", (hi << 32) ^ lo ^ (static_cast<unsigned long long>(::getpid()) << 16));
}

std::string peer(const LaunchInfo& li) { return fmt::format("{}:{}", li.master_addr, li.master_port); }

// "1, 3, 7 and 12 more": the first 8 of `ranks`.
std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size() && i < 8; ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > 8) out += fmt::format(" and {} more", ranks.size() - 8);
  return out;
}

// TCPStore's reasons, in words: its receive timeout says only "Socket Timeout".
std::string reason(const std::exception& e) {
  const std::string what = first_line(e.what());
  return what.find("Socket Timeout") != std::string::npos ? "connected, but it sent no answer" : what;
}

bool mentions(const std::string& what, std::initializer_list<const char*> needles) {
  for (const char* n : needles)
    if (what.find(n) != std::string::npos) return true;
  return false;
}

// Rank 0's read of every rank's placement ("member/<rank>" under `prefix`), in rank order.
// One get per rank is a round trip each; a TCPStore server that polls every connection per
// request (torch 1.13's) makes each cost O(connections), so N of them in a row cost O(N^2):
// 27 of the rendezvous's 37 s at 4,096 ranks in the control-plane simulation
// (docs/results/control_plane_simulation.md). From kParallelReadKeys ranks on (so the
// simulation of 256 ranks in ctest reads this way) read_keys reads them over connections of
// its own at the same time.
std::vector<RankPlacement> read_placements(const LaunchInfo& li, const c10::intrusive_ptr<c10d::Store>& store,
                                           const std::string& prefix, std::chrono::milliseconds timeout) {
  std::vector<std::string> keys;
  for (int r = 0; r < li.world_size; ++r) keys.push_back(fmt::format("member/{}", r));
  std::vector<RankPlacement> out;
  for (const auto& v : read_keys(store, StoreEndpoint{li, prefix}, keys, false, timeout))
    out.push_back(nlohmann::json::parse(text(v)).get<RankPlacement>());
  return out;
}

const char* const kRefusedCount = "ddpbench/refused";
// From this many ranks on, rank 0 says when its store server is the classic poll() one.
constexpr int kPollServerNoteRanks = 1024;
std::string refused_key(int rank) { return fmt::format("ddpbench/refused/{}", rank); }

// Leaves `line` for rank 0 (tell_rank0_refused); never throws.
void leave_refusal(const c10::intrusive_ptr<c10d::Store>& store, int rank, const std::string& line) {
  try {
    store->set(refused_key(rank), bytes(line.substr(0, 4096)));
    store->add(kRefusedCount, 1);
  } catch (...) {  // c10::Error, std::exception: the store went away
  }
}

}  // namespace

void tell_rank0_refused(const LaunchInfo& li, const std::string& line, std::chrono::milliseconds wait) {
  if (li.rank == 0) return;
  compat::quiet_torch_logs();  // c10d's connect retries print otherwise (this may run before run_this_rank)
  try {
    check_master_addr(li.master_addr);
    leave_refusal(connect_store(li, wait), li.rank, line);
  } catch (...) {  // c10::Error, std::exception: rank 0 is not there to be told
  }
}

void check_serving_addr(const LaunchInfo& li) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(li.master_addr.c_str(), nullptr, &hints, &res) != 0 || !res) return;  // check_master_addr's
  bool local = false, unknown = false;
  for (const addrinfo* a = res; a && !local; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      unknown = true;
      continue;
    }
    sockaddr_storage addr{};
    std::memcpy(&addr, a->ai_addr, std::min<size_t>(a->ai_addrlen, sizeof addr));
    if (addr.ss_family == AF_INET) reinterpret_cast<sockaddr_in*>(&addr)->sin_port = 0;
    if (addr.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), a->ai_addrlen) == 0) local = true;
    else if (errno != EADDRNOTAVAIL) unknown = true;  // EACCES, a family this host lacks: not ours to judge
    ::close(fd);
  }
  ::freeaddrinfo(res);
  if (!local && !unknown)
    throw UsageError(
        fmt::format("MASTER_ADDR '{}' is not an address of this host, and rank 0 serves the rendezvous there; set "
                    "MASTER_ADDR to rank 0's host name or IP address (the same on every rank)",
                    li.master_addr));
}

void check_master_addr(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (res) ::freeaddrinfo(res);
  if (rc != 0)
    throw UsageError(fmt::format("MASTER_ADDR '{}' does not resolve ({}); set it to rank 0's host name or IP address",
                                 host, ::gai_strerror(rc)));
}

Rendezvous rendezvous(const LaunchInfo& li, const JoinRequest& me, std::chrono::milliseconds timeout) {
  set_phase("rendezvous");
  check_master_addr(li.master_addr);
  const std::string hint = fmt::format(
      "; check that rank 0 runs at {} (MASTER_ADDR, MASTER_PORT) and that no other "
      "program listens there",
      peer(li));
  const std::string server = fmt::format("the rendezvous store at {}", peer(li));
  const bool serves = li.rank == 0 && !li.use_agent_store;
  if (serves) check_serving_addr(li);

  c10::intrusive_ptr<c10d::Store> raw;
  {
    Deadline d(server, timeout, hint);
    try {
      raw = connect_store(li, timeout);
    } catch (const UsageError&) {
      throw;  // the peer is not a TCPStore (check_store_peer): its line names the peer and the fix
    } catch (const std::exception& e) {
      const std::string what = first_line(e.what());
      if (serves && mentions(what, {"Address already in use", "errno: 98", "EADDRINUSE"}))
        throw UsageError(
            fmt::format("rank 0 cannot serve the rendezvous on {}: the port is already in use (another "
                        "job or program); choose a free MASTER_PORT",
                        peer(li)));
      if (serves)
        throw UsageError(
            fmt::format("rank 0 cannot serve the rendezvous on {} ({}); set MASTER_ADDR to an address "
                        "of this host and MASTER_PORT to a free port",
                        peer(li), what));
      throw std::runtime_error(fmt::format("rank {}: {} did not answer within --timeout {:g} s ({}){}", li.rank, server,
                                           std::chrono::duration<double>(timeout).count(), reason(e), hint));
    }
  }
  const std::string tag = "ddpbench/";
  const std::string store_server = serves ? compat::tcp_store_server_backend(raw) : "";
  if (store_server == "poll" && li.world_size >= kPollServerNoteRanks)
    std::cerr << fmt::format(
        "ddpbench: note: rank 0 serves the store with PyTorch's classic TCPStore server (this torch has no libuv, or "
        "USE_LIBUV=0), which polls every connection at each request: its work grows with the square of the ranks "
        "(rank 0's CPU in the rendezvous grew 13 to 16 times for 4 times the ranks, from 1,024 to 4,096, in ddpbench's "
        "control-plane simulation); a torch with libuv (PyTorch's pip wheels since 2.4) serves {} ranks with an "
        "event loop\n",
        li.world_size);

  // 1. The job record, published by rank 0.
  nlohmann::json job;
  if (li.rank == 0) {
    job = {{"token", random_token()}, {"job_id", me.job_id},       {"world_size", li.world_size},
           {"config", me.config},     {"host", me.placement.host}, {"pid", static_cast<long long>(::getpid())}};
    Deadline d(server, timeout, hint);
    raw->set(tag + "job", bytes(job.dump()));
  } else {
    Deadline d(server, timeout, hint);
    try {
      job = nlohmann::json::parse(text(raw->get(tag + "job")));
    } catch (const nlohmann::json::exception&) {
      throw UsageError(
          fmt::format("rank {}: {} holds no ddpbench job record (another program uses the store?); "
                      "choose a free MASTER_PORT",
                      li.rank, server));
    } catch (const std::exception& e) {
      throw std::runtime_error(
          fmt::format("rank {}: {} did not answer within --timeout {:g} s (rank 0 published no "
                      "job: {}){}",
                      li.rank, server, std::chrono::duration<double>(timeout).count(), reason(e), hint));
    }
  }

  // 2. Does this rank belong to that job?
  const std::string their_id = job.value("job_id", std::string());
  const int their_world = job.value("world_size", -1);
  const std::string owner =
      fmt::format("rank 0 pid {} on {}", job.value("pid", -1LL), job.value("host", std::string("?")));
  if (!me.job_id.empty() && !their_id.empty() && me.job_id != their_id)
    throw UsageError(
        fmt::format("rank {}: the rendezvous at {} belongs to another job (job id {}, {}; this rank's "
                    "job id is {}); give each job its own MASTER_PORT",
                    li.rank, peer(li), their_id, owner, me.job_id));
  if (their_world != li.world_size)
    throw UsageError(
        fmt::format("rank {}: the rendezvous at {} is for {} ranks, this rank was started for {} "
                    "(another job, or a different WORLD_SIZE); give each job its own MASTER_PORT and "
                    "every rank the same world size",
                    li.rank, peer(li), their_world, li.world_size));
  if (job.value("config", std::string()) != me.config) {
    // This job's rank 0 (the job id and world size agree): it is told, so it does not wait.
    const std::string why =
        fmt::format("it was started with other flags than rank 0 ({}); give every rank the same command line", owner);
    leave_refusal(raw, li.rank, why);
    throw UsageError(fmt::format("rank {}: {}", li.rank, why));
  }

  // 3.-4. Claim the rank, publish the placement, be counted.
  const std::string token = job.at("token").get<std::string>();
  auto store = c10::make_intrusive<c10d::PrefixStore>(tag + token, raw);
  {
    Deadline d(server, timeout, hint);
    if (store->add(fmt::format("claim/{}", li.rank), 1) > 1)
      throw UsageError(
          fmt::format("rank {}: rank {} of the job at {} ({}) is already taken: another job shares this "
                      "port, or two ranks were given RANK={}; give each job its own MASTER_PORT (set "
                      "DDPBENCH_JOB_ID to one value per job when starting ranks by hand)",
                      li.rank, li.rank, peer(li), owner, li.rank));
    store->set(fmt::format("member/{}", li.rank), bytes(nlohmann::json(me.placement).dump()));
    store->add("joined", 1);
  }

  Rendezvous out;
  out.store = store;
  out.token = token;
  out.store_server = store_server;
  if (li.rank != 0) return out;

  // Rank 0 waits for everyone (its own store: these calls are answered in-process), and
  // for a rank that refused its input and said so (tell_rank0_refused). Torchrun's agent
  // store outlives a launch: only refusals after this one's start count there.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int64_t joined = 0;
  auto poll = std::chrono::milliseconds(20);
  const int64_t refusals_before = li.use_agent_store ? raw->add(kRefusedCount, 0) : 0;
  while ((joined = store->add("joined", 0)) < li.world_size) {
    if (raw->add(kRefusedCount, 0) > refusals_before)
      for (int r = 1; r < li.world_size; ++r)
        if (!store->check({fmt::format("member/{}", r)}) && raw->check({refused_key(r)}))
          throw UsageError(fmt::format("rank {} refused its input: {}", r, text(raw->get(refused_key(r)))));
    if (std::chrono::steady_clock::now() > deadline) {
      std::vector<int> missing;
      for (int r = 0; r < li.world_size; ++r)
        if (!store->check({fmt::format("member/{}", r)})) missing.push_back(r);
      throw std::runtime_error(fmt::format(
          "rank 0: rank(s) {} of {} did not join the rendezvous at {} within --timeout {:g} s; start every rank with "
          "the same MASTER_ADDR and MASTER_PORT (or raise --timeout when ranks start slowly)",
          rank_list(missing), li.world_size, peer(li), std::chrono::duration<double>(timeout).count()));
    }
    std::this_thread::sleep_for(poll);
    poll = std::min(poll * 2, std::chrono::milliseconds(200));
  }
  out.prefix = tag + token;
  out.placements = read_placements(li, store, out.prefix, timeout);
  return out;
}

}  // namespace ddpbench
