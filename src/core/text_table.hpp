// A titled table of strings, rendered for the terminal or as Markdown. Torch-free.
#pragma once

#include <string>
#include <vector>

namespace ddpbench {

/// Rows of already formatted cells under a header. Column 0 is left-aligned, the
/// others right-aligned (numbers).
struct TextTable {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes;  ///< lines printed under the table
};

/// Title, a header underlined with dashes, columns padded to their widest cell, notes.
std::string render_text(const TextTable& t);

/// "### title", a GitHub-flavoured Markdown table (numbers right-aligned), notes as
/// paragraphs. Cells are escaped ('|' -> '\|').
std::string render_markdown(const TextTable& t);

/// RFC 4180 field: quoted (with doubled quotes) when it holds a comma, quote or newline.
std::string csv_field(const std::string& s);

/// Text with &, <, >, " escaped for HTML.
std::string html_escape(const std::string& s);

}  // namespace ddpbench
