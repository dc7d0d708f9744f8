// The output sanitisers (core/util/sanitize), one per medium, against hand-written expected text.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/util/sanitize.hpp"
#include "core/util/table.hpp"

namespace ddpbench {
namespace {

TEST(Sanitize, TerminalTextEscapesEscapeSequencesAndKeepsLines) {
  // OSC 0 (set the window title) and a CSI colour: shown, not obeyed.
  EXPECT_EQ(terminal_text("a\x1b]0;pwned\x07" "b\x1b[31mred\n\tc"), "a\\u001b]0;pwned\\u0007b\\u001b[31mred\n\tc");
  EXPECT_EQ(terminal_text("\r\x7f"), "\\u000d\\u007f");
  EXPECT_EQ(terminal_text("\xc2\x9b" "2J"), "\\u009b2J");                     // C1 CSI
  EXPECT_EQ(terminal_text("abc\xe2\x80\xae" "fdp.exe"), "abc\\u202efdp.exe");  // right-to-left override
  EXPECT_EQ(terminal_text("\xe2\x81\xa6x\xe2\x81\xa9"), "\\u2066x\\u2069");
  EXPECT_EQ(terminal_text("bad \xff byte"), "bad \xef\xbf\xbd byte");  // not UTF-8: U+FFFD
  EXPECT_EQ(terminal_text("résumé, 東京, A100 — ok"), "résumé, 東京, A100 — ok");  // printable text untouched
  EXPECT_EQ(terminal_text(std::string("nul\0x", 5)), "nul\\u0000x");
}

TEST(Sanitize, TerminalLineKeepsAStringOnItsLine) {
  EXPECT_EQ(terminal_line("resnet18\nPASS forged line\r\tx"), "resnet18\\u000aPASS forged line\\u000d\\u0009x");
}

TEST(Sanitize, TheEscapesReadBackAsTheSameCharactersInJson) {
  // A JSON document printed through the terminal path keeps its meaning: \u0085 is a JSON escape.
  const std::string s = "a\xc2\x85" "b\xe2\x80\xae";
  const nlohmann::json j = s;
  EXPECT_EQ(nlohmann::json::parse(terminal_text(j.dump())).get<std::string>(), s);
}

TEST(Sanitize, MarkdownHasNoRawHtmlNoExtraColumnAndNoHeadingFromAName) {
  EXPECT_EQ(markdown_text("<script>alert(1)</script>"), "&lt;script>alert(1)&lt;/script>");
  EXPECT_EQ(markdown_text("<img src=x onerror=alert(1)>"), "&lt;img src=x onerror=alert(1)>");
  EXPECT_EQ(markdown_text("a|b"), "a\\|b");
  EXPECT_EQ(markdown_text("x\n# heading"), "x\\\\u000a# heading");
  EXPECT_EQ(markdown_text("a\\|b"), "a\\\\\\|b");  // the text's backslash cannot escape our escape
  EXPECT_EQ(markdown_text("# heading", true), "\\# heading");
  EXPECT_EQ(markdown_text("  > quote", true), "  \\> quote");
  EXPECT_EQ(markdown_text("- item", true), "- item");  // the program's own list items stay lists
  EXPECT_EQ(markdown_text("-5.0% slower"), "-5.0% slower");  // a cell: no block to start
  EXPECT_EQ(markdown_text("efficiency >= 85.0%", true), "efficiency >= 85.0%");
  EXPECT_EQ(markdown_text("2024 runs", true), "2024 runs");
}

TEST(Sanitize, HtmlEscapesMarkupQuotesAndControls) {
  EXPECT_EQ(html_escape("<img onerror='x'> & \"y\""), "&lt;img onerror=&#39;x&#39;&gt; &amp; &quot;y&quot;");
  EXPECT_EQ(html_escape("a\x1b[2Jb\nc"), "a\\u001b[2Jb\nc");
}

TEST(Sanitize, CsvNeutralisesWhatASpreadsheetWouldEvaluate) {
  // OWASP CSV Injection: a leading = + - @ TAB or CR gets a "'" and the field is quoted.
  EXPECT_EQ(csv_text("=HYPERLINK(\"http://x\",\"y\")"), "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
  EXPECT_EQ(csv_text("+1"), "\"'+1\"");
  EXPECT_EQ(csv_text("-2+3"), "\"'-2+3\"");
  EXPECT_EQ(csv_text("@SUM(A1)"), "\"'@SUM(A1)\"");
  EXPECT_EQ(csv_text("\tx"), "\"'\\u0009x\"");
  EXPECT_EQ(csv_text("resnet18"), "resnet18");
  EXPECT_EQ(csv_text("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_text("line\nbreak"), "line\\u000abreak");
  EXPECT_EQ(csv_field("-0.5"), "-0.5");  // a number the program wrote stays a number
}

TEST(Sanitize, EveryTablePrinterUsesItsMediumsSanitiser) {
  Table t;
  t.kind = "weak";
  t.title = "Weak scaling: \x1b]0;x\x07<b>";
  t.columns = {{"model", "model", "", fmtcol::plain()}, {"ex_s", "ex/s", "ex/s", fmtcol::fixed(1)}};
  t.rows = {{std::string("=cmd|' /C calc'!A0\n# PASS"), -1.5}};
  t.notes = {"# not a heading\x1b[2J"};
  const std::string text = render_tables({t}, TableFormat::text);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find("\n# PASS"), std::string::npos) << text;
  EXPECT_NE(text.find("=cmd|' /C calc'!A0\\u000a# PASS"), std::string::npos) << text;
  const std::string md = render_tables({t}, TableFormat::markdown);
  EXPECT_EQ(md.find("<b>"), std::string::npos) << md;
  EXPECT_NE(md.find("\n\\# not a heading\\\\u001b[2J\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| =cmd\\|' /C calc'!A0\\\\u000a# PASS |"), std::string::npos) << md;
  const std::string csv = render_tables({t}, TableFormat::csv);
  EXPECT_NE(csv.find(",\"'=cmd|' /C calc'!A0\\u000a# PASS\""), std::string::npos) << csv;
  EXPECT_NE(csv.find(",-1.5"), std::string::npos) << csv;  // numbers are not neutralised
  const std::string html = render_table_html(t);
  EXPECT_EQ(html.find("<b>"), std::string::npos) << html;
  EXPECT_EQ(html.find('\x1b'), std::string::npos) << html;
}

}  // namespace
}  // namespace ddpbench
