#include "core/launch_env.hpp"

#include <sched.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/errors.hpp"

extern char** environ;

namespace ddpbench {
namespace {

std::optional<std::string> get(const EnvMap& env, const std::string& key) {
  auto it = env.find(key);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

int get_int(const EnvMap& env, const std::string& key) {
  auto v = get(env, key);
  return static_cast<int>(parse_int(*v, key));
}

bool is_loopback(const std::string& host) {
  return host.empty() || host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

void check_ranks(const LaunchInfo& li, const char* source) {
  if (li.world_size < 1)
    throw UsageError(fmt::format("{}: world size {} must be >= 1; fix the launcher's task count", source,
                                 li.world_size));
  if (li.rank < 0 || li.rank >= li.world_size)
    throw UsageError(fmt::format("{}: rank {} is outside world size {}; fix the launcher environment", source,
                                 li.rank, li.world_size));
  if (li.local_world_size < 1 || li.local_rank < 0 || li.local_rank >= li.local_world_size)
    throw UsageError(fmt::format("{}: local rank {} is outside {} local ranks; fix the launcher environment",
                                 source, li.local_rank, li.local_world_size));
}

// MASTER_ADDR / MASTER_PORT override whatever a launcher implies.
void apply_master_overrides(const EnvMap& env, LaunchInfo& li) {
  if (auto a = get(env, "MASTER_ADDR")) li.master_addr = *a;
  if (get(env, "MASTER_PORT")) li.master_port = get_int(env, "MASTER_PORT");
  if (li.master_port < 1 || li.master_port > 65535)
    throw UsageError(fmt::format("MASTER_PORT={} is not a TCP port; set it to 1..65535", li.master_port));
}

void apply_slurm_job(const EnvMap& env, LaunchInfo& li) {
  if (auto j = get(env, "SLURM_JOB_ID")) {
    li.job_id = *j;
    li.master_port = slurm_default_port(parse_int(*j, "SLURM_JOB_ID"));
  }
}

}  // namespace

EnvMap current_env() {
  EnvMap env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

const char* launcher_name(Launcher l) {
  switch (l) {
    case Launcher::kNone: return "none";
    case Launcher::kLocalSpawner: return "local";
    case Launcher::kTorchrun: return "torchrun";
    case Launcher::kSlurm: return "slurm";
    case Launcher::kOpenMPI: return "openmpi";
    case Launcher::kPMIx: return "pmix";
  }
  return "unknown";
}

long long parse_int(const std::string& value, const std::string& what) {
  size_t pos = 0;
  long long v = 0;
  try {
    v = std::stoll(value, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  if (pos == 0 || pos != value.size())
    throw UsageError(fmt::format("{}='{}' is not an integer; set it to a whole number", what, value));
  return v;
}

std::vector<int> slurm_tasks_per_node(const std::string& spec) {
  std::vector<int> out;
  size_t i = 0;
  auto bad = [&] {
    return UsageError(fmt::format("tasks-per-node value '{}' is malformed (expected e.g. '4(x2),3')", spec));
  };
  while (i < spec.size()) {
    size_t j = i;
    while (j < spec.size() && std::isdigit(static_cast<unsigned char>(spec[j]))) ++j;
    if (j == i) throw bad();
    int n = std::stoi(spec.substr(i, j - i));
    int reps = 1;
    if (j < spec.size() && spec[j] == '(') {
      if (spec.compare(j, 2, "(x") != 0) throw bad();
      size_t k = j + 2, e = k;
      while (e < spec.size() && std::isdigit(static_cast<unsigned char>(spec[e]))) ++e;
      if (e == k || e >= spec.size() || spec[e] != ')') throw bad();
      reps = std::stoi(spec.substr(k, e - k));
      j = e + 1;
    }
    out.insert(out.end(), static_cast<size_t>(reps), n);
    if (j < spec.size()) {
      if (spec[j] != ',') throw bad();
      ++j;
      if (j == spec.size()) throw bad();
    }
    i = j;
  }
  if (out.empty()) throw bad();
  return out;
}

std::string slurm_first_host(const std::string& nodelist) {
  // The first host is the first comma-separated item outside brackets, with the
  // first element of every bracket group in it: "a[01-03,7]b[2-3],c" -> "a01b2".
  std::string host;
  int depth = 0;
  bool taking = true;  // inside a bracket: copy only up to the first '-' or ','
  for (char c : nodelist) {
    if (c == '[') {
      if (depth++ != 0) break;
      taking = true;
      continue;
    }
    if (c == ']') {
      if (--depth < 0) break;
      continue;
    }
    if (depth == 0) {
      if (c == ',') break;
      host.push_back(c);
    } else if (taking) {
      if (c == '-' || c == ',') taking = false;
      else host.push_back(c);
    }
  }
  if (depth != 0 || host.empty() || host.find_first_of("[]") != std::string::npos)
    throw UsageError(fmt::format(
        "Slurm node list '{}' is malformed; set MASTER_ADDR to the first node's address", nodelist));
  return host;
}

int slurm_default_port(long long job_id) { return 20000 + static_cast<int>(((job_id % 10000) + 10000) % 10000); }

// MPI-style launchers (mpirun, PMIx) say nothing about the rendezvous host. All ranks on
// this node: loopback, wherever in an allocation the job runs. Across nodes: the Slurm
// allocation's first host (mpirun fills nodes in list order), else MASTER_ADDR must be set.
void mpi_rendezvous_host(const EnvMap& env, LaunchInfo& li, const char* launcher) {
  if (li.local_world_size >= li.world_size) return;
  if (auto nl = get(env, "SLURM_JOB_NODELIST")) li.master_addr = slurm_first_host(*nl);
  else if (!get(env, "MASTER_ADDR"))
    throw UsageError(fmt::format(
        "{} across nodes needs the rendezvous host: export MASTER_ADDR=<first node> (mpirun -x MASTER_ADDR)", launcher));
}

LaunchInfo detect_launch(const EnvMap& env) {
  LaunchInfo li;

  // --- torchrun / torch.distributed.launch / hand-set RANK + WORLD_SIZE
  if (get(env, "RANK") || get(env, "WORLD_SIZE")) {
    if (!get(env, "RANK") || !get(env, "WORLD_SIZE"))
      throw UsageError("RANK and WORLD_SIZE must be set together (torchrun sets both); set or unset both");
    li.launcher = get(env, "DDPBENCH_LOCAL_SPAWNER") ? Launcher::kLocalSpawner : Launcher::kTorchrun;
    li.rank = get_int(env, "RANK");
    li.world_size = get_int(env, "WORLD_SIZE");
    apply_master_overrides(env, li);
    if (get(env, "LOCAL_RANK") && get(env, "LOCAL_WORLD_SIZE")) {
      li.local_rank = get_int(env, "LOCAL_RANK");
      li.local_world_size = get_int(env, "LOCAL_WORLD_SIZE");
    } else if (is_loopback(li.master_addr)) {
      // Hand launch on one machine: every rank is local.
      li.local_rank = get(env, "LOCAL_RANK") ? get_int(env, "LOCAL_RANK") : li.rank;
      li.local_world_size = li.world_size;
    } else {
      // Ranks per node unknown: assume all of them could share this node, so threads
      // are never oversubscribed (set LOCAL_WORLD_SIZE for the exact count).
      li.local_rank = get(env, "LOCAL_RANK") ? get_int(env, "LOCAL_RANK") : 0;
      li.local_world_size = li.world_size;
    }
    auto agent = get(env, "TORCHELASTIC_USE_AGENT_STORE");
    if (agent && (*agent == "True" || *agent == "true" || *agent == "1")) {
      li.use_agent_store = true;
      li.store_prefix = "/worker/attempt_" + get(env, "TORCHELASTIC_RESTART_COUNT").value_or("0");
    }
    if (auto j = get(env, "SLURM_JOB_ID")) li.job_id = *j;
    check_ranks(li, "torchrun environment");
    return li;
  }

  // --- OpenMPI (also inside a Slurm allocation: it inherits SLURM_PROCID=0)
  if (get(env, "OMPI_COMM_WORLD_RANK")) {
    li.launcher = Launcher::kOpenMPI;
    li.rank = get_int(env, "OMPI_COMM_WORLD_RANK");
    if (!get(env, "OMPI_COMM_WORLD_SIZE"))
      throw UsageError("OMPI_COMM_WORLD_RANK is set but OMPI_COMM_WORLD_SIZE is not; launch with mpirun");
    li.world_size = get_int(env, "OMPI_COMM_WORLD_SIZE");
    li.local_rank = get(env, "OMPI_COMM_WORLD_LOCAL_RANK") ? get_int(env, "OMPI_COMM_WORLD_LOCAL_RANK") : 0;
    li.local_world_size =
        get(env, "OMPI_COMM_WORLD_LOCAL_SIZE") ? get_int(env, "OMPI_COMM_WORLD_LOCAL_SIZE") : li.world_size;
    apply_slurm_job(env, li);
    mpi_rendezvous_host(env, li, "mpirun");
    apply_master_overrides(env, li);
    check_ranks(li, "OpenMPI environment");
    return li;
  }

  // --- Slurm srun step (a batch script without srun has no SLURM_STEP_ID)
  if (get(env, "SLURM_PROCID") && (get(env, "SLURM_STEP_ID") || get(env, "SLURM_STEPID"))) {
    li.launcher = Launcher::kSlurm;
    li.rank = get_int(env, "SLURM_PROCID");
    const char* ntasks = get(env, "SLURM_STEP_NUM_TASKS") ? "SLURM_STEP_NUM_TASKS" : "SLURM_NTASKS";
    if (!get(env, ntasks)) throw UsageError("srun did not export SLURM_NTASKS; launch with srun -n N");
    li.world_size = get_int(env, ntasks);
    li.local_rank = get(env, "SLURM_LOCALID") ? get_int(env, "SLURM_LOCALID") : 0;
    li.local_world_size = 1;
    const char* tpn = get(env, "SLURM_STEP_TASKS_PER_NODE") ? "SLURM_STEP_TASKS_PER_NODE" : "SLURM_TASKS_PER_NODE";
    if (auto spec = get(env, tpn)) {
      auto per_node = slurm_tasks_per_node(*spec);
      size_t node = get(env, "SLURM_NODEID") ? static_cast<size_t>(get_int(env, "SLURM_NODEID")) : 0;
      li.local_world_size = per_node[node < per_node.size() ? node : 0];
    }
    li.local_world_size = std::max(li.local_world_size, li.local_rank + 1);
    apply_slurm_job(env, li);
    auto nl = get(env, "SLURM_STEP_NODELIST");
    if (!nl) nl = get(env, "SLURM_JOB_NODELIST");
    if (!nl) nl = get(env, "SLURM_NODELIST");
    if (nl) li.master_addr = slurm_first_host(*nl);
    apply_master_overrides(env, li);
    check_ranks(li, "Slurm environment");
    return li;
  }

  // --- PMIx-only launchers (size from PMI_SIZE or SLURM_NTASKS)
  if (get(env, "PMIX_RANK")) {
    li.launcher = Launcher::kPMIx;
    li.rank = get_int(env, "PMIX_RANK");
    const char* size_key = get(env, "PMI_SIZE") ? "PMI_SIZE" : (get(env, "SLURM_NTASKS") ? "SLURM_NTASKS" : nullptr);
    if (!size_key)
      throw UsageError("PMIX_RANK is set but the world size is unknown; export WORLD_SIZE and RANK, or use mpirun/srun");
    li.world_size = get_int(env, size_key);
    if (get(env, "MPI_LOCALRANKID")) li.local_rank = get_int(env, "MPI_LOCALRANKID");
    else if (get(env, "SLURM_LOCALID")) li.local_rank = get_int(env, "SLURM_LOCALID");
    li.local_world_size = get(env, "MPI_LOCALNRANKS") ? get_int(env, "MPI_LOCALNRANKS") : li.world_size;
    apply_slurm_job(env, li);
    mpi_rendezvous_host(env, li, "the PMIx launcher");
    apply_master_overrides(env, li);
    check_ranks(li, "PMIx environment");
    return li;
  }

  apply_master_overrides(env, li);
  return li;
}

int usable_cpu_count() { return std::max(1, static_cast<int>(affinity_cpus().size())); }

std::vector<int> affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

std::string format_cpu_list(std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    if (j - i >= 2) out += std::to_string(cpus[i]) + "-" + std::to_string(cpus[j]);
    else
      for (size_t k = i; k <= j; ++k) out += (k > i ? "," : "") + std::to_string(cpus[k]);
    i = j + 1;
  }
  return out;
}

std::vector<int> parse_cpu_list(const std::string& list) {
  std::vector<int> out;
  size_t start = 0;
  while (start < list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    const std::string item = list.substr(start, comma - start);
    const size_t dash = item.find('-');
    const long long lo = parse_int(item.substr(0, dash), "CPU list '" + list + "'");
    const long long hi = dash == std::string::npos ? lo : parse_int(item.substr(dash + 1), "CPU list '" + list + "'");
    if (lo < 0 || hi < lo || hi >= 1 << 20)
      throw UsageError(fmt::format("CPU list '{}': '{}' is not a CPU id or an ascending range", list, item));
    for (long long c = lo; c <= hi; ++c) out.push_back(static_cast<int>(c));
    start = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int threads_per_rank(const EnvMap& env, Launcher launcher, int local_world_size, int usable_cpus) {
  std::vector<const char*> keys = {"OMP_NUM_THREADS"};
  if (launcher == Launcher::kSlurm) keys.push_back("SLURM_CPUS_PER_TASK");  // srun gave each task this many
  for (const char* key : keys) {
    if (auto v = get(env, key)) {
      long long n = parse_int(*v, key);
      if (n < 1) throw UsageError(fmt::format("{}={} must be >= 1; unset it or set a positive count", key, n));
      return static_cast<int>(n);
    }
  }
  return std::max(1, std::max(1, usable_cpus) / std::max(1, local_world_size));
}

}  // namespace ddpbench

namespace ddpbench {

std::string launcher_job_id(const EnvMap& env, Launcher launcher) {
  auto value = [&](const char* key) -> std::string {
    const auto it = env.find(key);
    return it == env.end() ? std::string() : it->second.substr(0, 256);
  };
  if (const auto v = value("DDPBENCH_JOB_ID"); !v.empty()) return v;
  switch (launcher) {
    case Launcher::kSlurm:
      if (const auto j = value("SLURM_JOB_ID"); !j.empty()) {
        const auto step = value("SLURM_STEP_ID").empty() ? value("SLURM_STEPID") : value("SLURM_STEP_ID");
        return "slurm:" + j + "." + step;
      }
      return "";
    case Launcher::kTorchrun:
      if (const auto r = value("TORCHELASTIC_RUN_ID"); !r.empty()) return "torchrun:" + r;
      return "";
    case Launcher::kOpenMPI:
    case Launcher::kPMIx:
      if (const auto ns = value("PMIX_NAMESPACE"); !ns.empty()) return "pmix:" + ns;
      if (const auto j = value("OMPI_MCA_ess_base_jobid"); !j.empty()) return "openmpi:" + j;
      return "";
    default:
      return "";
  }
}

}  // namespace ddpbench
