#include "core/util/sanitize.hpp"

#include <fmt/format.h>

#include "core/util/utf8.hpp"

namespace ddpbench {
namespace {

// The code point of the well-formed UTF-8 character at s[i] and its length (s is valid UTF-8).
char32_t decode(std::string_view s, std::size_t i, std::size_t& len) {
  const auto b = [&](std::size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(s[i + k])); };
  const char32_t c = b(0);
  if (c < 0x80) { len = 1; return c; }
  if (c < 0xE0) { len = 2; return ((c & 0x1F) << 6) | (b(1) & 0x3F); }
  if (c < 0xF0) { len = 3; return ((c & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F); }
  len = 4;
  return ((c & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
}

bool escaped(char32_t c, bool keep_lines) {
  if (keep_lines && (c == '\n' || c == '\t')) return false;
  return c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0x9F) || (c >= 0x202A && c <= 0x202E) ||
         (c >= 0x2066 && c <= 0x2069);
}

std::string escape_controls(std::string_view in, bool keep_lines) {
  // Most text is printable ASCII: nothing to escape, no decoding.
  bool plain = true;
  for (const char ch : in) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && !(keep_lines && (c == '\n' || c == '\t'))) || c >= 0x7F) {
      plain = false;
      break;
    }
  }
  if (plain) return std::string(in);
  const std::string s = is_valid_utf8(in) ? std::string(in) : sanitize_utf8(in);
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 1;
    const char32_t c = decode(s, i, len);
    if (escaped(c, keep_lines)) out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    else out.append(s, i, len);
    i += len;
  }
  return out;
}

}  // namespace

std::string terminal_text(std::string_view s) { return escape_controls(s, true); }

std::string terminal_line(std::string_view s) { return escape_controls(s, false); }

std::string markdown_text(std::string_view in, bool starts_block) {
  const std::string s = terminal_line(in);
  std::string out;
  out.reserve(s.size() + 8);
  std::size_t start = 0;
  // A heading or a quote where a paragraph starts (a list item there is the program's own).
  if (const std::size_t lead = s.find_first_not_of(' ');
      starts_block && lead != std::string::npos && (s[lead] == '#' || s[lead] == '>')) {
    start = lead;
    out = s.substr(0, lead) + "\\";
  }
  for (std::size_t i = start; i < s.size(); ++i) {
    const char ch = s[i];
    if (ch == '<') out += "&lt;";
    else if (ch == '\\') out += "\\\\";  // so that no '\' the text holds escapes our '|'
    else if (ch == '|') out += "\\|";
    else out += ch;
  }
  return out;
}

std::string html_escape(const std::string& in) {
  const std::string s = terminal_text(in);
  std::string o;
  o.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += ch;
    }
  }
  return o;
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

std::string csv_text(std::string_view in) {
  // OWASP: the trigger characters are checked on the raw value (TAB and CR included), then
  // the value is escaped and quoted.
  const bool formula = !in.empty() && (in[0] == '=' || in[0] == '+' || in[0] == '-' || in[0] == '@' ||
                                       in[0] == '\t' || in[0] == '\r');
  const std::string s = terminal_line(in);
  if (!formula) return csv_field(s);
  std::string o = "\"'";
  for (char ch : s) {
    if (ch == '"') o += "\"\"";
    else o += ch;
  }
  return o + "\"";
}

}  // namespace ddpbench
