#include "engine/run/launch.hpp"

#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <thread>

#include "core/config/run_config.hpp"
#include "core/launch/node_env.hpp"
#include "core/launch/process.hpp"
#include "core/launch/spawn.hpp"
#include "core/launch/watchdog.hpp"
#include "core/util/errors.hpp"
#include "core/util/version.hpp"
#include "engine/compat.hpp"
#include "engine/dist/collectives.hpp"
#include "engine/dist/rendezvous.hpp"
#include "engine/dist/store_reads.hpp"
#include "engine/timing.hpp"

namespace ddpbench {

void print_line(const std::string& s) {
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

std::string hosts_summary(const std::vector<RankPlacement>& placements) {
  std::map<std::string, int> per_host;
  std::vector<std::string> order;
  for (const auto& p : placements)
    if (per_host[p.host]++ == 0) order.push_back(p.host);
  std::string out = fmt::format("{} host(s): ", order.size());
  for (size_t i = 0; i < order.size() && i < 8; ++i)
    out += fmt::format("{}{} x{}", i ? ", " : "", order[i], per_host[order[i]]);
  if (order.size() > 8) out += fmt::format(", ... and {} more", order.size() - 8);
  return out;
}

void check_spawner_parent(const LaunchInfo& li, const EnvMap& env) {
  if (li.launcher == Launcher::kLocalSpawner && !exit_with_parent(env))
    throw UsageError(
        fmt::format("DDPBENCH_LOCAL_SPAWNER={} names a launcher that is not this process's "
                    "parent (left over in the environment, or the launcher died); unset it",
                    env.at("DDPBENCH_LOCAL_SPAWNER")));
}

int device_gpus(const std::string& device) {
  if (device != "auto" && device != "cpu" && device != "cuda")
    throw UsageError(fmt::format("--device '{}' is unknown; use cpu or cuda", device));
  const int gpus = device == "cpu" ? 0 : cuda_device_count();
  if (device == "cuda" && gpus == 0)
    throw UsageError("--device cuda but no GPU is visible (or this build has no CUDA); use --device cpu");
  return gpus;
}

int launch_world_size(const LaunchInfo& li, bool nproc_given, int nproc_per_node, int default_world) {
  const bool spawner = li.launcher == Launcher::kNone;
  if (nproc_given && !spawner && li.launcher != Launcher::kLocalSpawner)
    throw UsageError(
        fmt::format("--nproc-per-node is for the built-in launcher, but {} already started "
                    "{} rank(s); drop the flag",
                    launcher_name(li.launcher), li.world_size));
  if (nproc_given && (nproc_per_node < 1 || nproc_per_node > kMaxNprocPerNode))
    throw UsageError(fmt::format("--nproc-per-node {} is out of range; use 1..{}", nproc_per_node, kMaxNprocPerNode));
  return spawner ? (nproc_given ? nproc_per_node : default_world) : li.world_size;
}

BackendKind choose_backend(const std::string& requested, bool use_cuda) {
  BackendKind backend = BackendKind::kGloo;
  if (requested == "nccl") backend = BackendKind::kNccl;
  if (requested == "auto" && use_cuda && backend_available(BackendKind::kNccl)) backend = BackendKind::kNccl;
  if (backend == BackendKind::kNccl && !use_cuda)
    throw UsageError("--backend nccl needs GPUs; use --backend gloo (or --device cuda on a GPU machine)");
  if (!backend_available(backend))
    throw UsageError(fmt::format("this ddpbench build has no {} backend; use --backend {}", backend_name(backend),
                                 backend == BackendKind::kNccl ? "gloo" : "nccl"));
  return backend;
}

void check_nccl_ranks(BackendKind backend, bool spawner, int world, int gpus) {
  if (spawner && backend == BackendKind::kNccl && world > gpus)
    throw UsageError(
        fmt::format("NCCL needs one GPU per rank, but {} ranks would share {} GPU(s); use "
                    "--nproc-per-node {} or --backend gloo",
                    world, gpus, gpus));
}

int rank_threads(const LaunchInfo& li, const EnvMap& env, int world) {
  const bool spawner = li.launcher == Launcher::kNone;
  return threads_per_rank(env, spawner ? Launcher::kLocalSpawner : li.launcher, spawner ? world : li.local_world_size,
                          usable_cpu_count());
}

c10::Device rank_device(const LaunchInfo& li, BackendKind backend) {
  const int gpus = cuda_device_count();
  int index = gpus == 1 && li.launcher != Launcher::kLocalSpawner ? 0 : li.local_rank;
  if (index >= gpus) {
    if (backend == BackendKind::kNccl)
      throw UsageError(
          fmt::format("rank {} has local rank {} but sees {} GPU(s); NCCL needs one GPU per rank: start "
                      "at most {} ranks per node, bind one GPU per task, or use --backend gloo",
                      li.rank, li.local_rank, gpus, gpus));
    index %= gpus;  // Gloo: ranks may share a GPU
  }
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
}

void validate_on_rank0(const LaunchInfo& li, const std::function<void()>& check) {
  try {
    check();
  } catch (const UsageError& e) {
    if (li.rank != 0 && li.launcher == Launcher::kLocalSpawner) throw SilentExit{kExitUsage};
    if (li.rank != 0) refuse_on_this_rank(li, e.what());
    throw;
  }
}

[[noreturn]] void refuse_on_this_rank(const LaunchInfo& li, const std::string& what) {
  const std::string line = first_line(what);
  if (li.rank == 0 || line.rfind("rank ", 0) == 0) throw UsageError(line);  // says who already
  tell_rank0_refused(li, line, kTellRank0Wait);
  throw UsageError(fmt::format("rank {}: {}", li.rank, line));
}

int spawn_ranks(const EnvMap& env, const LaunchInfo& li, int world, const std::vector<std::string>& argv,
                double timeout_s, const std::string& json_path) {
  SpawnOptions so;
  so.nproc = world;
  so.finish_timeout_s = timeout_s;
  // MASTER_ADDR / MASTER_PORT, when set, say where rank 0 serves the store.
  if (env.count("MASTER_ADDR") && !env.at("MASTER_ADDR").empty()) {
    so.master_addr = li.master_addr;
    check_master_addr(so.master_addr);
  }
  if (env.count("MASTER_PORT") && !env.at("MASTER_PORT").empty()) so.master_port = li.master_port;
  so.argv = argv;
  so.argv[0] = self_exe_path();
  const int rc = spawn_local_ranks(so);
  if (rc != 0)
    if (const std::string n = partial_rows_note(json_path); !n.empty()) {
      const std::string line = "ddpbench: note: " + n + "\n";
      std::fwrite(line.data(), 1, line.size(), stderr);
      std::fflush(stderr);
    }
  return rc;
}

namespace {
// A collective failed because a peer's connection went away (Gloo's and the TCPStore's words).
bool is_peer_loss_message(const std::string& line) {
  for (const char* w :
       {"Connection reset by peer", "Connection closed by peer", "Read error", "Broken pipe", "Connection refused"})
    if (line.find(w) != std::string::npos) return true;
  return false;
}
}  // namespace

[[noreturn]] void rethrow_with_context(const LaunchInfo& li, double timeout_s, const std::string& what,
                                       const std::string& oom_what, const std::string& oom_fix) {
  std::string line = first_line(what);
  const std::string phase = current_phase();
  if (line.rfind("rank ", 0) == 0) throw std::runtime_error(line);  // already says who and what
  // TCPStore's own timeout says only "Socket Timeout".
  if (line.find("Socket Timeout") != std::string::npos)
    line = li.rank == 0
               // Rank 0 serves the store itself: what it waited for is another rank's key.
               ? fmt::format(
                     "another rank did not reach this point within --timeout {:g} s (a rank stopped, hung or "
                     "died; the launcher or that rank names it)",
                     timeout_s)
               : fmt::format(
                     "the store served by rank 0 at {}:{} did not answer within --timeout {:g} s (rank 0 stopped, "
                     "or its host is down or unreachable)",
                     li.master_addr, li.master_port, timeout_s);
  // Under the built-in launcher a lost peer is usually a rank that died first: the launcher
  // names it and ends the other ranks (SIGTERM). Waiting a moment before saying anything
  // leaves that one line; a rank not ended by then says what it saw.
  if (li.launcher == Launcher::kLocalSpawner && is_peer_loss_message(line))
    std::this_thread::sleep_for(std::chrono::seconds(2));
  if (is_out_of_memory_message(line)) {
    if (li.rank != 0) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      throw SilentExit{kExitUsage};
    }
    throw UsageError(fmt::format("{} during {} ({}); {}", oom_what, phase, out_of_memory_words(line), oom_fix));
  }
  throw std::runtime_error(
      fmt::format("rank {} (pid {} on {}), during {}: {}", li.rank, ::getpid(), host_name(), phase, line));
}

int run_this_rank(const LaunchInfo& li, const EnvMap& env, double timeout_s, const std::string& oom_what,
                  const std::string& oom_fix, const std::function<int()>& body) {
  compat::quiet_torch_logs();
  set_watchdog_name(fmt::format("rank {}", li.rank));
  end_uncaught_exceptions_with_one_line();
  open_phase_file(env);
  try {
    return body();
  } catch (const UsageError& e) {
    if (li.rank != 0 && li.launcher != Launcher::kLocalSpawner) refuse_on_this_rank(li, e.what());
    throw;
  } catch (const SelfCheckError&) {
    throw;
  } catch (const SilentExit&) {
    throw;
  } catch (const GroupFailedElsewhere& e) {
    // The group's rank 0 says why in its own line; under the built-in launcher that is the
    // same terminal, so a rank that was only told leaves it at that.
    // Its exit code is rank 0's: 2 when the group ran out of memory (rank 0's UsageError),
    // since the launcher reports the first rank to exit, and this one may beat rank 0.
    // A second later, as in rethrow_with_context, so that rank 0's line is out first.
    if (li.launcher == Launcher::kLocalSpawner && li.rank != 0) {
      if (!is_out_of_memory_message(e.what())) throw SilentExit{kExitFailure};
      std::this_thread::sleep_for(std::chrono::seconds(1));
      throw SilentExit{kExitUsage};
    }
    rethrow_with_context(li, timeout_s, e.what(), oom_what, oom_fix);
  } catch (const c10::Error& e) {
    rethrow_with_context(li, timeout_s, e.what_without_backtrace(), oom_what, oom_fix);
  } catch (const std::exception& e) {
    rethrow_with_context(li, timeout_s, e.what(), oom_what, oom_fix);
  }
}

void finish_barrier(const c10::intrusive_ptr<c10d::Store>& store, const LaunchInfo& li,
                    std::chrono::milliseconds timeout) {
  set_phase("the final barrier");
  {
    Deadline d("the store (rank 0's process)", timeout);
    store->add("finished", 1);
  }
  if (li.rank != 0) return;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (store->add("finished", 0) < li.world_size) {
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("not every rank reached the end of the run before --timeout");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

EnvironmentFacts job_environment_facts(const LaunchInfo& li, const std::string& job_id, BackendKind backend, bool cuda,
                                       int threads_per_rank, const std::vector<RankPlacement>& placements,
                                       const EnvMap& env, const NodeEnvironments& nodes,
                                       const std::string& store_server) {
  EnvironmentFacts facts;
  facts.backend = backend_name(backend);
  facts.cuda = cuda;
  facts.launcher = launcher_name(li.launcher);
  facts.rendezvous = {{"master_addr", li.master_addr},
                      {"master_port", li.master_port},
                      {"agent_store", li.use_agent_store},
                      {"job_id", job_id}};
  if (!store_server.empty()) facts.rendezvous["store_server"] = store_server;
  facts.world_size = li.world_size;
  facts.threads_per_rank = threads_per_rank;
  facts.placements = placements;
  facts.slurm_job_id = li.job_id;
  facts.env = env_subset(env);
  facts.nodes = nodes.nodes;
  facts.node_differences = nodes.differences;
  return facts;
}

NodeEnvironments gather_node_environments(const c10::intrusive_ptr<c10d::Store>& store, const LaunchInfo& li,
                                          const EnvMap& env, const std::vector<RankPlacement>& placements,
                                          std::chrono::milliseconds timeout, const std::string& store_prefix) {
  NodeEnvironments out;
  if (li.local_rank != 0 && li.rank != 0) return out;
  set_phase("gathering each host's environment");
  nlohmann::json mine;
  if (li.local_rank == 0) mine = host_environment(env);
  if (li.rank != 0) {
    Deadline d("the store (rank 0's process)", timeout);
    const std::string text = mine.dump();
    store->set(fmt::format("node/{}", li.rank), std::vector<uint8_t>(text.begin(), text.end()));
    return out;
  }
  if (mine.is_null()) mine = host_environment(env);  // rank 0 without local rank 0: still its own host's

  // One object per host, in the order of the hosts' first ranks.
  struct Host {
    std::string name;
    std::vector<int> ranks;
    int publisher = -1;  ///< the host's rank of local rank 0
  };
  std::vector<Host> hosts;
  for (const auto& p : placements) {
    auto it = std::find_if(hosts.begin(), hosts.end(), [&](const Host& h) { return h.name == p.host; });
    if (it == hosts.end()) it = hosts.insert(hosts.end(), Host{p.host, {}, -1});
    it->ranks.push_back(p.rank);
    if (p.local_rank == 0 && it->publisher < 0) it->publisher = p.rank;
  }
  for (auto& h : hosts)  // rank 0's host is described by rank 0 itself
    if (std::find(h.ranks.begin(), h.ranks.end(), 0) != h.ranks.end()) h.publisher = 0;

  // Wait until every host published (one check of all keys per poll), then read them all
  // (over several connections on large jobs: read_keys).
  std::vector<std::string> keys;
  for (const auto& h : hosts)
    if (h.publisher > 0) keys.push_back(fmt::format("node/{}", h.publisher));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto poll = std::chrono::milliseconds(10);
  while (!keys.empty() && !store->check(keys)) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::string missing;
      for (const auto& m : hosts)
        if (m.publisher > 0 && !store->check({fmt::format("node/{}", m.publisher)}))
          missing += fmt::format("{}{} (rank {})", missing.empty() ? "" : ", ", m.name, m.publisher);
      throw std::runtime_error(fmt::format("rank 0: host(s) {} did not publish their environment within --timeout "
                                           "{:g} s",
                                           missing, std::chrono::duration<double>(timeout).count()));
    }
    std::this_thread::sleep_for(poll);
    poll = std::min(poll * 2, std::chrono::milliseconds(200));
  }
  std::vector<std::vector<uint8_t>> published;
  {
    Deadline d("the store (rank 0), reading the hosts' environments", timeout);
    published = read_keys(store, StoreEndpoint{li, store_prefix}, keys, false, timeout);
  }
  std::size_t next = 0;
  for (const auto& h : hosts) {
    nlohmann::json node;
    if (h.publisher == 0) {
      node = mine;
    } else if (h.publisher < 0) {
      node = {{"host", h.name}, {"error", "no rank of local rank 0 on this host, so none described it"}};
    } else {
      const std::vector<uint8_t>& raw = published[next++];
      if (raw.size() > kMaxNodeEnvBytes + 1024)
        throw std::runtime_error(
            fmt::format("rank 0: the environment of host {} (rank {}) is {} bytes, more than the "
                        "{} a host may publish",
                        h.name, h.publisher, raw.size(), kMaxNodeEnvBytes));
      node = nlohmann::json::parse(std::string(raw.begin(), raw.end()), nullptr, /*allow_exceptions=*/false);
      if (!node.is_object())
        node = {{"host", h.name}, {"error", fmt::format("rank {} published no valid JSON", h.publisher)}};
    }
    node["host"] = h.name;  // the rendezvous' name for it, which the ranks' placements use
    node["ranks"] = h.ranks;
    out.nodes.push_back(std::move(node));
  }
  out.differences = node_differences(out.nodes);
  std::string text;
  for (const auto& line : node_difference_lines(out.differences)) text += "ddpbench: warning: " + line + "\n";
  if (!text.empty()) {
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
  }
  return out;
}

void save_partial(const ResultFile& rf, const std::string& json_path) {
  if (json_path.empty()) return;
  const std::string before = current_phase();
  set_phase("writing " + partial_path(json_path));
  write_result_file_atomic(partial_path(json_path), rf);
  set_phase(before);
}

namespace {

// The inode of `path`, 0 when it cannot be read.
ino_t inode_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

}  // namespace

void commit_result(ResultFile rf, const std::string& json_path, bool overwrite) {
  if (json_path.empty()) return;
  // Every row in PATH.partial first: what is kept when the commit is refused. Each write is
  // a new inode, so after the commit the inode says whether the file is still this launch's.
  rf.complete = false;
  save_partial(rf, json_path);
  const std::string partial = partial_path(json_path);
  const ino_t ours = inode_of(partial);
  pass_test_gate("DDPBENCH_TEST_BEFORE_COMMIT");  // launch.hpp: a test seam
  set_phase("writing " + json_path);  // a failure below is named as this phase's
  rf.complete = true;
  try {
    write_result_file_atomic(json_path, rf, overwrite ? Existing::kReplace : Existing::kKeep);
  } catch (const TargetExists&) {
    rf.complete = false;
    save_partial(rf, json_path);  // again: another run may have written its rows there since
    const size_t rows = rf.results.size() + rf.comm_results.size();
    throw std::runtime_error(fmt::format(
        "'{}' appeared while this run was going (another run, or a file put there) and was not replaced; this "
        "run's result{} is kept in '{}'; compare the two and rename the one to keep, or pass --overwrite to replace "
        "the file",
        json_path, rows > 0 ? fmt::format(" ({} row(s))", rows) : std::string(), partial));
  }
  if (ours != 0 && inode_of(partial) == ours) std::remove(partial.c_str());
}

std::string partial_rows_note(const std::string& json_path) {
  if (json_path.empty()) return "";
  const std::string path = partial_path(json_path);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return "";
  try {
    const ResultFile f = read_result_file(path);
    const size_t rows = f.results.size() + f.comm_results.size();
    if (rows == 0) return "";
    return fmt::format("the {} row(s) measured so far are in {} (marked incomplete)", rows, path);
  } catch (const std::exception&) {
    return "";
  }
}

void note_partial_rows(const LaunchInfo& li, const std::string& json_path) {
  if (li.rank != 0 || li.launcher == Launcher::kLocalSpawner) return;
  if (const std::string n = partial_rows_note(json_path); !n.empty()) error_notes().push_back(n);
}

ResultFile new_result_file(const std::string& kind, const std::vector<std::string>& argv, int rows_planned) {
  ResultFile rf;
  rf.kind = kind;
  rf.tool = {{"name", "ddpbench"}, {"version", tool_version()}, {"git_sha", git_sha()}, {"git_dirty", git_dirty()}};
  rf.created_utc = utc_now_iso8601();
  rf.complete = false;
  rf.rows_planned = rows_planned;
  rf.argv = argv;
  if (!rf.argv.empty()) rf.argv[0] = rf.argv[0].substr(rf.argv[0].find_last_of('/') + 1);
  return rf;
}

}  // namespace ddpbench
