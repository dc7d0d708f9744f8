#include "engine/run/validate_runner.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <thread>

#include "core/analysis/report_analysis.hpp"
#include "core/launch/node_env.hpp"
#include "core/launch/process.hpp"
#include "core/render/report_page.hpp"
#include "core/render/report_tables.hpp"
#include "core/result/row_validation.hpp"
#include "core/util/install_dirs.hpp"
#include "core/util/json_reader.hpp"
#include "core/util/sanitize.hpp"
#include "core/validate/record.hpp"
#include "engine/dist/job_env.hpp"
#include "engine/dist/process_group.hpp"
#include "engine/dist/rendezvous.hpp"
#include "engine/env_info.hpp"
#include "engine/models/registry.hpp"
#include "engine/run/launch.hpp"

namespace ddpbench {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// Every step's flags checked by its own command as a launch would check them (the values
/// CLI11 leaves to the command: precision, batch, sizes, memory): the command runs with
/// DDPBENCH_CHECK_ONLY=1 (check_only), which starts nothing. Throws UsageError
/// "PLAN:LINE:COL: <kind>: <the command's own line>" for the first step it refuses.
void check_steps(const Plan& plan, const std::vector<std::vector<std::string>>& options, int nproc) {
  const std::string exe = self_exe_path();
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& s = plan.steps[i];
    if (s.kind == "env") continue;
    std::vector<std::string> argv = {exe, s.subcommand()};
    argv.insert(argv.end(), options[i].begin(), options[i].end());
    if (nproc > 0 && s.subcommand() != "find-max-bs") argv.insert(argv.end(), {"--nproc-per-node", std::to_string(nproc)});
    ProcessOptions po;
    po.env["DDPBENCH_CHECK_ONLY"] = "1";
    const CaptureResult r = run_capture(argv, po, 120, 5);
    if (r.ok()) continue;
    std::string line = first_line(r.err);
    for (const char* prefix : {"ddpbench: error: ", "ddpbench: "})
      if (line.rfind(prefix, 0) == 0) line = line.substr(std::string(prefix).size());
    if (line.empty()) line = "its check " + r.status.describe();
    throw UsageError(fmt::format("{}{}: {}", plan_where(plan.path, s.place), s.kind, line));
  }
}

std::optional<std::string> file_hash(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  return content_hash(read_text_file(path));
}

/// Takes the folder's lock (an flock(2) on DIR/.validate.lock, held until this process ends,
/// its pid written in it), so that two validate processes never share one --out: the second
/// is refused with exit 2 naming the first. The kernel releases the lock however the holder
/// ends (kill -9 included), so a folder is never left locked. Throws UsageError.
void lock_folder(const std::string& dir) {
  const std::string path = dir + "/.validate.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    throw UsageError(fmt::format("--out {}: cannot create its lock file ({}); give a writable folder", dir,
                                 std::strerror(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {0};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    throw UsageError(fmt::format("--out {} is in use by another ddpbench validate{}; wait for it to end, or give "
                                 "another --out",
                                 dir, pid.empty() ? "" : " (pid " + pid + ")"));
  }
  const std::string me = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) (void)::pwrite(fd, me.data(), me.size(), 0);
  // fd stays open (and locked) until the process ends.
}

/// Refuses an --out that validate would not own: an existing folder that holds files but no
/// validate.json (validate would replace the user's plan.yaml and report.* there), and a plan
/// that is one of the files validate writes in --out (report.txt, a step's result, ...; the
/// plan validate itself keeps as DIR/plan.yaml may be given again). Throws UsageError.
void check_folder_is_validates(const std::string& dir, const std::string& plan_path) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;  // new: validate makes it
  if (!fs::exists(fs::path(dir) / "validate.json", ec)) {
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name == ".validate.lock") continue;  // a validate that ended before its first record
      throw UsageError(fmt::format("--out {} holds files validate did not write ({}, and no validate.json); give a new "
                                   "or empty folder, or one an earlier validate wrote",
                                   dir, terminal_line(name)));
    }
    return;
  }
  const fs::path plan = fs::weakly_canonical(plan_path, ec);
  if (ec || fs::weakly_canonical(dir, ec).string() != plan.parent_path().string()) return;
  const std::string name = plan.filename().string();
  const bool step_file = name.size() > 3 && std::isdigit(static_cast<unsigned char>(name[0])) &&
                         std::isdigit(static_cast<unsigned char>(name[1])) && name[2] == '-';
  if (name.rfind("report.", 0) == 0 || name == "verdict.json" || name == "validate.json" || step_file)
    throw UsageError(fmt::format("the plan {} is a file validate writes in --out {}; give the plan from outside the "
                                 "folder",
                                 plan_path, dir));
}

/// What this process is in the validation.
struct Job {
  LaunchInfo li;
  bool per_rank = false;  ///< started by a launcher: every rank runs validate
  int nproc = 0;          ///< built-in launcher: --nproc-per-node for run and comm (0: their default)
  double timeout_s = 300, step_timeout_s = 43200;
  std::string dir, exe;
  c10::intrusive_ptr<c10d::Store> store;  ///< per_rank: validate's own store (rank 0 serves it)
  std::string store_prefix;               ///< its key prefix (Rendezvous::prefix)
  std::vector<RankPlacement> placements;  ///< per_rank, rank 0: every rank's
};

nlohmann::json launch_json(const Job& j) {
  return {{"launcher", launcher_name(j.li.launcher)},
          {"world_size", j.per_rank ? j.li.world_size : j.nproc},
          {"nproc_per_node", j.per_rank ? 0 : j.nproc}};
}

/// Runs one child to its end, its output forwarded; the shell's exit code. The step dies with
/// validate (ProcessOptions::die_with_parent, SIGKILL included), and a SIGINT or SIGTERM to
/// validate is passed to the step's process group, so no rank of it outlives validate to
/// measure beside the next attempt; the step's code is then 128 + the signal.
int run_child(const std::vector<std::string>& argv, const EnvMap& env, double timeout_s, std::string* out = nullptr) {
  ProcessOptions po;
  po.env = env;
  po.stdout_mode = out ? OutputMode::kCapture : OutputMode::kForward;
  po.stderr_mode = OutputMode::kForward;
  po.die_with_parent = true;
  po.env["DDPBENCH_CHECK_ONLY"] = "";  // the real step, even where validate's environment has the test hook
  const CaptureResult r = run_capture(argv, po, timeout_s, 10.0, /*forward_interrupts=*/true);
  if (out) *out = r.out;
  if (r.interrupted) {
    std::fprintf(stderr, "ddpbench: validate: %s: the step was stopped with it\n", strsignal(r.interrupted));
    return 128 + r.interrupted;
  }
  if (r.timed_out) {
    std::fprintf(stderr, "ddpbench: validate: the step ran past --step-timeout %.0f s and was stopped\n", timeout_s);
    return 124;
  }
  return r.status.shell_code();
}

/// The env step: every host's environment. Under a launcher every rank takes part (the local
/// rank 0 of each host probes it, rank 0 gathers: the same gather as run's); alone, this host.
nlohmann::json env_nodes(Job& j, const EnvMap& env) {
  if (j.per_rank) {
    const NodeEnvironments n =
        gather_node_environments(j.store, j.li, env, j.placements, std::chrono::milliseconds((long long)(j.timeout_s * 1000)),
                                 j.store_prefix);
    return n.nodes;
  }
  nlohmann::json node = host_environment(env);
  return nlohmann::json::array({node});
}

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

/// Per-rank mode: every rank says it finished step `index` with `code`; rank 0 waits for all
/// (at most --timeout after its own part), finds the first other rank whose code is not 0 (nor 1 where
/// `one_is_a_verdict`: pairs), and publishes whether to go on (`go_on` and no such rank);
/// the others wait for that word (at most --step-timeout: rank 0 may run a step alone) and
/// follow it. Returns, on rank 0,
/// the failing rank's line ("" when none); on the others "stop" or "".
std::string step_barrier(Job& j, int index, int code, bool go_on, bool one_is_a_verdict) {
  const std::string k = fmt::format("validate/step{}/", index);
  j.store->set(k + "code/" + std::to_string(j.li.rank), bytes(std::to_string(code)));
  j.store->add(k + "done", 1);
  const auto wait = std::chrono::milliseconds((long long)(j.step_timeout_s * 1000));
  if (j.li.rank == 0) {
    // The others ran the same step beside rank 0 (or none): once rank 0's part ended, theirs
    // ends within --timeout, or a rank died.
    const auto deadline = Clock::now() + std::chrono::milliseconds((long long)(j.timeout_s * 1000));
    while (j.store->add(k + "done", 0) < j.li.world_size) {
      if (Clock::now() > deadline)
        throw std::runtime_error(fmt::format(
            "validate: {} of {} ranks did not finish step {} within --timeout {:.0f} s of rank 0; a rank died or "
            "stalls",
            j.li.world_size - j.store->add(k + "done", 0), j.li.world_size, index, j.timeout_s));
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    std::string bad;
    for (int r = 1; r < j.li.world_size && bad.empty(); ++r) {
      const auto v = j.store->get(k + "code/" + std::to_string(r));
      const int c = std::stoi(std::string(v.begin(), v.end()));
      if (c != 0 && !(c == 1 && one_is_a_verdict)) bad = fmt::format("rank {} exited {}", r, c);
    }
    const std::string word = (go_on && bad.empty()) ? "go" : "stop";
    j.store->set(k + "next", std::vector<uint8_t>(word.begin(), word.end()));
    return bad;
  }
  j.store->wait({k + "next"}, wait);
  const auto v = j.store->get(k + "next");
  return std::string(v.begin(), v.end()) == "go" ? "" : "stop";
}

/// The report's options from the plan's targets, with validate's own checks among them
/// (SummaryTargets::external).
ReportOptions report_options(const Plan& plan, const std::vector<std::pair<ValidateCheck, std::string>>& checks) {
  ReportOptions opts;
  const PlanTargets& pt = plan.targets;
  if (pt.efficiency) opts.targets.min_efficiency = *pt.efficiency;
  if (pt.exposed_comm) opts.targets.max_exposed_comm = *pt.exposed_comm;
  if (pt.ex_s_per_gpu) opts.targets.min_per_gpu_ex_s = *pt.ex_s_per_gpu;
  for (const auto& [model, mt] : pt.models) {
    ModelTargets m;
    m.min_efficiency = mt.efficiency;
    m.max_exposed_comm = mt.exposed_comm;
    m.min_per_gpu_ex_s = mt.ex_s_per_gpu;
    opts.targets.per_model[model] = m;
  }
  for (const auto& [c, file] : checks) opts.targets.external.push_back(validate_summary_check(c, file));
  return opts;
}

/// DIR/report.html: the report's page with validate's block (`head`, escaped) first in its body.
std::string validate_page(const std::optional<Report>& rep, const std::string& head) {
  std::string html = rep ? report_page(*rep) : "<!doctype html><html><body></body></html>";
  const std::string esc = html_escape(head);
  const size_t body = html.find("<body");
  const size_t at = body == std::string::npos ? std::string::npos : html.find('>', body);
  const std::string block = "<section id=\"validate\"><h2>ddpbench validate</h2><pre>" + esc + "</pre></section>";
  if (at != std::string::npos) html.insert(at + 1, block);
  else html = block + html;
  return html;
}

/// The report of the steps' result files, built here with validate's own checks among its
/// targets (SummaryTargets::external), so the report's headline, its Targets table and
/// validate's line count the same checks: DIR/report.txt, .md and .html (validate's block
/// first: the plan, what this job cannot evaluate, where it stopped, the verdict line; then the
/// report, its headline first), DIR/report.json and DIR/verdict.json (the verdict's claim and
/// every claim with its evidence). Returns the verdict (kind "validate_tally").
Claim write_report(const Job& j, const Plan& plan, const std::vector<std::string>& files,
                   const std::vector<std::pair<ValidateCheck, std::string>>& checks, const std::string& stopped,
                   const std::vector<std::string>& notes) {
  const ReportOptions opts = report_options(plan, checks);
  std::optional<Report> rep;
  std::string report_note;
  try {
    std::vector<NamedResult> loaded;
    for (const auto& f : files) loaded.push_back({j.dir + "/" + f, load_result(j.dir + "/" + f)});
    if (!loaded.empty()) rep = build_report(loaded, opts);
  } catch (const UsageError& e) {
    report_note = first_line(e.what());
  }
  const std::vector<SummaryCheck>& all = rep ? rep->summary.checks : opts.targets.external;
  const bool cpu = device_gpus("auto") == 0;
  const Claim verdict = tally_claim(all, "validate", cpu ? "rank" : "GPU");
  // validate's own block: the plan, what cannot be evaluated here, where it stopped, the verdict.
  std::string head = fmt::format("ddpbench validate: {}{}\n", plan.path,
                                 plan.description.empty() ? "" : " (" + plan.description + ")");
  for (const auto& n : notes) head += "note: " + n + "\n";
  if (!stopped.empty()) head += "STOPPED: " + stopped + "\n";
  if (!report_note.empty()) head += "report: not written: " + report_note + "\n";
  head += verdict.text + "\n";
  const std::string body_txt = rep ? render_report(*rep, TableFormat::text, 100) : "";
  const std::string body_md = rep ? render_report(*rep, TableFormat::markdown) : "";
  write_file_atomic(j.dir + "/report.txt", head + "\n" + body_txt);
  write_file_atomic(j.dir + "/report.md", "# ddpbench validate\n\n```\n" + head + "```\n\n" + body_md);
  write_file_atomic(j.dir + "/report.html", validate_page(rep, head));
  // With no reportable step there is no report.json, and none of an earlier plan may stay behind
  // as if it were this one's.
  if (rep) write_file_atomic(j.dir + "/report.json", render_report(*rep, TableFormat::json));
  else std::filesystem::remove(j.dir + "/report.json");
  std::vector<Claim> claims;
  if (rep) claims = rep->summary.claims();
  else
    for (const auto& c : all) claims.push_back(c.claim);
  const nlohmann::json v = {{"ddpbench_validate_verdict", 1},
                            {"plan", plan.path},
                            {"files", files},
                            {"notes", notes},
                            {"stopped", stopped},
                            {"verdict", claim_json(verdict)},
                            {"claims", claims_json(claims)}};
  write_file_atomic(j.dir + "/verdict.json", v.dump(2) + "\n");
  return verdict;
}

/// The plan as read once (recorded, hashed and parsed alike), its --redo steps and each step's
/// command-line options for this node.
struct LoadedPlan {
  std::string text;
  Plan plan;
  std::vector<std::string> redo;
  std::vector<std::vector<std::string>> options;  ///< per step, as step_options gives them
};

LoadedPlan load_plan(const ValidateRequest& req, const StepOptionsOf& step_options) {
  LoadedPlan lp;
  // A file over the plan limit is refused unread.
  lp.text = read_text_file(req.plan_path, kMaxPlanBytes);
  lp.plan = parse_plan(lp.text, req.plan_path);
  // A target for a model the zoo lacks would never apply: a mistyped name, said at its place.
  for (const auto& [m, place] : lp.plan.targets.model_places)
    check_plan_model_name(lp.plan, place, "targets: models", m, model_names());
  if (!req.redo.empty()) lp.redo = redo_steps(lp.plan, req.redo);
  const bool cpu = device_gpus("auto") == 0;  // a CPU node: steps take their cpu: options
  for (const auto& s : lp.plan.steps) lp.options.push_back(step_options(lp.plan, s, cpu));
  return lp;
}

/// --dry-run: the plan checked as a launch would check it, and each step's command on stdout.
int print_dry_run(const ValidateRequest& req, const LoadedPlan& lp) {
  check_steps(lp.plan, lp.options, req.nproc > 0 ? req.nproc : lp.plan.nproc_per_node.value_or(0));
  std::string text = fmt::format("plan {} ({} steps)\n", req.plan_path, lp.plan.steps.size());
  for (size_t i = 0; i < lp.plan.steps.size(); ++i)
    text += fmt::format("{}: ddpbench {} {}\n", lp.plan.steps[i].name(), lp.plan.steps[i].subcommand(),
                        fmt::join(lp.options[i], " "));
  write_stdout(text);
  return kExitOk;
}

/// This process's part in the validation: the launch it belongs to and the built-in
/// launcher's ranks. Throws UsageError for --nproc-per-node under an outside launcher.
Job make_job(const ValidateRequest& req, const Plan& plan, const EnvMap& env) {
  Job j;
  j.li = detect_launch(env);
  j.per_rank = j.li.launcher != Launcher::kNone;
  j.timeout_s = req.timeout_s;
  j.step_timeout_s = req.step_timeout_s;
  j.dir = req.dir;
  j.exe = self_exe_path();
  if (j.per_rank && req.nproc > 0)
    throw UsageError(fmt::format("--nproc-per-node is the built-in launcher's, and {} started this process; leave it "
                                 "out (the launcher starts the ranks)",
                                 launcher_name(j.li.launcher)));
  j.nproc = req.nproc > 0 ? req.nproc : plan.nproc_per_node.value_or(0);
  if (j.per_rank) j.nproc = 0;
  return j;
}

/// A resumed step whose .partial is not a readable result (cut short by a full disk, edited)
/// cannot be continued: it is kept aside under a name of its own and the step measured again,
/// so the folder is never stuck on it.
void set_aside_unreadable_partials(const std::string& dir, const Plan& plan, std::vector<StepDecision>& decisions) {
  std::error_code ec;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (decisions[i].action != StepAction::kResume) continue;
    const std::string partial = dir + "/" + plan.steps[i].name() + ".json.partial";
    try {
      (void)read_result_file(partial);
    } catch (const UsageError& e) {
      std::string kept = plan.steps[i].name() + ".unreadable.partial";
      for (int k = 2; fs::exists(dir + "/" + kept, ec); ++k)
        kept = fmt::format("{}.unreadable-{}.partial", plan.steps[i].name(), k);
      std::error_code e2;
      fs::rename(partial, dir + "/" + kept, e2);
      if (e2) throw std::runtime_error(fmt::format("cannot keep {} as {}/{} ({})", partial, dir, kept, e2.message()));
      decisions[i] = {StepAction::kRedo, fmt::format("redone: its .partial is not a readable result ({}); kept as {}",
                                                     first_line(e.what()), kept)};
    }
  }
}

/// The new record's steps and history: kept steps keep their record; a step measured again
/// keeps its earlier record and file as history (the file renamed), never lost.
void carry_records(const std::string& dir, const Plan& plan, const std::optional<ValidateRecord>& old,
                   const std::vector<StepDecision>& decisions, ValidateRecord& rec) {
  if (old) rec.history = old->history;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const StepRecord* was = old ? old->find(plan.steps[i].name()) : nullptr;
    if (decisions[i].action == StepAction::kKeep) rec.steps.push_back(*was);
    if (decisions[i].action == StepAction::kRedo && was) {
      StepRecord h = *was;
      std::error_code e;
      if (!h.file.empty() && fs::exists(dir + "/" + h.file, e)) {
        const std::string kept = history_file(rec.history, h.name);
        fs::rename(dir + "/" + h.file, dir + "/" + kept, e);
        if (e) throw std::runtime_error(fmt::format("cannot keep {}/{} as {} ({})", dir, h.file, kept, e.message()));
        h.file = kept;
      }
      rec.history.push_back(h);
    }
  }
}

/// Rank 0: what becomes of each step (keep, resume, redo, run) given the folder's earlier
/// record, and the record this validation starts from; DIR/plan.yaml written.
std::vector<StepDecision> decide_on_rank0(const Job& j, const ValidateRequest& req, const LoadedPlan& lp,
                                          const std::string& record_path, ValidateRecord& rec) {
  std::error_code ec;
  std::optional<ValidateRecord> old;
  if (fs::exists(record_path, ec))
    old = record_from_json(
        parse_json_bounded(read_text_file(record_path), record_path, "remove it or give another --out"), record_path);
  DirFacts facts;
  facts.hash_of = [&](const std::string& f) { return file_hash(req.dir + "/" + f); };
  facts.exists = [&](const std::string& f) {
    std::error_code e;
    return fs::exists(req.dir + "/" + f, e);
  };
  std::vector<StepDecision> decisions = decide_steps(lp.plan, old, launch_json(j), facts, lp.redo);
  set_aside_unreadable_partials(req.dir, lp.plan, decisions);
  rec.plan_path = req.plan_path;
  rec.plan_text = lp.text;
  carry_records(req.dir, lp.plan, old, decisions, rec);
  write_file_atomic(req.dir + "/plan.yaml", rec.plan_text);
  return decisions;
}

/// Per-rank mode: the ranks meet on validate's own store (rendezvous), and rank 0's decisions
/// reach the others through it.
void join_and_share_decisions(Job& j, const EnvMap& env, const LoadedPlan& lp, std::vector<StepDecision>& decisions) {
  const auto timeout = std::chrono::milliseconds((long long)(j.timeout_s * 1000));
  JobEnv job = join_job(j.li, env, BackendKind::kGloo, c10::Device(c10::kCPU), timeout, "validate " + content_hash(lp.text));
  j.store = job.store;
  j.store_prefix = job.store_prefix;
  j.placements = std::move(job.placements);
  if (j.li.rank == 0) {
    nlohmann::json d = nlohmann::json::array();
    for (const auto& x : decisions) d.push_back(static_cast<int>(x.action));
    j.store->set("validate/decisions", bytes(d.dump()));
  } else {
    j.store->wait({"validate/decisions"}, timeout);
    const auto v = j.store->get("validate/decisions");
    for (int a : nlohmann::json::parse(std::string(v.begin(), v.end())))
      decisions.push_back({static_cast<StepAction>(a), ""});
  }
}

/// Rank 0: what this job cannot evaluate (too few nodes, ranks or devices for a step), from
/// the hosts that met and the GPUs here.
std::vector<std::string> preflight_notes(const Job& j, const Plan& plan) {
  const int gpus = device_gpus("auto");
  int nodes = 1;
  if (j.per_rank) {
    std::set<std::string> hosts;
    for (const auto& p : j.placements) hosts.insert(p.host);
    nodes = std::max<int>(1, static_cast<int>(hosts.size()));
  }
  // The built-in launcher's default: one rank per GPU, 2 on CPUs (run's and comm's).
  const int ranks = j.per_rank ? j.li.world_size : j.nproc > 0 ? j.nproc : gpus > 0 ? gpus : 2;
  const int devices = gpus > 0 ? std::min(ranks, gpus * nodes) : ranks;
  return plan_preflight_notes(plan, nodes, ranks, devices, gpus > 0);
}

/// The state of one validation while its steps run.
struct ValidateRun {
  Job& j;
  const LoadedPlan& lp;
  const EnvMap& env;
  std::vector<StepDecision> decisions;
  ValidateRecord rec;
  std::string record_path;
  std::vector<std::pair<ValidateCheck, std::string>> checks;  ///< and the step's file
  std::vector<std::string> report_files;
  std::string stopped;

  /// One line on stderr (rank 0).
  void say(const std::string& line) const {
    if (j.li.rank == 0) std::fprintf(stderr, "ddpbench: validate: %s\n", line.c_str());
  }
  /// DIR/validate.json, its steps by name.
  void write_record() {
    std::sort(rec.steps.begin(), rec.steps.end(), [](const StepRecord& a, const StepRecord& b) { return a.name < b.name; });
    write_file_atomic(record_path, record_json(rec).dump(2) + "\n");
  }
  /// The step's own verdicts (rank 0), from its result file.
  void judge(const PlanStep& s, const StepRecord& r) {
    if (r.status != "complete") {
      checks.push_back({{s.name(), "exit", "FAIL", fmt::format("exit {}", r.exit_code)}, ""});
      return;
    }
    const std::string path = j.dir + "/" + r.file;
    if (s.kind == "env") {
      const auto doc = parse_json_bounded(read_text_file(path), path, "run the step again (remove it)");
      for (auto& c : env_checks(s.name(), doc.at("nodes"))) checks.push_back({c, path});
      return;
    }
    const ResultFile f = load_result(path);
    if (s.kind == "comm")
      for (auto& c : comm_checks(s.name(), f, lp.plan.targets.busbw_gbs)) checks.push_back({c, path});
    if (s.kind == "pairs")
      for (auto& c : pairs_checks(s.name(), f)) checks.push_back({c, path});
    report_files.push_back(r.file);
  }
};

/// The step's command line and environment: its subcommand and options, its --json (and
/// --resume) in DIR, the built-in launcher's ranks, and under a launcher a port of its own.
std::pair<std::vector<std::string>, EnvMap> step_command(const Job& j, const LoadedPlan& lp, size_t i, bool resume) {
  const PlanStep& s = lp.plan.steps[i];
  const std::string file = s.name() + ".json";
  std::vector<std::string> argv = {j.exe, s.subcommand()};
  argv.insert(argv.end(), lp.options[i].begin(), lp.options[i].end());
  EnvMap child_env;
  if (s.kind != "env") {
    argv.insert(argv.end(), {"--json", j.dir + "/" + file});
    if (resume) argv.insert(argv.end(), {"--resume", j.dir + "/" + file + ".partial"});
    if (!j.per_rank && j.nproc > 0 && (s.subcommand() == "run" || s.subcommand() == "comm"))
      argv.insert(argv.end(), {"--nproc-per-node", std::to_string(j.nproc)});
  }
  if (j.per_rank) {
    // Each step's ranks meet on a port of their own, so a rank that finished a step early
    // never reaches the store of the step before.
    child_env["MASTER_ADDR"] = j.li.master_addr;
    child_env["MASTER_PORT"] = std::to_string(j.li.master_port + static_cast<int>(s.index));
    child_env["TORCHELASTIC_USE_AGENT_STORE"] = "False";
  }
  return {argv, child_env};
}

/// This rank's part of a step: the env step's gather (rank 0 writes it), nothing for a
/// find-max-bs step off rank 0 (one search, on rank 0's device), else the child; its exit code.
int run_step_here(ValidateRun& p, const PlanStep& s, const std::string& file, const std::vector<std::string>& argv,
                  const EnvMap& child_env) {
  if (s.kind == "env") {
    try {
      const nlohmann::json nodes = env_nodes(p.j, p.env);
      if (p.j.li.rank == 0)
        write_file_atomic(p.j.dir + "/" + file,
                          nlohmann::json{{"ddpbench_validate_env", 1}, {"nodes", nodes},
                                         {"node_differences", node_differences(nodes)}}
                                  .dump(2) +
                              "\n");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ddpbench: error: %s\n", first_line(e.what()).c_str());
      return 1;
    }
    return 0;
  }
  if (s.kind == "find-max-bs" && p.j.li.rank != 0) return 0;
  return run_child(argv, child_env, p.j.step_timeout_s);
}

/// Runs step `i` (not kept): its record "running", then this rank's part, the ranks' barrier,
/// and on rank 0 the record completed or failed, the step judged, and where the plan stopped.
void run_step(ValidateRun& p, size_t i) {
  std::error_code ec;
  const Job& j = p.j;
  const PlanStep& s = p.lp.plan.steps[i];
  const size_t n = p.lp.plan.steps.size();
  const std::string file = s.name() + ".json";
  const std::string tag = fmt::format("[{}/{}] {}", i + 1, n, s.name());
  const bool resume = p.decisions[i].action == StepAction::kResume;
  if (j.li.rank == 0) {
    if (p.decisions[i].action == StepAction::kRedo) p.say(tag + ": " + p.decisions[i].note);
    // A result being redone was kept as history above; a stale .partial of a redone step is too.
    if (!resume && fs::exists(j.dir + "/" + file + ".partial", ec))
      fs::rename(j.dir + "/" + file + ".partial", j.dir + "/" + history_file(p.rec.history, s.name()) + ".partial", ec);
  }
  const auto [argv, child_env] = step_command(j, p.lp, i, resume);
  StepRecord r;
  r.name = s.name();
  r.kind = s.kind;
  r.fingerprint = s.fingerprint();
  r.argv = argv;
  r.argv[0] = "ddpbench";
  r.launch = launch_json(j);
  r.started_utc = utc_now_iso8601();
  r.status = "running";
  r.file = file;
  p.say(fmt::format("{}: ddpbench {}{}", tag, fmt::join(std::vector<std::string>(r.argv.begin() + 1, r.argv.end()), " "),
                    resume ? " (continued)" : ""));
  if (j.li.rank == 0) {
    p.rec.steps.push_back(r);
    p.write_record();
  }
  const auto t0 = Clock::now();
  const int code = run_step_here(p, s, file, argv, child_env);
  const bool complete = code == 0 || (code == 1 && s.kind == "pairs" && fs::exists(j.dir + "/" + file, ec));
  std::string other;
  if (j.per_rank) other = step_barrier(p.j, s.index, code, complete, s.kind == "pairs");
  if (j.li.rank != 0) {  // rank 0 decides whether the plan goes on
    if (!other.empty()) p.stopped = "stop";
    return;
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.finished_utc = utc_now_iso8601();
  r.exit_code = code;
  r.status = complete && other.empty() ? "complete" : "failed";
  if (r.status == "complete") r.file_hash = file_hash(j.dir + "/" + file).value_or("");
  for (auto& x : p.rec.steps)  // its "running" record, wherever sorting put it
    if (x.name == r.name) x = r;
  p.write_record();
  p.say(fmt::format("{}: {} in {:.1f} s{}", tag,
                    r.status == "complete" ? "complete" : "FAILED (exit " + std::to_string(code) + ")", r.seconds,
                    other.empty() ? "" : "; " + other));
  p.judge(s, r);
  if (r.status != "complete") {
    p.stopped = fmt::format("step {} ({}) {}; the steps after it did not run. Run the same command again to resume: "
                            "complete steps are kept",
                            s.name(), s.kind, other.empty() ? "exited " + std::to_string(code) : other);
    if (fs::exists(j.dir + "/" + file + ".partial", ec)) p.stopped += fmt::format(", this one continues from {}.partial", file);
  }
}

/// Rank 0 after the steps: the steps never run named, the report and verdict written, the
/// verdict line on stdout; the exit code.
int finish(ValidateRun& p, const std::vector<std::string>& notes) {
  const Plan& plan = p.lp.plan;
  for (size_t i = 0; i < plan.steps.size(); ++i)
    if (!p.stopped.empty() && !p.rec.find(plan.steps[i].name()))
      p.checks.push_back({{plan.steps[i].name(), "ran", "not evaluated", "not run: the plan stopped before it"}, ""});
  const Claim verdict = write_report(p.j, plan, p.report_files, p.checks, p.stopped, notes);
  if (!p.stopped.empty()) p.say("stopped: " + p.stopped);
  std::fprintf(stderr, "ddpbench: validate: wrote %s/report.txt, report.md, report.html, %sverdict.json and validate.json\n",
               p.j.dir.c_str(), std::filesystem::exists(p.j.dir + "/report.json") ? "report.json, " : "");
  write_stdout(verdict.text + "\n");
  return (verdict.number("fail") > 0 || !p.stopped.empty()) ? kExitFailure : kExitOk;
}

}  // namespace

int run_validate(const ValidateRequest& req, const StepOptionsOf& step_options) {
  const LoadedPlan lp = load_plan(req, step_options);
  if (req.dry_run) return print_dry_run(req, lp);  // the plan checked; each step's command, nothing run
  if (req.dir.empty()) throw UsageError("no --out DIR; give the folder for the steps' results and the report");

  const EnvMap env = current_env();
  Job j = make_job(req, lp.plan, env);
  // Every rank checks: a rank that refuses its steps' flags tells rank 0 (validate_on_rank0),
  // whose rendezvous below then ends with that rank's line instead of waiting --timeout.
  check_steps(lp.plan, lp.options, j.nproc);

  std::error_code ec;
  if (j.li.rank == 0) check_folder_is_validates(req.dir, req.plan_path);
  fs::create_directories(req.dir, ec);
  if (ec)
    throw UsageError(fmt::format("--out {}: cannot create the folder ({}); give a writable folder", req.dir, ec.message()));
  ValidateRun p{j, lp, env, {}, {}, req.dir + "/validate.json", {}, {}, {}};
  if (j.li.rank == 0) lock_folder(req.dir);

  // Rank 0 decides what to keep; under a launcher the others are told through validate's store.
  if (j.li.rank == 0) p.decisions = decide_on_rank0(j, req, lp, p.record_path, p.rec);
  if (j.per_rank) join_and_share_decisions(j, env, lp, p.decisions);

  // What this job cannot evaluate, said before anything runs (and in the report).
  std::vector<std::string> notes;
  if (j.li.rank == 0) {
    notes = preflight_notes(j, lp.plan);
    for (const auto& n : notes) p.say("note: " + n);
  }
  for (size_t i = 0; i < lp.plan.steps.size(); ++i) {
    const PlanStep& s = lp.plan.steps[i];
    if (p.decisions[i].action == StepAction::kKeep) {
      p.say(fmt::format("[{}/{}] {}: kept (complete, plan entry unchanged)", i + 1, lp.plan.steps.size(), s.name()));
      if (j.li.rank == 0) p.judge(s, *p.rec.find(s.name()));
      continue;
    }
    if (!p.stopped.empty()) continue;
    run_step(p, i);
  }
  if (j.li.rank != 0) return p.stopped.empty() ? kExitOk : kExitFailure;
  return finish(p, notes);
}

}  // namespace ddpbench
