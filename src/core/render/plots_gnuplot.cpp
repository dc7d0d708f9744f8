// Drawing plots with gnuplot: gnuplot's numbers and strings, the plot folder, and draw_plots (one
// script per plot, both terminals, images checked whole before they replace any). Torch-free.
#include "core/render/plots.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/launch/process.hpp"
#include "core/render/plots_internal.hpp"
#include "core/util/errors.hpp"

namespace fs = std::filesystem;

namespace ddpbench::plots_internal {
namespace {

// The two terminals every plot is drawn with, for an image `height` pixels tall: (gnuplot
// terminal, file extension). pngcairo reads a font size in points at 96 dpi where the svg
// terminal reads pixels: 3/4 of kPlotFontPx draws the PNG's text as large as the SVG's.
std::array<std::pair<std::string, const char*>, 2> terminals(int height) {
  return {{{fmt::format("pngcairo size {},{} font 'DejaVu Sans,{:g}'", kPlotWidth, height, kPlotFontPx * 0.75),
            ".png"},
           {fmt::format("svg size {},{} font 'DejaVu Sans,{}' background '#ffffff'", kPlotWidth, height, kPlotFontPx),
            ".svg"}}};
}

// The gnuplot command that draws `lines` as the title, one under the other (a string
// expression: single-quoted parts joined by "\n"), without enhanced-text markup.
std::string title_command(const std::vector<std::string>& lines) {
  std::string e;
  for (size_t i = 0; i < lines.size(); ++i) e += (i ? " . \"\\n\" . " : "") + gq(lines[i]);
  return "set title " + (e.empty() ? std::string("''") : e) + " noenhanced\n";
}

// The script of one plot: reset, setup, then per terminal its output and body. `out` gives
// the output file of each extension.
template <class Out>
std::string plot_script(const PlotSpec& p, Out out) {
  // A legend below the plot keeps a line's height from the x axis' label above it.
  std::string s = "reset\nset encoding utf8\nset grid\nset key height 1\n" + p.setup;
  if (!s.empty() && s.back() != '\n') s += '\n';
  const std::string title = title_command(plot_title_lines(p.heading, p.title));
  for (const auto& [term, ext] : terminals(p.height))
    s += "set terminal " + term + "\nset output " + gq(out(ext)) + "\n" + title + p.body +
         (p.body.empty() || p.body.back() == '\n' ? "" : "\n") + "unset output\n";
  return s;
}

// Whether `bytes` is a whole image of the kind `ext` names: a PNG ends with its IEND chunk
// (length 0, type "IEND", CRC ae426082; PNG specification, 11.2.5), an SVG with "</svg>" and
// white space.
bool image_complete(const std::string& bytes, const std::string& ext) {
  if (ext == ".png") {
    static const std::string iend("\x00\x00\x00\x00IEND\xae\x42\x60\x82", 12);
    return bytes.size() > iend.size() && bytes.compare(bytes.size() - iend.size(), iend.size(), iend) == 0;
  }
  const auto end = bytes.find_last_not_of(" \t\r\n");
  return end != std::string::npos && end + 1 >= 6 && bytes.compare(end + 1 - 6, 6, "</svg>") == 0;
}

}  // namespace
}  // namespace ddpbench::plots_internal

namespace ddpbench {

std::string gnuplot_number(double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : "NaN"; }

std::string gnuplot_quote(const std::string& s) {
  std::string o = "'";
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) o += ' ';
    else if (c == '\'') o += "''";
    else o += c;
  }
  return o + "'";
}

void prepare_plot_dir(const std::string& dir) {
  if (find_program("gnuplot").empty())
    throw UsageError("--plots needs gnuplot; install it (apt-get install gnuplot-nox) or drop --plots");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw UsageError(fmt::format("--plots directory '{}' cannot be created ({}); choose a writable path", dir,
                                 ec ? ec.message() : "not a directory"));
}

std::vector<Plot> draw_plots(const std::vector<PlotSpec>& specs, const std::string& dir, const std::string& script) {
  using namespace plots_internal;  // terminals, plot_script, image_complete (above)
  prepare_plot_dir(dir);
  const fs::path d = fs::absolute(dir);
  // Every file written here (and by gnuplot for it) is checked before any is written: a
  // symbolic link, device or read-only file planted in the folder is refused, not replaced.
  check_writable((d / script).string(), "--plots");
  for (const auto& p : specs) {
    if (!p.data_file.empty()) check_writable((d / p.data_file).string(), "--plots");
    for (const char* ext : {".png", ".svg"}) check_writable((d / (p.name + ext)).string(), "--plots");
  }
  std::vector<Plot> plots;
  std::set<std::string> data_written;
  std::string replay;  // the drawn plots' scripts, for people to re-run
  for (const auto& spec : specs) {
    Plot plot;
    plot.name = spec.name;
    plot.title = spec.heading.empty() ? spec.title : spec.heading + ": " + spec.title;
    plot.tables = spec.tables;
    plot.height = spec.height;
    if (!spec.skip.empty()) {
      plot.error = spec.skip;
      plots.push_back(std::move(plot));
      continue;
    }
    if (!spec.data_file.empty() && data_written.insert(spec.data_file).second)
      write_file_atomic((d / spec.data_file).string(), spec.data);
    std::map<std::string, std::string> tmp;  // extension -> temporary image
    const auto remove_tmp = [&tmp] {
      for (const auto& [ext, t] : tmp) ::unlink(t.c_str());
    };
    for (const auto& [term, ext] : terminals(spec.height)) tmp[ext] = temp_file_next_to((d / (spec.name + ext)).string());
    ProcessOptions gp;
    gp.cwd = d.string();
    gp.stdin_data = plot_script(spec, [&tmp](const char* ext) { return fs::path(tmp[ext]).filename().string(); });
    constexpr double kGnuplotTimeoutS = 60;  // one plot: well under a second
    const CaptureResult res = run_capture({"gnuplot", "-"}, gp, kGnuplotTimeoutS);
    if (!res.ok()) {
      remove_tmp();
      // gnuplot echoes the command, marks the column, then says '"-" line N: REASON' (or
      // "line N: REASON"): the reason is what people need.
      std::string first;
      std::istringstream lines(res.err);
      for (std::string l; std::getline(lines, l);) {
        if (const auto at = l.find("line "); at != std::string::npos) {
          const auto colon = l.find(": ", at);
          if (colon != std::string::npos && l.find_first_not_of("0123456789", at + 5) == colon) {
            first = l.substr(colon + 2);
            break;
          }
        }
        if (first.empty() && l.find_first_not_of(" \t^") != std::string::npos) first = l;
      }
      if (const auto b = first.find_first_not_of(' '); b != std::string::npos) first = first.substr(b);
      if (res.timed_out) first = fmt::format("no result after {:.0f} s, stopped", kGnuplotTimeoutS);
      else if (first.empty()) first = res.status.describe();
      plot.error = "gnuplot: " + first;
      plots.push_back(std::move(plot));
      continue;
    }
    // gnuplot exits 0 after a failed write (a full disk): an image counts only when it is
    // whole, a PNG ending in its IEND chunk, an SVG in its closing tag.
    for (const auto& [ext, t] : tmp) {
      if (!image_complete(read_text_file(t), ext)) {
        remove_tmp();
        throw std::runtime_error(
            fmt::format("gnuplot wrote an empty or truncated '{}' for {}{} (is the disk full?)", t, spec.name, ext));
      }
    }
    for (const auto& [ext, t] : tmp) commit_file(t, (d / (spec.name + ext)).string());
    plot.png = (d / (spec.name + ".png")).string();
    plot.svg = (d / (spec.name + ".svg")).string();
    replay += plot_script(spec, [&spec](const char* ext) { return spec.name + ext; });
    plots.push_back(std::move(plot));
  }
  write_file_atomic((d / script).string(), replay);
  return plots;
}

}  // namespace ddpbench
