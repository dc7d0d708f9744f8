#include "core/plots.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/errors.hpp"
#include "core/process.hpp"
#include "core/result.hpp"

namespace fs = std::filesystem;

namespace ddpbench {
namespace {

// A gnuplot single-quoted string: a quote is written twice, and control characters
// (a newline would end the command and let the rest of a name from a result file run
// as gnuplot, "!shell" included) become spaces.
std::string gq(const std::string& s) {
  std::string o = "'";
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) o += ' ';
    else if (c == '\'') o += "''";
    else o += c;
  }
  return o + "'";
}

// One table's data: GPUs, aggregate ex/s, ideal aggregate, efficiency %, per-GPU ex/s, p5, p50, p95.
struct Series {
  std::string stem, what;  // file stem and "resnet50, fp32, <device>, weak scaling, batch 16/GPU"
  std::string unit;        // "GPU", or "rank" on CPUs (unit_word)
  std::vector<std::array<double, 8>> rows;
};

std::vector<Series> series_of(const Report& r) {
  std::vector<Series> out;
  for (const auto& w : r.weak) {
    Series s;
    const ConfigKey& k = w.key;
    s.unit = unit_word(k);
    s.stem = slug(fmt::format("weak-{}-{}-{}-i{}-b{}", k.model, k.setup_label(), k.device, k.image_size,
                              k.batch_per_rank));
    s.what = fmt::format("{}, {}, {}: weak scaling, batch {} per {}, {}x{}", k.model, k.setup_label(), k.device,
                         k.batch_per_rank, s.unit, k.image_size, k.image_size);
    for (const auto& x : w.rows)
      s.rows.push_back({double(x.world_size), x.aggregate_ex_s, w.baseline_per_gpu_ex_s * x.world_size,
                        100.0 * x.efficiency, x.per_gpu_ex_s, x.p5_s, x.p50_s, x.p95_s});
    out.push_back(std::move(s));
  }
  for (const auto& t : r.strong) {
    Series s;
    const ConfigKey& k = t.key;
    s.unit = unit_word(k);
    s.stem = slug(fmt::format("strong-{}-{}-{}-i{}-gb{}", k.model, k.setup_label(), k.device, k.image_size,
                              t.global_batch));
    s.what = fmt::format("{}, {}, {}: strong scaling, global batch {}, {}x{}", k.model, k.setup_label(), k.device,
                         t.global_batch, k.image_size, k.image_size);
    const auto& base = t.rows.front();
    for (const auto& x : t.rows)
      s.rows.push_back({double(x.world_size), x.aggregate_ex_s, base.aggregate_ex_s * x.world_size / base.world_size,
                        100.0 * x.efficiency, x.aggregate_ex_s / x.world_size, x.p5_s, x.step_s, x.p95_s});
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

std::string slug(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) o += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!o.empty() && o.back() != '-') o += '-';
  }
  while (!o.empty() && o.back() == '-') o.pop_back();
  return o;
}

// The four panels of every series, in file-name order ("<stem>-<suffix>.png/.svg").
constexpr const char* kPanelSuffixes[] = {"throughput", "efficiency", "per-gpu", "latency"};

std::vector<Plot> write_plots(const Report& r, const std::string& dir) {
  if (find_program("gnuplot").empty())
    throw UsageError("--plots needs gnuplot; install it (apt-get install gnuplot-nox) or drop --plots");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw UsageError(fmt::format("--plots directory '{}' cannot be created ({}); choose a writable path", dir,
                                 ec ? ec.message() : "not a directory"));

  // Every file this writes (and gnuplot writes for it) is checked before any is written:
  // a symbolic link, device or read-only file planted in the folder is refused, not replaced.
  const auto series = series_of(r);
  {
    std::vector<std::string> names = {"plots.gp"};
    for (const auto& s : series) {
      names.push_back(s.stem + ".dat");
      for (const char* suffix : kPanelSuffixes)
        for (const char* ext : {".png", ".svg"}) names.push_back(s.stem + "-" + suffix + ext);
    }
    for (const auto& n : names) check_writable((fs::path(dir) / n).string(), "--plots");
  }

  std::vector<Plot> plots;
  std::ostringstream script;
  script << "set encoding utf8\nset grid\nset key top left\nset logscale x 2\n";
  for (const auto& s : series) {
    const std::string dat = s.stem + ".dat";
    {
      std::ofstream out(fs::path(dir) / dat);
      out << "# " << s.unit << "s aggregate_ex_s ideal_ex_s efficiency_pct per_" << s.unit << "_ex_s p5_s p50_s p95_s\n";
      for (const auto& row : s.rows)
        out << fmt::format("{} {:.6g} {:.6g} {:.6g} {:.6g} {:.6g} {:.6g} {:.6g}\n", row[0], row[1], row[2], row[3],
                           row[4], row[5], row[6], row[7]);
    }
    const double max_n = s.rows.back()[0];
    double max_eff = 100;
    for (const auto& row : s.rows) max_eff = std::max(max_eff, row[3]);
    // The x label says GPUs only where there are GPUs.
    const std::string xrange = fmt::format("set xlabel {}\nset xrange [0.7:{}]\n",
                                           gq(s.unit == "GPU" ? "GPUs (ranks, log2 scale)" : "ranks (log2 scale)"),
                                           std::max(2.0, max_n * 1.4));
    struct Panel {
      const char* suffix;
      std::string title, ylabel, plot;
    };
    const std::vector<Panel> panels = {
        {kPanelSuffixes[0], "aggregate throughput", fmt::format("throughput (examples/s, all {}s)", s.unit),
         fmt::format("set yrange [0:*]\nplot {} using 1:2 with linespoints lw 2 pt 7 title 'measured', '' using 1:3 with "
                     "lines dt 2 lw 2 title {}\nunset yrange",
                     gq(dat), gq(fmt::format("ideal (baseline per-{} ex/s x {}s)", s.unit, s.unit)))},
        {kPanelSuffixes[1], "scaling efficiency", "efficiency (%)",
         fmt::format("set yrange [0:{:.0f}]\nplot {} using 1:4 with linespoints lw 2 pt 7 title 'efficiency', 100 with "
                     "lines dt 2 title '100 %'\nunset yrange",
                     max_eff * 1.1, gq(dat))},
        {kPanelSuffixes[2], fmt::format("per-{} throughput", s.unit), fmt::format("throughput per {} (examples/s)", s.unit),
         fmt::format("set yrange [0:*]\nplot {} using 1:5 with linespoints lw 2 pt 7 title {}\nunset yrange", gq(dat),
                     gq("per " + s.unit))},
        {kPanelSuffixes[3], "time per iteration", "seconds per iteration",
         fmt::format("set yrange [0:*]\nplot {} using 1:7:6:8 with yerrorlines lw 2 pt 7 title 'p50, whiskers p5-p95'\n"
                     "unset yrange",
                     gq(dat))},
    };
    for (const auto& p : panels) {
      Plot plot;
      plot.name = s.stem + "-" + p.suffix;
      plot.title = s.what + ": " + p.title;
      plot.png = (fs::path(dir) / (plot.name + ".png")).string();
      plot.svg = (fs::path(dir) / (plot.name + ".svg")).string();
      for (const auto& [term, file] : {std::make_pair(fmt::format("pngcairo size {},{} font 'DejaVu Sans,11'",
                                                                  kPlotWidth, kPlotHeight),
                                                      plot.name + ".png"),
                                       std::make_pair(fmt::format("svg size {},{} font 'DejaVu Sans,11' background "
                                                                  "'#ffffff'",
                                                                  kPlotWidth, kPlotHeight),
                                                      plot.name + ".svg")}) {
        script << "set terminal " << term << "\nset output " << gq(file)
               << (std::string(p.suffix) == "throughput" ? "\nset key top left" : "\nset key bottom right")
               << "\nset title " << gq(plot.title)
               << " noenhanced\nset ylabel " << gq(p.ylabel) << "\n" << xrange << p.plot << "\nunset output\n";
      }
      plots.push_back(std::move(plot));
    }
  }
  const auto script_path = fs::absolute(dir) / "plots.gp";
  std::ofstream(script_path) << script.str();
  ProcessOptions gp;
  gp.cwd = fs::absolute(dir).string();
  constexpr double kGnuplotTimeoutS = 300;  // generous: a few seconds for dozens of plots
  const CaptureResult res = run_capture({"gnuplot", "plots.gp"}, gp, kGnuplotTimeoutS);
  if (!res.ok()) {
    std::string first = res.err.substr(0, res.err.find('\n'));
    if (res.timed_out) first = fmt::format("no result after {:.0f} s, stopped", kGnuplotTimeoutS);
    else if (first.empty()) first = res.status.describe();
    throw std::runtime_error(fmt::format("gnuplot failed on {}: {}", script_path.string(), first));
  }
  return plots;
}

}  // namespace ddpbench
