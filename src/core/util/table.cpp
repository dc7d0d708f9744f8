#include "core/util/table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "core/util/errors.hpp"

namespace ddpbench {
namespace {

std::optional<double> as_number(const Value& v) {
  if (const auto* i = std::get_if<long long>(&v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  return std::nullopt;
}

// A formatter of numbers; strings pass through, missing values are "n/a".
std::function<std::string(const Value&)> numeric(std::function<std::string(double)> f) {
  return [f = std::move(f)](const Value& v) -> std::string {
    if (std::holds_alternative<std::monostate>(v)) return "n/a";
    if (const auto* s = std::get_if<std::string>(&v)) return *s;
    return f(*as_number(v));
  };
}

// The raw value for CSV: numbers in their shortest exact form, missing as an empty field.
std::string raw_text(const Value& v) {
  if (std::holds_alternative<std::monostate>(v)) return "";
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* i = std::get_if<long long>(&v)) return std::to_string(*i);
  return fmt::format("{:.6g}", std::get<double>(v));
}

// The cells people see: the columns shown in text, formatted.
// The columns people see: those shown in text, less any no row has a value in (a column of
// n/a says nothing the table's notes do not); all of them for a table printed as lines.
std::vector<size_t> shown_columns(const Table& t) {
  std::vector<size_t> out;
  for (size_t c = 0; c < t.columns.size(); ++c) {
    if (!t.columns[c].in_text) continue;
    const bool any =
        t.text_line || t.rows.empty() || std::any_of(t.rows.begin(), t.rows.end(), [c](const std::vector<Value>& r) {
          return c < r.size() && !std::holds_alternative<std::monostate>(r[c]);
        });
    if (any) out.push_back(c);
  }
  return out;
}

std::vector<std::string> formatted_row(const Table& t, const std::vector<Value>& row,
                                       const std::vector<size_t>& shown) {
  std::vector<std::string> cells;
  // Every cell is one line of terminal text (core/util/sanitize): a string from a file cannot
  // start a line or send an escape sequence; Markdown and HTML escape it further.
  for (size_t c : shown) cells.push_back(c < row.size() ? terminal_line(t.columns[c].format(row[c])) : "n/a");
  return cells;
}

std::vector<std::string> headers(const Table& t, const std::vector<size_t>& shown) {
  std::vector<std::string> h;
  for (size_t c : shown) h.push_back(t.columns[c].header);
  return h;
}

// `text` broken at spaces into lines of at most `width` characters (a longer word stays whole).
std::string wrapped(const std::string& raw, size_t width) {
  const std::string text = terminal_line(raw);  // one line, however it was made
  if (width == 0 || text.size() <= width) return text + "\n";
  std::string out, line;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = "  " + word;  // continuation lines indented
    } else {
      line += (line.empty() ? "" : " ") + word;
    }
    start = end + 1;
  }
  return out + line + "\n";
}

// Whether column `c` of `t` names a row (Table::label_columns): repeated in every part of a table
// printed in parts.
bool is_label_column(const Table& t, size_t c, bool first_shown) {
  const Column& col = t.columns[c];
  if (!t.label_columns.empty())
    return first_shown || std::find(t.label_columns.begin(), t.label_columns.end(), col.key) != t.label_columns.end();
  return first_shown || col.key == "file" || col.header == "file";
}

std::string text_of(const Table& t, size_t max_width) {
  const auto shown = shown_columns(t);
  const auto header = headers(t, shown);
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : t.rows) rows.push_back(formatted_row(t, r, shown));
  std::string out = wrapped(t.title, max_width);
  if (!t.row_lines.empty()) {  // whole lines, one per row
    for (const auto& line : t.row_lines) out += wrapped(line, max_width);
    for (const auto& n : t.notes) out += wrapped(n, max_width);
    return out;
  }
  if (t.text_line || t.rows.empty()) {  // lines, or (no rows) the title and the notes alone
    for (auto row : rows) {
      // A sentence never shows a blank where a value is missing ("(CPU: )"): an empty cell reads n/a.
      for (auto& cell : row)
        if (cell.empty()) cell = "n/a";
      out += wrapped(t.text_line(row), max_width);
    }
    for (const auto& n : t.notes) out += wrapped(n, max_width);
    return out;
  }
  std::vector<size_t> width(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  // Parts of columns that fit max_width, each holding the columns that name a row (label_columns)
  // and at least one more column, however wide; columns in the table's order.
  std::vector<bool> label(header.size(), false);
  for (size_t c = 0; c < header.size(); ++c) label[c] = is_label_column(t, shown[c], c == 0);
  size_t label_width = 0;
  for (size_t c = 0; c < header.size(); ++c)
    if (label[c]) label_width += (label_width ? 2 : 0) + width[c];
  std::vector<std::vector<size_t>> parts;
  size_t part_width = 0;
  bool part_open = false;  // the last part holds a column besides the labels
  for (size_t c = 0; c < width.size(); ++c) {
    if (label[c]) continue;
    if (parts.empty() || (max_width > 0 && part_open && part_width + 2 + width[c] > max_width)) {
      parts.emplace_back();
      part_width = label_width;
      part_open = false;
    }
    parts.back().push_back(c);
    part_width += (part_width ? 2 : 0) + width[c];
    part_open = true;
  }
  if (parts.empty() && !width.empty()) parts.emplace_back();  // labels alone
  for (auto& p : parts) {
    for (size_t c = 0; c < header.size(); ++c)
      if (label[c]) p.push_back(c);
    std::sort(p.begin(), p.end());
  }
  for (size_t pi = 0; pi < parts.size(); ++pi) {
    const auto& cols = parts[pi];
    auto line = [&](const std::vector<std::string>& cells) {
      std::string o;
      for (size_t i = 0; i < cols.size(); ++i) {
        const size_t c = cols[i];
        const std::string& cell = c < cells.size() ? cells[c] : std::string();
        if (i) o += "  ";
        o += c == 0 ? fmt::format("{:<{}}", cell, width[c]) : fmt::format("{:>{}}", cell, width[c]);
      }
      while (!o.empty() && o.back() == ' ') o.pop_back();
      return o + "\n";
    };
    if (pi > 0) out += "\n";
    out += line(header);
    size_t total = 0;
    for (size_t i = 0; i < cols.size(); ++i) total += width[cols[i]] + (i ? 2 : 0);
    out += std::string(total, '-') + "\n";
    for (const auto& row : rows) out += line(row);
  }
  for (const auto& n : t.notes) out += wrapped(n, max_width);
  return out;
}

std::string markdown_of(const Table& t) {
  if (t.rows.empty()) {  // the title and the notes alone
    std::string out = "### " + markdown_text(t.title) + "\n";
    for (const auto& n : t.notes) out += "\n" + markdown_text(n, true) + "\n";
    return out;
  }
  std::string out = "### " + markdown_text(t.title) + "\n\n|";
  const auto shown = shown_columns(t);
  for (const auto& h : headers(t, shown)) out += " " + markdown_text(h) + " |";
  out += "\n|";
  // Numbers (a column with a unit) right-aligned, labels and sentences left-aligned.
  for (size_t c = 0; c < shown.size(); ++c) out += c > 0 && !t.columns[shown[c]].unit.empty() ? "---:|" : "---|";
  out += "\n";
  for (const auto& r : t.rows) {
    out += "|";
    for (const auto& cell : formatted_row(t, r, shown)) out += " " + markdown_text(cell) + " |";
    out += "\n";
  }
  for (const auto& n : t.notes) out += "\n" + markdown_text(n, true) + "\n";
  return out;
}

std::string csv_of(const std::vector<Table>& tables) {
  std::vector<std::string> keys = {"table"};
  auto add_key = [&](const std::string& k) {
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  };
  // Each union sorted: the same columns in the same order whatever tables are printed.
  std::set<std::string> context_keys, column_keys;
  for (const auto& t : tables)
    for (const auto& [k, v] : t.context) context_keys.insert(k);
  for (const auto& t : tables)
    for (const auto& c : t.columns) column_keys.insert(c.key);
  for (const auto& k : context_keys) add_key(k);
  for (const auto& k : column_keys) add_key(k);
  std::vector<std::string> quoted;
  for (const auto& k : keys) quoted.push_back(csv_field(k));
  std::string out = fmt::format("{}\n", fmt::join(quoted, ","));
  for (const auto& t : tables) {
    for (const auto& row : t.rows) {
      std::vector<std::string> cells(keys.size());
      cells[0] = csv_text(t.kind);
      auto put = [&](const std::string& k, const Value& v) {
        const size_t i = static_cast<size_t>(std::find(keys.begin(), keys.end(), k) - keys.begin());
        // A string from a file is text a spreadsheet could evaluate (csv_text); numbers are ours.
        cells[i] = std::holds_alternative<std::string>(v) ? csv_text(std::get<std::string>(v)) : csv_field(raw_text(v));
      };
      for (const auto& [k, v] : t.context) put(k, v);
      for (size_t c = 0; c < t.columns.size() && c < row.size(); ++c) put(t.columns[c].key, row[c]);
      out += fmt::format("{}\n", fmt::join(cells, ","));
    }
  }
  return out;
}

}  // namespace

namespace fmtcol {
std::function<std::string(const Value&)> plain() {
  return [](const Value& v) -> std::string {
    if (const auto* i = std::get_if<long long>(&v)) return std::to_string(*i);
    return numeric([](double d) { return fmt::format("{:g}", d); })(v);
  };
}
// A number of at most a dozen digits before the point in fixed notation, else "{:.4g}"
// (1e+308 rather than 309 digits): a column stays a column whatever a file holds.
static std::string bounded_fixed(double v, int decimals) {
  return std::fabs(v) < 1e12 ? fmt::format("{:.{}f}", v, decimals) : fmt::format("{:.4g}", v);
}
std::function<std::string(const Value&)> fixed(int decimals) {
  return numeric([decimals](double v) { return bounded_fixed(v, decimals); });
}
std::function<std::string(const Value&)> percent() {
  return numeric([](double v) { return bounded_fixed(100.0 * v, 1) + "%"; });
}
std::function<std::string(const Value&)> times() {
  return numeric([](double v) { return bounded_fixed(v, 2) + "x"; });
}
std::function<std::string(const Value&)> sig3() {
  return numeric([](double v) { return fmt::format("{:.3g}", v); });
}
std::function<std::string(const Value&)> bytes() {
  return numeric([](double v) {
    constexpr double kMiB = 1024.0 * 1024.0, kGiB = kMiB * 1024.0;
    return v >= kGiB ? bounded_fixed(v / kGiB, 2) + " GiB" : bounded_fixed(v / kMiB, 1) + " MiB";
  });
}
std::function<std::string(const Value&)> size() {
  return numeric([](double b) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
      b /= 1024;
      ++u;
    }
    return fmt::format("{:.4g} {}", b, units[u]);
  });
}
std::function<std::string(const Value&)> duration() {
  return numeric([](double v) {
    if (v >= 3600) return bounded_fixed(v / 3600, 2) + " h";
    if (v >= 60) return fmt::format("{:.1f} min", v / 60);
    return fmt::format("{:.1f} s", v);
  });
}
}  // namespace fmtcol

size_t Table::col(const std::string& key) const {
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i].key == key) return i;
  throw std::logic_error("table '" + title + "' has no column '" + key + "'");
}

TableFormat parse_table_format(const std::string& name, const std::string& flag) {
  if (name == "table" || name == "text") return TableFormat::text;
  if (name == "md" || name == "markdown") return TableFormat::markdown;
  if (name == "csv") return TableFormat::csv;
  if (name == "json") return TableFormat::json;
  throw UsageError(fmt::format("{} '{}' is not a format; use table, md, csv or json", flag, name));
}

nlohmann::json value_json(const Value& v) {
  if (std::holds_alternative<std::monostate>(v)) return nullptr;
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* i = std::get_if<long long>(&v)) return *i;
  const double d = std::get<double>(v);
  return std::isfinite(d) ? nlohmann::json(d) : nlohmann::json(nullptr);
}

nlohmann::json table_json(const Table& t) {
  nlohmann::json j = {{"kind", t.kind}, {"title", t.title}};
  for (const auto& [k, v] : t.context) j[k] = value_json(v);
  nlohmann::json cols = nlohmann::json::array(), rows = nlohmann::json::array();
  for (const auto& c : t.columns) cols.push_back({{"key", c.key}, {"header", c.header}, {"unit", c.unit}});
  for (const auto& r : t.rows) {
    nlohmann::json row = nlohmann::json::object();
    for (size_t c = 0; c < t.columns.size() && c < r.size(); ++c) row[t.columns[c].key] = value_json(r[c]);
    rows.push_back(std::move(row));
  }
  j["columns"] = std::move(cols);
  j["rows"] = std::move(rows);
  j["notes"] = t.notes;
  return j;
}

std::string render_tables(const std::vector<Table>& tables, TableFormat format, size_t text_width) {
  std::string out, section;
  switch (format) {
    case TableFormat::text:
      for (const auto& t : tables) {
        if (!t.section.empty() && t.section != section) {
          section = t.section;
          out += (out.empty() ? "" : "\n") + std::string("== ") + terminal_line(section) + " ==\n";
        }
        out += (out.empty() ? "" : "\n") + text_of(t, text_width);
      }
      return out;
    case TableFormat::markdown:
      for (const auto& t : tables) {
        if (!t.section.empty() && t.section != section) {
          section = t.section;
          out += (out.empty() ? "" : "\n") + std::string("## ") + markdown_text(section) + "\n";
        }
        out += (out.empty() ? "" : "\n") + markdown_of(t);
      }
      return out;
    case TableFormat::csv: return csv_of(tables);
    case TableFormat::json: {
      nlohmann::json j = {{"tables", nlohmann::json::array()}};
      for (const auto& t : tables) j["tables"].push_back(table_json(t));
      return j.dump(2) + "\n";
    }
  }
  return out;
}

std::string html_table(const Table& t, const HtmlTableOptions& o) {
  constexpr size_t kLongWord = 16;
  if (t.rows.empty()) return "";
  const auto shown = shown_columns(t);
  const auto header = headers(t, shown);
  const auto kept = [&](size_t c) {
    const std::string& k = t.columns[shown[c]].key;
    return o.narrow.empty() || c == 0 || k == o.key || std::find(o.narrow.begin(), o.narrow.end(), k) != o.narrow.end();
  };
  bool narrow = false;
  for (size_t c = 0; c < shown.size(); ++c) narrow = narrow || !kept(c);
  // Numbers (a column with a unit) right-aligned, labels and sentences left-aligned.
  const auto cls = [&](size_t c) {
    std::string k = c == 0 ? "label" : !t.columns[shown[c]].unit.empty() ? "num" : "";
    if (!o.key.empty() && t.columns[shown[c]].key == o.key) k += k.empty() ? "key" : " key";
    if (!kept(c)) k += k.empty() ? "wide" : " wide";
    return k.empty() ? std::string() : " class=\"" + k + "\"";
  };
  std::string out = "<table";
  if (!o.id.empty()) out += " id=\"" + html_escape(o.id) + "\"";
  if (narrow) out += " class=\"narrow\"";
  out += ">\n<thead><tr>";
  for (size_t c = 0; c < header.size(); ++c) out += fmt::format("<th{}>{}</th>", cls(c), html_escape(header[c]));
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    const auto cells = formatted_row(t, row, shown);
    for (size_t c = 0; c < cells.size(); ++c) {
      // A cell with a word longer than kLongWord (a path, a command's argument) may break
      // anywhere (class "long"), so it never widens its table past a narrow screen.
      size_t run = 0, longest = 0;
      for (char ch : cells[c]) longest = std::max(longest, run = ch == ' ' ? 0 : run + 1);
      std::string k = cls(c);
      std::string text = html_escape(cells[c]);
      if (longest > kLongWord) {
        k = k.empty() ? " class=\"long\"" : k.insert(k.size() - 1, " long");
        // Break opportunities after '_' and '/' ("negative_ddp_overhead", a path).
        std::string b;
        for (char ch : text) b += ch == '_' || ch == '/' ? std::string(1, ch) + "<wbr>" : std::string(1, ch);
        text = std::move(b);
      }
      out += fmt::format("<td{}>{}</td>", k, text);
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

size_t html_table_columns(const Table& t) { return shown_columns(t).size(); }

std::string render_table_html(const Table& t) {
  std::string o = "<h3>" + html_escape(t.title) + "</h3>\n" + html_table(t);
  for (const auto& n : t.notes) o += "<p class=\"note\">" + html_escape(n) + "</p>\n";
  return o;
}

}  // namespace ddpbench
