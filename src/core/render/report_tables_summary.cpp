// `ddpbench report`'s executive summary (the headline, targets with their verdicts, findings,
// recommendations) and the definitions of the terms its tables use. Torch-free.
#include "core/render/report_tables_internal.hpp"

#include <fmt/ranges.h>

#include <algorithm>

#include "core/result/bench_table.hpp"
#include "core/result/row_metrics.hpp"

namespace ddpbench::report_tables_internal {

// The executive summary: the headline, targets with their verdicts, findings, recommendations.
std::vector<Table> summary_tabs(const Report& r) {
  std::vector<Table> out;
  const ExecutiveSummary& s = r.summary;
  if (Table h = headline_table(s.headline); !h.rows.empty()) out.push_back(std::move(h));
  if (!s.checks.empty() || !s.notes.empty()) {
    const auto count = [](int n, const std::string& unit) {
      return fmt::format("{} {}{}", n, unit, n == 1 ? "" : "s");
    };
    const std::vector<Col<SummaryCheck>> cols = {
        {{"status", "status", "", fmtcol::plain()}, [](const SummaryCheck& c) { return Value(c.status); }},
        {{"metric", "target", "", fmtcol::plain()}, [](const SummaryCheck& c) { return Value(c.metric); }},
        {{"required", "required", "", fmtcol::plain()}, [](const SummaryCheck& c) { return Value(c.target); }},
        {{"measured", "measured", "", fmtcol::plain()},
         [](const SummaryCheck& c) { return c.measured.empty() ? Value() : Value(c.measured); }},
        // "16 GPUs", "4 ranks" on CPUs, "2 ranks on 1 GPU" where ranks shared a GPU.
        {{"size", "on", "", fmtcol::plain()},
         [count](const SummaryCheck& c) {
           if (c.gpus <= 0 || c.unit == "rank") return Value(count(c.ranks, "rank"));
           if (c.gpus == c.ranks) return Value(count(c.gpus, c.unit));
           return Value(count(c.ranks, "rank") + " on " + count(c.gpus, c.unit));
         }},
        {{"configuration", "configuration", "", fmtcol::plain()}, [](const SummaryCheck& c) { return Value(c.what); }},
        {{"from", "from", "", fmtcol::plain()}, [](const SummaryCheck& c) { return Value(c.from); }},
        {{"gpus", "GPUs", "", fmtcol::plain(), false},
         [](const SummaryCheck& c) { return c.gpus > 0 ? Value(static_cast<long long>(c.gpus)) : Value(); }},
        {{"ranks", "ranks", "", fmtcol::plain(), false},
         [](const SummaryCheck& c) { return Value(static_cast<long long>(c.ranks)); }},
        {{"void_warning", "voided by", "", fmtcol::plain()},
         [](const SummaryCheck& c) { return c.void_warning.empty() ? Value() : Value(c.void_warning); }},
    };
    // A table measured on one device counts its efficiency and exposed-comm targets as not
    // evaluated (the notes say so, once): its lines would only repeat that.
    std::vector<SummaryCheck> shown;
    for (const auto& c : s.checks)
      if (c.status.rfind("not measured (1 ", 0) != 0) shown.push_back(c);
    Table t = make_table("summary", "Targets", {}, cols, shown);
    for (const auto& c : shown) t.row_lines.push_back(c.claim.text);
    t.notes = s.notes;
    out.push_back(std::move(t));
  }
  if (!r.findings.empty()) {
    Table f;
    f.kind = "findings";
    f.title = "Findings";
    f.columns = {{"finding", "finding", "", fmtcol::plain()}};
    for (const auto& h : r.findings) f.rows.push_back({h});
    f.text_line = [](const std::vector<std::string>& c) { return "- " + c[0]; };
    out.push_back(std::move(f));
  }
  if (!s.recommendations.empty()) {
    const std::vector<Col<Recommendation>> cols = {
        {{"topic", "topic", "", fmtcol::plain()}, [](const Recommendation& x) { return Value(x.topic); }},
        {{"recommendation", "recommendation", "", fmtcol::plain()},
         [](const Recommendation& x) { return Value(x.text); }},
        {{"from", "from", "", fmtcol::plain()}, [](const Recommendation& x) { return Value(x.from); }},
    };
    Table t = make_table("recommendations", "Recommendations", {}, cols, s.recommendations);
    t.text_line = [](const std::vector<std::string>& c) { return fmt::format("- {}: {} [{}]", c[0], c[1], c[2]); };
    t.notes.push_back(
        "Each recommendation comes from a rule of docs/METHODOLOGY.md \"Executive summary and recommendations\"; "
        "\"from\" names the table and the launches (file labels, listed in the appendix) its numbers come from");
    out.push_back(std::move(t));
  }
  return out;
}

namespace {

// Terms and their definitions, in the order the definitions table lists them.
using TermDefinitions = std::vector<std::pair<std::string, std::string>>;

// What the rows of the report's weak and strong tables show: which row metrics have a value
// (indices into row_metrics()), a breakdown, ranks sharing a GPU, several launches.
struct ShownRowFacts {
  bool breakdown = false, shared = false, several = false;
  std::vector<bool> metric_shown;
};

// Gathers ShownRowFacts over every row of the weak, then of the strong tables of `r`.
ShownRowFacts shown_row_facts(const Report& r) {
  ShownRowFacts s;
  s.metric_shown.assign(row_metrics().size(), false);
  const auto facts = [&](const RowFacts& f, const RowLaunch& l, bool sh, bool bd) {
    for (size_t i = 0; i < s.metric_shown.size(); ++i)
      s.metric_shown[i] =
          s.metric_shown[i] || (row_metrics()[i].used_in(kInReportTables) && f.metric_at(i).has_value());
    s.several = s.several || l.launches > 1;
    s.shared = s.shared || sh;
    s.breakdown = s.breakdown || bd;
  };
  for (const auto& w : r.weak)
    for (const auto& x : w.rows) facts(x.facts, x.launch, x.shared_gpu, x.exposed_comm.has_value());
  for (const auto& t : r.strong)
    for (const auto& x : t.rows) facts(x.facts, x.launch, x.shared_gpu, x.exposed_comm.has_value());
  return s;
}

// The unit the definitions count in: "GPU" where a scaling table ran on GPUs (or there is
// none), else "rank".
std::string definitions_unit(const Report& r, bool weak, bool strong) {
  for (const auto& w : r.weak)
    if (unit_word(w.key) == "GPU") return std::string("GPU");
  for (const auto& t : r.strong)
    if (unit_word(t.key) == "GPU") return std::string("GPU");
  return std::string(weak || strong ? "rank" : "GPU");
}

// The terms of the weak and strong scaling tables (throughput, percentiles, DDP overhead,
// efficiency, speedup, exposed comm), per unit `u`.
void scaling_definitions(const std::string& u, bool weak, bool strong, bool breakdown, TermDefinitions& d) {
  const bool gpu = u == "GPU";
  if (weak || strong) {
    d.push_back({"per-" + u + " ex/s, aggregate ex/s",
                 "examples of one optimizer step of a rank (batch per rank x grad accum) x ranks / the p50 step "
                 "time: aggregate for the whole group, per " +
                     u + (gpu ? " divided by the distinct GPUs of the row's ranks (ranks sharing a GPU count once)"
                              : " divided by the ranks")});
    d.push_back({"p50, p5, p95 s/iter", "percentiles of every rank's measured step times pooled (numpy's linear "
                                        "interpolation, as PyTorch's benchmark.py)"});
    d.push_back({"DDP overhead vs no-DDP",
                 "1 - per-" + u + " ex/s / the no-DDP row's ex/s, both at p50: every cost DDP adds to a step, "
                 "communication included; with one rank per " + u + " and as many examples per step this is "
                 "(t_DDP - t_noDDP) / t_DDP" +
                     std::string(gpu ? ", and where ranks shared a GPU it compares what the GPU delivered" : "")});
  }
  if (weak)
    d.push_back({"efficiency (weak scaling)",
                 "per-" + u + " ex/s / per-" + u + " ex/s of the table's baseline row (the 1-" + u +
                     " DDP row, else the no-DDP row, else the smallest group, named under each table)"});
  if (strong)
    d.push_back({"speedup, efficiency (strong scaling)",
                 "speedup = t(first row) / t(N) x the first row's " + u + "s, at p50 per global step; efficiency = "
                 "speedup / N " + u + "s"});
  if (breakdown)
    d.push_back({"exposed comm, other DDP overhead",
                 std::string(find_row_metric("exposed_comm")->definition) +
                     "; other DDP overhead = DDP overhead vs no-DDP - exposed comm (bucket copies, buffer broadcast, "
                     "Reducer work)"});
  else if (weak || strong)
    d.push_back({"exposed comm, other DDP overhead",
                 "not shown: they need the per-step breakdown (ddpbench run --breakdown; result files of schema 1.5 "
                 "and later)"});
}

// The definition of TFLOP/s and MFU, naming each peak the weak rows' MFUs use and their files;
// none when no weak row has an MFU.
void mfu_definition(const Report& r, const std::string& u, TermDefinitions& d) {
  // MFU, with the peaks in use: rows of different peaks are not ranked by MFU.
  std::vector<std::pair<MfuPeak, std::vector<std::string>>> peaks;
  for (const auto& w : r.weak)
    for (const auto& x : w.rows) {
      if (!x.mfu) continue;
      auto it = std::find_if(peaks.begin(), peaks.end(), [&](const auto& p) { return p.first.same_as(x.mfu_peak); });
      if (it == peaks.end()) it = peaks.insert(peaks.end(), {x.mfu_peak, {}});
      if (std::find(it->second.begin(), it->second.end(), x.launch.file) == it->second.end())
        it->second.push_back(x.launch.file);
    }
  if (!peaks.empty()) {
    std::vector<std::string> named;
    for (const auto& [p, files] : peaks)
      named.push_back(fmt::format("{} ({}: {})", p.short_label().empty() ? "unknown" : p.short_label(),
                                  p.basis.empty() ? "not recorded" : p.basis, fmt::join(files, ", ")));
    d.push_back({"TFLOP/s/" + u + ", MFU",
                 fmt::format("achieved training TFLOP/s = 6 x forward multiply-adds per example x per-{} ex/s / "
                             "10^12; MFU = that / the dense peak of the fastest unit the row's math allows, named "
                             "per row in \"MFU peak\". Peaks here: {}.{}",
                             u, fmt::join(named, "; "),
                             peaks.size() > 1 ? " MFUs of different peaks are not comparable and are never ranked: "
                                                "compare those rows by ex/s"
                                              : "")});
  }
}

// The definitions of the row metrics shown (`metric_shown`, indices into row_metrics()), in
// row_metrics() order.
void metric_definitions(const std::vector<bool>& metric_shown, TermDefinitions& d) {
  for (size_t i = 0; i < metric_shown.size(); ++i)
    if (metric_shown[i]) {
      // "peak mem = the largest ..." reads "the largest ..." under its term.
      const std::string term = row_metrics()[i].header, def = row_metrics()[i].definition;
      d.push_back({term, def.rfind(term + " = ", 0) == 0 ? def.substr(term.size() + 3) : def});
    }
}

// The terms of the step breakdown and optimization impact tables, where `r` has them.
void breakdown_and_impact_definitions(const Report& r, TermDefinitions& d) {
  if (std::any_of(r.weak.begin(), r.weak.end(), [](const WeakTable& w) { return !w.breakdown.empty(); }) ||
      std::any_of(r.strong.begin(), r.strong.end(), [](const StrongTable& x) { return !x.breakdown.empty(); }))
    d.push_back({"step breakdown (ms)",
                 "mean over ranks of each rank's mean time per step; forward + bwd compute + exposed comm + optimizer "
                 "+ other = step; exposed comm = bwd comm - overlap; allreduce MiB/step = gradient bytes per step / "
                 "2^20; eff. busbw = those bytes / bwd comm time x 2(n-1)/n, as run recorded it"});
  if (!r.impact.empty())
    d.push_back({"optimization impact",
                 "measured rows only; baseline = the run with every DDP knob at PyTorch's default (bucket cap 25 MiB, "
                 "first bucket 1 MiB, buffer broadcast, no gradient as bucket view, no static graph, no find unused "
                 "parameters, no comm hook, grad accum 1); speedup = aggregate ex/s / the baseline's (= t_base / t at "
                 "p50 when both accumulate as many micro-steps); exposed comm = breakdown mean over ranks per "
                 "optimizer step; change = exposed comm - the baseline's, and as a fraction of the baseline's"});
}

// The terms of the strategy, memory and inference tables, where `r` has them.
void strategy_memory_inference_definitions(const Report& r, TermDefinitions& d) {
  if (!r.strategy.empty()) {
    const std::string su = unit_word(r.strategy.front().key), sus = su + "s";
    d.push_back({"strategy comparison",
                 fmt::format("measured rows only; throughput = {} x batch per {} x grad accum / step p50; efficiency "
                             "= throughput / ({} x the throughput of the same strategy, checkpointing and precision "
                             "on 1 {}, else of the no-DDP row of that precision and batch); exposed comm = breakdown "
                             "mean over ranks / step",
                             sus, su, sus, su)});
    d.push_back({"peak memory, model state",
                 fmt::format("max over {} of each {}'s peak over the measured steps: on GPUs the CUDA caching "
                             "allocator's allocated and reserved bytes, on CPUs the process's peak RSS (VmHWM), which "
                             "also counts libraries and allocator caches; model state = parameters + gradients + "
                             "optimizer state that {} 0 holds between steps, counted from the tensors",
                             sus, su, su)});
  }
  if (!r.memory.empty()) {
    d.push_back({"memory optimization",
                 "each technique against the fp32 DDP row (no checkpointing) of the same model, size and batch in "
                 "these files; saved = the fp32 DDP row's peak - the technique's, and as a fraction of fp32 DDP's "
                 "(negative: it costs memory); time paid = step p50 / fp32 DDP's step p50 - 1 (negative: faster)"});
    if (std::any_of(r.memory.begin(), r.memory.end(), [](const MemoryTable& m) { return m.peak_kind == "peak RSS"; }))
      d.push_back({"peak RSS", "on CPUs the peak is the process's resident set (VmHWM): an upper bound on the "
                               "model's memory that also counts libraries and freed memory the allocator keeps, so "
                               "savings look smaller than on a GPU"});
  }
  if (!r.inference.empty()) {
    const std::string iu = unit_word(r.inference.front().key);
    d.push_back({"inference", fmt::format("every {} of a group runs forward passes of its own batch at the same time "
                                          "(no_grad, eval mode, autocast for bf16/fp16); throughput = {}s x batch / "
                                          "p50; latency = the per-batch forward time, pooled over the {}s",
                                          iu, iu, iu)});
  }
}

// The terms of the cost table (USD, hours, per unit `u`) and of ranks sharing a GPU, where
// the report has them.
void cost_and_sharing_definitions(const Report& r, const std::string& u, bool shared, TermDefinitions& d) {
  const bool gpu = u == "GPU";
  if (!r.cost.empty())
    d.push_back({"USD per 1M samples, time h, cost USD",
                 "at the mean step time (the statistic of epoch time, so epochs x epoch time is the time priced): "
                 "USD per 1M samples = price x " + u + "s x mean s/step / examples per step x 10^6 / 3600; time h = "
                 "epochs x steps per epoch (ceil(dataset size / examples per step)) x mean s/step / 3600; cost = "
                 "time h x " + u + "s x price" + (gpu ? "; rows whose ranks shared a GPU are not priced" : "")});
  if (shared)
    d.push_back({"ranks sharing a GPU",
                 "ranks reporting the same GPU UUID (else host and bus id) count as one GPU: the row measures "
                 "sharing, not scaling, so it has no efficiency or speedup, is not plotted as scaling and is not "
                 "priced; its DDP overhead is by throughput"});
}

// The definition of the file column, and of how one launch is chosen when several
// measured a configuration (`several_launches`).
void file_definition(bool several_launches, TermDefinitions& d) {
  d.push_back({"file, launches",
               std::string("file: the label of the result file (one launch) every number of a row comes from, "
                           "listed in the appendix.") +
                   (several_launches
                        ? " Where several launches measured one configuration the row is the launch with the "
                          "median p50, of an even count the slower middle one (the conservative choice), never a "
                          "mix; spread = (slowest - fastest p50) / the chosen launch's p50. A launch given twice "
                          "(the same content, or the same job id and start time) counts once."
                        : "")});
}

}  // namespace

// The terms the report's tables use, each defined once (the tables point here): only those
// that some table of this report shows.
Table definitions_tab(const Report& r) {
  TermDefinitions d;
  const bool weak = !r.weak.empty(), strong = !r.strong.empty();
  const bool repeats = !r.repeats.empty();
  const ShownRowFacts facts = shown_row_facts(r);
  const std::string u = definitions_unit(r, weak, strong);
  scaling_definitions(u, weak, strong, facts.breakdown, d);
  mfu_definition(r, u, d);
  metric_definitions(facts.metric_shown, d);
  breakdown_and_impact_definitions(r, d);
  strategy_memory_inference_definitions(r, d);
  cost_and_sharing_definitions(r, u, facts.shared, d);
  if (d.empty() && r.impact.empty() && r.strategy.empty() && r.memory.empty() && r.inference.empty())
    return Table{};  // no table of rows to define terms for (collectives, pairs, find-max-bs files)
  if (!r.files.empty()) file_definition(facts.several || repeats, d);
  Table t;
  t.kind = "definitions";
  t.title = "Definitions";
  t.columns = {{"term", "term", "", fmtcol::plain()}, {"definition", "definition", "", fmtcol::plain()}};
  for (auto& [term, def] : d) t.rows.push_back({term, def});
  t.text_line = [](const std::vector<std::string>& c) { return fmt::format("{}: {}", c[0], c[1]); };
  t.notes.push_back("every formula with its source: docs/METHODOLOGY.md");
  return t;
}

}  // namespace ddpbench::report_tables_internal

namespace ddpbench {
namespace {

// "Scope", "Targets", "resnet50", "Data quality", "Not measured": the topic a headline line opens with.
std::string headline_topic(const std::string& line) {
  const size_t colon = line.find(": ");
  return colon == std::string::npos ? "" : line.substr(0, colon);
}

}  // namespace

Table headline_table(const Headline& h) {
  Table t;
  t.kind = "headline";
  t.title = "Headline";
  t.columns = {{"topic", "topic", "", fmtcol::plain()}, {"line", "headline", "", fmtcol::plain()}};
  for (const auto& line : headline_lines(h)) t.rows.push_back({headline_topic(line), line});
  t.text_line = [](const std::vector<std::string>& c) { return "- " + c[1]; };
  return t;
}

}  // namespace ddpbench
