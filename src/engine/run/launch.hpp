// Launch plumbing shared by the commands that run ranks (`run`, `comm`): which ranks to
// start, the backend and device of a rank, the built-in spawner or this rank's part, and
// how a rank's failure becomes one line; the c10d store's barriers and gathers around a job.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <c10/core/Device.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/launch/launch_env.hpp"
#include "core/result/result.hpp"
#include "engine/dist/process_group.hpp"
#include "engine/env_info.hpp"

namespace ddpbench {

/// Writes `s` and a newline to stdout and flushes (lines of rank 0's report).
void print_line(const std::string& s);

/// "2 host(s): node1 x4, node2 x4" (at most 8 hosts named).
std::string hosts_summary(const std::vector<RankPlacement>& placements);

/// A rank started by the built-in spawner exits with its launcher: throws UsageError when
/// DDPBENCH_LOCAL_SPAWNER names a process that is not this one's parent (left over in the
/// environment, or the launcher died).
void check_spawner_parent(const LaunchInfo& li, const EnvMap& env);

/// GPUs a rank may use for --device `device` ("auto", "cpu" or "cuda"): 0 for cpu or when
/// none is visible. Throws UsageError for another name, or for cuda without a GPU.
int device_gpus(const std::string& device);

/// The job's world size: under an outside launcher its WORLD_SIZE; for the built-in spawner
/// --nproc-per-node when given (`nproc_given`), else `default_world`. Throws UsageError when
/// --nproc-per-node is given under another launcher or is outside 1..kMaxNprocPerNode.
int launch_world_size(const LaunchInfo& li, bool nproc_given, int nproc_per_node, int default_world);

/// The backend a rank uses for --backend `requested` ("auto", "nccl" or "gloo"); the same
/// on every rank, so checked before ranks start. auto: NCCL on GPUs where built in, else Gloo.
/// Throws UsageError when this build lacks it or it cannot work on the device.
BackendKind choose_backend(const std::string& requested, bool use_cuda);

/// For the built-in spawner (`spawner`) starting `world` ranks: throws UsageError when NCCL
/// would have ranks share a GPU (NCCL needs one GPU per rank).
void check_nccl_ranks(BackendKind backend, bool spawner, int world, int gpus);

/// Intra-op threads of each rank (threads_per_rank): the built-in spawner's `world` ranks
/// share this machine's CPUs; under another launcher its local world size does.
int rank_threads(const LaunchInfo& li, const EnvMap& env, int world);

/// The GPU of this rank: the one of its local rank, or the only one it sees when an outside
/// launcher binds one GPU per task (srun --gpus-per-task, CUDA_VISIBLE_DEVICES per rank).
/// The built-in spawner gives every rank all GPUs, so its ranks always use their local rank.
/// Throws UsageError when NCCL would have no GPU of its own.
c10::Device rank_device(const LaunchInfo& li, BackendKind backend);

/// How long a rank that refused its input waits for rank 0's store to tell it why
/// (tell_rank0_refused) before it exits: 10 s (ranks of a job start within seconds of each other).
inline constexpr std::chrono::milliseconds kTellRank0Wait{10000};

/// Runs `check` (the configuration checks every rank shares). A UsageError is rethrown on
/// rank 0 as it is. Ranks the built-in launcher started exit 2 without a line (SilentExit):
/// the launcher checked the same flags first. Any other rank refuses through
/// refuse_on_this_rank, so it names itself and rank 0 learns why it will not join.
void validate_on_rank0(const LaunchInfo& li, const std::function<void()>& check);

/// A rank that refuses its input (`what`: a UsageError's message): on rank 0, or when the
/// message already starts "rank ", throws UsageError(first line of `what`) unchanged;
/// otherwise tells rank 0 (tell_rank0_refused, waiting at most kTellRank0Wait) and throws
/// UsageError "rank N: <first line of what>", the one line this rank prints (exit 2).
[[noreturn]] void refuse_on_this_rank(const LaunchInfo& li, const std::string& what);

/// The built-in launcher: starts `world` ranks of this executable with `argv` (the whole
/// command line) on this machine (MASTER_ADDR / MASTER_PORT from `env` when set, else
/// 127.0.0.1 and a free port) and returns their exit status (spawn_local_ranks). When they
/// failed and `json_path`'s PATH.partial exists, it prints partial_rows_note as a note.
/// `timeout_s` (the command's --timeout, s) bounds how long the other ranks may take to exit
/// once one rank has exited 0 (SpawnOptions::finish_timeout_s: a stopped rank that long, a
/// running one 4 x that + 60 s).
int spawn_ranks(const EnvMap& env, const LaunchInfo& li, int world, const std::vector<std::string>& argv,
                double timeout_s, const std::string& json_path = "");

/// A runtime failure of this rank, as one line that says which rank, where and in which
/// phase ("rank 1 (pid 42 on node7), during warm-up of resnet18/ddp2: ..."). Messages that
/// already name their rank (the rendezvous, the watchdog) pass unchanged. Running out of
/// memory is bad input: rank 0 throws UsageError "<oom_what> during <phase> (<allocator's
/// words>); <oom_fix>", the other ranks exit 2 without a line, a second later, so rank 0's
/// line is the one a launcher shows. `timeout_s` is --timeout, named when the store stops
/// answering.
[[noreturn]] void rethrow_with_context(const LaunchInfo& li, double timeout_s, const std::string& what,
                                       const std::string& oom_what, const std::string& oom_fix);

/// This rank's part of the job: quiets torch's logs, names the rank in watchdog lines,
/// opens the phase file, then returns `body()`. SelfCheckError and SilentExit pass through;
/// a UsageError too, on a rank other than 0 of an outside launcher through
/// refuse_on_this_rank (named, rank 0 told); any other failure is rethrown by rethrow_with_context(li, timeout_s, ...,
/// oom_what, oom_fix).
int run_this_rank(const LaunchInfo& li, const EnvMap& env, double timeout_s, const std::string& oom_what,
                  const std::string& oom_fix, const std::function<int()>& body);

/// The end of a job: every rank counts itself on the store; rank 0, which serves the store
/// and must outlive every rank's last store access, waits until all li.world_size ranks
/// did. Throws std::runtime_error when they did not within `timeout`.
void finish_barrier(const c10::intrusive_ptr<c10d::Store>& store, const LaunchInfo& li,
                    std::chrono::milliseconds timeout);

/// Every host's environment, gathered once per host (core/launch/node_env.hpp).
struct NodeEnvironments {
  nlohmann::json nodes = nlohmann::json::array();        ///< environment.nodes: one object per host, rank order
  nlohmann::json differences = nlohmann::json::array();  ///< environment.node_differences (node_differences())
};

/// Called by every rank right after the rendezvous. The local rank 0 of each host probes
/// its host once (host_environment: nvidia-smi, /proc, uname, libtorch versions; bounded
/// to kMaxNodeEnvBytes) and publishes it on the store under "node/<its rank>"; rank 0 then
/// collects one object per host of `placements` (the rendezvous' list, rank order), adds
/// "ranks" (the host's ranks), compares them (node_differences) and prints one
/// "ddpbench: warning: nodes differ in ..." line per differing field on stderr. Ranks
/// other than 0 return empty lists at once. A host without a rank of local rank 0 gets
/// {"host", "ranks", "error"}. Throws std::runtime_error naming the hosts whose object
/// did not arrive within `timeout` (--timeout), or one larger than the bound.
/// `store_prefix`: the job's key prefix (Rendezvous::prefix), so that rank 0 reads the hosts'
/// objects over several connections on large jobs (read_keys); "" reads them through `store`.
NodeEnvironments gather_node_environments(const c10::intrusive_ptr<c10d::Store>& store, const LaunchInfo& li,
                                          const EnvMap& env, const std::vector<RankPlacement>& placements,
                                          std::chrono::milliseconds timeout, const std::string& store_prefix = "");

/// What every multi-rank command records of its job for environment_json: the backend,
/// device type, launcher, rendezvous (`job_id`: JoinRequest::job_id), world size, intra-op
/// threads per rank, the placements, the Slurm job, the launch variables of `env` and every
/// host's environment. A command adds what only it
/// knows (math, malloc tuning). `store_server`: Rendezvous::store_server, recorded under
/// rendezvous.store_server when not empty.
EnvironmentFacts job_environment_facts(const LaunchInfo& li, const std::string& job_id, BackendKind backend, bool cuda,
                                       int threads_per_rank, const std::vector<RankPlacement>& placements,
                                       const EnvMap& env, const NodeEnvironments& nodes,
                                       const std::string& store_server = "");

/// Writes `rf` (complete = false) to PATH.partial of `json_path` ("": nothing) through the one
/// writer, under the phase "writing PATH.partial", so a failed write (a full disk) is named as
/// such. Throws as write_result_file_atomic.
void save_partial(const ResultFile& rf, const std::string& json_path);

/// Rank 0's final write of a whole result: `rf`, marked complete, to `json_path` ("":
/// nothing) through the one writer. Without `overwrite` nothing at `json_path` is replaced:
/// the final rename refuses a file there atomically (Existing::kKeep), one that appeared
/// since the run checked the path at its start (another run, two resumes of one file, a
/// person). Then the rows go to PATH.partial (complete = false) and std::runtime_error (exit
/// 1) names the file that appeared and where the rows are. After a commit PATH.partial is
/// removed when it still holds this launch's rows (another run's rows written there since
/// stay). Test hook: with DDPBENCH_TEST_BEFORE_COMMIT=FILE set, FILE is read to its end
/// after PATH.partial holds every row and before the commit (a fifo: the test holds the run
/// there until it has done what it races against the commit; never set in a real run).
/// Throws as write_result_file_atomic otherwise.
void commit_result(ResultFile rf, const std::string& json_path, bool overwrite);

/// "the N row(s) measured so far are in PATH.partial (marked incomplete)", N read from that
/// file itself (what was saved, not what was measured); "" without --json, or when the file
/// does not exist or cannot be read.
std::string partial_rows_note(const std::string& json_path);

/// After a failure, on rank 0 only: adds partial_rows_note as an error note. Not under the
/// built-in launcher, which prints it once its ranks ended (spawn_ranks): a rank it ends
/// with SIGTERM prints nothing.
void note_partial_rows(const LaunchInfo& li, const std::string& json_path);

/// Rank 0's result file before its first row: `kind` ("run" or "comm"), tool{name,
/// version, git_sha, git_dirty}, created_utc now, complete false (until the job and its
/// final barrier are done), `rows_planned`, and `argv` with the program by its name only (a
/// launcher may have started it by an absolute path).
ResultFile new_result_file(const std::string& kind, const std::vector<std::string>& argv, int rows_planned);

}  // namespace ddpbench
