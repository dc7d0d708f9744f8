#include "core/text_table.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ddpbench {

std::string render_text(const TextTable& t) {
  std::vector<size_t> width(t.header.size(), 0);
  for (size_t c = 0; c < t.header.size(); ++c) width[c] = t.header[c].size();
  for (const auto& row : t.rows)
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < width.size(); ++c) {
      const std::string& cell = c < cells.size() ? cells[c] : std::string();
      if (c) out += "  ";
      out += c == 0 ? fmt::format("{:<{}}", cell, width[c]) : fmt::format("{:>{}}", cell, width[c]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = t.title + "\n";
  out += line(t.header);
  size_t total = 0;
  for (size_t c = 0; c < width.size(); ++c) total += width[c] + (c ? 2 : 0);
  out += std::string(total, '-') + "\n";
  for (const auto& row : t.rows) out += line(row);
  for (const auto& n : t.notes) out += n + "\n";
  return out;
}

std::string render_markdown(const TextTable& t) {
  auto esc = [](const std::string& s) {
    std::string o;
    for (char ch : s) {
      if (ch == '|') o += "\\|";
      else o += ch;
    }
    return o;
  };
  std::string out = "### " + t.title + "\n\n|";
  for (const auto& h : t.header) out += " " + esc(h) + " |";
  out += "\n|";
  for (size_t c = 0; c < t.header.size(); ++c) out += c == 0 ? "---|" : "---:|";
  out += "\n";
  for (const auto& row : t.rows) {
    out += "|";
    for (size_t c = 0; c < t.header.size(); ++c) out += " " + esc(c < row.size() ? row[c] : "") + " |";
    out += "\n";
  }
  for (const auto& n : t.notes) out += "\n" + n + "\n";
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string o = "\"";
  for (char ch : s) {
    if (ch == '"') o += "\"\"";
    else o += ch;
  }
  return o + "\"";
}

std::string html_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    switch (ch) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += ch;
    }
  }
  return o;
}

}  // namespace ddpbench
