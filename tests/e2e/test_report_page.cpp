// `ddpbench report` as a manager reads it, through the binary: the repository's H100 results
// and the CPU examples as an HTML page in headless Chromium at 400 and 1,400 px, their text
// tables, and the Markdown format under both of its names.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/page_check.hpp"
#include "common/testutil.hpp"

namespace fs = std::filesystem;

namespace ddpbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using testutil::have;
using testutil::run;
using testutil::TempDir;

const std::string kBin = DDPBENCH_BINARY;
const std::string kSrc = DDPBENCH_SOURCE_DIR "/";

// The repository's H100 result files, in name order.
std::string h100_files() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(kSrc + "docs/results"))
    if (e.path().extension() == ".json" && e.path().filename().string().rfind("h100_", 0) == 0)
      names.push_back(e.path().string());
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += " " + n;
  return out;
}

const std::string kCpuFiles =
    " " + kSrc + "docs/examples/cpu_weak_resnet18.json " + kSrc + "docs/examples/cpu_strong_resnet18.json";

// Both pages read at 400 and 1,400 px (tests/common/page_check.hpp expect_page_reads): the
// headline first, every table's label and key column in the window, each plot after its table
// with its text at 10 px or more and its title whole. At 400 px the weak tables show their
// efficiency, the column a narrow window once hid.
TEST(ReportPage, TheH100AndCpuReportsReadAt400And1400Px) {
  if (const std::string why = testutil::page_probe_missing(); !why.empty()) GTEST_SKIP() << why;
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  TempDir d;
  for (const auto& [name, files] : {std::pair<std::string, std::string>{"h100", h100_files()}, {"cpu", kCpuFiles}}) {
    SCOPED_TRACE(name);
    const auto page = d.path / (name + ".html");
    const auto plots = d.path / (name + "-plots");
    const auto o = run(kBin + " report" + files + " --html " + page.string() + " --plots " + plots.string());
    ASSERT_EQ(o.code, 0) << o.err;
    EXPECT_THAT(o.err, Not(HasSubstr("not drawn")));
    size_t drawn = 0;
    for (const auto& e : fs::directory_iterator(plots)) drawn += e.path().extension() == ".svg" ? 1 : 0;
    ASSERT_GT(drawn, 0u);
    const auto j = testutil::probe_page(page);
    ASSERT_TRUE(j.is_object());
    for (const char* w : {"400", "1400"}) {
      ASSERT_TRUE(j.contains(w));
      testutil::expect_page_reads(j[w], drawn, true);
      size_t weak = 0;
      for (const auto& t : j[w]["tables"])
        if (t["key"] == "efficiency") {
          ++weak;
          EXPECT_TRUE(t["key_visible"].get<bool>()) << t;
        }
      EXPECT_GT(weak, 0u);
    }
  }
}

// The text a manager reads: the comparison table split to 100 columns keeps its file column in
// every part; the appendix never prints an empty "(CPU: )" for launches that did not record it.
TEST(ReportPage, TheH100TextKeepsItsFileColumnAndNamesNoEmptyCpu) {
  const auto o = run(kBin + " report" + h100_files() + " --format table");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.out, Not(HasSubstr("(CPU: )")));
  EXPECT_THAT(o.out, HasSubstr("(CPU: n/a)"));
  // Each part of the comparison table names the model and the file.
  const auto at = o.out.find("Per-GPU throughput by file");
  ASSERT_NE(at, std::string::npos) << o.out;
  std::istringstream in(o.out.substr(at, o.out.find("\n== ", at) - at));
  size_t parts = 0;
  for (std::string l; std::getline(in, l);) {
    EXPECT_LE(l.size(), 100u) << l;
    if (l.rfind("model ", 0) == 0) {
      ++parts;
      EXPECT_THAT(l, HasSubstr("file")) << l;
    }
  }
  EXPECT_GE(parts, 2u);
}

// --format markdown is --format md, as the guides say.
TEST(ReportPage, FormatMarkdownIsMd) {
  const auto md = run(kBin + " report" + kCpuFiles + " --format markdown");
  ASSERT_EQ(md.code, 0) << md.err;
  EXPECT_THAT(md.out, HasSubstr("### Weak scaling: resnet18"));
  EXPECT_EQ(md.out, run(kBin + " report" + kCpuFiles + " --format md").out);
}

}  // namespace
}  // namespace ddpbench
