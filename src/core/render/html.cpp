#include "core/render/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
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

// A table's context value as the text a PlotAnchor names it by.
std::string context_text(const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* i = std::get_if<long long>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return fmt::format("{:g}", *d);
  return "";
}

bool matches(const Table& t, const PlotAnchor& a) {
  if (t.kind != a.kind) return false;
  for (const auto& [k, v] : a.context) {
    const std::string& key = k;  // C++17 lambdas cannot capture a structured binding (clang rejects it)
    const auto it = std::find_if(t.context.begin(), t.context.end(), [&](const auto& c) { return c.first == key; });
    if (it == t.context.end() || context_text(it->second) != v) return false;
  }
  return true;
}

// Lower-case letters, digits and dashes of `s`: an element id.
std::string id_of(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) o += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!o.empty() && o.back() != '-') o += '-';
  }
  while (!o.empty() && o.back() == '-') o.pop_back();
  return o;
}

std::string figure(const Plot& p, const std::string& table_id) {
  if (!p.error.empty())
    return "<p class=\"note\">Not drawn: " + html_escape(p.title) + " (" + html_escape(p.error) + ")</p>\n";
  // The SVG draws the title; the figure names it for a screen reader.
  return "<figure id=\"plot-" + html_escape(id_of(p.name)) + "\"" +
         (table_id.empty() ? "" : " data-table=\"" + table_id + "\"") + " aria-label=\"" + html_escape(p.title) +
         "\">\n" + inline_svg(p.svg) + "\n</figure>\n";
}

// What a narrow screen shows of a table of `kind`: its key column (the number a reader looks
// for) and the columns kept beside the row's label (html_table's HtmlTableOptions::narrow).
// Kinds not listed keep every column, in a box that scrolls with the label column fixed.
HtmlTableOptions narrow_view(const std::string& kind) {
  static const std::map<std::string, std::pair<std::string, std::vector<std::string>>> kView = {
      {"summary", {"measured", {"metric", "measured"}}},
      {"weak", {"efficiency", {"devices", "per_rank_ex_s", "efficiency", "file"}}},
      {"strong", {"efficiency", {"step_s", "speedup", "efficiency", "file"}}},
      {"breakdown", {"exposed_comm_ms", {"step_ms", "exposed_comm_ms", "file"}}},
      {"impact", {"speedup", {"aggregate_ex_s", "speedup", "file"}}},
      {"strategy", {"aggregate_ex_s", {"strategy", "precision", "aggregate_ex_s"}}},
      {"memory", {"saved", {"technique", "saved", "time_paid", "file"}}},
      {"inference", {"aggregate_ex_s", {"aggregate_ex_s", "p50_ms", "file"}}},
      {"comparison", {"ratio", {"setup", "group", "per_rank_ex_s", "ratio"}}},
      {"cost", {"usd_per_million", {"usd_per_million", "usd", "file"}}},
      {"comm", {"busbw_gbps", {"time_us", "busbw_gbps", "wrong"}}},
      {"pairs", {"allreduce_busbw_gbps", {"pair", "allreduce_busbw_gbps", "flag"}}},
      {"stragglers", {"score", {"host", "score", "straggler"}}},
      {"max_batch", {"fits", {"batch", "fits", "peak_memory_bytes"}}},
      {"files", {"name", {"name", "device"}}},
  };
  HtmlTableOptions o;
  if (const auto it = kView.find(kind); it != kView.end()) {
    o.key = it->second.first;
    o.narrow = it->second.second;
  }
  return o;
}

// The headline table (kind "headline": topic, line) as the page's first block: one item per
// line, its topic in bold.
std::string headline_block(const Table& t) {
  std::string o = "<section class=\"headline\" id=\"headline\">\n<h2>" + html_escape(t.title) + "</h2>\n<ul>\n";
  const size_t line = t.columns.size() > 1 ? 1 : 0;
  for (const auto& row : t.rows) {
    const std::string topic = row.empty() ? "" : t.columns[0].format(row[0]);
    std::string text = line < row.size() ? t.columns[line].format(row[line]) : "";
    if (!topic.empty() && text.rfind(topic + ": ", 0) == 0) text = text.substr(topic.size() + 2);
    o += "<li>" + (topic.empty() ? "" : "<strong>" + html_escape(topic) + ":</strong> ") + html_escape(text) + "</li>\n";
  }
  o += "</ul>\n";
  for (const auto& n : t.notes) o += "<p class=\"note\">" + html_escape(n) + "</p>\n";
  return o + "</section>\n";
}

// A two-column table of terms (kind "definitions": term, definition) as a definition list.
std::string definition_list(const Table& t) {
  std::string o = "<dl class=\"defs\">\n";
  for (const auto& row : t.rows) {
    if (row.size() < 2) continue;
    o += "<dt>" + html_escape(t.columns[0].format(row[0])) + "</dt><dd>" + html_escape(t.columns[1].format(row[1])) +
         "</dd>\n";
  }
  return o + "</dl>\n";
}

constexpr const char* kStyle =
    "body{font-family:system-ui,sans-serif;margin:1em 2em;max-width:1500px;color:#222;line-height:1.35}"
    "h1,h2,h3,p,li,dd{overflow-wrap:anywhere}"
    "h2{margin-top:1.6em;border-bottom:1px solid #ddd}h3{margin:1.2em 0 0.3em}"
    ".headline{border:2px solid #4477aa;border-radius:6px;padding:0.4em 1em;background:#f4f7fb;max-width:75em}"
    ".headline h2{margin:0.3em 0;border:0}.headline ul{padding-left:1.2em;margin:0.3em 0}"
    ".headline li{margin:0.35em 0}"
    ".meta,p.note{color:#555;font-size:90%}p.note{margin:0.3em 0;max-width:75ch}"
    "nav.toc{font-size:90%}nav.toc a{margin-right:1em;white-space:nowrap}"
    // A table and its notes, then its plots: beside it where the window has room, else below.
    ".pair{display:flex;flex-wrap:wrap;gap:0.5em 2em;align-items:flex-start}"
    ".tcol{flex:0 1 auto;min-width:0;max-width:100%}"
    // A table wider than its column scrolls inside its own box, the row's label fixed at the left.
    ".scroll{overflow-x:auto;max-width:100%}"
    "table{border-collapse:collapse;margin:0.4em 0}"
    "th,td{border:1px solid #ccc;padding:3px 8px;vertical-align:top}th{background:#f2f2f2}"
    "td.num,th.num{text-align:right}td.num{white-space:nowrap}"
    ".label{position:sticky;left:0;z-index:1;background:#fff}th.label{background:#f2f2f2}"
    "td.key.num{background:#fdf6dc;font-weight:600}th.key.num{background:#f3e7b8}"
    "figure{margin:0.4em 0;flex:0 1 560px;max-width:100%;min-width:0}"
    "figure svg{display:block;width:100%;height:auto}"
    "dl.defs dt{font-weight:600;margin-top:0.5em}dl.defs dd{margin-left:1.5em;max-width:75ch}"
    "input.allcols{position:absolute;opacity:0;width:1px;height:1px}label.allcols{display:none}"
    // A narrow window: the label, the key column and a few more; a switch shows every column.
    "@media (max-width:700px){body{margin:0.5em}h1{font-size:1.6em}h2{font-size:1.3em}h3{font-size:1.05em}"
    "th,td{padding:3px 5px}td.long{overflow-wrap:anywhere}"
    ".narrow .wide{display:none}input.allcols:checked~.scroll .wide{display:table-cell}"
    "label.allcols{display:inline-block;font-size:90%;color:#1f4e8c;text-decoration:underline;cursor:pointer}"
    "input.allcols:checked+label.allcols::before{content:'\\2713  '}}"
    "@media print{.scroll{overflow:visible}body{margin:0;max-width:none}.narrow .wide{display:table-cell}"
    "label.allcols{display:none}}";

}  // namespace

std::string render_html(const Report& r, const std::vector<Plot>& plots, const std::string& generated_utc) {
  const std::vector<Table> tables = report_tables(r);
  // Each plot beside the last table it belongs to (its anchors); a plot whose table is not in
  // the report goes after its section's last table, else to a "Plots" section at the end.
  std::vector<std::vector<size_t>> beside(tables.size());
  std::vector<size_t> rest;
  for (size_t i = 0; i < plots.size(); ++i) {
    std::optional<size_t> at;
    for (size_t t = 0; t < tables.size(); ++t)
      for (const auto& a : plots[i].tables)
        if (matches(tables[t], a)) at = t;
    if (!at) {
      const std::string section = report_section_of_plot(plots[i].name);
      for (size_t t = 0; t < tables.size(); ++t)
        if (!section.empty() && tables[t].section == section) at = t;
    }
    if (at) beside[*at].push_back(i);
    else rest.push_back(i);
  }

  std::string o = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                  "<title>ddpbench report</title>\n<style>\n";
  o += kStyle;
  o += "\n</style>\n</head>\n<body>\n<h1>ddpbench report</h1>\n";
  // The headline first: what a manager reads before anything else.
  for (const auto& t : tables)
    if (t.kind == "headline") o += headline_block(t);
  o += fmt::format(
      "<p class=\"meta\">Generated {} by ddpbench {} (git {}). Every term: <a href=\"#definitions\">Definitions</a> "
      "and docs/METHODOLOGY.md.</p>\n",
      html_escape(generated_utc), tool_version(), git_sha());
  for (const auto& f : r.files)  // incomplete files (run stopped early), as `report` warns on stderr
    if (!f.value("warning", "").empty())
      o += "<p class=\"note\"><strong>Warning:</strong> " + html_escape(f.value("warning", "")) + "</p>\n";
  // The sections, as links.
  std::vector<std::string> sections;
  for (const auto& t : tables)
    if (!t.section.empty() && std::find(sections.begin(), sections.end(), t.section) == sections.end())
      sections.push_back(t.section);
  if (sections.size() > 1) {
    o += "<nav class=\"toc\">";
    for (const auto& s : sections) o += "<a href=\"#" + id_of(s) + "\">" + html_escape(s) + "</a> ";
    o += "</nav>\n";
  }

  std::string section;
  for (size_t i = 0; i < tables.size(); ++i) {
    const Table& t = tables[i];
    if (t.kind == "headline") continue;  // drawn first
    if (!t.section.empty() && t.section != section) {
      section = t.section;
      o += "<h2 id=\"" + id_of(section) + "\">" + html_escape(section) + "</h2>\n";
    }
    const std::string id = fmt::format("t{}", i + 1);
    const bool defs = t.kind == "definitions";
    // (A table titled as its section, "Definitions", needs no second heading.)
    o += "<section class=\"tbl\"" + std::string(defs ? " id=\"definitions\"" : "") + ">\n" +
         (t.title == section ? "" : "<h3>" + html_escape(t.title) + "</h3>\n") +
         "<div class=\"pair\">\n<div class=\"tcol\">\n";
    if (defs) {
      o += definition_list(t);
    } else if (!t.rows.empty()) {
      HtmlTableOptions view = narrow_view(t.kind);
      view.id = id;
      const std::string table = html_table(t, view);
      if (table.find("class=\"narrow\"") != std::string::npos)  // a switch to every column
        o += fmt::format(
            "<input type=\"checkbox\" class=\"allcols\" id=\"{0}-all\"><label class=\"allcols\" for=\"{0}-all\">"
            "all {1} columns</label>\n",
            id, html_table_columns(t));
      o += "<div class=\"scroll\">\n" + table + "</div>\n";
    }
    for (const auto& n : t.notes) o += "<p class=\"note\">" + html_escape(n) + "</p>\n";
    o += "</div>\n";
    for (size_t p : beside[i]) o += figure(plots[p], t.rows.empty() || defs ? "" : id);
    o += "</div>\n</section>\n";
  }
  if (!rest.empty()) {
    o += "<h2 id=\"plots\">Plots</h2>\n<div class=\"pair\">\n";
    for (size_t p : rest) o += figure(plots[p], "");
    o += "</div>\n";
  }
  o += "</body>\n</html>\n";
  return o;
}

}  // namespace ddpbench
