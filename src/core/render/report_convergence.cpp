#include "core/render/report_convergence.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/analysis/convergence.hpp"
#include "core/util/errors.hpp"

namespace ddpbench {
namespace {

// A field of a section, NaN when absent.
template <typename T>
double num(const std::optional<T>& v) {
  return v ? static_cast<double>(*v) : NAN;
}

}  // namespace

std::vector<Table> convergence_tables(const std::vector<ConvergenceGroup>& groups) {
  std::vector<Table> out;
  for (const auto& g : groups) {
    Table t;
    t.kind = "time_to_loss";
    t.title = fmt::format("Time to target: {} on {} ({})", g.model, g.dataset, g.source);
    t.context = {{"source", g.source}, {"model", g.model}, {"dataset", g.dataset}, {"device", g.device}};
    t.columns = {{"world_size", g.device == "cuda" ? "GPUs" : "ranks", "", fmtcol::plain()},
                 {"global_batch", "global batch", "", fmtcol::plain()},
                 {"epochs_run", "epochs run", "", fmtcol::plain()},
                 {"target_reached", "target reached", "", fmtcol::plain()},
                 {"target_epoch", "epoch at target", "", fmtcol::plain()},
                 {"target_wall_s", "time to target s", "s", fmtcol::fixed(1)},
                 {"speedup", "speedup vs 1 rank", "ratio", fmtcol::times()},
                 {"test_accuracy", "final test acc", "fraction", fmtcol::fixed(4)},
                 {"test_loss", "final test loss", "nats", fmtcol::fixed(4)},
                 {"train_loss", "last epoch train loss", "nats", fmtcol::fixed(4)},
                 {"wall_s", "total s", "s", fmtcol::fixed(1)},
                 {"data_wait_ms", "data wait ms/step", "ms", fmtcol::fixed(2)}};
    std::optional<double> ref_s;
    for (const auto& r : g.rows) {
      const TargetOutcome tg = r.convergence.target.value_or(TargetOutcome{});
      if (r.world_size == 1 && tg.reached.value_or(false)) ref_s = num(tg.wall_s);
    }
    std::string metric = "none";
    double value = 0;
    for (const auto& r : g.rows) {
      const RowConvergence& c = r.convergence;
      const TargetOutcome tg = c.target.value_or(TargetOutcome{});
      metric = tg.metric.value_or("none");
      value = tg.value.value_or(0.0);
      const std::vector<ConvergenceEpoch> ep = c.epochs.value_or(std::vector<ConvergenceEpoch>{});
      const ConvergenceEpoch last = ep.empty() ? ConvergenceEpoch{} : ep.back();
      double wait = 0, steps = 0;
      for (const auto& e : ep) {
        wait += e.data_wait_s_mean.value_or(0.0) * static_cast<double>(e.steps.value_or(0));
        steps += static_cast<double>(e.steps.value_or(0));
      }
      const bool reached = tg.reached.value_or(false);
      const double at = num(tg.wall_s);
      std::vector<Value> row = {Value(static_cast<long long>(r.world_size)),
                                Value(r.global_batch),
                                Value(static_cast<long long>(ep.size())),
                                Value(std::string(metric == "none" ? "no target"
                                                  : reached        ? "yes"
                                                                   : "no")),
                                reached && tg.epoch ? Value(*tg.epoch) : Value(),
                                reached ? Value(at) : Value(),
                                reached && ref_s && at > 0 ? Value(*ref_s / at) : Value(),
                                Value(num(last.test_accuracy)),
                                Value(num(last.test_loss)),
                                Value(num(last.train_loss)),
                                Value(num(last.wall_s)),
                                steps > 0 ? Value(1e3 * wait / steps) : Value()};
      t.rows.push_back(std::move(row));
    }
    t.notes.push_back(metric == "none" ? "No target: every group trained all --epochs."
                                       : fmt::format("Target: {} {} {:g} on the test split, checked after each epoch; "
                                                     "times from the first step, evaluations included.",
                                                     metric, metric == "test_loss" ? "<=" : ">=", value));
    t.notes.push_back(
        "The 1-rank row is the reference (DDP on one rank; no separate no-DDP row). Data wait: time a "
        "step waited for its batch from the loader, mean over ranks and steps.");
    const BenchResult& best = *std::max_element(
        g.rows.begin(), g.rows.end(), [](const auto& a, const auto& b) { return a.world_size < b.world_size; });
    const nlohmann::json bl = best.convergence.baselines.value_or(nlohmann::json::array());
    if (bl.is_array() && !bl.empty()) {
      std::string s = "Published test accuracies (" + best.convergence.baselines_source.value_or("?") + "):";
      for (const auto& l : baseline_lines(bl)) s += "\n" + l.substr(l.find("published: ") + 11);
      t.notes.push_back(s);
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<Plot> write_convergence_plots(const std::vector<ConvergenceGroup>& groups, const std::string& dir) {
  if (groups.empty()) return {};
  std::vector<PlotSpec> specs;
  std::set<std::string> stems;
  for (const auto& g : groups) {
    std::string base = slug(fmt::format("ttl-{}-{}-{}", g.model, g.dataset, g.device));
    for (int k = 2; stems.count(base); ++k)
      base = slug(fmt::format("ttl-{}-{}-{}-{}", g.model, g.dataset, g.device, k));
    stems.insert(base);
    std::string loss_dat, acc_dat, loss_cmd, acc_cmd;
    for (size_t i = 0; i < g.rows.size(); ++i) {
      const auto& r = g.rows[i];
      const std::string title = fmt::format("{} rank{}", r.world_size, r.world_size > 1 ? "s" : "");
      const LossCurve l = r.convergence.loss.value_or(LossCurve{});
      loss_dat += fmt::format("{}# {}: wall_s train_loss\n", i ? "\n\n" : "", title);
      if (l.wall_s && l.value)
        for (size_t k = 0; k < l.wall_s->size() && k < l.value->size(); ++k)
          loss_dat += fmt::format("{} {}\n", gnuplot_number((*l.wall_s)[k]), gnuplot_number((*l.value)[k]));
      acc_dat += fmt::format("{}# {}: wall_s test_accuracy\n", i ? "\n\n" : "", title);
      for (const auto& e : r.convergence.epochs.value_or(std::vector<ConvergenceEpoch>{}))
        acc_dat += fmt::format("{} {}\n", gnuplot_number(num(e.wall_s)), gnuplot_number(num(e.test_accuracy)));
      loss_cmd += fmt::format("{}{} index {} using 1:2 with lines lw 2 title {}", i ? ", " : "",
                              i ? "''" : gnuplot_quote(base + "-loss.dat"), i, gnuplot_quote(title));
      acc_cmd += fmt::format("{}{} index {} using 1:2 with linespoints lw 2 pt 7 title {}", i ? ", " : "",
                             i ? "''" : gnuplot_quote(base + "-accuracy.dat"), i, gnuplot_quote(title));
    }
    const struct {
      std::string stem, title, ylabel, data, cmd;
    } panels[] = {
        {base + "-loss", fmt::format("{} on {}, {}: training loss against wall time", g.model, g.dataset, g.device),
         "training loss (cross-entropy, mean over ranks)", loss_dat, loss_cmd},
        {base + "-accuracy", fmt::format("{} on {}, {}: test accuracy per epoch", g.model, g.dataset, g.device),
         "test accuracy", acc_dat, acc_cmd}};
    for (const auto& p : panels) {
      PlotSpec spec;
      spec.name = p.stem;
      spec.title = p.title;
      spec.data_file = p.stem + ".dat";
      spec.data = p.data;
      spec.setup = "set key outside below center horizontal\n";
      spec.body = "set xlabel 'wall time (s)'\nset ylabel " + gnuplot_quote(p.ylabel) + "\nplot " + p.cmd + "\n";
      specs.push_back(std::move(spec));
    }
  }
  return draw_plots(specs, dir, "convergence.gp");
}

}  // namespace ddpbench
