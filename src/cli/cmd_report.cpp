// `ddpbench report`: scaling tables, plots, an HTML page and cost from result files.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/commands.hpp"
#include "core/analysis/check.hpp"
#include "core/render/html.hpp"
#include "core/render/plots.hpp"
#include "core/render/report_convergence.hpp"
#include "core/render/report_tables.hpp"
#include "core/util/errors.hpp"
#include "core/util/remove_tree.hpp"

namespace ddpbench::cli {

/// Columns of `report`'s text tables unless --wide.
constexpr size_t kReportTextWidth = 100;

std::vector<NamedResult> load_report_inputs(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, bool>> files;  // path, named on the command line itself
  for (const auto& p : paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      files.push_back({p, true});
      continue;
    }
    // A folder (validate's --out): its *.json files in name order, not its subfolders.
    std::vector<std::string> in;
    for (const auto& e : fs::directory_iterator(p, ec))
      if (e.path().extension() == ".json" && fs::is_regular_file(e.path(), ec)) in.push_back(e.path().string());
    if (ec) throw UsageError(fmt::format("{}: cannot list the folder ({}); give result files or a readable folder", p, ec.message()));
    std::sort(in.begin(), in.end());
    for (auto& f : in) files.push_back({f, false});
  }
  std::vector<NamedResult> out;
  for (const auto& [path, named] : files) {
    const std::string text = read_text_file(path);
    if (const std::string what = known_non_result(text); !what.empty()) {
      std::fprintf(stderr, "ddpbench: note: %s is %s, not a result file: left out\n", path.c_str(), what.c_str());
      continue;
    }
    out.push_back({path, load_result(path)});
  }
  if (out.empty())
    throw UsageError(fmt::format("no result file among {}; pass files written by ddpbench run, comm or find-max-bs "
                                 "--json, or a folder holding them (validate --out)",
                                 fmt::join(paths, ", ")));
  return out;
}

Command add_report_command(CLI::App& parent) {
  struct Flags {
    std::vector<std::string> files, target_for;
    std::string format = "table", plots, html, output, targets;
    ReportOptions opts;
    double price = 0, target_ex_s = 0;
    bool wide = false;
    CLI::Option *price_opt = nullptr, *html_opt = nullptr, *output_opt = nullptr, *ex_s_opt = nullptr;
  };
  auto f = std::make_shared<Flags>();
  auto* app = parent.add_subcommand("report",
                                    "Weak/strong scaling tables, step breakdown, optimization impact, "
                                    "collectives, telemetry, stragglers, burn-in, pair bandwidth, "
                                    "find-max-bs, comparison, cost, plots and HTML from result files");
  app->add_option(
         "files", f->files,
         "Result files written by ddpbench run --json, comm --json or find-max-bs --json (one or many launches), or "
         "folders holding them (validate --out: its other files are left out with a note)")
      ->required();
  app->add_option("--format", f->format, "Output: table, md (or markdown), csv or json")
      ->check(CLI::IsMember({"table", "md", "markdown", "csv", "json"}))
      ->capture_default_str();
  app->add_flag("--per-rank", f->opts.per_rank,
                "Add per-rank tables: step times and straggler score of every rank (the named stragglers are "
                "printed either way) and the telemetry of each model's largest group");
  app->add_option("--plots", f->plots, "Write PNG and SVG plots into this directory (needs gnuplot)");
  f->html_opt =
      app->add_option("--html", f->html, "Write one self-contained HTML page (tables, inline SVG plots, environment)");
  f->output_opt = app->add_option("-o,--output", f->output, "Write the tables here instead of standard output");
  f->price_opt = app->add_option("--gpu-hour-cost", f->price,
                                 "USD per GPU-hour: adds cost per 1M samples and per "
                                 "training run at each world size");
  app->add_option("--epochs", f->opts.epochs, "Epochs of a training run, for cost")->capture_default_str();
  app->add_flag("--wide", f->wide,
                "Text tables on one line per row, however wide (default: parts of at most 100 columns)");
  app->add_option("--target-efficiency", f->opts.targets.min_efficiency,
                  "Summary target: weak-scaling efficiency at each table's largest GPU count, a fraction")
      ->capture_default_str();
  app->add_option("--target-comm", f->opts.targets.max_exposed_comm,
                  "Summary target: exposed communication below this fraction of the step at that count")
      ->capture_default_str();
  f->ex_s_opt = app->add_option("--target-ex-s", f->target_ex_s,
                                "Summary target: per-GPU ex/s at each weak-scaling table's largest GPU count (none by "
                                "default)");
  app->add_option("--target-for", f->target_for,
                  "Summary target of one model, replacing the global one for its tables: MODEL:METRIC=VALUE, "
                  "METRIC efficiency, comm or ex-s as --target-efficiency, --target-comm, --target-ex-s "
                  "(repeatable; e.g. resnet50:ex-s=700)")
      ->allow_extra_args(false);  // one text per --target-for: the next word is a result file
  app->add_option("--targets", f->targets,
                  "Summary targets pinned to configurations, in check's reference format "
                  "(docs/reference/example.json): each entry is checked on every run file");
  app->add_option("--dataset-size", f->opts.dataset_size, "Samples per epoch, for cost (ImageNet-1k)")
      ->check(whole_number())
      ->capture_default_str();
  app->footer(
      "Exit codes: 0 report written; 2 bad input (an unreadable or foreign file, no DDP row, collective result, "
      "stragglers or find-max-bs search in any file, a bad option).");

  return {app, [f]() -> int {
            if (f->price_opt->count()) f->opts.gpu_hour_usd = f->price;
            if (f->ex_s_opt->count()) f->opts.targets.min_per_gpu_ex_s = f->target_ex_s;
            for (const auto& text : f->target_for) add_model_target(f->opts.targets, text);
            {
              // No output replaces an input (the plots' files too: the guard remembers them).
              std::vector<NamedPath> inputs, outputs;
              for (const auto& path : f->files) inputs.push_back({"result file", path});
              if (!f->targets.empty()) inputs.push_back({"--targets", f->targets});
              if (f->output_opt->count()) outputs.push_back({"--output", f->output});
              if (f->html_opt->count()) outputs.push_back({"--html", f->html});
              check_outputs_apart(inputs, outputs);
            }
            if (!f->targets.empty()) {
              f->opts.targets.pinned = parse_reference(read_text_file(f->targets), f->targets);
              f->opts.targets.pinned_source = f->targets;
            }
            const std::vector<NamedResult> files = load_report_inputs(f->files);
            // A model no file measured holds nothing to its targets: most likely a misspelt name.
            for (const auto& model : absent_target_models(f->opts.targets, files))
              std::fprintf(stderr, "ddpbench: warning: --target-for %s: no row of that model in the files\n",
                           model.c_str());
            const Report rep = build_report(files, f->opts);

            const std::string text = render_report(rep, parse_table_format(f->format), f->wide ? 0 : kReportTextWidth);
            // Given, even as "": an empty path is refused, not read as "no file".
            if (f->output_opt->count()) check_writable(f->output, "--output");
            if (f->html_opt->count()) check_writable(f->html, "--html");

            std::vector<Plot> plots;
            if (!f->plots.empty()) {
              plots = write_plots(rep, f->plots);
              for (auto& p : write_convergence_plots(rep.convergence, f->plots)) plots.push_back(std::move(p));
            }
            // A plot that cannot be drawn says why; the others and the tables are still written.
            const auto warn_undrawn = [](const std::vector<Plot>& ps) {
              for (const auto& p : ps)
                if (!p.error.empty())
                  std::fprintf(stderr, "ddpbench: warning: plot %s not drawn: %s\n", p.name.c_str(), p.error.c_str());
            };
            warn_undrawn(plots);
            if (!f->html.empty()) {
              // With --plots the page inlines those; else report_page draws its own.
              write_file_atomic(f->html, plots.empty() ? report_page(rep) : render_html(rep, plots, utc_now_iso8601()));
              std::fprintf(stderr, "ddpbench: wrote %s\n", f->html.c_str());
            }
            if (!f->plots.empty()) {
              size_t drawn = 0;
              for (const auto& p : plots) drawn += p.error.empty() ? 1 : 0;
              std::fprintf(
                  stderr, "ddpbench: wrote %zu plots (PNG and SVG) to %s%s\n", drawn, f->plots.c_str(),
                  drawn < plots.size() ? fmt::format("; {} not drawn (above)", plots.size() - drawn).c_str() : "");
            }
            // Markdown links the plots, relative to where the document goes.
            std::string doc = text;
            if (parse_table_format(f->format) == TableFormat::markdown && !f->plots.empty())
              doc += markdown_plot_links(plots, f->output.empty()
                                                    ? std::string(".")
                                                    : std::filesystem::absolute(f->output).parent_path().string());
            // The tables last: a failure above leaves no partial output behind.
            if (f->output.empty()) write_stdout(doc);
            else write_file_atomic(f->output, doc);
            return kExitOk;
          }};
}

}  // namespace ddpbench::cli
