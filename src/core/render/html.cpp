#include "core/render/html.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "core/render/report_tables.hpp"
#include "core/result/result.hpp"
#include "core/util/table.hpp"
#include "core/util/version.hpp"

namespace ddpbench {
namespace {

// The <svg> element of a gnuplot SVG file, without its XML prolog.
std::string inline_svg(const std::string& path) {
  const std::string s = read_text_file(path);
  const auto start = s.find("<svg");
  if (start == std::string::npos) throw std::runtime_error("no <svg> element in " + path);
  return s.substr(start);
}

// The section a plot belongs to: that of the table kind its name starts with (core/render/plots
// write_plots, report_convergence name them); "" for none.
std::string section_of_plot(const std::string& name) {
  const auto ends = [&](const std::string& x) {
    return name.size() >= x.size() && name.compare(name.size() - x.size(), x.size(), x) == 0;
  };
  if (ends("-breakdown")) return report_section("breakdown");
  static const std::vector<std::pair<std::string, std::string>> kKindOf = {
      {"weak-", "weak"},      {"strong-", "strong"}, {"single-gpu-count", "weak"}, {"overlay-", "weak"},
      {"impact-", "impact"},  {"comm-", "comm"},     {"telemetry-", "telemetry"},  {"stragglers-", "telemetry"},
      {"burnin-", "burn_in"}, {"memory-", "memory"}, {"ttl-", "time_to_loss"}};
  for (const auto& [prefix, kind] : kKindOf)
    if (name.rfind(prefix, 0) == 0) return report_section(kind);
  return "";
}

std::string figure(const Plot& p) {
  return p.error.empty()
             ? "<figure>\n" + inline_svg(p.svg) + "\n<figcaption>" + html_escape(p.title) + "</figcaption>\n</figure>\n"
             : "<p class=\"note\">Not drawn: " + html_escape(p.title) + " (" + html_escape(p.error) + ")</p>\n";
}

}  // namespace

std::string render_html(const Report& r, const std::vector<Plot>& plots, const std::string& generated_utc) {
  std::string o =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>ddpbench report</title>\n<style>\n"
      "body{font-family:system-ui,sans-serif;margin:1em 2em;max-width:1100px;color:#222}"
      "h1,h2,h3,p,figcaption{overflow-wrap:anywhere}"
      // A table wider than the page scrolls inside its own box, never the page.
      "table{border-collapse:collapse;margin:0.5em 0;display:block;overflow-x:auto;max-width:100%}"
      "th,td{border:1px solid #ccc;padding:3px 8px}"
      "th{background:#f2f2f2}td.num,th.num{text-align:right}p.note{color:#555;font-size:90%}"
      "figure{margin:1em 0;max-width:100%}figure svg{max-width:100%;height:auto}figcaption{color:#555}"
      "@media print{table{display:table;overflow:visible}body{margin:0;max-width:none}}"
      "@media (max-width:600px){body{margin:0.5em}}\n</style>\n</head>\n<body>\n";
  o += "<h1>ddpbench report</h1>\n";
  o += fmt::format("<p>Generated {} by ddpbench {} (git {}). Definitions: docs/METHODOLOGY.md.</p>\n",
                   html_escape(generated_utc), tool_version(), git_sha());
  for (const auto& f : r.files)  // incomplete files (run stopped early), as `report` warns on stderr
    if (!f.value("warning", "").empty())
      o += "<p class=\"note\"><strong>Warning:</strong> " + html_escape(f.value("warning", "")) + "</p>\n";
  // Each section's tables, then its plots; plots of no section at the end.
  std::vector<bool> placed(plots.size(), false);
  const auto plots_of = [&](const std::string& section) {
    std::string f;
    for (size_t i = 0; i < plots.size(); ++i)
      if (!placed[i] && section_of_plot(plots[i].name) == section) {
        placed[i] = true;
        f += figure(plots[i]);
      }
    return f;
  };
  std::string section;
  for (const auto& t : report_tables(r)) {
    if (!t.section.empty() && t.section != section) {
      if (!section.empty()) o += plots_of(section);
      section = t.section;
      o += "<h2>" + html_escape(section) + "</h2>\n";
    }
    o += render_table_html(t);
  }
  if (!section.empty()) o += plots_of(section);
  std::string rest;
  for (size_t i = 0; i < plots.size(); ++i)
    if (!placed[i]) rest += figure(plots[i]);
  if (!rest.empty()) o += "<h2>Plots</h2>\n" + rest;
  o += "</body>\n</html>\n";
  return o;
}

}  // namespace ddpbench
