// Plots are real PNG and SVG files of the promised size; the HTML page parses and
// holds every table and every plot inline.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <regex>

#include <nlohmann/json.hpp>

#include "common/page_check.hpp"
#include "common/testutil.hpp"
#include "core/render/html.hpp"
#include "core/render/plots.hpp"
#include "core/render/report_tables.hpp"
#include "core/util/errors.hpp"

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

uint32_t be32(const unsigned char* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
}

TEST(Plots, PngAndSvgOfTheExpectedSize) {
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  TempDir d;
  const Report r = fixture_report();
  const auto plots = write_plots(r, (d.path / "plots").string());
  // 4 per scaling table, and one overlay of the two multi-size resnet50 weak tables (A100, H100).
  ASSERT_EQ(plots.size(), 4 * (r.weak.size() + r.strong.size()) + 1);
  const auto overlay = std::find_if(plots.begin(), plots.end(),
                                    [](const Plot& p) { return p.name.rfind("overlay-weak-resnet50", 0) == 0; });
  ASSERT_NE(overlay, plots.end());
  // One index block per table, then the no-DDP baselines: three blocks separated by two blank lines.
  const std::string od = testutil::slurp(d.path / "plots" / (overlay->name + ".dat"));
  size_t blocks = 1;
  for (size_t at = od.find("\n\n\n"); at != std::string::npos; at = od.find("\n\n\n", at + 3)) ++blocks;
  EXPECT_EQ(blocks, 3u) << od;
  for (const auto& p : plots) {
    SCOPED_TRACE(p.name);
    std::ifstream png(p.png, std::ios::binary);
    unsigned char h[24] = {0};
    png.read(reinterpret_cast<char*>(h), sizeof h);
    ASSERT_EQ(png.gcount(), 24);
    EXPECT_EQ(std::string(reinterpret_cast<char*>(h), 8), std::string("\x89PNG\r\n\x1a\n", 8));
    EXPECT_EQ(std::string(reinterpret_cast<char*>(h + 12), 4), "IHDR");
    EXPECT_EQ(be32(h + 16), static_cast<uint32_t>(kPlotWidth));
    EXPECT_EQ(be32(h + 20), static_cast<uint32_t>(p.height));
    // The scaling panels are kPlotHeight tall; the overlay grows by a legend line per table.
    if (p.name.rfind("overlay-", 0) == 0) EXPECT_GT(p.height, kPlotHeight);
    else EXPECT_EQ(p.height, kPlotHeight);
    const std::string svg = testutil::slurp(p.svg);
    // (Checked with find: a failure should not print the whole SVG.)
    EXPECT_NE(svg.find("<svg"), std::string::npos);
    EXPECT_NE(svg.find("width=\"" + std::to_string(kPlotWidth) + "\""), std::string::npos);
    EXPECT_NE(svg.find("height=\"" + std::to_string(p.height) + "\""), std::string::npos);
    // Every text of the plot at kPlotFontPx: about 10 px on a page 400 px wide.
    EXPECT_NE(svg.find("font-size=\"" + std::to_string(kPlotFontPx) + ".00\""), std::string::npos);
    EXPECT_FALSE(std::regex_search(svg, std::regex("font-size=\"([0-9]|1[0-4])\\.")));
    EXPECT_NE(svg.find("</svg>"), std::string::npos);
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

Report breakdown_and_comm_report() {
  std::vector<NamedResult> files;
  for (const char* n : {"breakdown_cpu.json", "comm_cpu.json"})
    files.push_back({n, read_result_file(kDir + "fixtures/" + n)});
  return build_report(files, {});
}

// The PNG is kPlotWidth wide and as tall as the plot says (kPlotHeight, or more for a bar chart
// of many bars).
void expect_png_of_plot_size(const Plot& p) {
  const std::string& path = p.png;
  std::ifstream png(path, std::ios::binary);
  unsigned char h[24] = {0};
  png.read(reinterpret_cast<char*>(h), sizeof h);
  ASSERT_EQ(png.gcount(), 24) << path;
  EXPECT_EQ(std::string(reinterpret_cast<char*>(h), 8), std::string("\x89PNG\r\n\x1a\n", 8)) << path;
  EXPECT_EQ(be32(h + 16), static_cast<uint32_t>(kPlotWidth)) << path;
  EXPECT_EQ(be32(h + 20), static_cast<uint32_t>(p.height)) << path;
  EXPECT_GT(p.height, 0) << path;
}

// One stacked bar per world size (no DDP first) whose parts are the breakdown's components in
// ms, and one busbw-vs-size plot per comm file with a line per collective and group of ranks.
TEST(Plots, BreakdownBarsAndBusbwAgainstSize) {
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  TempDir d;
  const Report r = breakdown_and_comm_report();
  const auto dir = d.path / "plots";
  const auto plots = write_plots(r, dir.string());
  // 4 panels for the plain weak table (1 and 2 ranks); the two one-size tables (bucket cap
  // 1 MiB, comm hook fp16 at 2 ranks) in one bar chart instead; a breakdown per table; one
  // busbw plot.
  // And one bar chart of the optimization-impact table.
  ASSERT_EQ(plots.size(), 1u + 1u + 4u + 3 + 1);
  EXPECT_EQ(plots.front().name, "single-gpu-count-throughput");
  const auto impact =
      std::find_if(plots.begin(), plots.end(), [](const Plot& p) { return p.name.rfind("impact-", 0) == 0; });
  ASSERT_NE(impact, plots.end());
  // Aggregate ex/s per technique, the plain run marked: 320, 400 (bucket cap 1 MiB), 355.6.
  EXPECT_THAT(testutil::slurp(dir / (impact->name + ".dat")),
              HasSubstr("\"baseline (DDP defaults) (F1)\" 320 1\n\"bucket cap 1 MiB (F1)\" 400 0\n"));
  // One bar per one-size table, under two lines of its label (model, size and launch; setup):
  // per-rank ex/s at p50, at the p95 and p5 times, the no-DDP's.
  const std::string single = testutil::slurp(dir / "single-gpu-count-throughput.dat");
  EXPECT_THAT(single,
              HasSubstr("\"resnet18, batch 16 per rank, 2 ranks (F1)\" \"fp32, bucket cap 1 MiB\" 200 "));
  for (const auto& p : plots) expect_png_of_plot_size(p);
  const std::string stem = "weak-resnet18-fp32-cpu-fixture-cpu-i64-b16-breakdown";
  const auto bars = std::find_if(plots.begin(), plots.end(), [&](const Plot& p) { return p.name == stem; });
  ASSERT_NE(bars, plots.end());
  EXPECT_EQ(bars->title.rfind("Step breakdown: resnet18, fp32, CPU (Fixture CPU)", 0), 0u) << bars->title;
  // forward, backward compute, exposed comm, optimizer, other (ms): they stack to the step.
  EXPECT_EQ(testutil::slurp(dir / (stem + ".dat")),
            "# run forward_s(ms) backward_compute_s(ms) exposed_comm_s(ms) optimizer_s(ms) other_s(ms)\n"
            "\"no DDP\" 20 30 0 6 4\n\"1 rank\" 21 31 1 6 5\n\"2 ranks\" 22 32 30 6 10\n");
  const std::string svg = testutil::slurp(dir / (stem + ".svg"));
  for (const char* label : {">no DDP<", ">2 ranks<", ">exposed comm<", ">backward compute<"})
    EXPECT_NE(svg.find(label), std::string::npos) << label;

  const std::string comm = "comm-cpu-fixture-cpu-comm-cpu-busbw";
  ASSERT_TRUE(std::any_of(plots.begin(), plots.end(), [&](const Plot& p) { return p.name == comm; }));
  const std::string dat = testutil::slurp(dir / (comm + ".dat"));
  // 4 MiB on 3 ranks: busbw = 4194304 B / 7000 us / 1e9 x 4/3 = 0.798915 GB/s; the barrier has no line.
  EXPECT_THAT(dat, HasSubstr("# allreduce, 3 ranks: bytes busbw_gbps\n1024 0.0455111\n"));
  EXPECT_THAT(dat, HasSubstr("4194304 0.798915\n"));
  EXPECT_THAT(dat, Not(HasSubstr("barrier")));
  const std::string csvg = testutil::slurp(dir / (comm + ".svg"));
  // (Checked with find: a failure should not print the whole SVG.)
  EXPECT_NE(csvg.find("<text>all_gather, 2 ranks</text>"), std::string::npos);  // underscores kept (no enhanced text)
  EXPECT_NE(csvg.find("message size (bytes, log2 scale)"), std::string::npos);
  EXPECT_NE(csvg.find(">4 MiB<"), std::string::npos);  // sizes in binary prefixes on the log2 axis
  EXPECT_NE(csvg.find(">16 kiB<"), std::string::npos);
}

Report cluster_report() {
  std::vector<NamedResult> files;
  for (const char* n :
       {"cluster_cpu.json", "cluster_gpu.json", "many_ranks_cpu.json", "pairs_cpu.json", "maxbs_cpu.json"})
    files.push_back({n, read_result_file(kDir + "fixtures/" + n)});
  ReportOptions o;
  o.per_rank = true;
  return build_report(files, o);
}

// Schema 1.6: one telemetry plot per model, a score plot per straggler entry (labelled bars up
// to 64 ranks, sorted scores beyond), a burn-in plot per burned-in row (bands beyond 16 ranks).
TEST(Plots, TelemetryStragglersAndBurnIn) {
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  TempDir d;
  const Report r = cluster_report();
  const auto dir = d.path / "plots";
  const auto plots = write_plots(r, dir.string());
  std::map<std::string, int> kinds;
  for (const auto& p : plots) {
    expect_png_of_plot_size(p);
    ++kinds[p.name.substr(0, p.name.find('-'))];
  }
  EXPECT_EQ(kinds["telemetry"], 2);  // resnet18 and resnet50: one per model
  EXPECT_EQ(kinds["stragglers"], 3);
  EXPECT_EQ(kinds["burnin"], 2);
  // 2 ranks: a bar per rank, 0.0208 / 0.040 = 0.52.
  EXPECT_EQ(testutil::slurp(dir / "stragglers-resnet18-cpu-fixture-cpu-2r.dat"),
            "# rank score (threshold 0.95)\n0 1\n1 0.52\n");
  // 100 ranks: sorted, the straggler (rank 37, 0.020 / 0.040) first.
  const std::string many = testutil::slurp(dir / "stragglers-resnet18-cpu-fixture-cpu-100r.dat");
  EXPECT_EQ(many.rfind("# position rank score, sorted by score (100 ranks; threshold 0.95)\n0 37 0.5\n", 0), 0u);
  const std::string gp = testutil::slurp(dir / "plots.gp");
  EXPECT_THAT(gp, HasSubstr("plot 'stragglers-resnet18-cpu-fixture-cpu-2r.dat' using 1:2 with boxes"));
  EXPECT_THAT(gp, HasSubstr("plot 'stragglers-resnet18-cpu-fixture-cpu-100r.dat' using 1:3 with linespoints"));
  // Burn-in of 2 ranks: a line each; of 100: min, median, max per window.
  EXPECT_EQ(testutil::slurp(dir / "burnin-resnet18-1m-2c-cpu-fixture-cpu.dat"),
            "# rank 0: start_s ex_per_s\n0 100\n30 100\n60 99\n90 98\n\n\n"
            "# rank 1: start_s ex_per_s\n0 100\n30 95\n60 90\n90 88\n");
  EXPECT_THAT(testutil::slurp(dir / "burnin-resnet18-1m-100c-cpu-fixture-cpu.dat"),
              HasSubstr("# 100 ranks: start_s min_ex_per_s median_ex_per_s max_ex_per_s\n0 50 53 56\n"));
  // Telemetry: CPU utilization on the CPU run, SM utilization and clock on the GPU run.
  EXPECT_THAT(testutil::slurp(dir / "telemetry-resnet18-1m-2c-cpu-fixture-cpu.dat"),
              HasSubstr("# rank 1: t_s cpu_util_pct\n0.1 56\n"));
  EXPECT_THAT(testutil::slurp(dir / "telemetry-resnet50-1m-4g-nvidia-h100-80gb-hbm3.dat"),
              HasSubstr("# rank 2: t_s sm_util_pct sm_clock_mhz\n0.1 39 1980\n0.2 40 1980\n0.3 41 1410\n"));
  const std::string svg = testutil::slurp(dir / "telemetry-resnet50-1m-4g-nvidia-h100-80gb-hbm3.svg");
  EXPECT_NE(svg.find("SM clock (MHz)"), std::string::npos);
}

// The repository's own H100 result files: every plot is drawn. The nine tables of one GPU
// count are one bar chart; the two-rank table's second row (both ranks on one GPU) measures
// sharing, not scaling, so it is no point of any curve and that table is one bar too; the
// memory plots draw the peak the scaling tables print (these files record it in telemetry
// only), not "no memory measured".
TEST(Plots, TheH100ResultsAreDrawnWithThePeakTheTablesPrint) {
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  TempDir d;
  std::vector<NamedResult> files;
  for (const auto& e : fs::directory_iterator(DDPBENCH_SOURCE_DIR "/docs/results"))
    if (e.path().extension() == ".json") files.push_back({e.path().filename().string(), read_result_file(e.path())});
  ASSERT_GE(files.size(), 10u);
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  const Report r = build_report(files, {});
  const auto plots = write_plots(r, (d.path / "plots").string());
  std::vector<std::string> names;
  for (const auto& p : plots) {
    SCOPED_TRACE(p.name);
    EXPECT_EQ(p.error, "");
    expect_png_of_plot_size(p);
    names.push_back(p.name);
  }
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("single-gpu-count-throughput",
                                                     "memory-resnet50-nvidia-h100-80gb-hbm3-i224-b32-1r",
                                                     "memory-resnet50-nvidia-h100-80gb-hbm3-i224-b256-1r"));
  // The shared-GPU row is in no data file; its table's 1-rank row is a bar.
  const std::string single = testutil::slurp(d.path / "plots" / "single-gpu-count-throughput.dat");
  EXPECT_THAT(single, HasSubstr("\"resnet18, batch 32 per GPU, 1 GPU (F1)\" \"fp32 (cuDNN TF32), gloo, cuDNN benchmark off\""));
  EXPECT_THAT(single, Not(HasSubstr("2 GPUs")));
  // 3287813120 bytes, the 3.06 GiB the weak table of F5 prints, is 3135.5 MiB.
  EXPECT_THAT(testutil::slurp(d.path / "plots" / "memory-resnet50-nvidia-h100-80gb-hbm3-i224-b32-1r.dat"),
              HasSubstr("\"ddp fp32 (cuDNN TF32)\" 3135.5 NaN\n"));
  const std::string html = render_html(r, plots, "2026-11-26T00:00:00Z");
  EXPECT_THAT(html, Not(HasSubstr("Not drawn: ")));
  for (const auto& e : fs::directory_iterator(d.path / "plots"))  // no temporary left behind
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
}

// NaN, infinities, 1e308 and a 100,000-character label in a file never stop the report: a
// plot with no finite value is skipped with its reason, the others are drawn.
TEST(Plots, NaNInfHugeValuesAndLongLabelsNeverStopAReport) {
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  TempDir d;
  ResultFile f = read_result_file(kDir + "fixtures/weak_cpu.json");
  ResultFile g = f;
  for (auto& row : g.results) {  // a step of 1e-308 s: throughput overflows to inf
    row.model = std::string(100000, 'm');
    if (row.ddp && row.world_size > 1) row.summary.p5_s = row.summary.p50_s = 1e-308;
    row.summary.p95_s = 1e308;
  }
  ResultFile h = f;
  for (auto& row : h.results) {  // every throughput infinite, every efficiency NaN
    row.model = "nan_model";
    row.summary.p5_s = row.summary.p50_s = 1e-308;
  }
  const Report r = build_report({{"plain.json", f}, {"huge.json", g}, {"nan.json", h}}, {});
  std::vector<Plot> plots;
  ASSERT_NO_THROW(plots = write_plots(r, (d.path / "plots").string()));
  size_t drawn = 0;
  for (const auto& p : plots) {
    if (p.error.empty()) {
      ++drawn;
      expect_png_of_plot_size(p);
    }
    if (p.title.find("nan_model") != std::string::npos && p.name.find("throughput") != std::string::npos)
      EXPECT_EQ(p.error, "no finite throughput to draw") << p.name;
  }
  EXPECT_GE(drawn, 4u);  // at least the plain file's four panels
}

// Images go to temporary names and replace the old ones only when gnuplot succeeded: a
// re-run that fails leaves the earlier plot byte for byte, and no temporary behind.
TEST(Plots, AFailedRerunLeavesTheEarlierPlotAsItWas) {
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  TempDir d;
  const std::string dir = (d.path / "plots").string();
  PlotSpec good;
  good.name = "p";
  good.title = "a line";
  good.data_file = "p.dat";
  good.data = "1 1\n2 4\n3 9\n";
  good.body = "plot 'p.dat' using 1:2 with lines title 'y'\n";
  ASSERT_TRUE(draw_plots({good}, dir, "p.gp").front().error.empty());
  const std::string png = testutil::slurp(fs::path(dir) / "p.png");
  PlotSpec bad = good;
  bad.data_file = "";
  bad.body = "plot 'no-such-file.dat' using 1:2\n";
  const auto again = draw_plots({bad}, dir, "p.gp");
  ASSERT_EQ(again.size(), 1u);
  EXPECT_THAT(again[0].error, HasSubstr("gnuplot: "));
  EXPECT_THAT(again[0].error, HasSubstr("no-such-file.dat"));
  EXPECT_EQ(testutil::slurp(fs::path(dir) / "p.png"), png);
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  // A plot told to skip says why and writes nothing.
  PlotSpec skipped = good;
  skipped.name = "q";
  skipped.skip = "no finite value";
  const auto s = draw_plots({skipped}, dir, "q.gp");
  EXPECT_EQ(s.at(0).error, "no finite value");
  EXPECT_FALSE(fs::exists(fs::path(dir) / "q.png"));
}

// The <table> elements of a page of `tables`: one per table with rows, but the headline (a list
// at the top) and the definitions (a definition list).
size_t html_tables(const std::vector<Table>& tables) {
  return static_cast<size_t>(std::count_if(tables.begin(), tables.end(), [](const Table& t) {
    return !t.rows.empty() && t.kind != "headline" && t.kind != "definitions";
  }));
}

TEST(Html, ShowsTheClusterValidationTablesAndHeadline) {
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  if (!have("python3")) GTEST_SKIP() << "python3 not installed";
  TempDir d;
  const Report r = cluster_report();
  const auto plots = write_plots(r, (d.path / "plots").string());
  const std::string html = render_html(r, plots, "2026-11-23T00:00:00Z");
  const auto file = d.path / "report.html";
  std::ofstream(file) << html;
  const auto o = testutil::run("python3 " + kDir + "tools/check_html.py " + file.string());
  ASSERT_EQ(o.code, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_TRUE(j["ok"].get<bool>()) << o.out;
  EXPECT_EQ(j["tables"].get<size_t>(), html_tables(report_tables(r)));
  EXPECT_EQ(j["svgs"].get<size_t>(), plots.size());
  for (const char* s : {"<td class=\"label\">Straggler (resnet18, batch 16 per rank, 2 ranks, F1): rank 1 (host node0, local rank 1, "
                        "CPU) has score 0.52 &lt; 0.95</td>",
                        "Telemetry during the measured iterations", "Per-rank step times and straggler score",
                        "Per-rank telemetry", "Burn-in: resnet18", "Pair bandwidth (comm --pairs)", "SLOW NODE node2",
                        "find-max-bs: resnet18", "recommended 43"})
    EXPECT_THAT(html, HasSubstr(s));
}

TEST(Html, ShowsTheBreakdownImpactAndCommTablesAndPlots) {
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  if (!have("python3")) GTEST_SKIP() << "python3 not installed";
  TempDir d;
  const Report r = breakdown_and_comm_report();
  const auto plots = write_plots(r, (d.path / "plots").string());
  const std::string html = render_html(r, plots, "2026-11-23T00:00:00Z");
  const auto file = d.path / "report.html";
  std::ofstream(file) << html;
  const auto o = testutil::run("python3 " + kDir + "tools/check_html.py " + file.string());
  ASSERT_EQ(o.code, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_TRUE(j["ok"].get<bool>()) << o.out;
  EXPECT_EQ(j["tables"].get<size_t>(), html_tables(report_tables(r)));
  EXPECT_EQ(j["svgs"].get<size_t>(), plots.size());
  for (const char* s : {"Step breakdown: resnet18", "Optimization impact: resnet18", "bucket cap 1 MiB",
                        "Collective allreduce: 3 ranks", "step breakdown", "bus bandwidth"})
    EXPECT_THAT(html, HasSubstr(s));
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
  EXPECT_EQ(j["tables"].get<size_t>(), html_tables(tables));
  EXPECT_EQ(j["svgs"].get<size_t>(), plots.size());
  for (const auto& t : tables) EXPECT_THAT(html, HasSubstr(html_escape(t.title))) << t.title;
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);  // self-contained
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

// Each plot is placed beside its own table: a figure's data-table names the table right before
// it on the page (no other table between), whatever kind of table it belongs to; the headline is
// the first block after the title and the definitions a definition list.
TEST(Html, EachPlotFollowsItsOwnTable) {
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  TempDir d;
  std::vector<NamedResult> files;
  for (const char* n : {"weak_cpu.json", "strong_cpu.json", "gpu_a100.json", "gpu_h100.json", "breakdown_cpu.json",
                        "comm_cpu.json", "strategies_cpu.json", "cluster_cpu.json", "cluster_gpu.json"})
    files.push_back({n, read_result_file(kDir + "fixtures/" + n)});
  ReportOptions o;
  o.per_rank = true;
  const Report r = build_report(files, o);
  const auto plots = write_plots(r, (d.path / "plots").string());
  const std::string html = render_html(r, plots, "2026-11-27T00:00:00Z");
  std::map<std::string, std::string> kind_of;  // figure id -> kind of the table it follows
  const std::regex element("<table id=\"(t[0-9]+)\"|<figure id=\"([^\"]+)\" data-table=\"(t[0-9]+)\"");
  std::string last_table;
  size_t figures = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), element); it != std::sregex_iterator(); ++it) {
    if ((*it)[1].matched) {
      last_table = (*it)[1].str();
      continue;
    }
    ++figures;
    EXPECT_EQ((*it)[3].str(), last_table) << (*it)[2].str() << " is not beside its table";
  }
  size_t drawn = 0;
  for (const auto& p : plots) drawn += p.error.empty() ? 1 : 0;
  EXPECT_EQ(figures, drawn);
  // The plots of kinds that each have a table of their own, beside it.
  const auto tables = report_tables(r);
  const auto beside = [&](const std::string& plot, const std::string& kind) {
    const auto at = html.find("<figure id=\"plot-" + plot);
    ASSERT_NE(at, std::string::npos) << plot;
    const auto table = html.rfind("<table id=\"t", at);
    ASSERT_NE(table, std::string::npos) << plot;
    const size_t index = std::stoul(html.substr(table + 12, html.find('"', table + 12) - table - 12));
    ASSERT_LE(index, tables.size());
    EXPECT_EQ(tables[index - 1].kind, kind) << plot;
  };
  beside("weak-resnet18-fp32-cpu-fixture-cpu-i64-b16-efficiency", "weak");
  beside("weak-resnet18-fp32-cpu-fixture-cpu-i64-b16-breakdown", "breakdown");
  beside("strong-resnet18-fp32-cpu-fixture-cpu-i64-gb64-latency", "strong");
  beside("impact-resnet18-fp32-cpu-fixture-cpu-i64-b16-2r", "impact");
  beside("comm-cpu-fixture-cpu-comm-cpu-busbw", "comm");
  beside("memory-resnet50-cpu-fixture-cpu-i64-b8-2r", "strategy");
  beside("telemetry-resnet18", "telemetry");
  beside("burnin-resnet18-1m-2c-cpu-fixture-cpu", "burn_in");
  // The headline first, the definitions as a list, no table of either.
  const auto h1 = html.find("<h1>"), headline = html.find("<section class=\"headline\" id=\"headline\">");
  ASSERT_NE(headline, std::string::npos);
  EXPECT_EQ(html.find("<", html.find("</h1>", h1) + 5), headline) << "the headline is not right after the title";
  EXPECT_THAT(html, HasSubstr("<dl class=\"defs\">"));
  EXPECT_EQ(html.find(">headline</th>"), std::string::npos);
}

// The page in a real browser (headless Chromium, at 400 and 1,400 px through the DevTools
// protocol): every table's row label and key column inside the window, no sideways scroll, every
// plot after its table with text of 10 px or more and none of it cut, the headline first.
TEST(Html, ReadsAt400And1400PxInChromium) {
  if (const std::string why = testutil::page_probe_missing(); !why.empty()) GTEST_SKIP() << why;
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  TempDir d;
  std::vector<NamedResult> files;
  for (const char* n : {"weak_cpu.json", "strong_cpu.json", "gpu_a100.json", "gpu_h100.json", "breakdown_cpu.json",
                        "comm_cpu.json", "strategies_cpu.json", "cluster_cpu.json", "cluster_gpu.json",
                        "many_ranks_cpu.json", "pairs_cpu.json", "maxbs_cpu.json"})
    files.push_back({n, read_result_file(kDir + "fixtures/" + n)});
  ReportOptions o;
  o.per_rank = true;
  o.gpu_hour_usd = 3.0;
  const Report r = build_report(files, o);
  const auto plots = write_plots(r, (d.path / "plots").string());
  size_t drawn = 0;
  for (const auto& p : plots) drawn += p.error.empty() ? 1 : 0;
  ASSERT_GT(drawn, 20u);
  const auto page = d.path / "page.html";
  std::ofstream(page) << render_html(r, plots, "2026-11-27T00:00:00Z");
  const auto j = testutil::probe_page(page, (d.path / "shot").string());
  ASSERT_TRUE(j.is_object());
  for (const char* w : {"400", "1400"}) {
    ASSERT_TRUE(j.contains(w)) << j.dump().substr(0, 300);
    EXPECT_EQ(j[w]["inner"].get<int>(), std::stoi(w));
    testutil::expect_page_reads(j[w], drawn, true);
  }
  // At 400 px the weak tables show their label, per-rank ex/s, efficiency and file (and hide
  // the rest behind a switch); at 1,400 px every column.
  for (const auto& t : j["400"]["tables"])
    if (t["key"] == "efficiency") EXPECT_LE(t["shown"].get<int>(), 6) << t;
  for (const auto& t : j["1400"]["tables"]) EXPECT_EQ(t["shown"], t["columns"]) << t;
  // A screenshot with something drawn on it: the dark pixels of text, table rules and plots.
  const auto o2 = testutil::run("python3 " + kDir + "tools/png_dark_pixels.py " + (d.path / "shot-1400-00.png").string());
  ASSERT_EQ(o2.code, 0) << o2.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(o2.out, m, std::regex("1400x1400 dark=([0-9]+)"))) << o2.out;
  EXPECT_GT(std::stol(m[1].str()), 20000) << "a blank screenshot";  // the title, the headline, tables
}

// Markdown links each plot drawn relative to the document's folder (GitHub renders them), and
// names the ones not drawn with why.
TEST(Markdown, PlotLinksAreRelativeToTheDocument) {
  std::vector<Plot> plots(2);
  plots[0] = {"a", "resnet18 [weak]: throughput", "/tmp/doc/plots/a b.png", "/tmp/doc/plots/a b.svg", ""};
  plots[1] = {"m", "memory", "", "", "no memory measured"};
  EXPECT_EQ(markdown_plot_links(plots, "/tmp/doc"),
            "\n## Plots\n\n![resnet18  weak : throughput](plots/a%20b.png)\n\nNot drawn: memory (no memory "
            "measured)\n");
  EXPECT_EQ(markdown_plot_links({}, "/tmp/doc"), "");
}

}  // namespace
}  // namespace ddpbench
