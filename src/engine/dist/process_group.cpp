#include "engine/dist/process_group.hpp"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "core/config/run_config.hpp"
#include "core/launch/watchdog.hpp"
#include "core/util/errors.hpp"
#include "engine/compat.hpp"
#include "engine/dist/store_probe.hpp"

namespace ddpbench {
namespace {

struct GroupEntry {
  int id = 0;
  c10::intrusive_ptr<c10d::ProcessGroup> pg;
  std::string what;  ///< "#3 gloo, rank 0 of 2"
  std::chrono::milliseconds timeout{0};
};

struct StoreEntry {
  int id = 0;
  c10::intrusive_ptr<c10d::Store> store;
  std::string what;  ///< "#1 TCPStore server at 127.0.0.1:29500"
};

// How long dropping a store may take (a TCPStore server joins its thread) before the watchdog
// ends the process.
constexpr std::chrono::milliseconds kStoreReleaseBound{60000};

// What Python keeps in distributed_c10d.py's _world (its groups by creation) and the trace.
struct Registry {
  std::mutex mu;
  std::vector<GroupEntry> groups;  ///< creation order: newest last
  std::vector<StoreEntry> stores;
  std::vector<std::string> trace;
  int next_group = 1;
  int next_store = 1;
};

// Never destroyed: it holds torch objects, which must not be freed during static
// destruction; the teardown empties it before main returns.
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

// "last reference" when `refs` (the ones left once the registry's was dropped) is the caller's only.
std::string references_left(long refs) {
  return refs <= 1 ? "last reference" : fmt::format("{} other reference(s) remain", refs - 1);
}

// Shuts `pg` down (compat::shutdown) and says how, for the trace; throws what shutdown throws.
std::string shut_down(const c10::intrusive_ptr<c10d::ProcessGroup>& pg) {
  const std::string how = compat::shutdown(pg);
  return how.empty() ? "no shutdown in this torch for it: its destructor frees it" : how;
}

}  // namespace

void record_teardown_event(const std::string& line) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  r.trace.push_back(line);
}

std::vector<std::string> teardown_trace() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  return r.trace;
}

size_t registered_process_group_count() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  return r.groups.size();
}

std::chrono::milliseconds longest_registered_timeout() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  std::chrono::milliseconds t{0};
  for (const auto& g : r.groups) t = std::max(t, g.timeout);
  return t;
}

const char* backend_name(BackendKind b) { return b == BackendKind::kNccl ? "nccl" : "gloo"; }

bool backend_available(BackendKind b) {
  return b == BackendKind::kNccl ? DDPBENCH_HAVE_NCCL != 0 : DDPBENCH_HAVE_GLOO != 0;
}

c10::intrusive_ptr<c10d::Store> connect_store(const LaunchInfo& li, std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions opts;
  opts.port = static_cast<uint16_t>(li.master_port);
  opts.isServer = !li.use_agent_store && li.rank == 0;
  opts.numWorkers = static_cast<size_t>(li.world_size);
  opts.waitWorkers = false;  // the rendezvous (or the first collective) waits, with a bounded message
  opts.timeout = timeout;
  if (!opts.isServer)
    check_store_peer(li.master_addr, li.master_port,
                     fmt::format("the store at {}:{}", li.master_addr, li.master_port), timeout);
  c10::intrusive_ptr<c10d::Store> store = compat::make_tcp_store(li.master_addr, opts);
  if (li.use_agent_store) store = c10::make_intrusive<c10d::PrefixStore>(li.store_prefix, store);
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  const int id = r.next_store++;
  std::string what = fmt::format("#{} TCPStore {} {}:{}", id, opts.isServer ? "server at" : "client of", li.master_addr,
                                 li.master_port);
  if (li.use_agent_store) what += fmt::format(" (torchrun's agent store, prefix {})", li.store_prefix);
  r.trace.push_back("store registered: " + what);
  r.stores.push_back({id, store, std::move(what)});
  return store;
}

namespace {
// Registers a new group (a strong reference, as _world.pg_map does) and traces it.
c10::intrusive_ptr<c10d::ProcessGroup> register_group(c10::intrusive_ptr<c10d::ProcessGroup> pg, BackendKind backend,
                                                      int rank, int size, std::chrono::milliseconds timeout) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  const int id = r.next_group++;
  std::string what = fmt::format("#{} {}, rank {} of {}", id, backend_name(backend), rank, size);
  r.trace.push_back("group created: " + what);
  r.groups.push_back({id, pg, std::move(what), timeout});
  return pg;
}
}  // namespace

c10::intrusive_ptr<c10d::ProcessGroup> make_process_group(BackendKind backend,
                                                          const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                          int size, const at::Device& device,
                                                          std::chrono::milliseconds timeout) {
  if (backend == BackendKind::kGloo) {
#if DDPBENCH_HAVE_GLOO
    auto opts = c10d::ProcessGroupGloo::Options::create(timeout);
    const char* ifnames = std::getenv("GLOO_SOCKET_IFNAME");
    if (ifnames && *ifnames) {
      for (const auto& name : split_list(ifnames))
        opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(name));
    } else {
      opts->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    }
    auto pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, opts);
    return register_group(compat::as_process_group(pg, store, rank, size, device, /*is_nccl=*/false), backend, rank,
                          size, timeout);
#else
    throw UsageError("this ddpbench was built without Gloo (no gloo headers at build time); use --backend nccl");
#endif
  }
#if DDPBENCH_HAVE_NCCL
  if (!device.is_cuda()) throw UsageError("--backend nccl needs a GPU per rank; use --backend gloo on CPUs");
  auto opts = c10d::ProcessGroupNCCL::Options::create();
  opts->timeout = timeout;
  auto pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, opts);
  return register_group(compat::as_process_group(pg, store, rank, size, device, /*is_nccl=*/true), backend, rank, size,
                        timeout);
#else
  (void)device;
  throw UsageError("this ddpbench was built without NCCL (CPU libtorch); use --backend gloo");
#endif
}

void destroy_process_group(c10::intrusive_ptr<c10d::ProcessGroup>& pg) {
  if (!pg) return;
  Registry& r = registry();
  std::string what = "(a group the registry does not hold)";
  {
    std::lock_guard<std::mutex> lk(r.mu);
    const auto it =
        std::find_if(r.groups.begin(), r.groups.end(), [&](const GroupEntry& g) { return g.pg.get() == pg.get(); });
    if (it != r.groups.end()) {
      what = it->what;
      r.groups.erase(it);  // Python: pg.shutdown(), then _unregister_process_group; the shutdown below
    }
  }
  std::string how;
  std::exception_ptr failed;
  try {
    how = shut_down(pg);
  } catch (const c10::Error& e) {
    how = "shutdown failed: " + first_line(e.what_without_backtrace());
    failed = std::current_exception();
  } catch (const std::exception& e) {
    how = "shutdown failed: " + first_line(e.what());
    failed = std::current_exception();
  }
  record_teardown_event(fmt::format("group destroyed: {}, by destroy_process_group ({}; {})", what, how,
                                    references_left(static_cast<long>(pg.use_count()))));
  pg.reset();
  if (failed) std::rethrow_exception(failed);
}

int destroy_all_process_groups() noexcept {
  int n = 0;
  for (;;) {
    GroupEntry g;
    {
      Registry& r = registry();
      std::lock_guard<std::mutex> lk(r.mu);
      if (r.groups.empty()) break;
      g = std::move(r.groups.back());  // newest first
      r.groups.pop_back();
    }
    ++n;
    std::string how;
    try {
      Deadline d(fmt::format("the shutdown of process group {} at the end of the process", g.what), g.timeout);
      how = shut_down(g.pg);
    } catch (const c10::Error& e) {
      how = "shutdown failed: " + first_line(e.what_without_backtrace());
    } catch (const std::exception& e) {
      how = "shutdown failed: " + first_line(e.what());
    }
    try {
      record_teardown_event(fmt::format("group destroyed: {}, by the teardown ({}; {})", g.what, how,
                                        references_left(static_cast<long>(g.pg.use_count()))));
      Deadline d(fmt::format("the release of process group {} at the end of the process", g.what), g.timeout);
      g.pg.reset();
    } catch (...) {  // a destructor that throws, or no memory for the line: the group is dropped regardless
    }
  }
  return n;
}

int release_stores() noexcept {
  int n = 0;
  for (;;) {
    StoreEntry s;
    {
      Registry& r = registry();
      std::lock_guard<std::mutex> lk(r.mu);
      if (r.stores.empty()) break;
      s = std::move(r.stores.back());
      r.stores.pop_back();
    }
    ++n;
    try {
      record_teardown_event(
          fmt::format("store released: {} ({})", s.what, references_left(static_cast<long>(s.store.use_count()))));
      Deadline d(fmt::format("the release of store {} at the end of the process", s.what), kStoreReleaseBound);
      s.store.reset();
    } catch (...) {
    }
  }
  return n;
}

}  // namespace ddpbench
