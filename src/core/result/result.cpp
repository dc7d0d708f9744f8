#include "core/result/result.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/result/row_validation.hpp"
#include "core/util/errors.hpp"
#include "core/util/json_reader.hpp"
#include "core/util/json_util.hpp"
#include "core/util/sanitize.hpp"
#include "core/util/utf8.hpp"

namespace ddpbench {

using nlohmann::json;

namespace {

// nlohmann's message without its "[json.exception.type_error.302] " prefix.
std::string library_words(const json::exception& e) {
  std::string w = first_line(e.what());
  if (const auto close = w.find("] "); w.rfind("[json.exception.", 0) == 0 && close != std::string::npos)
    w = w.substr(close + 2);
  return w;
}

// Runs `read`, naming `where` (a field, "results[3]") in what it throws, so that an error
// while reading a file says which field: "where.KEY is a string, not a number" for the
// reader's own messages, "where: <the library's words>" for nlohmann's.
template <typename F>
void reading(const std::string& where, F&& read) {
  try {
    read();
  } catch (const json::exception& e) {
    throw std::invalid_argument(where + ": " + library_words(e));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(where + "." + e.what());
  }
}

// The finite numbers of the object `key` of `j` (a per-rank metric's values): any other
// entry, or a `key` that is not an object, is left out, so no file's shape makes it throw.
std::map<std::string, double> finite_numbers(const json& j, const char* key) {
  std::map<std::string, double> out;
  const auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return out;
  for (const auto& [k, v] : it->items())
    if (v.is_number() && std::isfinite(v.get<double>())) out[k] = v.get<double>();
  return out;
}

}  // namespace

void to_json(json& j, const Summary& s) {
  j = json{{"n", s.n},
           {"p50_s", s.p50_s},
           {"p75_s", s.p75_s},
           {"p90_s", s.p90_s},
           {"p95_s", s.p95_s},
           {"min_s", s.min_s},
           {"max_s", s.max_s},
           {"mean_s", s.mean_s},
           {"stddev_s", s.stddev_s},
           {"ci95_s", s.ci95_s},
           {"iterations", s.iterations},
           {"cv", s.cv},
           {"ex_per_s_per_gpu", s.ex_per_s_per_gpu},
           {"ex_per_s_total", s.ex_per_s_total}};
  if (s.p5_s > 0) j["p5_s"] = s.p5_s;  // 0: unknown (files of schema < 1.10), left out as they had it
}

void from_json(const json& j, Summary& s) {
  s.n = json_int<int>(j.at("n"), "summary.n", 0);
  s.p5_s = json_num_or(j, "p5_s", 0.0);
  s.p50_s = json_num(j, "p50_s");
  s.p75_s = json_num(j, "p75_s");
  s.p90_s = json_num(j, "p90_s");
  s.p95_s = json_num(j, "p95_s");
  s.min_s = json_num_or(j, "min_s", 0.0);
  s.max_s = json_num_or(j, "max_s", 0.0);
  s.mean_s = json_num(j, "mean_s");
  s.stddev_s = json_num_or(j, "stddev_s", 0.0);
  s.ci95_s = json_num(j, "ci95_s");
  s.iterations = json_int_or<int>(j, "iterations", 0);
  s.cv = json_num_or(j, "cv", 0.0);
  s.ex_per_s_per_gpu = json_num(j, "ex_per_s_per_gpu");
  s.ex_per_s_total = json_num(j, "ex_per_s_total");
}

const TelemetrySummary* sampled_telemetry(const RankSamples& rank) {
  const auto& s = rank.telemetry.sampled;
  return s ? &*s : nullptr;
}

void to_json(json& j, const RankStepSummary& s) {
  j = json{{"n", s.n}, {"mean_s", s.mean_s}, {"p50_s", s.p50_s}, {"p95_s", s.p95_s}, {"max_s", s.max_s}};
}

void from_json(const json& j, RankStepSummary& s) {
  s.n = json_int<int>(j.at("n"), "step.n", 0);
  s.mean_s = json_num(j, "mean_s");
  s.p50_s = json_num(j, "p50_s");
  s.p95_s = json_num(j, "p95_s");
  s.max_s = json_num(j, "max_s");
}

void to_json(json& j, const RankSamples& r) {
  j = json{{"rank", r.rank}, {"host", r.host}, {"local_rank", r.local_rank}, {"device", r.device}};
  if (r.step) j["step"] = *r.step;
  if (!r.samples_s.empty() || !r.step) j["samples_s"] = r.samples_s;
  j["telemetry"] = r.telemetry;
  if (!r.breakdown.empty()) j["breakdown"] = r.breakdown;
  if (!r.metrics.empty()) j["metrics"] = r.metrics;
}

void from_json(const json& j, RankSamples& r) {
  r.rank = json_int<int>(j.at("rank"), "rank", 0);
  r.host = json_string(j, "host");
  r.local_rank = json_int_or<int>(j, "local_rank", 0);
  r.device = json_string_or(j, "device", "");
  if (const auto it = j.find("step"); it != j.end() && !it->is_null())
    reading("step", [&] { r.step = it->get<RankStepSummary>(); });
  // Schema 1.10: only the ranks kept in full carry samples_s; before, every rank did.
  reading("samples_s", [&] {
    if (r.step) r.samples_s = j.value("samples_s", std::vector<double>());
    else j.at("samples_s").get_to(r.samples_s);
  });
  reading("telemetry", [&] { json_object_or_empty(j, "telemetry").get_to(r.telemetry); });
  reading("breakdown", [&] { json_object_or_empty(j, "breakdown").get_to(r.breakdown); });
  r.metrics = finite_numbers(j, "metrics");
}

void to_json(json& j, const BenchResult& b) {
  j = json{{"model", b.model},
           {"label", b.label},
           {"batch_per_rank", b.batch_per_rank},
           {"image_size", b.image_size},
           {"precision", b.precision},
           {"scaling", b.scaling},
           {"global_batch", b.global_batch},
           {"world_size", b.world_size},
           {"nodes", b.nodes},
           {"ddp", b.ddp},
           {"ranks", b.ranks},
           {"summary", b.summary},
           {"telemetry", b.telemetry},
           {"checks", b.checks},
           {"compute", b.compute},
           {"communication", b.communication},
           {"grad_accum", b.grad_accum},
           {"ddp_options", b.ddp_options},
           {"strategy", b.strategy},
           {"activation_checkpointing", b.activation_checkpointing},
           {"breakdown", b.breakdown},
           {"stopping", b.stopping},
           {"warnings", b.warnings}};
  if (!b.iteration_means_s.empty()) j["iteration_means_s"] = b.iteration_means_s;
  if (b.ranks_kept_in_full) j["ranks_kept_in_full"] = *b.ranks_kept_in_full;
  if (!b.burn_in.empty()) j["burn_in"] = b.burn_in;
  if (b.cpu_offload) j["cpu_offload"] = true;
  if (!b.group.empty()) j["group"] = b.group;
  if (b.launch.is_object()) j["launch"] = b.launch;
  if (json c = b.convergence; !c.empty()) j["convergence"] = std::move(c);
  j["mode"] = b.mode;
  if (!b.memory.empty()) j["memory"] = b.memory;
  if (!b.metrics.empty()) j["metrics"] = b.metrics;
}

void to_json(json& j, const RowWarning& w) { j = json{{"code", w.code}, {"message", w.message}}; }

void from_json(const json& j, RowWarning& w) {
  w.code = json_string(j, "code");
  w.message = json_string_or(j, "message", "");
}

void to_json(json& j, const Stopping& s) {
  j = json{{"mode", s.mode},
           {"reason", s.reason},
           {"target_ci_pct", s.target_ci_pct},
           {"achieved_ci_pct", s.achieved_ci_pct}};
}

void from_json(const json& j, Stopping& s) {
  s.mode = json_string_or(j, "mode", "fixed");
  s.reason = json_string_or(j, "reason", "iterations");
  s.target_ci_pct = json_num_or(j, "target_ci_pct", 0.0);
  s.achieved_ci_pct = json_num_or(j, "achieved_ci_pct", 0.0);
}

void from_json(const json& j, BenchResult& b) {
  b.model = json_string(j, "model");
  b.group = json_string_or(j, "group", "");
  if (const auto l = j.find("launch"); l != j.end() && l->is_object()) b.launch = *l;
  b.label = json_string_or(j, "label", "");
  b.batch_per_rank = json_int(j.at("batch_per_rank"), "batch_per_rank");
  b.image_size = json_int_or<int>(j, "image_size", 0);
  b.precision = json_string_or(j, "precision", "fp32");
  b.world_size = json_int<int>(j.at("world_size"), "world_size");
  b.scaling = json_string_or(j, "scaling", "weak");
  b.global_batch = json_int_or<long long>(j, "global_batch", 0);
  b.nodes = json_int_or<int>(j, "nodes", 1);
  if (!j.contains("ddp")) throw std::invalid_argument("ddp is missing");
  b.ddp = json_bool_or(j, "ddp", true);
  if (!j.contains("ranks")) throw std::invalid_argument("ranks is missing");
  if (!j["ranks"].is_array()) throw std::invalid_argument("ranks is not an array");
  for (size_t i = 0; i < j["ranks"].size(); ++i)
    reading(fmt::format("ranks[{}]", i), [&] { b.ranks.push_back(j["ranks"][i].get<RankSamples>()); });
  if (!j.contains("summary")) throw std::invalid_argument("summary is missing");
  reading("summary", [&] { j["summary"].get_to(b.summary); });
  reading("iteration_means_s", [&] { b.iteration_means_s = j.value("iteration_means_s", std::vector<double>()); });
  if (const auto it = j.find("ranks_kept_in_full"); it != j.end() && it->is_array()) {
    b.ranks_kept_in_full.emplace();
    for (const auto& r : *it) b.ranks_kept_in_full->push_back(json_int<int>(r, "ranks_kept_in_full", 0));
  }
  reading("telemetry", [&] { json_object_or_empty(j, "telemetry").get_to(b.telemetry); });
  reading("checks", [&] { json_object_or_empty(j, "checks").get_to(b.checks); });
  reading("compute", [&] { json_object_or_empty(j, "compute").get_to(b.compute); });
  reading("communication", [&] { json_object_or_empty(j, "communication").get_to(b.communication); });
  b.grad_accum = json_int_or<int>(j, "grad_accum", 1);
  reading("ddp_options", [&] { json_object_or_empty(j, "ddp_options").get_to(b.ddp_options); });
  b.strategy = json_string_or(j, "strategy", "ddp");
  b.activation_checkpointing = json_bool_or(j, "activation_checkpointing", false);
  b.cpu_offload = json_bool_or(j, "cpu_offload", false);
  reading("breakdown", [&] { json_object_or_empty(j, "breakdown").get_to(b.breakdown); });
  reading("burn_in", [&] { json_object_or_empty(j, "burn_in").get_to(b.burn_in); });
  reading("convergence", [&] { json_object_or_empty(j, "convergence").get_to(b.convergence); });
  b.mode = json_string_or(j, "mode", "train");
  reading("memory", [&] { json_object_or_empty(j, "memory").get_to(b.memory); });
  b.metrics = finite_numbers(j, "metrics");
  if (j.contains("stopping") && j["stopping"].is_object())
    reading("stopping", [&] { j["stopping"].get_to(b.stopping); });
  if (j.contains("warnings") && j["warnings"].is_array())
    reading("warnings", [&] { j["warnings"].get_to(b.warnings); });
}

void to_json(json& j, const ResultFile& f) {
  j = json{{"schema_version", f.schema_version},
           {"kind", f.kind},
           {"complete", f.complete},
           {"rows_planned", f.rows_planned},
           {"tool", f.tool},
           {"created_utc", f.created_utc},
           {"argv", f.argv},
           {"config", f.config},
           {"environment", f.environment},
           {"results", f.results}};
  if (f.kind == "comm" || !f.comm_results.empty()) j["comm_results"] = f.comm_results;
  if (!f.stragglers.empty()) j["stragglers"] = f.stragglers;
  if (!f.comm_pairs.empty()) j["comm_pairs"] = f.comm_pairs;
  if (f.kind == "find-max-bs" || !f.max_batch.empty()) j["max_batch"] = f.max_batch;
}

void to_json(json& j, const CommResult& c) {
  j = json{{"collective", c.collective},
           {"dtype", c.dtype},
           {"redop", c.redop},
           {"root", c.root},
           {"bytes", c.bytes},
           {"count", c.count},
           {"world_size", c.world_size},
           {"nodes", c.nodes},
           {"label", c.label},
           {"warmup", c.warmup},
           {"iters", c.iters},
           {"time_us", c.time_us},
           {"time_us_max_over_ranks", c.time_us_max_over_ranks},
           {"algbw_gbps", c.algbw_gbps},
           {"busbw_gbps", c.busbw_gbps},
           {"wrong", c.wrong},
           {"extra", c.extra}};
  if (c.cpu_cores) j["cpu_cores"] = *c.cpu_cores;
}

void from_json(const json& j, CommResult& c) {
  c.collective = json_string(j, "collective");
  c.dtype = json_string_or(j, "dtype", "");
  c.redop = json_string_or(j, "redop", "none");
  c.root = json_int_or<int>(j, "root", -1);
  c.bytes = json_int(j.at("bytes"), "bytes");
  c.count = json_int_or<long long>(j, "count", 0);
  c.world_size = json_int<int>(j.at("world_size"), "world_size");
  c.nodes = json_int_or<int>(j, "nodes", 1);
  c.label = json_string_or(j, "label", "");
  c.warmup = json_int_or<int>(j, "warmup", 0);
  c.iters = json_int_or<int>(j, "iters", 0);
  c.time_us = json_num(j, "time_us");
  c.time_us_max_over_ranks = json_num_or(j, "time_us_max_over_ranks", c.time_us);
  c.algbw_gbps = json_num(j, "algbw_gbps");
  c.busbw_gbps = json_num(j, "busbw_gbps");
  c.wrong = json_int_or<long long>(j, "wrong", 0);
  c.cpu_cores = json_num_opt(j, "cpu_cores");
  c.extra = json_object_or_empty(j, "extra");
}

void from_json(const json& j, ResultFile& f) {
  f.schema_version = json_string(j, "schema_version");
  f.complete = json_bool_or(j, "complete", true);  // schema < 1.4: only complete files were written
  f.rows_planned = json_int_or<int>(j, "rows_planned", 0);
  f.tool = json_object_or_empty(j, "tool");
  f.created_utc = json_string_or(j, "created_utc", "");
  reading("argv", [&] { f.argv = j.value("argv", std::vector<std::string>{}); });
  f.config = json_object_or_empty(j, "config");
  f.environment = json_object_or_empty(j, "environment");
  f.kind = json_string_or(j, "kind", "run");
  if (f.kind != "run" && f.kind != "comm" && f.kind != "find-max-bs")
    throw std::invalid_argument("kind '" + f.kind + "' is none of run, comm, find-max-bs");
  // What later code reads of the environment without a check: the ranks, the job id.
  reading("environment", [&] {
    if (const auto w = f.environment.find("world_size"); w != f.environment.end() && !w->is_null())
      (void)json_int<int>(*w, "world_size", 1, kMaxRowWorldSize);
    if (const auto rv = f.environment.find("rendezvous"); rv != f.environment.end() && !rv->is_null()) {
      if (!rv->is_object())
        throw std::invalid_argument(std::string("rendezvous is a ") + rv->type_name() + ", not an object");
      reading("rendezvous", [&] { (void)json_string_or(*rv, "job_id", ""); });
    }
  });
  if (!j.contains("results")) throw std::invalid_argument("results is missing");
  if (!j["results"].is_array()) throw std::invalid_argument("results is not an array");
  if (j["results"].size() > kMaxResultRows)
    throw std::invalid_argument(fmt::format("results has {} rows, more than the {} a result file may hold",
                                            j["results"].size(), kMaxResultRows));
  for (size_t i = 0; i < j["results"].size(); ++i)
    reading(fmt::format("results[{}]", i), [&] {
      f.results.push_back(j["results"][i].get<BenchResult>());
      f.results.back().index_in_file = static_cast<int>(i);
    });
  if (const auto c = j.find("comm_results"); c != j.end()) {
    if (!c->is_array()) throw std::invalid_argument("comm_results is not an array");
    for (size_t i = 0; i < c->size(); ++i)
      reading(fmt::format("comm_results[{}]", i), [&] { f.comm_results.push_back((*c)[i].get<CommResult>()); });
  }
  if (j.contains("stragglers") && j["stragglers"].is_array()) f.stragglers = j["stragglers"];
  f.comm_pairs = json_object_or_empty(j, "comm_pairs");
  f.max_batch = json_object_or_empty(j, "max_batch");
}

int schema_major(const std::string& version) {
  auto dot = version.find('.');
  std::string major = version.substr(0, dot);
  if (major.empty() || major.find_first_not_of("0123456789") != std::string::npos || dot == std::string::npos)
    throw UsageError(fmt::format("schema_version '{}' is not MAJOR.MINOR.PATCH", version));
  if (major.size() > 9)  // beyond int; no ddpbench writes such a version
    throw UsageError(fmt::format("schema version '{}' is not readable by this ddpbench", version));
  return std::stoi(major);
}

namespace {
// Every string of a result file's DOM as one line of terminal text (core/util/sanitize), once,
// where it is read: a name holding an escape sequence or a newline reaches no writer (report,
// diff, check, predict, validate) as one. A "topology" (nvidia-smi topo -m) keeps its lines.
// Iterative: the DOM's depth is bounded by the reader, not by the stack.
void one_line_strings(json& root) {
  std::vector<std::pair<json*, bool>> todo{{&root, false}};
  while (!todo.empty()) {
    auto [j, keep_lines] = todo.back();
    todo.pop_back();
    if (j->is_string()) {
      const std::string& v = j->get_ref<const std::string&>();
      std::string clean = keep_lines ? terminal_text(v) : terminal_line(v);
      if (clean != v) *j = std::move(clean);
    } else if (j->is_object()) {
      for (auto it = j->begin(); it != j->end(); ++it) todo.emplace_back(&it.value(), it.key() == "topology");
    } else if (j->is_array()) {
      for (auto& c : *j) todo.emplace_back(&c, false);
    }
  }
}
}  // namespace

ResultFile parse_result(const std::string& text, const std::string& source) {
  json j = parse_json_bounded(text, source, "pass a file written by ddpbench run --json");
  one_line_strings(j);
  if (!j.is_object() || !j.contains("schema_version") || !j["schema_version"].is_string())
    throw UsageError(fmt::format("{}: no schema_version; pass a file written by ddpbench run --json", source));
  const std::string version = j["schema_version"].get<std::string>();
  int major = 0;
  try {
    major = schema_major(version);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", source, e.what()));
  }
  if (major != kSchemaMajor)
    throw UsageError(
        fmt::format("{}: schema version {} is not readable by this ddpbench (reads {}.x); use a "
                    "ddpbench release that writes schema {}.x",
                    source, version, kSchemaMajor, major));
  try {
    // The free-form sections may be most of the file: moved out of the DOM, not copied (the
    // peak is the DOM once, not twice). from_json reads them as empty; any other type stays
    // for it to refuse.
    std::map<std::string, json> moved;
    for (const char* k : {"config", "comm_pairs", "max_batch", "stragglers"})
      if (const auto it = j.find(k); it != j.end() && (*k == 's' ? it->is_array() : it->is_object())) {
        moved[k] = std::move(*it);
        *it = nullptr;
      }
    ResultFile f = j.get<ResultFile>();
    for (auto& [k, v] : moved) {
      if (k == "config") f.config = std::move(v);
      else if (k == "comm_pairs") f.comm_pairs = std::move(v);
      else if (k == "max_batch") f.max_batch = std::move(v);
      else f.stragglers = std::move(v);
    }
    return f;
  } catch (const json::exception& e) {
    throw UsageError(fmt::format("{}: malformed result file ({}); pass a file written by ddpbench run --json", source,
                                 library_words(e)));
  } catch (const std::invalid_argument& e) {
    throw UsageError(
        fmt::format("{}: malformed result file ({}); pass a file written by ddpbench run --json", source, e.what()));
  }
}

void write_stdout(const std::string& raw) {
  const std::string text = terminal_text(raw);  // what a file said reaches no terminal as a control
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0 ||
      std::ferror(stdout))
    throw std::runtime_error(
        fmt::format("writing to standard output failed: {}; check where it is redirected", std::strerror(errno)));
}

std::string read_text_file(const std::string& path, long long max_bytes) {
  // O_NONBLOCK: opening a fifo must not wait for a writer; the checks below refuse it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw UsageError(fmt::format("cannot read '{}': {}; check the path", path, std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw UsageError(fmt::format("cannot read '{}': {}; check the path", path, std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) throw UsageError(fmt::format("'{}' is a directory; pass a file", path));
  if (!S_ISREG(st.st_mode))
    throw UsageError(fmt::format("'{}' is not a regular file (a {}); pass a file", path,
                                 S_ISFIFO(st.st_mode)                         ? "fifo"
                                 : S_ISSOCK(st.st_mode)                       ? "socket"
                                 : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "device"
                                                                              : "special file"));
  const auto too_large = [&] {
    const std::string cap =
        max_bytes >= (1LL << 20) ? fmt::format("{} MiB", max_bytes >> 20) : fmt::format("{} bytes", max_bytes);
    return UsageError(
        fmt::format("'{}' is larger than {}, more than any file ddpbench reads; pass the right file", path, cap));
  };
  if (st.st_size > max_bytes) throw too_large();
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw UsageError(fmt::format("cannot read '{}': {}; check the file", path, std::strerror(errno)));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (static_cast<long long>(out.size()) > max_bytes) throw too_large();  // it grew while being read
  }
  return out;
}

ResultFile read_result_file(const std::string& path) { return parse_result(read_text_file(path), path); }

std::string known_non_result(const std::string& text) {
  json j;
  try {
    j = parse_json_bounded(text, "", "");
  } catch (const UsageError&) {
    return "";
  }
  if (!j.is_object() || j.contains("schema_version")) return "";
  if (j.contains("ddpbench_validate")) return "validate's record";
  if (j.contains("ddpbench_validate_env")) return "a validate env step";
  if (j.contains("ddpbench_validate_verdict")) return "validate's verdict";
  if (j.contains("headline") && j.contains("tables")) return "a report's JSON";
  return "";
}

namespace {

bool is_scalar_json(const json& j) { return !j.is_structured(); }

void readable_json_into(const json& j, int indent, std::string& out) {
  const auto all_scalars = [](const json& c) { return std::all_of(c.begin(), c.end(), is_scalar_json); };
  if (!j.is_structured() || j.empty() || (j.is_array() && all_scalars(j))) {
    // A leaf, or an array of scalars: one line, ", " between elements.
    if (!j.is_array()) {
      out += j.dump();
      return;
    }
    out += '[';
    for (size_t i = 0; i < j.size(); ++i) out += (i ? ", " : "") + j[i].dump();
    out += ']';
    return;
  }
  if (j.is_array() &&
      std::all_of(j.begin(), j.end(), [](const json& e) { return e.is_object() && e.contains("rank"); })) {
    // Per-rank records (ranks, memory.per_rank, environment.ranks, ...): one compact line
    // each, so a file at thousands of ranks stays small and greps by rank.
    const std::string pad(static_cast<size_t>(indent + 2), ' ');
    out += "[\n";
    for (size_t i = 0; i < j.size(); ++i) out += pad + j[i].dump() + (i + 1 < j.size() ? ",\n" : "\n");
    out += std::string(static_cast<size_t>(indent), ' ') + "]";
    return;
  }
  if (j.is_object() && all_scalars(j)) {
    std::string line = "{";
    for (auto it = j.begin(); it != j.end(); ++it)
      line += (it == j.begin() ? "" : ", ") + json(it.key()).dump() + ": " + it.value().dump();
    line += '}';
    if (line.size() <= 100) {
      out += line;
      return;
    }
  }
  const std::string pad(static_cast<size_t>(indent + 2), ' ');
  out += j.is_object() ? "{\n" : "[\n";
  size_t i = 0;
  for (auto it = j.begin(); it != j.end(); ++it, ++i) {
    out += pad;
    if (j.is_object()) out += json(it.key()).dump() + ": ";
    readable_json_into(it.value(), indent + 2, out);
    out += i + 1 < j.size() ? ",\n" : "\n";
  }
  out += std::string(static_cast<size_t>(indent), ' ') + (j.is_object() ? "}" : "]");
}

}  // namespace

std::string readable_json(const json& j) {
  std::string out;
  readable_json_into(j, 0, out);
  return out + "\n";
}

void write_result_file_atomic(const std::string& path, const ResultFile& file, Existing existing) {
  write_file_atomic(path, readable_json(json(file)), existing);
}

TargetExists::TargetExists(const std::string& path)
    : std::runtime_error(fmt::format("'{}' exists and was not replaced", path)), path_(path) {}

namespace {

std::string dir_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

// Which file a path names, for the output guard: its normal form (absolute, "." and ".."
// gone, symbolic links of the existing part resolved) and, when it exists, its device and
// inode (what a hard link shares).
struct FileIdentity {
  std::string normal;
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
};

FileIdentity identify(const std::string& path) {
  namespace fs = std::filesystem;
  FileIdentity id;
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  if (ec) abs = fs::path(path);
  const fs::path canon = fs::weakly_canonical(abs, ec);
  id.normal = (ec ? abs.lexically_normal() : canon).string();
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    id.exists = true;
    id.dev = st.st_dev;
    id.ino = st.st_ino;
  }
  return id;
}

// nullopt when `a` and `b` are different files, else how they are one: "" (one path) or
// " (the same file under another name: a hard link)".
std::optional<std::string> sameness(const FileIdentity& a, const FileIdentity& b) {
  if (a.normal == b.normal) return std::string();
  if (a.exists && b.exists && a.dev == b.dev && a.ino == b.ino)
    return std::string(" (the same file under another name: a hard link)");
  return std::nullopt;
}

// The inputs check_outputs_apart was given, for the rest of the process (identified again at
// each check: an inode is the input's only while the input exists).
std::vector<NamedPath>& guarded_inputs() {
  static std::vector<NamedPath> inputs;
  return inputs;
}

// "" when `path` is no input of this command, else why it must not be written.
std::string input_problem(const std::string& path, const std::string& named) {
  if (guarded_inputs().empty()) return "";
  const FileIdentity out = identify(path);
  for (const auto& in : guarded_inputs())
    if (const auto how = sameness(out, identify(in.path)))
      return fmt::format("{} is the input {} '{}' of this command{}; writing it would replace that input; pass "
                         "another output path",
                         named, in.flag, in.path, *how);
  return "";
}

// What is wrong with replacing `path` by a new file, or "" when nothing (absent, or a
// writable regular file). `named` is how messages start: "--json 'p'" or "'p'".
std::string target_problem(const std::string& path, const std::string& named) {
  if (std::string p = input_problem(path, named); !p.empty()) return p;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return "";
  if (S_ISLNK(st.st_mode))
    return fmt::format("{} is a symbolic link, not a regular file; pass the file's real path or a new name", named);
  if (S_ISDIR(st.st_mode))
    return fmt::format("{} is a directory; pass a file path such as {}/result.json", named, path);
  if (!S_ISREG(st.st_mode)) return fmt::format("{} exists and is not a regular file; pass a new file name", named);
  // By the mode bits too: root passes access(W_OK) on a 0444 file.
  if ((st.st_mode & 0222) == 0 || ::access(path.c_str(), W_OK) != 0)
    return fmt::format("{} is read-only; make it writable or pass a new file name", named);
  return "";
}

}  // namespace

std::string temp_file_next_to(const std::string& path) {
  // mkstemp: an unpredictable name created exclusively, so nothing planted in a shared
  // directory (a symlink) is written through.
  std::string tmpl = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    throw std::runtime_error(
        fmt::format("cannot create a temporary file next to '{}': {}", path, std::strerror(errno)));
  ::fchmod(fd, 0644);
  ::close(fd);
  return tmpl;
}

namespace {

// rename(from, to) that fails with EEXIST instead of replacing `to`: renameat2's
// RENAME_NOREPLACE, or where the file system or kernel lacks it (EINVAL, ENOSYS) link(),
// which refuses an existing name as atomically, then unlink() of `from`.
int rename_no_replace(const char* from, const char* to) {
  if (::renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
  if (::link(from, to) != 0) return -1;
  ::unlink(from);
  return 0;
}

}  // namespace

void commit_file(const std::string& tmp, const std::string& path, Existing existing) {
  const int fd = ::open(tmp.c_str(), O_RDONLY);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("cannot flush '{}': {}", tmp, std::strerror(err)));
  }
  ::close(fd);
  // Again right before the rename: what appeared at the path meanwhile is not replaced.
  if (auto problem = target_problem(path, fmt::format("'{}'", path)); !problem.empty()) {
    ::unlink(tmp.c_str());
    throw UsageError(problem);
  }
  const bool keep = existing == Existing::kKeep;
  if ((keep ? rename_no_replace(tmp.c_str(), path.c_str()) : std::rename(tmp.c_str(), path.c_str())) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    if (keep && err == EEXIST) throw TargetExists(path);
    throw std::runtime_error(fmt::format("cannot rename '{}' to '{}': {}", tmp, path, std::strerror(err)));
  }
  // Make the rename itself durable.
  const int dfd = ::open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void write_file_atomic(const std::string& path, const std::string& text, Existing existing) {
  if (auto problem = target_problem(path, fmt::format("'{}'", path)); !problem.empty()) throw UsageError(problem);
  if (struct stat st {}; existing == Existing::kKeep && ::lstat(path.c_str(), &st) == 0) throw TargetExists(path);
  const std::string tmp = temp_file_next_to(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_TRUNC);
  if (fd < 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("cannot write '{}': {}", tmp, std::strerror(err)));
  }
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw std::runtime_error(fmt::format("cannot write '{}': {}", tmp, std::strerror(err)));
    }
    off += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("cannot write '{}': {}", tmp, std::strerror(err)));
  }
  commit_file(tmp, path, existing);
}

namespace {

// The name of `path` with `suffix` (what the writer puts beside it, `what` says why) must
// fit the file system (NAME_MAX of its directory, PATH_MAX): "" when it does, else the problem.
std::string name_length_problem(const std::string& path, const std::string& named, const std::string& suffix,
                                const std::string& what) {
  const std::string dir = dir_of(path);
  const size_t slash = path.find_last_of('/');
  const size_t name = (slash == std::string::npos ? path.size() : path.size() - slash - 1) + suffix.size();
  long name_max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  if (name_max <= 0) name_max = NAME_MAX;
  if (name > static_cast<size_t>(name_max))
    return fmt::format("{}: the name with '{}' ({}) is {} bytes, more than the {} this file system allows "
                       "(NAME_MAX); pass a shorter name",
                       named, suffix, what, name, name_max);
  long path_max = ::pathconf(dir.c_str(), _PC_PATH_MAX);
  if (path_max <= 0) path_max = PATH_MAX;
  if (path.size() + suffix.size() >= static_cast<size_t>(path_max))
    return fmt::format("{}: the path with '{}' ({}) is {} bytes, more than the {} allowed (PATH_MAX); pass a "
                       "shorter path",
                       named, suffix, what, path.size() + suffix.size(), path_max - 1);
  return "";
}

// "" when `path` is valid UTF-8 (a result file records it in JSON), else the problem.
std::string encoding_problem(const std::string& path, const std::string& flag) {
  if (is_valid_utf8(path)) return "";
  return fmt::format("{} '{}' is not valid UTF-8 (result files record their paths as JSON text); pass a UTF-8 name",
                     flag, sanitize_utf8(path));
}

constexpr const char* kTempSuffix = ".tmp.XXXXXX";  // temp_file_next_to's

}  // namespace

void check_outputs_apart(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs) {
  std::vector<FileIdentity> in_ids;
  for (const auto& in : inputs) in_ids.push_back(identify(in.path));
  std::vector<FileIdentity> out_ids;
  for (const auto& out : outputs) {
    if (out.path.empty()) {
      out_ids.emplace_back();
      continue;  // check_writable refuses it with its own line
    }
    const FileIdentity id = identify(out.path);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (const auto how = sameness(id, in_ids[i]))
        throw UsageError(fmt::format("{} '{}' is the input {} '{}'{}; writing it would replace that input; pass "
                                     "another {} path",
                                     out.flag, out.path, inputs[i].flag, inputs[i].path, *how, out.flag));
    for (size_t o = 0; o < out_ids.size(); ++o)
      if (!outputs[o].path.empty())
        if (const auto how = sameness(id, out_ids[o]))
          throw UsageError(fmt::format("{} '{}' and {} '{}' are one file{}; one would replace the other; pass two "
                                       "different paths",
                                       outputs[o].flag, outputs[o].path, out.flag, out.path, *how));
    out_ids.push_back(id);
  }
  for (const auto& in : inputs) guarded_inputs().push_back(in);
}

void check_writable(const std::string& path, const std::string& flag) {
  if (path.empty()) throw UsageError(fmt::format("{} needs a file path; pass e.g. {} result.json", flag, flag));
  if (auto problem = encoding_problem(path, flag); !problem.empty()) throw UsageError(problem);
  if (auto problem = name_length_problem(path, fmt::format("{} '{}'", flag, path), kTempSuffix,
                                         "the temporary file written beside it");
      !problem.empty())
    throw UsageError(problem);
  if (auto problem = target_problem(path, fmt::format("{} '{}'", flag, path)); !problem.empty())
    throw UsageError(problem);
  const std::string dir = dir_of(path);
  const std::string probe = fmt::format("{}/.ddpbench-probe.{}", dir, ::getpid());
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0)
    throw UsageError(fmt::format("{} '{}' is not writable ({}: {}); choose a writable directory", flag, path, dir,
                                 std::strerror(errno)));
  ::close(fd);
  ::unlink(probe.c_str());
}

std::string partial_path(const std::string& path) { return path + ".partial"; }

void check_result_target(const std::string& path, bool overwrite, bool resuming) {
  check_writable(path, "--json");
  const std::string partial = partial_path(path);
  // Before any rank starts: the rows so far go to PATH.partial, written through a temporary
  // file beside it; a name too long for those is refused now, not after a row is measured.
  if (auto problem = name_length_problem(path, fmt::format("--json '{}'", path),
                                         std::string(".partial") + kTempSuffix, "the rows kept beside it while the run goes, written through a temporary file");
      !problem.empty())
    throw UsageError(problem);
  check_writable(partial, "--json");
  if (overwrite) return;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0)
    throw UsageError(
        fmt::format("--json '{}' already exists; pass --overwrite to replace it once the new run "
                    "completes, or choose a new name",
                    path));
  if (!resuming && ::lstat(partial.c_str(), &st) == 0)
    throw UsageError(
        fmt::format("--json '{}': '{}' already exists (the rows of a run that stopped early); pass "
                    "--overwrite to replace it or choose a new name (`run --resume {}` continues a stopped run)",
                    path, partial, partial));
}

std::string resume_result_path(const std::string& partial) {
  const std::string suffix = ".partial";
  if (partial.size() <= suffix.size() || partial.compare(partial.size() - suffix.size(), suffix.size(), suffix) != 0)
    throw UsageError(fmt::format(
        "--resume '{}' is not a PATH.partial file; pass the .partial file a stopped run --json PATH left", partial));
  return partial.substr(0, partial.size() - suffix.size());
}

nlohmann::json run_config_with_later_defaults(nlohmann::json config, const std::string& kind) {
  if (kind != "run" || !config.is_object()) return config;
  if (!config.contains("instruments_off")) config["instruments_off"] = nlohmann::json::array();  // 1.19
  if (!config.contains("skip_all_reduce_unused_params")) config["skip_all_reduce_unused_params"] = false;  // 1.20
  // 1.21: the language models' settings, at RunConfig's defaults (an earlier run had none).
  if (!config.contains("seq_len")) config["seq_len"] = 1024;
  if (!config.contains("model_layers")) config["model_layers"] = 0;
  if (!config.contains("model_width")) config["model_width"] = 0;
  return config;
}

std::string resume_mismatch(const ResultFile& prior, const nlohmann::json& config, int world_size) {
  if (prior.kind != "run") return fmt::format("it holds a '{}' result, not a run's", prior.kind);
  if (prior.complete) return "it is marked complete: nothing is left to measure";
  for (const auto& r : prior.results)
    if (r.group.empty())
      return "its rows carry no benchmark group (written by a ddpbench before --resume), so they cannot be matched";
  const int stored_world = prior.environment.is_object() ? prior.environment.value("world_size", 0) : 0;
  if (stored_world != world_size)
    return fmt::format("it was measured on {} rank(s), this job has {}", stored_world, world_size);
  nlohmann::json before = prior.config.is_object() ? prior.config : nlohmann::json::object();
  for (const char* k : {"defaults_note", "batch_size_search"}) before.erase(k);
  before = run_config_with_later_defaults(std::move(before), prior.kind);
  const nlohmann::json now = run_config_with_later_defaults(config, prior.kind);
  std::vector<std::string> diffs;
  for (const auto& [k, v] : now.items())
    if (!before.contains(k)) diffs.push_back(fmt::format("{} is not in it and is {} here", k, v.dump()));
    else if (before[k] != v) diffs.push_back(fmt::format("{} is {} there and {} here", k, before[k].dump(), v.dump()));
  for (const auto& [k, v] : before.items())
    if (!now.contains(k)) diffs.push_back(fmt::format("{} is {} there and absent here", k, v.dump()));
  if (diffs.empty()) return "";
  std::string out = "its flags differ: " + diffs.front();
  if (diffs.size() > 1) out += fmt::format(" (and {} more)", diffs.size() - 1);
  return out;
}

std::string resume_rows_problem(const ResultFile& prior, const std::vector<std::string>& planned_groups) {
  std::map<std::string, size_t> first_row;
  for (size_t i = 0; i < prior.results.size(); ++i) {
    const BenchResult& r = prior.results[i];
    if (r.checks.passed() == false)
      return fmt::format(
          "row {} ({}) failed its self-check, so the stopped run's measurements are not valid; run the sweep "
          "again without --resume once the cause is fixed",
          i + 1, r.group);
    if (std::find(planned_groups.begin(), planned_groups.end(), r.group) == planned_groups.end())
      return fmt::format(
          "row {} ({}) is not one of the {} benchmark group(s) these flags plan; remove it from the file or run "
          "the sweep again without --resume",
          i + 1, r.group, planned_groups.size());
    if (const auto [it, fresh] = first_row.emplace(r.group, i); !fresh)
      return fmt::format(
          "rows {} and {} are both of group {} (a group measures one row); remove the extra row from the file or "
          "run the sweep again without --resume",
          it->second + 1, i + 1, r.group);
  }
  return "";
}

namespace {

// A recorded value as a person reads it in one line: a string as it is (cut at 80 bytes, on
// a character boundary), anything else as compact JSON, a missing value as "unset".
std::string shown(const nlohmann::json* v) {
  if (v == nullptr || v->is_null()) return "unset";
  std::string s =
      v->is_string() ? v->get<std::string>() : v->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.empty()) return "\"\"";
  if (s.size() > 80) {
    size_t cut = 77;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    s = s.substr(0, cut) + "...";
  }
  return s;
}

const nlohmann::json* member(const nlohmann::json& j, const std::string& key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

// The first measurement variable that differs between two env objects ("" if none), named
// with `where` in front ("" or "on host X, ").
std::string env_difference(const nlohmann::json& there, const nlohmann::json& here, const std::string& where) {
  if (!there.is_object() || !here.is_object()) return "";
  std::set<std::string> names;
  for (const auto* e : {&there, &here})
    for (const auto& kv : e->items())
      if (measurement_variable(kv.key())) names.insert(kv.key());
  for (const auto& n : names) {
    const nlohmann::json *a = member(there, n), *b = member(here, n);
    if ((a == nullptr) != (b == nullptr) || (a && *a != *b))
      return fmt::format("{}{} is {} there and {} here", where, n, shown(a), shown(b));
  }
  return "";
}

// The first of `keys` whose value differs ("" if none); a key missing from either side is skipped.
std::string value_difference(const nlohmann::json& there, const nlohmann::json& here,
                             std::initializer_list<const char*> keys, const std::string& where) {
  for (const char* k : keys) {
    const nlohmann::json *a = member(there, k), *b = member(here, k);
    if (a && b && *a != *b) return fmt::format("{}{} is {} there and {} here", where, k, shown(a), shown(b));
  }
  return "";
}

std::set<std::string> string_set(const nlohmann::json* array) {
  std::set<std::string> out;
  if (array && array->is_array())
    for (const auto& v : *array)
      if (v.is_string()) out.insert(v.get<std::string>());
  return out;
}

}  // namespace

std::string resume_environment_mismatch(const nlohmann::json& there, const nlohmann::json& here) {
  if (!there.is_object() || !here.is_object()) return "";
  std::string d;
  const auto found = [&d](std::string difference) {
    d = std::move(difference);
    return !d.empty();
  };
  const nlohmann::json *a = nullptr, *b = nullptr;
  const auto both = [&](const nlohmann::json& x, const nlohmann::json& y, const char* key) {
    a = member(x, key);
    b = member(y, key);
    return a != nullptr && b != nullptr;
  };
  if (both(there, here, "env") && found(env_difference(*a, *b, ""))) return d;
  if (found(value_difference(
          there, here, {"threads_per_rank", "device_type", "backend", "torch", "cuda", "nccl", "driver", "cpu_model"},
          "")))
    return d;
  if (both(there, here, "hosts"))
    if (const auto ha = string_set(a), hb = string_set(b); ha != hb)
      return fmt::format("the hosts are {} there and {} here", fmt::join(ha, ","), fmt::join(hb, ","));
  if (both(there, here, "ranks") && a->is_array() && b->is_array())
    for (size_t i = 0; i < std::min(a->size(), b->size()); ++i)
      if (found(value_difference((*a)[i], (*b)[i], {"device", "gpu_name", "cpus"}, fmt::format("rank {}'s ", i))))
        return d;
  if (both(there, here, "nodes") && a->is_array() && b->is_array()) {
    const nlohmann::json nodes_there = *a, nodes_here = *b;
    for (const auto& na : nodes_there)
      for (const auto& nb : nodes_here) {
        const nlohmann::json* host = member(na, "host");
        if (!host || !host->is_string() || !member(nb, "host") || *member(nb, "host") != *host) continue;
        const std::string where = fmt::format("on host {}, ", host->get<std::string>());
        if (found(value_difference(na, nb, {"torch", "cuda", "cudnn", "nccl", "driver", "cpu_model", "cpus"}, where)))
          return d;
        if (both(na, nb, "env") && found(env_difference(*a, *b, where))) return d;
      }
  }
  return value_difference(there, here, {"math", "malloc_tuning", "topology"}, "");
}

bool measurement_variable(const std::string& name) {
  for (const char* p : {"NCCL_", "TORCH_NCCL_", "TORCH_DISTRIBUTED_", "MALLOC_"})
    if (name.rfind(p, 0) == 0) return true;
  return name == "OMP_NUM_THREADS" || name == "GLOO_SOCKET_IFNAME" || name == "SLURM_CPUS_PER_TASK";
}

std::string incomplete_warning(const std::string& name, const ResultFile& file) {
  if (file.complete) return "";
  const size_t n = file.results.size();
  const std::string rows = file.rows_planned > 0 ? fmt::format("{} of {} rows", n, file.rows_planned)
                                                 : fmt::format("{} row{}", n, n == 1 ? "" : "s");
  return fmt::format("{} is incomplete (the run stopped after {}); its numbers cover only those rows", name, rows);
}

std::string utc_now_iso8601() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace ddpbench
