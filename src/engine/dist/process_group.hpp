// Rendezvous store and process groups (c10d::TCPStore, ProcessGroupGloo / NCCL), and the
// process-wide registry of both that PyTorch's Python keeps in distributed_c10d.py's _world:
// every group make_process_group creates stays registered (a strong reference) until
// destroy_process_group, or until the process's teardown (engine/run/teardown.hpp) destroys
// what is left, newest first, as destroy_process_group() without a group does; the job's
// store (connect_store) is released after them. What happens is recorded, in order, in this
// process's teardown trace.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "core/launch/launch_env.hpp"

namespace ddpbench {

/// Communication backend of the process groups.
enum class BackendKind { kGloo, kNccl };

/// "gloo" or "nccl".
const char* backend_name(BackendKind b);

/// True when this build can create the backend (Gloo needs gloo's headers at build
/// time; NCCL needs a CUDA build of libtorch with USE_C10D_NCCL).
bool backend_available(BackendKind b);

/// The job's TCPStore, as Python's env:// rendezvous builds it: rank 0 serves it at
/// MASTER_ADDR:MASTER_PORT (without waiting for the others: engine/dist/rendezvous.hpp
/// does, naming who is missing); the others connect. Under torchrun
/// with TORCHELASTIC_USE_AGENT_STORE=True every rank is a client of the agent's store,
/// under the prefix "/worker/attempt_<n>". Store operations that wait for a key time out after
/// `timeout`. A client first checks that the peer is a TCPStore (check_store_peer,
/// engine/dist/store_probe.hpp: 8 bytes read at most, so a foreign program on MASTER_PORT costs
/// one line, not libtorch's allocation of whatever length it sends).
/// Throws UsageError when the peer is not a TCPStore; std::runtime_error or c10::Error
/// (DistStoreError) when the store cannot be reached or does not answer in time.
c10::intrusive_ptr<c10d::Store> connect_store(const LaunchInfo& li, std::chrono::milliseconds timeout);

/// A process group of `size` ranks on `store` (prefix it per group). `device` is the
/// rank's device: Gloo reduces CPU tensors, or CUDA tensors staged through the host;
/// NCCL must be given cuda:<local rank>. Gloo binds
/// to each interface named in GLOO_SOCKET_IFNAME (comma list) when set, else to the
/// address of this host's name, as Python's ProcessGroupGloo does. Collectives time out
/// after `timeout` (NCCL: its watchdog aborts them).
/// Throws UsageError when the backend is not in this build.
c10::intrusive_ptr<c10d::ProcessGroup> make_process_group(BackendKind backend,
                                                          const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                          int size, const at::Device& device,
                                                          std::chrono::milliseconds timeout);

/// Python's destroy_process_group(pg) (torch/distributed/distributed_c10d.py): shuts the
/// group down where the linked torch can (compat::shutdown: its NCCL communicators are
/// finalized and destroyed, its watchdog joined), unregisters it and drops `pg` (reset). A
/// group the registry does not hold is shut down and dropped all the same. Recorded in the
/// teardown trace ("group destroyed: #N ..., by destroy_process_group (...)"). Throws what
/// the shutdown throws, after the group was unregistered and dropped.
void destroy_process_group(c10::intrusive_ptr<c10d::ProcessGroup>& pg);

/// The registry's side of destroy_process_group() without a group (destroy WORLD): every
/// group still registered is shut down and dropped, newest first (distributed_c10d.py sorts
/// _world.pg_names by creation, reversed), each under a Deadline of its own collective
/// timeout (core/launch/watchdog.hpp: past it the process prints one line and exits 1).
/// Shutdown failures are recorded in the trace, not thrown. Returns how many there were.
int destroy_all_process_groups() noexcept;

/// Drops the registry's references to the stores connect_store made, newest first, each
/// recorded with the references left elsewhere ("last reference" when the registry held the
/// last one: a TCPStore server then stops serving here). Call after
/// destroy_all_process_groups (every group holds its store). Returns how many there were.
int release_stores() noexcept;

/// Groups registered now (made by make_process_group and not destroyed).
size_t registered_process_group_count();

/// The longest collective timeout of the groups registered now; 0 when there is none.
std::chrono::milliseconds longest_registered_timeout();

/// Appends one event to this process's teardown trace: a line without a newline, "<event>:
/// <detail>" (the events are listed in engine/run/teardown.hpp). Thread-safe.
void record_teardown_event(const std::string& line);

/// This process's teardown trace so far, one event per line, in the order they happened.
std::vector<std::string> teardown_trace();

}  // namespace ddpbench
