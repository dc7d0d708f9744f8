#include "core/launch/launch_env.hpp"

#include <sched.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <utility>

#include "core/util/errors.hpp"
#include "core/util/parse.hpp"
#include "core/util/utf8.hpp"

extern char** environ;

namespace ddpbench {
namespace {

std::optional<std::string> get(const EnvMap& env, const std::string& key) {
  auto it = env.find(key);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

// `key`'s value (present), range-checked before it is narrowed to int.
int get_int(const EnvMap& env, const std::string& key, long long lo, long long hi) {
  return static_cast<int>(parse_bounded(*get(env, key), key, lo, hi));
}

// A world size (ranks in the job, or on a node) and a rank within one.
int get_size(const EnvMap& env, const std::string& key) { return get_int(env, key, 1, kMaxWorldSize); }
int get_rank(const EnvMap& env, const std::string& key) { return get_int(env, key, 0, kMaxWorldSize - 1); }

bool is_loopback(const std::string& host) {
  return host.empty() || host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

void check_ranks(const LaunchInfo& li, const char* source) {
  if (li.world_size < 1)
    throw UsageError(
        fmt::format("{}: world size {} must be >= 1; fix the launcher's task count", source, li.world_size));
  if (li.rank < 0 || li.rank >= li.world_size)
    throw UsageError(fmt::format("{}: rank {} is outside world size {}; fix the launcher environment", source, li.rank,
                                 li.world_size));
  if (li.local_world_size < 1 || li.local_rank < 0 || li.local_rank >= li.local_world_size)
    throw UsageError(fmt::format("{}: local rank {} is outside {} local ranks; fix the launcher environment", source,
                                 li.local_rank, li.local_world_size));
}

// MASTER_ADDR / MASTER_PORT override whatever a launcher implies.
void apply_master_overrides(const EnvMap& env, LaunchInfo& li) {
  if (auto a = get(env, "MASTER_ADDR")) li.master_addr = *a;
  if (get(env, "MASTER_PORT")) li.master_port = get_int(env, "MASTER_PORT", 1, 65535);
}

void apply_slurm_job(const EnvMap& env, LaunchInfo& li) {
  if (auto j = get(env, "SLURM_JOB_ID")) {
    li.job_id = *j;
    li.master_port = slurm_default_port(parse_bounded(*j, "SLURM_JOB_ID", 0, std::numeric_limits<long long>::max()));
  }
}

}  // namespace

namespace {
const char* g_hidden_omp_num_threads = nullptr;  // hide_omp_num_threads_from_openmp's
}  // namespace

void hide_omp_num_threads_from_openmp(char** envp) {
  static const char kName[] = "OMP_NUM_THREADS=";
  for (char** e = envp; e && *e; ++e) {
    const char* kv = *e;
    size_t n = 0;
    while (kName[n] && kv[n] == kName[n]) ++n;
    if (kName[n] != 0) continue;
    // What OpenMP accepts without a word: whole numbers > 0, comma-separated (a stricter
    // rule than its own: anything else is taken out, so it never complains).
    const char* v = kv + n;
    bool ok = *v != 0, item_empty = true, item_zero = true;
    for (const char* c = v; *c && ok; ++c) {
      if (*c == ',') {
        ok = !item_empty && !item_zero;
        item_empty = item_zero = true;
      } else if (*c >= '0' && *c <= '9') {
        item_empty = false;
        item_zero = item_zero && *c == '0';
      } else {
        ok = false;
      }
    }
    ok = ok && !item_empty && !item_zero;
    if (ok) continue;
    g_hidden_omp_num_threads = v;
    for (char** m = e; *m; ++m) m[0] = m[1];  // drop it, keeping the list's order
    return;
  }
}

EnvMap current_env() {
  EnvMap env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  if (g_hidden_omp_num_threads) env.emplace("OMP_NUM_THREADS", g_hidden_omp_num_threads);
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

namespace {

// Slurm's tasks-per-node notation as (count, repetitions) groups: "2(x3),1" -> {(2, 3), (1, 1)}.
// Counts are 1..kMaxWorldSize, and the nodes listed add up to at most kMaxWorldSize (a
// node runs at least one task), so a caller that expands them stays bounded.
std::vector<std::pair<int, int>> slurm_task_groups(const std::string& spec, const std::string& what) {
  std::vector<std::pair<int, int>> out;
  auto bad = [&] { return UsageError(fmt::format("{}='{}' is malformed (expected e.g. '4(x2),3')", what, spec)); };
  // A run of digits from `i` as a number in 1..kMaxWorldSize; `i` moves past it.
  auto number = [&](size_t& i, const char* part) {
    const size_t start = i;
    while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i]))) ++i;
    if (i == start) throw bad();
    const std::string digits = spec.substr(start, i - start);
    if (digits.size() > 7 || std::stoll(digits) < 1 || std::stoll(digits) > kMaxWorldSize)
      throw UsageError(fmt::format("{}={} is out of range; each {} must be 1..{}", what, spec, part, kMaxWorldSize));
    return static_cast<int>(std::stoll(digits));
  };
  long long nodes = 0;
  size_t i = 0;
  while (i < spec.size()) {
    const int n = number(i, "node's task count");
    int reps = 1;
    if (i < spec.size() && spec[i] == '(') {
      if (spec.compare(i, 2, "(x") != 0) throw bad();
      i += 2;
      reps = number(i, "repetition count");
      if (i >= spec.size() || spec[i] != ')') throw bad();
      ++i;
    }
    nodes += reps;
    if (nodes > kMaxWorldSize)
      throw UsageError(fmt::format("{}={} is out of range; it lists more than {} nodes", what, spec, kMaxWorldSize));
    out.emplace_back(n, reps);
    if (i < spec.size()) {
      if (spec[i] != ',') throw bad();
      ++i;
      if (i == spec.size()) throw bad();
    }
  }
  if (out.empty()) throw bad();
  return out;
}

}  // namespace

std::vector<int> slurm_tasks_per_node(const std::string& spec, const std::string& what) {
  std::vector<int> out;
  for (const auto& [n, reps] : slurm_task_groups(spec, what)) out.insert(out.end(), static_cast<size_t>(reps), n);
  return out;
}

int slurm_tasks_on_node(const std::string& spec, long long node, const std::string& what) {
  const auto groups = slurm_task_groups(spec, what);
  long long first = 0;
  for (const auto& [n, reps] : groups) {
    if (node >= first && node < first + reps) return n;
    first += reps;
  }
  return groups.front().first;
}

namespace {

// Why `nodelist` is not a Slurm hostlist ("" when it is one): comma-separated names, each
// starting with at least one character before any '[' group; a group holds comma-separated
// numbers or ascending ranges "lo-hi" (no nesting, nothing empty).
std::string nodelist_problem(const std::string& nodelist) {
  if (nodelist.empty()) return "it is empty";
  const auto digits = [](const std::string& t) {
    return !t.empty() && t.size() <= 18 &&
           std::all_of(t.begin(), t.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
  };
  size_t i = 0;
  while (i <= nodelist.size()) {
    size_t prefix = 0;  // characters of this name before its first '['
    bool any = false;   // this name has anything at all
    while (i < nodelist.size() && nodelist[i] != ',') {
      const char c = nodelist[i];
      if (c == ']') return "a ']' without its '['";
      if (c != '[') {
        if (!any) ++prefix;
        ++i;
        any = true;
        continue;
      }
      if (!any || prefix == 0) return "a '[' group must follow a node name's first characters (e.g. node[1-3])";
      const size_t close = nodelist.find(']', i);
      if (close == std::string::npos) return "a '[' is not closed";
      const std::string group = nodelist.substr(i + 1, close - i - 1);
      if (group.find('[') != std::string::npos) return "'[' groups cannot nest";
      if (group.empty()) return "a '[]' group is empty";
      size_t start = 0;
      while (start <= group.size()) {
        size_t comma = group.find(',', start);
        if (comma == std::string::npos) comma = group.size();
        const std::string item = group.substr(start, comma - start);
        const size_t dash = item.find('-');
        const std::string lo = item.substr(0, dash), hi = dash == std::string::npos ? lo : item.substr(dash + 1);
        if (!digits(lo) || !digits(hi))
          return fmt::format("'[{}]' holds '{}', which is not a number or a range lo-hi", group, item);
        if (std::stoll(lo) > std::stoll(hi))
          return fmt::format("the range '{}' in '[{}]' descends (write lo-hi, lo <= hi)", item, group);
        start = comma + 1;
      }
      i = close + 1;
    }
    if (!any) return "it has an empty name";
    if (i == nodelist.size()) break;
    ++i;  // past the ','
    if (i == nodelist.size()) return "it has an empty name";
  }
  return "";
}

}  // namespace

std::string slurm_first_host(const std::string& nodelist) {
  if (const std::string why = nodelist_problem(nodelist); !why.empty())
    throw UsageError(fmt::format(
        "Slurm node list '{}' is malformed ({}); fix the variable, or set MASTER_ADDR to the first node's address",
        nodelist, why));
  // The first host is the first comma-separated item outside brackets, with the
  // first element of every bracket group in it: "a[01-03,7]b[2-3],c" -> "a01b2".
  std::string host;
  int depth = 0;
  bool taking = true;  // inside a bracket: copy only up to the first '-' or ','
  for (char c : nodelist) {
    if (c == '[') {
      ++depth;
      taking = true;
      continue;
    }
    if (c == ']') {
      --depth;
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
        "{} across nodes needs the rendezvous host: export MASTER_ADDR=<first node> (mpirun -x MASTER_ADDR)",
        launcher));
}

bool is_openmp_thread_list(const std::string& value) {
  if (value.empty()) return false;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string::npos) comma = value.size();
    const std::string item = value.substr(start, comma - start);
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos ||
        item.find_first_not_of('0') == std::string::npos)
      return false;
    start = comma + 1;
  }
  return true;
}

void check_job_id(const EnvMap& env) {
  const auto it = env.find("DDPBENCH_JOB_ID");
  if (it == env.end() || it->second.empty()) return;
  const std::string& v = it->second;
  if (v.size() > kMaxJobIdBytes)
    throw UsageError(fmt::format("DDPBENCH_JOB_ID is {} bytes, more than the {} a job id may have; set a shorter one",
                                 v.size(), kMaxJobIdBytes));
  if (!is_valid_utf8(v))
    throw UsageError(fmt::format("DDPBENCH_JOB_ID='{}' is not valid UTF-8 text; set it to plain text (e.g. letters, "
                                 "digits and '-')",
                                 sanitize_utf8(v)));
}

LaunchInfo detect_launch(const EnvMap& env) {
  LaunchInfo li;
  check_job_id(env);

  // --- torchrun / torch.distributed.launch / hand-set RANK + WORLD_SIZE
  if (get(env, "RANK") || get(env, "WORLD_SIZE")) {
    if (!get(env, "RANK") || !get(env, "WORLD_SIZE"))
      throw UsageError("RANK and WORLD_SIZE must be set together (torchrun sets both); set or unset both");
    li.launcher = get(env, "DDPBENCH_LOCAL_SPAWNER") ? Launcher::kLocalSpawner : Launcher::kTorchrun;
    li.rank = get_rank(env, "RANK");
    li.world_size = get_size(env, "WORLD_SIZE");
    apply_master_overrides(env, li);
    if (get(env, "LOCAL_RANK") && get(env, "LOCAL_WORLD_SIZE")) {
      li.local_rank = get_rank(env, "LOCAL_RANK");
      li.local_world_size = get_size(env, "LOCAL_WORLD_SIZE");
    } else if (is_loopback(li.master_addr)) {
      // Hand launch on one machine: every rank is local.
      li.local_rank = get(env, "LOCAL_RANK") ? get_rank(env, "LOCAL_RANK") : li.rank;
      li.local_world_size = li.world_size;
    } else {
      // Ranks per node unknown: assume all of them could share this node, so threads
      // are never oversubscribed (set LOCAL_WORLD_SIZE for the exact count).
      li.local_rank = get(env, "LOCAL_RANK") ? get_rank(env, "LOCAL_RANK") : 0;
      li.local_world_size = li.world_size;
    }
    auto agent = get(env, "TORCHELASTIC_USE_AGENT_STORE");
    if (agent && (*agent == "True" || *agent == "true" || *agent == "1")) {
      li.use_agent_store = true;
      const std::string restarts = get(env, "TORCHELASTIC_RESTART_COUNT").value_or("0");
      (void)parse_bounded(restarts, "TORCHELASTIC_RESTART_COUNT", 0, std::numeric_limits<int>::max());
      li.store_prefix = "/worker/attempt_" + restarts;
    }
    if (auto j = get(env, "SLURM_JOB_ID")) li.job_id = *j;
    check_ranks(li, "torchrun environment");
    return li;
  }

  // --- OpenMPI (also inside a Slurm allocation: it inherits SLURM_PROCID=0)
  if (get(env, "OMPI_COMM_WORLD_RANK")) {
    li.launcher = Launcher::kOpenMPI;
    li.rank = get_rank(env, "OMPI_COMM_WORLD_RANK");
    if (!get(env, "OMPI_COMM_WORLD_SIZE"))
      throw UsageError("OMPI_COMM_WORLD_RANK is set but OMPI_COMM_WORLD_SIZE is not; launch with mpirun");
    li.world_size = get_size(env, "OMPI_COMM_WORLD_SIZE");
    li.local_rank = get(env, "OMPI_COMM_WORLD_LOCAL_RANK") ? get_rank(env, "OMPI_COMM_WORLD_LOCAL_RANK") : 0;
    li.local_world_size =
        get(env, "OMPI_COMM_WORLD_LOCAL_SIZE") ? get_size(env, "OMPI_COMM_WORLD_LOCAL_SIZE") : li.world_size;
    apply_slurm_job(env, li);
    mpi_rendezvous_host(env, li, "mpirun");
    apply_master_overrides(env, li);
    check_ranks(li, "OpenMPI environment");
    return li;
  }

  // --- Slurm srun step (a batch script without srun has no SLURM_STEP_ID)
  if (get(env, "SLURM_PROCID") && (get(env, "SLURM_STEP_ID") || get(env, "SLURM_STEPID"))) {
    li.launcher = Launcher::kSlurm;
    li.rank = get_rank(env, "SLURM_PROCID");
    const char* ntasks = get(env, "SLURM_STEP_NUM_TASKS") ? "SLURM_STEP_NUM_TASKS" : "SLURM_NTASKS";
    if (!get(env, ntasks)) throw UsageError("srun did not export SLURM_NTASKS; launch with srun -n N");
    li.world_size = get_size(env, ntasks);
    li.local_rank = get(env, "SLURM_LOCALID") ? get_rank(env, "SLURM_LOCALID") : 0;
    li.local_world_size = 1;
    const char* tpn = get(env, "SLURM_STEP_TASKS_PER_NODE") ? "SLURM_STEP_TASKS_PER_NODE" : "SLURM_TASKS_PER_NODE";
    if (auto spec = get(env, tpn)) {
      const int node = get(env, "SLURM_NODEID") ? get_rank(env, "SLURM_NODEID") : 0;
      li.local_world_size = slurm_tasks_on_node(*spec, node, tpn);
    } else {
      // No task count for this node: at least the local ranks the task's own id implies. With a
      // count, a local id beyond it is an inconsistent environment, refused by check_ranks.
      li.local_world_size = std::max(li.local_world_size, li.local_rank + 1);
    }
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
    li.rank = get_rank(env, "PMIX_RANK");
    const char* size_key = get(env, "PMI_SIZE") ? "PMI_SIZE" : (get(env, "SLURM_NTASKS") ? "SLURM_NTASKS" : nullptr);
    if (!size_key)
      throw UsageError(
          "PMIX_RANK is set but the world size is unknown; export WORLD_SIZE and RANK, or use mpirun/srun");
    li.world_size = get_size(env, size_key);
    if (get(env, "MPI_LOCALRANKID")) li.local_rank = get_rank(env, "MPI_LOCALRANKID");
    else if (get(env, "SLURM_LOCALID")) li.local_rank = get_rank(env, "SLURM_LOCALID");
    li.local_world_size = get(env, "MPI_LOCALNRANKS") ? get_size(env, "MPI_LOCALNRANKS") : li.world_size;
    apply_slurm_job(env, li);
    mpi_rendezvous_host(env, li, "the PMIx launcher");
    apply_master_overrides(env, li);
    check_ranks(li, "PMIx environment");
    return li;
  }

  apply_master_overrides(env, li);
  return li;
}

std::string host_name() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return sanitize_utf8(buf);
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
  // Ranges first, merged, then expanded: repeated or overlapping items cost nothing, so the
  // result holds at most kMaxCpuId + 1 ids however long the list.
  std::vector<std::pair<long long, long long>> ranges;
  size_t start = 0;
  while (start < list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    const std::string item = list.substr(start, comma - start);
    const size_t dash = item.find('-');
    const long long lo = parse_int(item.substr(0, dash), "CPU list '" + list + "'");
    const long long hi = dash == std::string::npos ? lo : parse_int(item.substr(dash + 1), "CPU list '" + list + "'");
    if (lo < 0 || hi < lo || hi > kMaxCpuId)
      throw UsageError(fmt::format("CPU list '{}': '{}' is not a CPU id or an ascending range", list, item));
    ranges.emplace_back(lo, hi);
    start = comma + 1;
  }
  std::sort(ranges.begin(), ranges.end());
  std::vector<int> out;
  long long next = 0;  // ids below this are in `out` already
  for (const auto& [lo, hi] : ranges) {
    for (long long c = std::max(lo, next); c <= hi; ++c) out.push_back(static_cast<int>(c));
    next = std::max(next, hi + 1);
  }
  return out;
}

int threads_per_rank(const EnvMap& env, Launcher launcher, int local_world_size, int usable_cpus) {
  std::vector<const char*> keys = {"OMP_NUM_THREADS"};
  if (launcher == Launcher::kSlurm) keys.push_back("SLURM_CPUS_PER_TASK");  // srun gave each task this many
  for (const char* key : keys) {
    if (auto v = get(env, key)) {
      // OpenMP's nested form "4,2" (a count per nesting level): the first is the ranks' own.
      std::string first = *v;
      if (std::string(key) == "OMP_NUM_THREADS" && v->find(',') != std::string::npos) {
        if (!is_openmp_thread_list(*v))
          throw UsageError(fmt::format(
              "OMP_NUM_THREADS='{}' is not a thread count or OpenMP's list of them (e.g. 4 or 4,2); set it to "
              "1..{}",
              sanitize_utf8(*v, 64), kMaxThreadsPerRank));
        first = v->substr(0, v->find(','));
      }
      return static_cast<int>(parse_bounded(first, key, 1, kMaxThreadsPerRank));
    }
  }
  return std::max(1, std::max(1, usable_cpus) / std::max(1, local_world_size));
}

}  // namespace ddpbench

namespace ddpbench {

std::string launcher_job_id(const EnvMap& env, Launcher launcher) {
  auto value = [&](const char* key) -> std::string {
    const auto it = env.find(key);
    return it == env.end() ? std::string() : sanitize_utf8(it->second, kMaxJobIdBytes);
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
    default: return "";
  }
}

}  // namespace ddpbench
