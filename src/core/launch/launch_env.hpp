// Rank discovery from the launcher's environment (torchrun, Slurm srun,
// OpenMPI / PMIx, ddpbench's own local spawner). Torch-free and pure: every
// function takes the environment as a map so tests can feed any launcher.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ddpbench {

/// Largest world size (ranks in a job, or on a node) read from a launcher's environment:
/// 2^20. Every rank, size and count from the environment is range-checked before it is
/// narrowed to int, so a value such as WORLD_SIZE=4294967297 is an error, not 1 rank.
inline constexpr long long kMaxWorldSize = 1LL << 20;

/// Largest intra-op thread count per rank read from OMP_NUM_THREADS / SLURM_CPUS_PER_TASK.
inline constexpr long long kMaxThreadsPerRank = 4096;

/// Largest CPU id parse_cpu_list accepts (2^20 - 1).
inline constexpr long long kMaxCpuId = (1LL << 20) - 1;

/// Largest job id (DDPBENCH_JOB_ID, or the launcher's) in bytes.
inline constexpr std::size_t kMaxJobIdBytes = 256;

/// Environment variables as name -> value.
using EnvMap = std::map<std::string, std::string>;

/// The current process environment (`environ`) as an EnvMap, with the OMP_NUM_THREADS that
/// hide_omp_num_threads_from_openmp took out put back.
EnvMap current_env();

/// Called on the process's environment block before any shared library initialises (the
/// executable's .preinit_array, src/cli/main.cpp): takes out an OMP_NUM_THREADS the OpenMP
/// runtime would refuse with its own line at load ("0", "", "two", " 4"), and keeps its
/// value for current_env(), so that ddpbench refuses it once with its own line. Allocates
/// nothing and calls no library function; a valid value stays where it is.
void hide_omp_num_threads_from_openmp(char** envp);

/// Which launcher started this process.
enum class Launcher {
  kNone,          ///< no launcher variables: ddpbench spawns ranks itself
  kLocalSpawner,  ///< a child of `ddpbench run --nproc-per-node N`
  kTorchrun,      ///< torchrun / torch.distributed.launch (RANK, WORLD_SIZE, ...)
  kSlurm,         ///< srun (SLURM_PROCID, SLURM_STEP_ID, ...)
  kOpenMPI,       ///< mpirun from OpenMPI (OMPI_COMM_WORLD_*)
  kPMIx,          ///< any PMIx launcher that exports PMIX_RANK only
};

/// Lower-case name used in output and JSON: "none", "local", "torchrun", "slurm", "openmpi", "pmix".
const char* launcher_name(Launcher l);

/// Where this rank sits in the job and how it finds the rendezvous store.
struct LaunchInfo {
  Launcher launcher = Launcher::kNone;
  int rank = 0;                           ///< global rank, 0 <= rank < world_size
  int world_size = 1;                     ///< number of ranks in the job
  int local_rank = 0;                     ///< rank among the ranks on this node; also the GPU index
  int local_world_size = 1;               ///< ranks on this node (the world size where the launcher does not say)
  std::string master_addr = "127.0.0.1";  ///< host of the TCPStore server (rank 0's node)
  int master_port = 29500;                ///< TCP port of the TCPStore server
  /// torchrun with TORCHELASTIC_USE_AGENT_STORE=True: the elastic agent already
  /// serves the store; every rank connects as a client under `store_prefix`.
  bool use_agent_store = false;
  std::string store_prefix;  ///< "/worker/attempt_<TORCHELASTIC_RESTART_COUNT>" with the agent store
  std::string job_id;        ///< SLURM_JOB_ID when present, else empty
};

/// Detects the launcher and this rank's place from `env`.
///
/// Precedence (first match wins): torchrun variables (RANK and WORLD_SIZE),
/// OpenMPI (OMPI_COMM_WORLD_RANK), Slurm srun (SLURM_PROCID together with
/// SLURM_STEP_ID, so a batch script that is not an srun step is not mistaken
/// for rank 0 of N), PMIx (PMIX_RANK). MPI is checked before Slurm because
/// mpirun inside an allocation inherits the batch step's SLURM_PROCID=0.
/// MASTER_ADDR / MASTER_PORT always override the derived values.
///
/// Throws UsageError (one line naming the variable) when the variables are inconsistent
/// (rank >= world size, a multi-node MPI job without MASTER_ADDR), non-numeric or out of
/// range: world sizes (WORLD_SIZE, LOCAL_WORLD_SIZE, OMPI_COMM_WORLD_SIZE,
/// OMPI_COMM_WORLD_LOCAL_SIZE, SLURM_NTASKS, SLURM_STEP_NUM_TASKS, PMI_SIZE,
/// MPI_LOCALNRANKS, each entry of SLURM_*TASKS_PER_NODE) 1..kMaxWorldSize, ranks (RANK,
/// LOCAL_RANK, OMPI_COMM_WORLD_[LOCAL_]RANK, SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID,
/// PMIX_RANK, MPI_LOCALRANKID) 0..kMaxWorldSize-1, MASTER_PORT 1..65535, SLURM_JOB_ID and
/// TORCHELASTIC_RESTART_COUNT >= 0: "WORLD_SIZE=4294967297 is out of range; set it to 1..1048576".
/// Also refuses a DDPBENCH_JOB_ID that check_job_id refuses, and a malformed Slurm node list
/// (slurm_first_host).
LaunchInfo detect_launch(const EnvMap& env);

/// Throws UsageError naming DDPBENCH_JOB_ID and the limit when it is set to more than
/// kMaxJobIdBytes bytes or to text that is not valid UTF-8 (the rendezvous compares and
/// records it as text).
void check_job_id(const EnvMap& env);

/// True for OpenMP's OMP_NUM_THREADS list form: one or more whole numbers > 0, separated by
/// commas, nothing else ("4", "4,2"; not "0", "4,", " 4").
bool is_openmp_thread_list(const std::string& value);

/// First host of a Slurm hostlist expression, e.g. "gpu[007-010,12],login1" -> "gpu007",
/// "rack[1-2]-n[01-04]" -> "rack1-n01". Throws UsageError naming the list, what is wrong
/// and the fix on a malformed list: an empty name or group ("node[]", "a,,b"), a group with
/// no name before it ("[1-3]"), an item that is not a number or range ("node[-3]"), a
/// descending range ("node[3-1]"), an unclosed or nested bracket.
std::string slurm_first_host(const std::string& nodelist);

/// Expands Slurm's tasks-per-node notation: "2(x3),1" -> {2, 2, 2, 1}.
/// Throws UsageError naming `what` on a malformed value, a count outside 1..kMaxWorldSize,
/// or more than kMaxWorldSize nodes in all (so the expansion stays bounded).
std::vector<int> slurm_tasks_per_node(const std::string& spec, const std::string& what = "SLURM_TASKS_PER_NODE");

/// The task count of node `node` (0-based) in Slurm's tasks-per-node notation, without
/// expanding it: "2(x3),1", node 3 -> 1. A node past the list gets the first node's count.
/// Throws as slurm_tasks_per_node.
int slurm_tasks_on_node(const std::string& spec, long long node, const std::string& what = "SLURM_TASKS_PER_NODE");

/// Rendezvous port derived from a Slurm job id: 20000 + (job_id mod 10000), so
/// all ranks of one job agree without a flag and concurrent jobs on a shared head
/// node rarely collide. Stays below Linux's default ephemeral range (32768+).
int slurm_default_port(long long job_id);

/// Intra-op threads for each rank: OMP_NUM_THREADS when set (must be >= 1; of OpenMP's
/// nested list "4,2" the first number, the outer level); else, in an
/// srun step, SLURM_CPUS_PER_TASK (Slurm already gave each task its share; in a batch
/// script the built-in launcher's ranks share the allocation instead); else
/// `usable_cpus / local_world_size`, at least 1, where `usable_cpus` are the CPUs in
/// this process's affinity mask (so cgroup/cpuset limits are respected).
/// Throws UsageError on a non-numeric value or one outside 1..kMaxThreadsPerRank.
int threads_per_rank(const EnvMap& env, Launcher launcher, int local_world_size, int usable_cpus);

/// This host's name (gethostname, made valid UTF-8 by sanitize_utf8), or "unknown".
std::string host_name();

/// CPUs in this process's affinity mask (sched_getaffinity), at least 1.
int usable_cpu_count();

/// The CPU ids in this process's affinity mask, ascending (empty if it cannot be read).
std::vector<int> affinity_cpus();

/// A CPU list in the kernel's cpulist format (as /sys/.../cpulist and taskset -c print
/// it): ascending ids, runs of 3 or more as ranges: {0,1,2,3,8,10,11} -> "0-3,8,10,11".
/// Bounded: at most one range per run, so a rank's list stays small however many CPUs.
std::string format_cpu_list(std::vector<int> cpus);

/// Parses the kernel's cpulist format ("0-3,8"): ascending, duplicates dropped, ids
/// 0..kMaxCpuId. Throws UsageError on anything else.
std::vector<int> parse_cpu_list(const std::string& list);

}  // namespace ddpbench

namespace ddpbench {

/// The job this process belongs to, as its launcher names it, for the rendezvous to
/// refuse ranks of another job that reach the same MASTER_ADDR:MASTER_PORT. First set
/// wins: DDPBENCH_JOB_ID (set by the built-in launcher to a random token, or by hand to
/// tie hand-started ranks together), "slurm:<SLURM_JOB_ID>.<SLURM_STEP_ID>" in an srun
/// step, "torchrun:<TORCHELASTIC_RUN_ID>", "pmix:<PMIX_NAMESPACE>" (OpenMPI 4+, any
/// PMIx launcher), "openmpi:<OMPI_MCA_ess_base_jobid>". Empty when none is set (ranks
/// started by hand): then only the rank-slot claims tell two jobs apart. Every value is made
/// valid UTF-8 and cut to kMaxJobIdBytes (sanitize_utf8); detect_launch refuses a
/// DDPBENCH_JOB_ID that would need either.
std::string launcher_job_id(const EnvMap& env, Launcher launcher);

}  // namespace ddpbench
