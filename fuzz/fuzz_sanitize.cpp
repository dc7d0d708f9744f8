// libFuzzer target: the output sanitisers (core/util/sanitize). For any input, what each
// medium's sanitiser returns is valid UTF-8 and holds nothing its medium would obey:
// terminal text no control character but newline and tab, no C1 control and no bidirectional
// formatting character; a terminal line not even those; Markdown no '<' and no '|' without a
// backslash (and no backslash left to undo one); HTML none of & < > " ' unescaped; a CSV field no leading = + - @ TAB CR.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/util/sanitize.hpp"
#include "core/util/utf8.hpp"

namespace {

void require(bool ok) {
  if (!ok) std::abort();
}

// No code point the sanitisers escape; newline and tab allowed when `lines`.
void no_controls(const std::string& s, bool lines) {
  require(ddpbench::is_valid_utf8(s));
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20) require(lines && (c == '\n' || c == '\t'));
    require(c != 0x7F);
    if (c == 0xC2 && i + 1 < s.size()) require(static_cast<unsigned char>(s[i + 1]) > 0x9F);  // U+0080-U+009F
    if (c == 0xE2 && i + 2 < s.size()) {
      const auto c1 = static_cast<unsigned char>(s[i + 1]), c2 = static_cast<unsigned char>(s[i + 2]);
      require(!(c1 == 0x80 && c2 >= 0xAA && c2 <= 0xAE));  // U+202A-U+202E
      require(!(c1 == 0x81 && c2 >= 0xA6 && c2 <= 0xA9));  // U+2066-U+2069
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ddpbench;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  no_controls(terminal_text(in), true);
  no_controls(terminal_line(in), false);
  for (const bool block : {false, true}) {
    const std::string md = markdown_text(in, block);
    no_controls(md, false);
    require(md.find('<') == std::string::npos);
    // Every '|' escaped: an odd number of backslashes right before it.
    for (std::size_t i = md.find('|'); i != std::string::npos; i = md.find('|', i + 1)) {
      std::size_t n = 0;
      while (n < i && md[i - 1 - n] == '\\') ++n;
      require(n % 2 == 1);
    }
    if (block) {
      const std::size_t lead = md.find_first_not_of(' ');
      if (lead != std::string::npos) require(md[lead] != '#' && md[lead] != '>');
    }
  }
  const std::string html = html_escape(std::string(in));
  no_controls(html, true);
  require(html.find_first_of("<>\"'") == std::string::npos);
  for (std::size_t i = html.find('&'); i != std::string::npos; i = html.find('&', i + 1))
    require(html.compare(i, 5, "&amp;") == 0 || html.compare(i, 4, "&lt;") == 0 || html.compare(i, 4, "&gt;") == 0 ||
            html.compare(i, 6, "&quot;") == 0 || html.compare(i, 5, "&#39;") == 0);
  const std::string csv = csv_text(in);
  no_controls(csv, false);
  const std::size_t first = csv.size() > 0 && csv[0] == '"' ? 1 : 0;
  if (csv.size() > first) require(std::string_view("=+-@").find(csv[first]) == std::string_view::npos);
  return 0;
}
