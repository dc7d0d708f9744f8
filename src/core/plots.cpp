#include "core/plots.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
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

// The stacked components of a breakdown bar, in stacking order (bottom first); they add up
// to step_s (result.hpp, kBreakdownComponents).
constexpr std::array<std::pair<const char*, const char*>, 5> kStacked = {{{"forward_s", "forward"},
                                                                          {"backward_compute_s", "backward compute"},
                                                                          {"exposed_comm_s", "exposed comm"},
                                                                          {"optimizer_s", "optimizer"},
                                                                          {"other_s", "other"}}};

// One table's data: GPUs, aggregate ex/s, ideal aggregate, efficiency %, per-GPU ex/s, p5, p50, p95;
// and its breakdown bars (label, stacked components in ms).
struct Series {
  std::string stem, what;  // file stem and "resnet50, fp32, <device>, weak scaling, batch 16/GPU"
  std::string unit;        // "GPU", or "rank" on CPUs (unit_word)
  std::vector<std::array<double, 8>> rows;
  std::vector<std::pair<std::string, std::array<double, kStacked.size()>>> bars;
};

// One bar per breakdown row that has a breakdown: "no DDP", "1 rank", "2 ranks", ...
void add_bars(Series& s, const std::vector<BreakdownRow>& rows) {
  for (const auto& b : rows) {
    if (!b.mean_s) continue;
    std::array<double, kStacked.size()> ms{};
    for (size_t i = 0; i < kStacked.size(); ++i)
      for (size_t c = 0; c < kNumBreakdownComponents; ++c)
        if (std::string(kBreakdownComponents[c]) == kStacked[i].first) ms[i] = (*b.mean_s)[c] * 1e3;
    s.bars.emplace_back(b.ddp ? fmt::format("{} {}{}", b.world_size, s.unit, b.world_size == 1 ? "" : "s") : "no DDP",
                        ms);
  }
}

// busbw against size for the `comm` results of one file: one line per collective, group of
// ranks (and dtype, where the file measured several).
struct CommSeries {
  std::string stem, what;
  std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>> lines;  // title, (bytes, busbw GB/s)
};

std::vector<CommSeries> comm_series_of(const Report& r) {
  std::vector<CommSeries> out;
  std::vector<std::string> sources;
  for (const auto& t : r.comm)
    if (std::find(sources.begin(), sources.end(), t.source) == sources.end()) sources.push_back(t.source);
  std::vector<std::string> stems;
  for (const auto& src : sources) {
    CommSeries s;
    std::string device;
    std::set<std::string> dtypes;
    for (const auto& t : r.comm)
      if (t.source == src)
        for (const auto& x : t.rows) dtypes.insert(x.dtype);
    for (const auto& t : r.comm) {
      if (t.source != src) continue;
      device = t.device;
      const bool cpu = t.device.rfind("CPU", 0) == 0;
      for (const auto& x : t.rows) {
        if (x.bytes <= 0 || !(x.busbw_gbps >= 0)) continue;  // a barrier has no size
        const std::string title = fmt::format("{}, {} {}{}{}", t.collective, t.world_size, cpu ? "rank" : "GPU",
                                              t.world_size == 1 ? "" : "s", dtypes.size() > 1 ? ", " + x.dtype : "");
        auto line = std::find_if(s.lines.begin(), s.lines.end(), [&](const auto& l) { return l.first == title; });
        if (line == s.lines.end()) {
          s.lines.push_back({title, {}});
          line = std::prev(s.lines.end());
        }
        line->second.emplace_back(static_cast<double>(x.bytes), x.busbw_gbps);
      }
    }
    if (s.lines.empty()) continue;
    for (auto& l : s.lines) std::sort(l.second.begin(), l.second.end());
    const std::string base = fs::path(src).stem().string();
    s.stem = "comm-" + slug(device + "-" + base) + "-busbw";
    for (int n = 2; std::find(stems.begin(), stems.end(), s.stem) != stems.end(); ++n)
      s.stem = fmt::format("comm-{}-{}-busbw", slug(device + "-" + base), n);
    stems.push_back(s.stem);
    s.what = fmt::format("{}, {}: bus bandwidth", device, src);
    out.push_back(std::move(s));
  }
  return out;
}

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
    add_bars(s, w.breakdown);
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
    add_bars(s, t.breakdown);
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
  const auto comm_series = comm_series_of(r);
  {
    std::vector<std::string> names = {"plots.gp"};
    for (const auto& s : series) {
      names.push_back(s.stem + ".dat");
      for (const char* suffix : kPanelSuffixes)
        for (const char* ext : {".png", ".svg"}) names.push_back(s.stem + "-" + suffix + ext);
      if (!s.bars.empty())
        for (const char* ext : {".dat", ".png", ".svg"}) names.push_back(s.stem + "-breakdown" + ext);
    }
    for (const auto& s : comm_series)
      for (const char* ext : {".dat", ".png", ".svg"}) names.push_back(s.stem + ext);
    for (const auto& n : names) check_writable((fs::path(dir) / n).string(), "--plots");
  }
  // Both terminals of every plot: (terminal, file name).
  const auto terminals = [](const std::string& name) {
    return std::vector<std::pair<std::string, std::string>>{
        {fmt::format("pngcairo size {},{} font 'DejaVu Sans,11'", kPlotWidth, kPlotHeight), name + ".png"},
        {fmt::format("svg size {},{} font 'DejaVu Sans,11' background '#ffffff'", kPlotWidth, kPlotHeight),
         name + ".svg"}};
  };

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
      for (const auto& [term, file] : terminals(plot.name)) {
        script << "set terminal " << term << "\nset output " << gq(file)
               << (std::string(p.suffix) == "throughput" ? "\nset key top left" : "\nset key bottom right")
               << "\nset title " << gq(plot.title)
               << " noenhanced\nset ylabel " << gq(p.ylabel) << "\n" << xrange << p.plot << "\nunset output\n";
      }
      plots.push_back(std::move(plot));
    }
    if (s.bars.empty()) continue;
    // Stacked bars, one per world size (the no-DDP row first): where the step's time went.
    const std::string bdat = s.stem + "-breakdown.dat";
    {
      std::ofstream out(fs::path(dir) / bdat);
      out << "# run";
      for (const auto& c : kStacked) out << ' ' << c.first << "(ms)";
      out << '\n';
      for (const auto& [label, ms] : s.bars) {
        out << '"' << label << '"';
        for (double v : ms) out << fmt::format(" {:.6g}", v);
        out << '\n';
      }
    }
    Plot plot;
    plot.name = s.stem + "-breakdown";
    plot.title = s.what + ": step breakdown";
    plot.png = (fs::path(dir) / (plot.name + ".png")).string();
    plot.svg = (fs::path(dir) / (plot.name + ".svg")).string();
    double top = 0;
    for (const auto& bar : s.bars) {
      double sum = 0;
      for (double v : bar.second) sum += v;
      top = std::max(top, sum);
    }
    std::string cmd = "plot ";
    for (size_t i = 0; i < kStacked.size(); ++i)
      cmd += fmt::format("{}{} using {}{} title {}", i ? ", " : "", i ? "''" : gq(bdat), i + 2, i ? "" : ":xtic(1)",
                         gq(kStacked[i].second));
    for (const auto& [term, file] : terminals(plot.name))
      // Two title lines (a gnuplot string expression): the configuration can be long.
      script << "set terminal " << term << "\nset output " << gq(file) << "\nset title " << gq(s.what)
             << " . \"\\n\" . " << gq("step breakdown")
             << " noenhanced\nset ylabel " << gq("milliseconds per step (mean over ranks)") << "\nset xlabel "
             << gq(s.unit == "GPU" ? "GPUs (ranks)" : "ranks")
             << "\nunset logscale x\nset autoscale x\nset key outside below center horizontal\nset style data histograms\n"
                "set style histogram rowstacked\nset style fill solid 0.85 border -1\nset boxwidth 0.6 relative\n"
             << fmt::format("set yrange [0:{:.6g}]\n", top > 0 ? top * 1.1 : 1.0) << cmd
             << "\nunset yrange\nset key inside\nset style data points\nset logscale x 2\nunset output\n";
    plots.push_back(std::move(plot));
  }
  for (const auto& s : comm_series) {
    // busbw against message size: blocks separated by two blank lines, one per line (gnuplot's index).
    const std::string dat = s.stem + ".dat";
    {
      std::ofstream out(fs::path(dir) / dat);
      for (size_t i = 0; i < s.lines.size(); ++i) {
        out << (i ? "\n\n" : "") << "# " << s.lines[i].first << ": bytes busbw_gbps\n";
        for (const auto& [bytes, busbw] : s.lines[i].second) out << fmt::format("{:.0f} {:.6g}\n", bytes, busbw);
      }
    }
    Plot plot;
    plot.name = s.stem;
    plot.title = s.what;
    plot.png = (fs::path(dir) / (plot.name + ".png")).string();
    plot.svg = (fs::path(dir) / (plot.name + ".svg")).string();
    std::string cmd = "plot ";
    for (size_t i = 0; i < s.lines.size(); ++i)
      cmd += fmt::format("{}{} index {} using 1:2 with linespoints lw 2 pt 7 title {} noenhanced", i ? ", " : "",
                         i ? "''" : gq(dat), i, gq(s.lines[i].first));
    for (const auto& [term, file] : terminals(plot.name))
      script << "set terminal " << term << "\nset output " << gq(file) << "\nset title " << gq(plot.title)
             << " noenhanced\nset ylabel " << gq("busbw (GB/s)") << "\nset xlabel "
             << gq("message size (bytes, log2 scale)")
             << "\nset logscale x 2\nset autoscale x\nset format x '%.0b %BB'\nset key top left\nset yrange [0:*]\n"
             << cmd << "\nunset yrange\nset format x '% h'\nunset output\n";
    plots.push_back(std::move(plot));
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
