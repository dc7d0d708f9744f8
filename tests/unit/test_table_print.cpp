// The shared table printer (core/util/table): a text table too wide for its width prints in
// parts that each keep the columns naming a row; the HTML table marks its label, key and
// narrow-screen columns; "markdown" is a format name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "core/util/errors.hpp"
#include "core/util/table.hpp"

namespace ddpbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// A comparison-like table: the model, a long setup, numbers, the launch ("file") in the middle
// and two more numbers after it.
Table wide_table() {
  Table t;
  t.kind = "comparison";
  t.title = "Per-GPU throughput by file";
  const auto text = fmtcol::plain();
  t.columns = {{"model", "model", "", text},
               {"setup", "setup", "", text},
               {"image_size", "image", "px", text},
               {"group", "file", "", text},
               {"per_rank_ex_s", "per-GPU ex/s", "ex/s", fmtcol::fixed(1)},
               {"ratio", "ratio", "ratio", fmtcol::times()}};
  t.rows = {{std::string("resnet50"), std::string("fp32 (cuDNN TF32), cuDNN benchmark off"), 224LL,
             std::string("F6"), 1058.8, 1.0},
            {std::string("resnet50"), std::string("tf32"), 224LL, std::string("F11"), 1090.6, 0.97}};
  return t;
}

// Split at 60 columns: every part's header names the model and the file, every row of every
// part holds its launch label, and no line is wider than asked.
TEST(TableText, EveryPartKeepsTheLabelAndTheFileColumn) {
  const std::string text = render_tables({wide_table()}, TableFormat::text, 60);
  size_t headers = 0;
  for (const auto& l : lines_of(text)) {
    EXPECT_LE(l.size(), 60u) << l;
    if (l.rfind("model", 0) == 0) {
      ++headers;
      EXPECT_THAT(l, HasSubstr("file")) << text;
    }
    if (l.rfind("resnet50", 0) == 0)
      EXPECT_TRUE(l.find("F6") != std::string::npos || l.find("F11") != std::string::npos) << l << "\n" << text;
  }
  EXPECT_GE(headers, 2u) << "not split:\n" << text;
  // The ratio's part still says which launch each ratio is.
  EXPECT_THAT(text, ::testing::ContainsRegex("resnet50 +224 +F11 +1090.6 +0.97x"));
  // Wide: one part, the columns in their order.
  const std::string one = render_tables({wide_table()}, TableFormat::text, 0);
  EXPECT_THAT(one, ::testing::ContainsRegex("model +setup +image +file +per-GPU ex/s +ratio"));
  EXPECT_EQ(lines_of(one).size(), 5u) << one;  // title, header, rule, two rows
}

// A table may name its label columns: those lead every part instead.
TEST(TableText, NamedLabelColumnsLeadEveryPart) {
  Table t = wide_table();
  t.label_columns = {"setup"};
  const std::string text = render_tables({t}, TableFormat::text, 60);
  size_t parts = 0;
  for (const auto& l : lines_of(text))
    if (l.rfind("model", 0) == 0) {
      ++parts;
      EXPECT_THAT(l, HasSubstr("setup")) << text;
    }
  EXPECT_GE(parts, 2u) << text;
  // "file" is no label column here: it is in one part only.
  size_t file_headers = 0;
  for (const auto& l : lines_of(text))
    if (l.rfind("model", 0) == 0 && l.find("file") != std::string::npos) ++file_headers;
  EXPECT_EQ(file_headers, 1u) << text;
}

// The HTML table: the first column is the row's label, the key column is marked, the columns a
// narrow screen drops are "wide" (and the table "narrow"); a long path may break anywhere.
TEST(TableHtml, LabelKeyAndNarrowColumns) {
  Table t = wide_table();
  t.rows[0][1] = std::string("docs/results/h100_resnet50_b32_default_math_iters_auto_final.json");
  HtmlTableOptions o;
  o.id = "t7";
  o.key = "ratio";
  o.narrow = {"group", "per_rank_ex_s"};
  const std::string html = html_table(t, o);
  EXPECT_THAT(html, HasSubstr("<table id=\"t7\" class=\"narrow\">"));
  EXPECT_THAT(html, HasSubstr("<th class=\"label\">model</th><th class=\"wide\">setup</th>"));
  EXPECT_THAT(html, HasSubstr("<th class=\"num key\">ratio</th>"));
  EXPECT_THAT(html, HasSubstr("<th>file</th><th class=\"num\">per-GPU ex/s</th>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"wide long\">docs/<wbr>results/<wbr>h100_<wbr>resnet50_<wbr>"));
  // A status naming a warning code, "VOID (negative_ddp_overhead)", may break too; a word of 16
  // characters or fewer never does.
  t.rows[1][0] = std::string("VOID (negative_ddp_overhead)");
  t.rows[1][1] = std::string("(oversubscribed)");
  const std::string statuses = html_table(t, o);
  EXPECT_THAT(statuses, HasSubstr("<td class=\"label long\">VOID (negative_<wbr>ddp_<wbr>overhead)</td>"));
  EXPECT_THAT(statuses, HasSubstr("<td class=\"wide\">(oversubscribed)</td>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"num key\">0.97x</td>"));
  // Without options: every column, no class but label and num.
  const std::string plain = html_table(wide_table());
  EXPECT_THAT(plain, HasSubstr("<table>"));
  EXPECT_THAT(plain, Not(HasSubstr("wide")));
  EXPECT_THAT(plain, Not(HasSubstr("key")));
  EXPECT_EQ(html_table_columns(t), 6u);
  Table empty = t;
  empty.rows.clear();
  EXPECT_EQ(html_table(empty, o), "");
}

// A table printed as sentences (Table::text_line) never leaves a blank where a value is missing.
TEST(TableText, ASentenceSaysNaForAnEmptyCell) {
  Table t;
  t.title = "What ran";
  t.columns = {{"label", "file", "", fmtcol::plain()}, {"cpu_model", "CPU", "", fmtcol::plain()}};
  t.rows = {{std::string("F1"), std::string("")}, {std::string("F2"), std::string("Intel(R) Xeon(R)")}};
  t.text_line = [](const std::vector<std::string>& c) { return c[0] + " (CPU: " + c[1] + ")"; };
  const std::string text = render_tables({t}, TableFormat::text, 100);
  EXPECT_EQ(text, "What ran\nF1 (CPU: n/a)\nF2 (CPU: Intel(R) Xeon(R))\n");
  // Columns keep an empty cell empty (a notes column with nothing to say).
  t.text_line = nullptr;
  EXPECT_THAT(render_tables({t}, TableFormat::text), HasSubstr("\nF1\n"));
}

TEST(TableFormatName, MarkdownIsMd) {
  EXPECT_EQ(parse_table_format("markdown"), TableFormat::markdown);
  EXPECT_EQ(parse_table_format("md"), TableFormat::markdown);
  EXPECT_THROW(parse_table_format("xml"), UsageError);
}

}  // namespace
}  // namespace ddpbench
