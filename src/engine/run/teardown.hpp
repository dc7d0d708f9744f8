// How a ddpbench process ends: the one teardown that main runs after its subcommand returned
// or threw, before main returns, so that nothing torch owns is freed by static destructors or
// by a thread's exit while the process is already tearing its libraries down.
//
// The order is PyTorch's (docs/METHODOLOGY.md, "How a rank ends"):
//   1. the CUDA device in use is synchronized (its queued kernels end while everything lives);
//   2. every process group still registered is shut down and dropped, newest first, as
//      torch.distributed.destroy_process_group() does for WORLD
//      (torch/distributed/distributed_c10d.py; engine/dist/process_group.hpp);
//   3. the job's store is released, last of the c10d objects (every group holds it);
//   4. the CUDA caching allocator returns its cached blocks (torch.cuda.empty_cache());
//   5. the autograd engine is stopped (torch::autograd::Engine::stop(), what its static
//      destructor would do) and its device threads are waited for until they have exited,
//      so their thread-local destructors (cuBLAS/cuDNN handle pools) run before main returns;
//   6. stdout and stderr are flushed.
//
// The trace: every process records, in order, what the registry created and destroyed and
// what the teardown did, one event a line ("<event>: <detail>"):
//   store registered: #S TCPStore server at HOST:PORT     (connect_store)
//   group created: #G gloo, rank R of N                    (make_process_group)
//   group destroyed: #G ..., by destroy_process_group (HOW; REFS)
//   teardown: COMMAND returned CODE                        (1. begins)
//   device synchronized: cuda:I | none (no CUDA device in use)
//   group destroyed: #G ..., by the teardown (HOW; REFS)   (2., newest first)
//   store released: #S ... (REFS)                          (3.)
//   allocator emptied: CUDA caching allocator (emptyCache) | none (no CUDA device in use)
//   autograd engine stopped: ...                           (5.: the device threads and their end)
//   streams flushed: stdout, stderr
//   main returns CODE
// HOW is what shut the group down (compat::shutdown), REFS "last reference" when the
// registry's drop freed it, else how many references remained elsewhere. A step that throws
// is recorded as "<event>: failed: <why>", and the steps after it still run. With
// DDPBENCH_TEARDOWN_TRACE=DIR in the environment, the trace is written to
// DIR/teardown_trace_file_name(...) through the one writer (core/result write_file_atomic).
#pragma once

#include <optional>
#include <string>

namespace ddpbench {

/// The environment variable naming the folder the teardown trace is written to.
inline constexpr const char* kTeardownTraceEnv = "DDPBENCH_TEARDOWN_TRACE";

/// A test seam, never set in a real run: with DDPBENCH_TEST_TEARDOWN_GATE=FILE, every rank
/// of a launched job but rank 0 passes the gate FILE (core/launch pass_test_gate) at the
/// start of its teardown, after its phase says so: a fifo holds it there, so a test can
/// stop it in its teardown while rank 0 exits.
inline constexpr const char* kTeardownGateEnv = "DDPBENCH_TEST_TEARDOWN_GATE";

/// How long the teardown waits for the autograd engine's device threads to exit after
/// Engine::stop() (which itself waits up to TORCH_AUTOGRAD_SHUTDOWN_WAIT_LIMIT, 10 s by
/// default, for them to leave their loop).
inline constexpr double kAutogradThreadWaitS = 5.0;

/// "<command>-rank<R>-pid<P>.txt" for a rank of a launched job (`rank` set), else
/// "<command>-pid<P>.txt" (the built-in launcher, a single-process command).
std::string teardown_trace_file_name(const std::string& command, std::optional<int> rank, long pid);

/// Tears this process down in the order above, once, right before main returns `exit_code`
/// after `command` ("run", "comm", ...; "ddpbench" when no subcommand ran), on every path.
/// Never throws. Each blocking step runs under a Deadline (core/launch/watchdog.hpp): the
/// synchronize under the longest timeout of the registered groups (at least 60 s), each
/// group's shutdown under its own collective timeout, the store under 60 s; a step that does
/// not return in time (a failed rank whose NCCL collective hangs on the device) ends the
/// process with exit code 1 and one line naming the step. The autograd wait is bounded by
/// kAutogradThreadWaitS and only recorded when it runs out. A trace that cannot be written
/// is one warning line on stderr; the exit code stays.
void teardown_process(const std::string& command, int exit_code) noexcept;

}  // namespace ddpbench
