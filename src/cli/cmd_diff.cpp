// `ddpbench diff BASE... -- TEST...`: what changed between launches, and whether it matters.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "core/analysis/diff.hpp"
#include "core/result/config_key.hpp"
#include "core/util/errors.hpp"

namespace ddpbench::cli {
namespace {

// The usage line names the files (CLI11 keeps them as extras, so it cannot).
class DiffUsage : public HelpFormatter {
 public:
  std::string make_usage(const CLI::App*, std::string name) const override {
    return "Usage: " + name + " [OPTIONS] BASE.json TEST.json\n       " + name +
           " [OPTIONS] BASE1.json [BASE2.json ...] -- TEST1.json [TEST2.json ...]\n";
  }
};

}  // namespace

Command add_diff_command(CLI::App& parent) {
  struct Flags {
    std::string format = "table", match, sentinel;
    double noise_floor_pct = 0;
    double fail_pct = 0;
    bool wide = false, all_fields = false;
    CLI::Option *fail_opt = nullptr, *floor_opt = nullptr, *match_opt = nullptr;
  };
  auto f = std::make_shared<Flags>();
  auto* app = parent.add_subcommand(
      "diff",
      "Compare result files, one launch per file (BASE TEST, or BASE... -- TEST...): configuration, then per-row "
      "timing changes with a noise verdict");
  // The files are kept by CLI11 as extras, in order, with the "--" between the sides. The
  // positional below never takes a value (its check rejects every one); while it waits,
  // CLI11 keeps a "--" among this subcommand's arguments instead of handing it up.
  app->allow_extras();
  app->formatter(std::make_shared<DiffUsage>());
  app->validate_positionals();
  app->add_option("separator", f->sentinel)
      ->expected(1)
      ->check(CLI::Validator([](std::string&) { return std::string("files are read as extras"); }, "", "never"))
      ->group("");
  app->add_option("--format", f->format, "Output: table, md (or markdown) or json")
      ->check(CLI::IsMember({"table", "md", "markdown", "json"}))
      ->capture_default_str();
  app->add_flag("--wide", f->wide,
                fmt::format("Table: one line per row with every column, the fields outside --match included "
                            "(default: lines of at most {} characters, the columns in parts that each start with "
                            "the row)",
                            kDiffTextWidth));
  f->match_opt = app->add_option(
      "--match", f->match,
      fmt::format("Pair rows that agree on these configuration fields (comma list; others may differ and are shown): "
                  "{}, or all (default: diff.py's rows, {}, plus what tells a side's rows apart)",
                  fmt::join(config_field_names(), ","), match_list(diff_default_fields())));
  app->add_flag("--all-fields", f->all_fields,
                "List every value that differs between the files (job ids, paths, GPU UUIDs, git SHAs, the schema "
                "version too); default: the measured settings only");
  f->floor_opt = app->add_option("--noise-floor", f->noise_floor_pct,
                                 "Launch-to-launch noise floor, % of the base time: with one launch per side the "
                                 "interval is widened by it and a change beyond it is confirmed (default: none assumed; "
                                 "one launch a side gives 'unconfirmed' verdicts, docs/METHODOLOGY.md)");
  f->fail_opt = app->add_option("--fail-if-slower", f->fail_pct,
                                "Exit 1 when a row is slower by more than PCT % and its interval excludes 0, or a row "
                                "has no verdict or is missing from the test side (a CI gate)");
  app->footer(
      "Exit codes: 0 compared; 1 --fail-if-slower tripped (a slower row, confirmed or not, a row without a verdict, "
      "or a base row missing from the test side); 2 bad input, or no row of the sides pairs (the message "
      "names the --match that pairs them).\nVerdicts and the noise floor: docs/METHODOLOGY.md, \"diff: noise and "
      "launches\".");
  return {app, [f, app]() -> int {
            std::vector<std::string> base, test;
            bool separated = false;
            for (const auto& a : app->remaining()) {
              if (a == "--" && !separated) {
                separated = true;
                continue;
              }
              if (a.size() > 1 && a[0] == '-')
                throw UsageError(
                    fmt::format("unknown option '{}' (options go before the '--' that separates the "
                                "sides); see 'ddpbench diff --help'",
                                a));
              (separated ? test : base).push_back(a);
            }
            if (!separated) {
              if (base.size() != 2)
                throw UsageError(
                    fmt::format("diff got {} file(s); pass BASE TEST, or BASE... -- TEST... for several "
                                "launches per side",
                                base.size()));
              test = {base.back()};
              base.pop_back();
            }
            if (base.empty() || test.empty())
              throw UsageError("a side has no files; pass BASE1.json [BASE2.json ...] -- TEST1.json [TEST2.json ...]");
            if (f->fail_opt->count() && !(f->fail_pct >= 0 && f->fail_pct <= 10000))  // NaN and inf fail
              throw UsageError(fmt::format("--fail-if-slower {} must be a percentage in [0, 10000]", f->fail_pct));
            DiffOptions opts;
            if (f->match_opt->count()) opts.match = parse_field_list(f->match, "--match");
            if (f->floor_opt->count()) opts.noise_floor = f->noise_floor_pct / 100.0;
            opts.all_fields = f->all_fields;
            std::vector<NamedResult> b, t;
            for (const auto& p : base) b.push_back({p, load_result(p)});
            for (const auto& p : test) t.push_back({p, load_result(p)});
            const DiffReport d = diff_results(b, t, opts);
            const std::string text = f->format == "json"    ? diff_json(d).dump(2) + "\n"
                                     : f->format == "table" ? render_diff_text(d, f->wide ? 0 : kDiffTextWidth)
                                                            : render_diff_markdown(d);
            write_stdout(text);
            if (f->fail_opt->count()) {
              const auto why = gate_failures(d, f->fail_pct / 100.0);
              for (const auto& w : why) std::fprintf(stderr, "ddpbench: --fail-if-slower: %s\n", w.c_str());
              if (!why.empty()) return kExitFailure;
            }
            return kExitOk;
          }};
}

}  // namespace ddpbench::cli
