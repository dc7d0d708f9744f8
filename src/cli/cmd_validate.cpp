// `ddpbench validate PLAN --out DIR`: a cluster acceptance from one plan file, resumable;
// `ddpbench validate --compare DIR_A DIR_B`: two acceptances of one plan side by side.
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
#include <memory>
#include <set>
#include <thread>

#include "cli/commands.hpp"
#include "core/analysis/report_analysis.hpp"
#include "core/launch/process.hpp"
#include "core/config/run_config.hpp"
#include "core/launch/node_env.hpp"
#include "core/render/report_tables.hpp"
#include "core/util/json_reader.hpp"
#include "core/util/sanitize.hpp"
#include "core/validate/plan.hpp"
#include "core/validate/record.hpp"
#include "engine/dist/process_group.hpp"
#include "engine/dist/rendezvous.hpp"
#include "engine/env_info.hpp"
#include "engine/models/registry.hpp"
#include "engine/run/launch.hpp"

namespace ddpbench::cli {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// The subcommands a plan's steps run, registered on `root` so their own parsers check the
/// steps' options. The Commands own the variables the options write to: keep them while
/// `root` parses.
std::vector<Command> register_step_parsers(CLI::App& root) {
  static const std::vector<std::string> argv = {"ddpbench"};
  return {add_run_command(root, argv), add_comm_command(root, argv), add_find_max_bs_command(root, argv),
          add_env_command(root)};
}

/// Parses `args` (subcommand first) with a fresh parser; "" when CLI11 accepts them, else
/// its message. `ignore_required`: a missing required option is not an error (one option
/// alone is being checked).
std::string parse_error(const std::vector<std::string>& args, bool ignore_required) {
  CLI::App root{"ddpbench", "ddpbench"};
  root.require_subcommand(1);
  const std::vector<Command> keep = register_step_parsers(root);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 reads a vector from its back
  try {
    root.parse(reversed);
  } catch (const CLI::RequiredError& e) {
    if (!ignore_required) return first_line(e.what());
  } catch (const CLI::ParseError& e) {
    return first_line(e.what());
  }
  return "";
}

/// The option's words on a command line: "--key v1 v2" (a flag: "--key" for true, nothing
/// for false). Throws UsageError at the option's place for an unknown option or a flag
/// given something other than true/false.
std::vector<std::string> option_words(const Plan& plan, const PlanStep& step, const PlanOption& o,
                                      CLI::App& sub) {
  const std::string where = plan_where(plan.path, o.place) + step.kind + ": ";
  CLI::Option* opt = sub.get_option_no_throw("--" + o.key);
  if (!opt)
    throw UsageError(fmt::format("{}unknown option '{}' of 'ddpbench {}'; see 'ddpbench {} --help'", where, o.key,
                                 step.subcommand(), step.subcommand()));
  if (opt->get_expected_max() == 0) {  // a flag (CLI11: expected(0))
    const std::string v = o.values.size() == 1 ? o.values[0] : "";
    if (v == "true" || v == "yes" || v == "on") return {"--" + o.key};
    if (v == "false" || v == "no" || v == "off") return {};
    throw UsageError(fmt::format("{}{} is a flag; give it true or false, not '{}'", where, o.key,
                                 o.list ? "a list" : v));
  }
  std::vector<std::string> words = {"--" + o.key};
  for (const auto& v : o.values) words.push_back(v);
  return words;
}

/// Throws UsageError "PLAN:LINE:COL: <what>: unknown model 'M'; choose one of: ..." unless `m`
/// is one of `models` (the zoo's names).
void check_model_name(const Plan& plan, const PlanPlace& place, const std::string& what, const std::string& m,
                      const std::vector<std::string>& models) {
  if (std::find(models.begin(), models.end(), m) == models.end())
    throw UsageError(fmt::format("{}{}: unknown model '{}'; choose one of: {} (see 'ddpbench models')",
                                 plan_where(plan.path, place), what, m, fmt::join(models, ", ")));
}

/// The step's options as its subcommand's command line (without the subcommand and without
/// --json), each checked by the subcommand's own parser and the model names against the zoo;
/// `cpu`: with the step's cpu: options (this node has no GPU). Throws UsageError
/// "PLAN:LINE:COL: <kind>: <what>" naming the first bad option.
std::vector<std::string> step_options(const Plan& plan, const PlanStep& step, bool cpu) {
  CLI::App root{"ddpbench", "ddpbench"};
  const std::vector<Command> keep = register_step_parsers(root);
  CLI::App* sub = root.get_subcommand(step.subcommand());
  std::vector<std::string> all = step.implied_args();
  const std::vector<std::string> models = model_names();
  std::vector<const PlanOption*> given;
  for (const auto& o : step.options) given.push_back(&o);
  for (const auto& o : step.cpu_options) given.push_back(&o);  // checked on every node, used on CPU nodes
  for (const PlanOption* op : given) {
    const PlanOption& o = *op;
    const std::vector<std::string> words = option_words(plan, step, o, *sub);
    std::vector<std::string> alone = {step.subcommand()};
    alone.insert(alone.end(), words.begin(), words.end());
    const std::string err = parse_error(alone, true);
    if (!err.empty())
      throw UsageError(fmt::format("{}{}: {}; see 'ddpbench {} --help'", plan_where(plan.path, o.place), step.kind, err,
                                   step.subcommand()));
    if (o.key == "model" && step.kind != "comm" && step.kind != "pairs")
      for (const auto& v : o.values)
        for (const auto& m : split_list(v)) check_model_name(plan, o.place, step.kind, m, models);
    const bool cpu_only = op >= step.cpu_options.data() && op < step.cpu_options.data() + step.cpu_options.size();
    if (!cpu_only || cpu) all.insert(all.end(), words.begin(), words.end());
  }
  std::vector<std::string> whole = {step.subcommand()};
  whole.insert(whole.end(), all.begin(), all.end());
  const std::string err = parse_error(whole, false);
  if (!err.empty())
    throw UsageError(fmt::format("{}{}: {}; see 'ddpbench {} --help'", plan_where(plan.path, step.place), step.kind,
                                 err, step.subcommand()));
  return all;
}

std::string self_exe();

/// Every step's flags checked by its own command as a launch would check them (the values
/// CLI11 leaves to the command: precision, batch, sizes, memory): the command runs with
/// DDPBENCH_CHECK_ONLY=1 (check_only), which starts nothing. Throws UsageError
/// "PLAN:LINE:COL: <kind>: <the command's own line>" for the first step it refuses.
void check_steps(const Plan& plan, const std::vector<std::vector<std::string>>& options, int nproc) {
  const std::string exe = self_exe();
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

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find this program's path (/proc/self/exe): " + ec.message());
  return p.string();
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

/// The report of the steps' result files, built here with validate's own checks among its
/// targets (SummaryTargets::external), so the report's headline, its Targets table and
/// validate's line count the same checks: DIR/report.txt, .md and .html (validate's block
/// first: the plan, what this job cannot evaluate, where it stopped, the verdict line; then the
/// report, its headline first), DIR/report.json and DIR/verdict.json (the verdict's claim and
/// every claim with its evidence). Returns the verdict (kind "validate_tally").
Claim write_report(const Job& j, const Plan& plan, const std::vector<std::string>& files,
                   const std::vector<std::pair<ValidateCheck, std::string>>& checks, const std::string& stopped,
                   const std::vector<std::string>& notes) {
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
  std::string html = rep ? report_page(*rep) : "<!doctype html><html><body></body></html>";
  const std::string esc = html_escape(head);
  const size_t body = html.find("<body");
  const size_t at = body == std::string::npos ? std::string::npos : html.find('>', body);
  const std::string block = "<section id=\"validate\"><h2>ddpbench validate</h2><pre>" + esc + "</pre></section>";
  if (at != std::string::npos) html.insert(at + 1, block);
  else html = block + html;
  write_file_atomic(j.dir + "/report.html", html);
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

int run_validate(const std::string& plan_path, const std::string& dir, int nproc_flag, double timeout_s,
                 double step_timeout_s, bool dry_run, const std::string& redo_list) {
  // Read once: recorded, hashed and parsed alike; a file over the plan limit is refused unread.
  const std::string plan_text = read_text_file(plan_path, kMaxPlanBytes);
  const Plan plan = parse_plan(plan_text, plan_path);
  // A target for a model the zoo lacks would never apply: a mistyped name, said at its place.
  for (const auto& [m, place] : plan.targets.model_places)
    check_model_name(plan, place, "targets: models", m, model_names());
  const std::vector<std::string> redo = redo_list.empty() ? std::vector<std::string>{} : redo_steps(plan, redo_list);
  std::vector<std::vector<std::string>> options;
  const bool cpu = device_gpus("auto") == 0;  // a CPU node: steps take their cpu: options
  for (const auto& s : plan.steps) options.push_back(step_options(plan, s, cpu));
  if (dry_run) {  // the plan checked; each step's command, nothing run
    check_steps(plan, options, nproc_flag > 0 ? nproc_flag : plan.nproc_per_node.value_or(0));
    std::string text;
    for (size_t i = 0; i < plan.steps.size(); ++i)
      text += fmt::format("{}: ddpbench {} {}\n", plan.steps[i].name(), plan.steps[i].subcommand(),
                          fmt::join(options[i], " "));
    write_stdout(text);
    return kExitOk;
  }
  if (dir.empty()) throw UsageError("no --out DIR; give the folder for the steps' results and the report");

  const EnvMap env = current_env();
  Job j;
  j.li = detect_launch(env);
  j.per_rank = j.li.launcher != Launcher::kNone;
  j.timeout_s = timeout_s;
  j.step_timeout_s = step_timeout_s;
  j.dir = dir;
  j.exe = self_exe();
  if (j.per_rank && nproc_flag > 0)
    throw UsageError(fmt::format("--nproc-per-node is the built-in launcher's, and {} started this process; leave it "
                                 "out (the launcher starts the ranks)",
                                 launcher_name(j.li.launcher)));
  j.nproc = nproc_flag > 0 ? nproc_flag : plan.nproc_per_node.value_or(0);
  if (j.per_rank) j.nproc = 0;
  // Every rank checks: a rank that refuses its steps' flags tells rank 0 (validate_on_rank0),
  // whose rendezvous below then ends with that rank's line instead of waiting --timeout.
  check_steps(plan, options, j.nproc);

  std::error_code ec;
  if (j.li.rank == 0) check_folder_is_validates(dir, plan_path);
  fs::create_directories(dir, ec);
  if (ec) throw UsageError(fmt::format("--out {}: cannot create the folder ({}); give a writable folder", dir, ec.message()));
  const std::string record_path = dir + "/validate.json";
  if (j.li.rank == 0) lock_folder(dir);

  // Rank 0 decides what to keep; under a launcher the others are told through validate's store.
  std::vector<StepDecision> decisions;
  ValidateRecord rec;
  if (j.li.rank == 0) {
    std::optional<ValidateRecord> old;
    if (fs::exists(record_path, ec))
      old = record_from_json(parse_json_bounded(read_text_file(record_path), record_path, "remove it or give another --out"), record_path);
    DirFacts facts;
    facts.hash_of = [&](const std::string& f) { return file_hash(dir + "/" + f); };
    facts.exists = [&](const std::string& f) {
      std::error_code e;
      return fs::exists(dir + "/" + f, e);
    };
    decisions = decide_steps(plan, old, launch_json(j), facts, redo);
    // A .partial that is not a readable result (cut short by a full disk, edited) cannot be
    // continued: it is kept aside under a name of its own and the step measured again, so the
    // folder is never stuck on it.
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
    rec.plan_path = plan_path;
    rec.plan_text = plan_text;
    if (old) rec.history = old->history;
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const StepRecord* was = old ? old->find(plan.steps[i].name()) : nullptr;
      if (decisions[i].action == StepAction::kKeep) rec.steps.push_back(*was);
      // A step measured again keeps its earlier record and file as history, never lost.
      if (decisions[i].action == StepAction::kRedo && was) {
        StepRecord h = *was;
        std::error_code e;
        if (!h.file.empty() && fs::exists(dir + "/" + h.file, e)) {
          const std::string kept = history_file(rec.history, h.name);
          fs::rename(dir + "/" + h.file, dir + "/" + kept, e);
          if (e)
            throw std::runtime_error(fmt::format("cannot keep {}/{} as {} ({})", dir, h.file, kept, e.message()));
          h.file = kept;
        }
        rec.history.push_back(h);
      }
    }
    write_file_atomic(dir + "/plan.yaml", rec.plan_text);
  }
  if (j.per_rank) {
    const auto timeout = std::chrono::milliseconds((long long)(timeout_s * 1000));
    JoinRequest join;
    join.job_id = launcher_job_id(env, j.li.launcher);
    join.config = "validate " + content_hash(plan_text);
    join.placement = local_placement(j.li, c10::Device(c10::kCPU));
    Rendezvous rv = rendezvous(j.li, join, timeout);
    j.store = rv.store;
    j.store_prefix = rv.prefix;
    j.placements = rv.placements;
    if (j.li.rank == 0) {
      nlohmann::json d = nlohmann::json::array();
      for (const auto& x : decisions) d.push_back(static_cast<int>(x.action));
      j.store->set("validate/decisions", bytes(d.dump()));
    } else {
      j.store->wait({"validate/decisions"}, timeout);
      const auto v = j.store->get("validate/decisions");
      for (int a : nlohmann::json::parse(std::string(v.begin(), v.end()))) decisions.push_back({static_cast<StepAction>(a), ""});
    }
  }

  const auto say = [&](const std::string& line) {
    if (j.li.rank == 0) std::fprintf(stderr, "ddpbench: validate: %s\n", line.c_str());
  };
  // What this job cannot evaluate, said before anything runs (and in the report).
  std::vector<std::string> notes;
  if (j.li.rank == 0) {
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
    notes = plan_preflight_notes(plan, nodes, ranks, devices, gpus > 0);
    for (const auto& n : notes) say("note: " + n);
  }
  const size_t n = plan.steps.size();
  std::vector<std::pair<ValidateCheck, std::string>> checks;  // and the step's file
  std::vector<std::string> report_files;
  std::string stopped;
  const auto sorted_record = [&] {
    std::sort(rec.steps.begin(), rec.steps.end(), [](const StepRecord& a, const StepRecord& b) { return a.name < b.name; });
    write_file_atomic(record_path, record_json(rec).dump(2) + "\n");
  };
  const auto judge = [&](const PlanStep& s, const StepRecord& r) {
    // The step's own verdicts (rank 0), from its result file.
    if (r.status != "complete") {
      checks.push_back({{s.name(), "exit", "FAIL", fmt::format("exit {}", r.exit_code)}, ""});
      return;
    }
    const std::string path = dir + "/" + r.file;
    if (s.kind == "env") {
      const auto doc = parse_json_bounded(read_text_file(path), path, "run the step again (remove it)");
      for (auto& c : env_checks(s.name(), doc.at("nodes"))) checks.push_back({c, path});
      return;
    }
    const ResultFile f = load_result(path);
    if (s.kind == "comm")
      for (auto& c : comm_checks(s.name(), f, plan.targets.busbw_gbs)) checks.push_back({c, path});
    if (s.kind == "pairs")
      for (auto& c : pairs_checks(s.name(), f)) checks.push_back({c, path});
    report_files.push_back(r.file);
  };

  for (size_t i = 0; i < n; ++i) {
    const PlanStep& s = plan.steps[i];
    const std::string file = s.name() + ".json";
    const std::string tag = fmt::format("[{}/{}] {}", i + 1, n, s.name());
    if (decisions[i].action == StepAction::kKeep) {
      say(tag + ": kept (complete, plan entry unchanged)");
      if (j.li.rank == 0) judge(s, *rec.find(s.name()));
      continue;
    }
    if (!stopped.empty()) continue;
    const bool resume = decisions[i].action == StepAction::kResume;
    if (j.li.rank == 0) {
      if (decisions[i].action == StepAction::kRedo) say(tag + ": " + decisions[i].note);
      // A result being redone was kept as history above; a stale .partial of a redone step is too.
      if (!resume && fs::exists(dir + "/" + file + ".partial", ec))
        fs::rename(dir + "/" + file + ".partial", dir + "/" + history_file(rec.history, s.name()) + ".partial", ec);
    }
    std::vector<std::string> argv = {j.exe, s.subcommand()};
    argv.insert(argv.end(), options[i].begin(), options[i].end());
    EnvMap child_env;
    if (s.kind != "env") {
      argv.insert(argv.end(), {"--json", dir + "/" + file});
      if (resume) argv.insert(argv.end(), {"--resume", dir + "/" + file + ".partial"});
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
    say(fmt::format("{}: ddpbench {}{}", tag, fmt::join(std::vector<std::string>(r.argv.begin() + 1, r.argv.end()), " "),
                    resume ? " (continued)" : ""));
    if (j.li.rank == 0) {
      rec.steps.push_back(r);
      sorted_record();
    }
    const auto t0 = Clock::now();
    int code = 0;
    if (s.kind == "env") {
      try {
        const nlohmann::json nodes = env_nodes(j, env);
        if (j.li.rank == 0)
          write_file_atomic(dir + "/" + file,
                            nlohmann::json{{"ddpbench_validate_env", 1}, {"nodes", nodes},
                                           {"node_differences", node_differences(nodes)}}
                                    .dump(2) +
                                "\n");
      } catch (const std::exception& e) {
        std::fprintf(stderr, "ddpbench: error: %s\n", first_line(e.what()).c_str());
        code = 1;
      }
    } else if (s.kind == "find-max-bs" && j.li.rank != 0) {
      code = 0;  // one search, on rank 0's device
    } else {
      code = run_child(argv, child_env, step_timeout_s);
    }
    const bool complete = code == 0 || (code == 1 && s.kind == "pairs" && fs::exists(dir + "/" + file, ec));
    std::string other;
    if (j.per_rank) other = step_barrier(j, s.index, code, complete, s.kind == "pairs");
    if (j.li.rank != 0) {  // rank 0 decides whether the plan goes on
      if (!other.empty()) stopped = "stop";
      continue;
    }
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    r.finished_utc = utc_now_iso8601();
    r.exit_code = code;
    r.status = complete && other.empty() ? "complete" : "failed";
    if (r.status == "complete") r.file_hash = file_hash(dir + "/" + file).value_or("");
    for (auto& x : rec.steps)  // its "running" record, wherever sorting put it
      if (x.name == r.name) x = r;
    sorted_record();
    say(fmt::format("{}: {} in {:.1f} s{}", tag, r.status == "complete" ? "complete" : "FAILED (exit " + std::to_string(code) + ")",
                    r.seconds, other.empty() ? "" : "; " + other));
    judge(s, r);
    if (r.status != "complete") {
      stopped = fmt::format("step {} ({}) {}; the steps after it did not run. Run the same command again to resume: "
                            "complete steps are kept",
                            s.name(), s.kind, other.empty() ? "exited " + std::to_string(code) : other);
      if (fs::exists(dir + "/" + file + ".partial", ec))
        stopped += fmt::format(", this one continues from {}.partial", file);
    }
  }
  if (j.li.rank != 0) return stopped.empty() ? kExitOk : kExitFailure;
  for (size_t i = 0; i < n; ++i)
    if (!stopped.empty() && !rec.find(plan.steps[i].name()))
      checks.push_back({{plan.steps[i].name(), "ran", "not evaluated", "not run: the plan stopped before it"}, ""});
  const Claim verdict = write_report(j, plan, report_files, checks, stopped, notes);
  if (!stopped.empty()) say("stopped: " + stopped);
  std::fprintf(stderr, "ddpbench: validate: wrote %s/report.txt, report.md, report.html, %sverdict.json and validate.json\n",
               dir.c_str(), std::filesystem::exists(dir + "/report.json") ? "report.json, " : "");
  write_stdout(verdict.text + "\n");
  return (verdict.number("fail") > 0 || !stopped.empty()) ? kExitFailure : kExitOk;
}

int run_compare(const std::vector<std::string>& dirs) {
  const auto load_record = [](const std::string& d) {
    const std::string p = d + "/validate.json";
    std::error_code ec;
    if (!fs::exists(p, ec))
      throw UsageError(fmt::format("{} holds no validate.json; give folders written by ddpbench validate --out", d));
    return record_from_json(parse_json_bounded(read_text_file(p), p, "give folders written by ddpbench validate --out"), p);
  };
  const ValidateRecord a = load_record(dirs[0]), b = load_record(dirs[1]);
  std::string text;
  try {
    text = compare_validations(
      dirs[0], a, dirs[1], b, [](const std::string& d, const std::string& f) { return load_result(d + "/" + f); },
      [](const std::string& d, const std::string& f) {
        const std::string p = d + "/" + f;
        return parse_json_bounded(read_text_file(p), p, "give folders written by ddpbench validate --out");
      });
  } catch (const nlohmann::json::exception& e) {  // a step file of the right name but not validate's shape
    throw UsageError(fmt::format("{} or {} holds a step file that is not what validate wrote ({}); compare folders "
                                 "written by ddpbench validate --out, unedited",
                                 dirs[0], dirs[1], first_line(e.what())));
  }
  write_stdout(text);
  return kExitOk;
}

}  // namespace

Command add_validate_command(CLI::App& parent) {
  struct Flags {
    std::string plan, out;
    std::vector<std::string> compare;
    int nproc = 0;
    double timeout_s = 300, step_timeout_s = 43200;
    bool dry_run = false;
    std::string redo;
  };
  auto f = std::make_shared<Flags>();
  auto* app = parent.add_subcommand(
      "validate", "Run a cluster acceptance plan (YAML: env, comm, pairs, find-max-bs, run, burn-in, targets) into "
                  "one folder and one report, resumable; or compare two such folders");
  app->add_option("plan", f->plan, "The plan file (plans/quick.yaml, plans/acceptance.yaml)");
  app->add_option("--out", f->out, "Folder for the steps' results (NN-step.json), the record and the report");
  app->add_option("--compare", f->compare, "Two folders of validations of one plan: show them side by side")
      ->expected(2);
  app->add_option("--nproc-per-node", f->nproc, "Built-in launcher: ranks per node for run and comm steps")
      ->check(CLI::Range(1, 4096));
  app->add_option("--timeout", f->timeout_s, "Seconds for validate's own rendezvous and gathers")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  app->add_option("--step-timeout", f->step_timeout_s, "Seconds a step may run before it is stopped")
      ->check(CLI::Range(1.0, 604800.0))
      ->capture_default_str();
  app->add_option("--redo", f->redo,
                  "Measure these steps again although complete (comma list of step names, numbers or kinds: "
                  "04-run, 4, run); each earlier result is kept as DIR/<step>.<k>.json and in validate.json's "
                  "history");
  app->add_flag("--dry-run", f->dry_run,
                "Check the plan (every step's options against its command's own parser) and print each step's "
                "command; run nothing");
  app->footer(
      "Exit codes: 0 nothing failed; 1 a target failed, a step named a slow node or link, or a step failed (run "
      "the same command again to resume); 2 a bad plan or option.");
  return {app, [f]() -> int {
            if (!f->compare.empty()) {
              if (!f->plan.empty() || !f->out.empty())
                throw UsageError("--compare takes two folders and no plan or --out; use 'ddpbench validate --compare "
                                 "DIR_A DIR_B'");
              return run_compare(f->compare);
            }
            if (f->plan.empty())
              throw UsageError("no plan given; use 'ddpbench validate PLAN --out DIR' (plans/quick.yaml)");
            return run_validate(f->plan, f->out, f->nproc, f->timeout_s, f->step_timeout_s, f->dry_run, f->redo);
          }};
}

}  // namespace ddpbench::cli
