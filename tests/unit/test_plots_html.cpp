// Plots are real PNG and SVG files of the promised size; the HTML page parses and
// holds every table and every plot inline.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/testutil.hpp"
#include "core/errors.hpp"
#include "core/html.hpp"
#include "core/plots.hpp"
#include "core/report.hpp"

namespace ddpbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using testutil::have;
using testutil::TempDir;
namespace fs = std::filesystem;

const std::string kDir = DDPBENCH_SOURCE_DIR "/tests/";

Report fixture_report() {
  std::vector<NamedResult> files;
  for (const char* n : {"weak_cpu.json", "strong_cpu.json", "gpu_a100.json", "gpu_h100.json"})
    files.push_back({n, read_result_file(kDir + "fixtures/" + n)});
  ReportOptions o;
  o.gpu_hour_usd = 3.0;
  return build_report(files, o);
}


uint32_t be32(const unsigned char* p) { return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3]; }

TEST(Plots, PngAndSvgOfTheExpectedSize) {
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  TempDir d;
  const Report r = fixture_report();
  const auto plots = write_plots(r, (d.path / "plots").string());
  ASSERT_EQ(plots.size(), 4 * (r.weak.size() + r.strong.size()));  // 4 per scaling table
  for (const auto& p : plots) {
    SCOPED_TRACE(p.name);
    std::ifstream png(p.png, std::ios::binary);
    unsigned char h[24] = {0};
    png.read(reinterpret_cast<char*>(h), sizeof h);
    ASSERT_EQ(png.gcount(), 24);
    EXPECT_EQ(std::string(reinterpret_cast<char*>(h), 8), std::string("\x89PNG\r\n\x1a\n", 8));
    EXPECT_EQ(std::string(reinterpret_cast<char*>(h + 12), 4), "IHDR");
    EXPECT_EQ(be32(h + 16), static_cast<uint32_t>(kPlotWidth));
    EXPECT_EQ(be32(h + 20), static_cast<uint32_t>(kPlotHeight));
    const std::string svg = testutil::slurp(p.svg);
    EXPECT_THAT(svg, HasSubstr("<svg"));
    EXPECT_THAT(svg, HasSubstr("width=\"" + std::to_string(kPlotWidth) + "\""));
    EXPECT_THAT(svg, HasSubstr("height=\"" + std::to_string(kPlotHeight) + "\""));
    EXPECT_THAT(svg, HasSubstr("</svg>"));
  }
  // Titles name model, precision and device.
  EXPECT_THAT(plots.front().title, HasSubstr("resnet18, fp32, CPU (Fixture CPU)"));
  // The x axis says GPUs only where there are GPUs.
  for (const auto& p : plots) {
    const bool cpu = p.title.find("CPU (Fixture CPU)") != std::string::npos;
    const std::string svg = testutil::slurp(p.svg);
    if (cpu) {
      EXPECT_THAT(svg, HasSubstr("ranks (log2 scale)")) << p.name;
      EXPECT_THAT(svg, Not(HasSubstr("GPU"))) << p.name;
    } else {
      EXPECT_THAT(svg, HasSubstr("GPUs (ranks, log2 scale)")) << p.name;
    }
  }
}

TEST(Plots, MissingDirectoryParentIsAUsageError) {
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed";
  EXPECT_THROW(write_plots(fixture_report(), "/proc/ddpbench-cannot-create"), UsageError);
}

// A symbolic link planted under a plot's name is refused before anything is written,
// and stays a link to what it pointed at.
TEST(Plots, RefuseALinkPlantedInTheFolder) {
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  TempDir d;
  const Report r = fixture_report();
  const auto dir = d.path / "plots";
  fs::create_directories(dir);
  const auto victim = d.path / "victim.txt";
  std::ofstream(victim) << "keep me\n";
  const std::string name = write_plots(r, (d.path / "first").string()).front().name + ".png";
  fs::create_symlink(victim, dir / name);
  try {
    write_plots(r, dir.string());
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("is a symbolic link, not a regular file")) << e.what();
  }
  EXPECT_TRUE(fs::is_symlink(dir / name));
  EXPECT_EQ(testutil::slurp(victim), "keep me\n");
  EXPECT_FALSE(fs::exists(dir / "plots.gp"));  // nothing written
}

TEST(Html, ParsesAndHoldsEveryTableAndPlot) {
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  if (!have("python3")) GTEST_SKIP() << "python3 not installed";
  TempDir d;
  const Report r = fixture_report();
  const auto plots = write_plots(r, (d.path / "plots").string());
  const std::string html = render_html(r, plots, "2026-11-22T00:00:00Z");
  const auto file = d.path / "report.html";
  std::ofstream(file) << html;
  const auto o = testutil::run("python3 " + kDir + "tools/check_html.py " + file.string());
  ASSERT_EQ(o.code, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_TRUE(j["ok"].get<bool>()) << o.out;
  const auto tables = report_tables(r);
  EXPECT_EQ(j["tables"].get<size_t>(), tables.size() + 1);  // + the environment table
  EXPECT_EQ(j["svgs"].get<size_t>(), plots.size());
  for (const auto& t : tables) EXPECT_THAT(html, HasSubstr(html_escape(t.title))) << t.title;
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);  // self-contained
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

}  // namespace
}  // namespace ddpbench
