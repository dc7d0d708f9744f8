// The analysis subcommands through the binary: exit codes, one-line errors, files written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/testutil.hpp"

namespace fs = std::filesystem;

namespace ddpbench {
namespace {

using ::testing::HasSubstr;

using testutil::bad_input_problem;
using testutil::count_lines;
using testutil::have;
using testutil::run;
using testutil::TempDir;

const std::string kBin = DDPBENCH_BINARY;
const std::string kFix = DDPBENCH_SOURCE_DIR "/tests/fixtures/";

TEST(ReportCli, TablesToStdout) {
  const auto o = run(kBin + " report " + kFix + "weak_cpu.json " + kFix + "strong_cpu.json --gpu-hour-cost 1.5");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("Weak scaling: resnet18"));
  EXPECT_THAT(o.out, HasSubstr("Strong scaling: resnet18"));
  EXPECT_THAT(o.out, HasSubstr("Cheapest per sample: fp32, global batch 64 on 1 rank"));  // CPU runs: ranks, not GPUs
  EXPECT_EQ(o.out.find("GPU"), std::string::npos);
}

TEST(ReportCli, JsonCsvAndFilesOnDisk) {
  TempDir d;
  auto o = run(kBin + " report " + kFix + "gpu_a100.json " + kFix + "gpu_h100.json --format json");
  ASSERT_EQ(o.code, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  std::set<std::string> groups;
  for (const auto& t : j["tables"])
    if (t["kind"] == "comparison")
      for (const auto& r : t["rows"]) groups.insert(r["group"].get<std::string>());
  EXPECT_EQ(groups, (std::set<std::string>{"NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3"}));
  o = run(kBin + " report " + kFix + "weak_cpu.json --format csv -o " + (d.path / "r.csv").string());
  ASSERT_EQ(o.code, 0) << o.err;
  // One header line: "table", then the context keys and the column keys, each sorted.
  const std::string csv = testutil::slurp(d.path / "r.csv");
  EXPECT_EQ(csv.rfind("table,", 0), 0u) << csv.substr(0, 200);
  EXPECT_THAT(csv.substr(0, csv.find('\n')), HasSubstr(",model,"));
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed";
  o = run(kBin + " report " + kFix + "weak_cpu.json --plots " + (d.path / "plots").string() + " --html " +
          (d.path / "r.html").string());
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(fs::exists(d.path / "plots" / "weak-resnet18-fp32-cpu-fixture-cpu-i64-b16-throughput.png"));
  EXPECT_TRUE(fs::exists(d.path / "plots" / "weak-resnet18-fp32-cpu-fixture-cpu-i64-b16-latency.svg"));
  EXPECT_THAT(testutil::slurp(d.path / "r.html"), HasSubstr("<svg"));
}

// Schema 1.5: the step breakdown, the knob sweep's optimization impact and `ddpbench comm`
// results, alone and together (tests/fixtures/make_fixtures_15.py holds the hand numbers).
TEST(ReportCli, BreakdownImpactAndCollectives) {
  auto o = run(kBin + " report --wide " + kFix + "breakdown_cpu.json " + kFix + "comm_cpu.json");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("DDP overhead vs no-DDP  exposed comm  other DDP overhead"));
  EXPECT_THAT(o.out, HasSubstr("2          1          160.0           320.0       64.0%                   40.0%"
                               "         30.0%               10.0%      0.1000  few_samples    F1\n"));
  EXPECT_THAT(o.out, HasSubstr("Step breakdown: resnet18, fp32, bucket cap 1 MiB, CPU (Fixture CPU)"));
  // speedup = 0.100 / 0.080 = 1.25; exposed comm 30 -> 10 ms.
  EXPECT_THAT(o.out, HasSubstr("bucket cap 1 MiB               80.00    1.25x            10.00                  -20.00"
                               "               -66.7%           400.0    F1\n"));
  EXPECT_THAT(
      o.out,
      HasSubstr("4194304            1048576  float32    sum    -1    5000.00         0.839         0.839       0\n"));

  // A comm file alone: its tables, the busbw plot and the HTML page.
  TempDir d;
  o = run(kBin + " report " + kFix + "comm_cpu.json --format json");
  ASSERT_EQ(o.code, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  ASSERT_EQ(j["tables"].size(), 6u);  // no training rows: no summary; the appendix last
  EXPECT_EQ(j["tables"][0]["kind"], "comm");
  EXPECT_EQ(j["tables"][4]["kind"], "files");
  EXPECT_EQ(j["tables"][5]["kind"], "commands");
  EXPECT_EQ(j["tables"][0]["rows"][3]["size_bytes"], 4194304);
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed";
  o = run(kBin + " report " + kFix + "comm_cpu.json --plots " + (d.path / "p").string() + " --html " +
          (d.path / "c.html").string());
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(fs::exists(d.path / "p" / "comm-cpu-fixture-cpu-comm-cpu-busbw.png"));
  EXPECT_THAT(testutil::slurp(d.path / "c.html"), HasSubstr("Collective allreduce: 2 ranks"));
}

// Schema 1.6 (tests/fixtures/make_fixtures_16.py): the straggler named with and without
// --per-rank, the per-rank tables with it, and find-max-bs and pair files reported.
TEST(ReportCli, ClusterValidation) {
  const std::string straggler =
      "Straggler (resnet18, batch 16 per rank, 2 ranks, F1): rank 1 (host node0, local rank 1, CPU) has score 0.52 < "
      "0.95\n";
  auto o = run(kBin + " report --wide " + kFix + "cluster_cpu.json");
  ASSERT_EQ(o.code, 0) << o.err;
  // Among the executive summary's findings, before the tables.
  ASSERT_NE(o.out.find("- " + straggler), std::string::npos) << o.out;
  EXPECT_LT(o.out.find("- " + straggler), o.out.find("Telemetry during"));
  EXPECT_EQ(o.out.find("Per-rank step times"), std::string::npos);
  EXPECT_THAT(o.out, HasSubstr("Telemetry during the measured iterations"));
  EXPECT_THAT(o.out, HasSubstr("Burn-in: resnet18, 1M/2C"));
  o = run(kBin + " report --wide --per-rank " + kFix + "cluster_cpu.json");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("- " + straggler), std::string::npos);
  EXPECT_THAT(o.out, HasSubstr("Per-rank step times and straggler score: resnet18, batch 16 per rank, 2 ranks"));
  EXPECT_THAT(o.out, HasSubstr("1     node0           1  cpu                               40.00       100.00         "
                               "31.00  0.520  STRAGGLER\n"));
  EXPECT_THAT(o.out, HasSubstr("Per-rank telemetry: resnet18, 1M/2C"));
  o = run(kBin + " report --wide " + kFix + "maxbs_cpu.json " + kFix + "pairs_cpu.json");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("recommended 43 (10% margin)"));
  EXPECT_THAT(o.out, HasSubstr("Slow node (F2): node2"));
  const auto h = run(kBin + " report --help");
  EXPECT_THAT(h.out, HasSubstr("--per-rank"));
}

// Without --wide every line of the text report fits 100 columns (a table in parts, notes
// wrapped); --targets puts pinned entries in the summary, named by the file and the entry.
TEST(ReportCli, TextFitsOneHundredColumnsAndTargetsComeFromAFile) {
  TempDir d;
  std::ofstream(d.path / "targets.json") << R"({"ddpbench_reference": "2.0", "references": [
      {"device": "*", "model": "resnet18", "batch_per_rank": 16, "image_size": 64, "world_size": 2,
       "setup": {"precision": "fp32"}, "metric": "ex_per_s_per_gpu", "value": 150, "lower": -0.1}]})";
  // From the fixtures' folder: the appendix prints the paths as given.
  auto o = run("cd " + kFix + " && " + kBin + " report breakdown_cpu.json --targets " +
               (d.path / "targets.json").string() + " --target-ex-s 100");
  ASSERT_EQ(o.code, 0) << o.err;
  std::istringstream lines(o.out);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100u) << line;
  // 16 / 0.1 s = 160 ex/s per rank at 2 ranks: within [135, inf); and >= 100 ex/s per rank.
  EXPECT_THAT(o.out, HasSubstr("PASS   ex_per_s_per_gpu 160.0 (required [135.0, +inf]) on 2 ranks: resnet18, fp32"));
  EXPECT_THAT(o.out, HasSubstr("entry 0, F1]"));
  EXPECT_THAT(o.out, HasSubstr("PASS   per-rank ex/s 160.0 (required >= 100.0) on 2 ranks"));
  o = run(kBin + " report " + kFix + "breakdown_cpu.json --target-efficiency 1.5");
  EXPECT_EQ(o.code, 2);
  EXPECT_THAT(o.err, HasSubstr("--target-efficiency 1.5 must be a fraction in (0, 1]"));
}

// --target-for MODEL:METRIC=VALUE: each bad text is refused with one line naming it and the fix
// (exit 2, nothing on stdout); a model no file measured is a warning, not an error; a good one
// prints the value it applied in the check's "required".
TEST(ReportCli, TargetForRefusesBadTextAndWarnsAboutAnAbsentModel) {
  const std::string files = " " + kFix + "weak_cpu.json " + kFix + "gpu_h100.json";
  const std::vector<std::pair<std::string, std::string>> refusals = {
      {"resnet50",
       "--target-for 'resnet50' is not MODEL:METRIC=VALUE; write e.g. resnet50:efficiency=0.9 "
       "(METRIC: efficiency, comm or ex-s)"},
      {"resnet50:ex-s",
       "--target-for 'resnet50:ex-s' is not MODEL:METRIC=VALUE; write e.g. "
       "resnet50:efficiency=0.9 (METRIC: efficiency, comm or ex-s)"},
      {":ex-s=700",
       "--target-for ':ex-s=700' is not MODEL:METRIC=VALUE; write e.g. resnet50:efficiency=0.9 "
       "(METRIC: efficiency, comm or ex-s)"},
      {"resnet50:speed=3", "--target-for 'resnet50:speed=3': metric 'speed' is unknown; use efficiency, comm or ex-s"},
      {"resnet50:ex-s=fast", "--target-for 'resnet50:ex-s=fast': 'fast' is not a number; write e.g. resnet50:ex-s=700"},
      {"resnet50:efficiency=",
       "--target-for 'resnet50:efficiency=': '' is not a number; write e.g. "
       "resnet50:efficiency=0.9"},
      {"resnet50:comm=10%", "--target-for 'resnet50:comm=10%': '10%' is not a number; write e.g. resnet50:comm=0.1"},
      {"resnet50:efficiency=0",
       "--target-for 'resnet50:efficiency=0': efficiency 0 must be a fraction in (0, 1] "
       "(0.9 for 90%)"},
      {"resnet50:efficiency=1.5",
       "--target-for 'resnet50:efficiency=1.5': efficiency 1.5 must be a fraction in "
       "(0, 1] (0.9 for 90%)"},
      {"resnet50:comm=-0.1",
       "--target-for 'resnet50:comm=-0.1': comm -0.1 must be a fraction in [0, 1] "
       "(0.1 for 10%)"},
      {"resnet50:comm=2", "--target-for 'resnet50:comm=2': comm 2 must be a fraction in [0, 1] (0.1 for 10%)"},
      {"resnet50:ex-s=0", "--target-for 'resnet50:ex-s=0': ex-s 0 must be a positive number of ex/s per GPU"},
      {"resnet50:ex-s=inf", "--target-for 'resnet50:ex-s=inf': ex-s inf must be a positive number of ex/s per GPU"},
  };
  for (const auto& [text, line] : refusals) {
    // Quoted for the shell: '' around the text (none of them holds a quote).
    const auto o = run(kBin + " report" + files + " --target-for '" + text + "'");
    EXPECT_EQ(o.code, 2) << text;
    EXPECT_EQ(o.err, "ddpbench: error: " + line + "\n") << text;
    EXPECT_EQ(o.out, "") << text;
  }

  // A model in no file: one warning line, the report still written with the others' targets.
  auto o = run(kBin + " report" + files + " --target-for resnet99:ex-s=700 --target-for resnet50:ex-s=600");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.err, "ddpbench: warning: --target-for resnet99: no row of that model in the files\n");
  // resnet50 at 16 GPUs: 512.0 ex/s per GPU against its own 600; resnet18 has no ex/s target.
  EXPECT_THAT(o.out, HasSubstr("FAIL   per-GPU ex/s 512.0 (required >= 600.0) on 16 GPUs: resnet50"));
  EXPECT_EQ(o.out.find("per-rank ex/s 64.0"), std::string::npos);
  // Repeated, after the files too; the JSON carries the applied value.
  o = run(kBin + " report --format json" + files + " --target-for resnet50:efficiency=0.75 --target-for " +
          "resnet18:efficiency=0.9");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.err, "");
  std::map<std::string, std::pair<std::string, std::string>> eff;  // model -> required, status
  const auto doc = nlohmann::json::parse(o.out);
  for (const auto& t : doc.at("tables"))
    if (t.value("kind", "") == "summary")
      for (const auto& c : t.at("rows"))
        if (c.at("metric") == "weak-scaling efficiency") {
          const auto what = c.at("configuration").get<std::string>();
          eff[what.substr(0, what.find(','))] = {c.at("required").get<std::string>(),
                                                 c.at("status").get<std::string>()};
        }
  EXPECT_EQ(eff["resnet50"], std::make_pair(std::string(">= 75.0%"), std::string("PASS")));  // 80.0%
  EXPECT_EQ(eff["resnet18"], std::make_pair(std::string(">= 90.0%"), std::string("FAIL")));  // 84.0%
}

TEST(CheckCli, ExitCodes) {
  auto o = run(kBin + " check " + kFix + "gpu_h100.json --reference " + kFix + "reference_h100_pass.json");
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_THAT(o.out, HasSubstr("2 passed, 0 failed, 0 warned, 0 missing"));
  o = run(kBin + " check " + kFix + "gpu_h100.json --reference " + kFix + "reference_h100.json");
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  EXPECT_THAT(o.out, HasSubstr("FAIL"));
  EXPECT_THAT(o.out, HasSubstr("MISSING"));
}

TEST(CheckCli, NothingApplicableFails) {
  const auto o = run(kBin + " check " + kFix + "weak_cpu.json --reference " + kFix + "reference_h100.json");
  EXPECT_EQ(o.code, 1) << o.out;
  EXPECT_THAT(o.out, HasSubstr("nothing was checked")) << o.out;
}

// Names from a result file reach gnuplot quoted: a newline in one cannot start a command.
TEST(ReportCli, HostileNamesDoNotRunGnuplotCommands) {
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed";
  TempDir d;
  auto j = nlohmann::json::parse(testutil::slurp(kFix + "weak_cpu.json"));
  const auto marker = d.path / "pwned";
  for (auto& r : j["results"]) r["model"] = "resnet18\n!touch " + marker.string() + "\n#'";
  std::ofstream(d.path / "evil.json") << j.dump();
  const auto o = run(kBin + " report " + (d.path / "evil.json").string() + " --plots " + (d.path / "p").string());
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_FALSE(fs::exists(marker));
}

// Strings from a result file reach no reader as something to obey: report, diff and check print
// a model name holding an OSC title sequence, a CSI and a newline escaped on its own line (no
// forged line, no escape byte), report --format md has no raw HTML and no heading from it, and
// --format csv neutralises a cell a spreadsheet would evaluate. Each part fails with the
// printers' sanitisers taken out.
TEST(ReportCli, StringsFromAFileAreEscapedForEveryMedium) {
  TempDir d;
  auto j = nlohmann::json::parse(testutil::slurp(kFix + "weak_cpu.json"));
  for (auto& r : j["results"]) r["model"] = "=1+2\x1b]0;pwned\x07\x1b[2J\nPASS forged <script>x</script>";
  j["environment"]["hostname"] = "node\x1b]0;t\x07\n# heading";
  const auto evil = (d.path / "evil.json").string();
  std::ofstream(evil) << j.dump();
  const auto no_forgery = [](const std::string& what, const std::string& out) {
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << what << ":\n" << out;
    EXPECT_EQ(out.find('\x07'), std::string::npos) << what << ":\n" << out;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
      EXPECT_NE(line.rfind("PASS forged", 0), 0u) << what << ": a forged line\n" << out;
      EXPECT_NE(line.rfind("# heading", 0), 0u) << what << ": a forged line\n" << out;
    }
  };
  auto o = run(kBin + " report " + evil);
  ASSERT_EQ(o.code, 0) << o.err;
  no_forgery("report", o.out);
  EXPECT_THAT(o.out, HasSubstr("\\u001b]0;pwned\\u0007\\u001b[2J\\u000aPASS forged"));
  o = run(kBin + " report " + evil + " --format md");
  ASSERT_EQ(o.code, 0) << o.err;
  no_forgery("report --format md", o.out);
  EXPECT_EQ(o.out.find("<script>"), std::string::npos) << o.out;
  o = run(kBin + " report " + evil + " --format csv");
  ASSERT_EQ(o.code, 0) << o.err;
  no_forgery("report --format csv", o.out);
  EXPECT_EQ(o.out.find(",=1+2"), std::string::npos) << o.out;
  EXPECT_THAT(o.out, HasSubstr(",\"'=1+2"));
  o = run(kBin + " diff " + evil + " " + evil);
  no_forgery("diff", o.out + o.err);
  o = run(kBin + " check " + evil + " --reference " + kFix + "reference_h100.json");
  no_forgery("check", o.out + o.err);
}

// The repository's H100 results with --html and --plots: the report once stopped on a
// memory histogram of nothing but NaN and wrote nothing, then said "no memory measured" for
// rows whose tables print their peak. Now every plot is drawn (the memory plots from the peak
// the tables print), the count says so, and the page and the tables are written. (A plot
// that cannot be drawn still says why: tests/unit/test_plots_html.cpp.)
TEST(ReportCli, TheH100ResultsDrawEveryPlot) {
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed";
  TempDir d;
  std::string files;
  for (const auto& e : fs::directory_iterator(DDPBENCH_SOURCE_DIR "/docs/results"))
    if (e.path().extension() == ".json") files += " " + e.path().string();
  const auto html = (d.path / "r.html").string(), plots = (d.path / "p").string();
  const auto o = run(kBin + " report" + files + " --html " + html + " --plots " + plots);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.err, ::testing::Not(HasSubstr("not drawn")));
  EXPECT_THAT(o.err, ::testing::ContainsRegex("wrote [0-9]+ plots \\(PNG and SVG\\) to [^;]*\n"));
  EXPECT_TRUE(fs::exists(d.path / "p" / "memory-resnet50-nvidia-h100-80gb-hbm3-i224-b32-1r.svg"));
  EXPECT_THAT(testutil::slurp(html), ::testing::Not(HasSubstr("Not drawn: ")));
  EXPECT_THAT(o.out, HasSubstr("Weak scaling"));
}

// A run that stopped after 3 of its 4 rows (run --json keeps those in PATH.partial):
// report, diff and check each say so once per file on stderr, and still do their work.
TEST(AnalysisCli, IncompleteFilesAreWarnedAbout) {
  TempDir d;
  auto j = nlohmann::json::parse(testutil::slurp(kFix + "weak_cpu.json"));
  j["results"].erase(3);
  j["schema_version"] = "1.4.0";
  j["complete"] = false;
  j["rows_planned"] = 4;
  const std::string partial = (d.path / "r.json.partial").string();
  std::ofstream(partial) << j.dump();
  const std::string warning = "ddpbench: warning: " + partial +
                              " is incomplete (the run stopped after 3 of 4 rows); its numbers cover only those rows\n";

  auto o = run(kBin + " report " + partial);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.err, warning);
  EXPECT_THAT(o.out, HasSubstr("Weak scaling: resnet18"));
  o = run(kBin + " report " + kFix + "weak_cpu.json");  // a complete (pre-1.4) file: no warning
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.err, "");
  o = run(kBin + " report --format json " + partial + " " + kFix + "weak_cpu.json");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.err, warning);
  const auto files = nlohmann::json::parse(o.out).at("files");
  EXPECT_EQ(files[0].at("complete"), false);
  EXPECT_EQ(files[0].at("rows"), 3);
  EXPECT_EQ(files[0].at("rows_planned"), 4);
  EXPECT_EQ(files[1].at("complete"), true);
  EXPECT_EQ(files[1].at("warning"), "");
  // The HTML page says it under the file table (plots or not).
  o = run(kBin + " report " + partial + " --html " + (d.path / "r.html").string());
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.err, HasSubstr(warning));
  EXPECT_THAT(testutil::slurp(d.path / "r.html"),
              HasSubstr("<p class=\"note\"><strong>Warning:</strong> " + partial +
                        " is incomplete (the run stopped "
                        "after 3 of 4 rows); its numbers cover only those rows</p>"));

  o = run(kBin + " diff " + partial + " " + kFix + "weak_cpu.json");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.err, warning);
  o = run(kBin + " check " + partial + " --reference " + kFix + "reference_h100.json");
  EXPECT_EQ(o.code, 1) << o.err;  // nothing applies to a CPU result
  EXPECT_EQ(o.err, warning);
}

// report -o never writes through a symbolic link: refused before anything is written.
TEST(ReportCli, OutputOntoASymlinkIsRefused) {
  TempDir d;
  const auto real = d.path / "real.txt", link = d.path / "out.txt";
  std::ofstream(real) << "earlier\n";
  fs::create_symlink("real.txt", link);
  const auto o = run(kBin + " report " + kFix + "weak_cpu.json -o " + link.string());
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_EQ(o.err, "ddpbench: error: --output '" + link.string() +
                       "' is a symbolic link, not a regular file; pass the file's real path or a new name\n");
  EXPECT_EQ(o.out, "");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fs::read_symlink(link), fs::path("real.txt"));
  EXPECT_EQ(testutil::slurp(real), "earlier\n");
}

const std::string kResults = DDPBENCH_SOURCE_DIR "/docs/results/";

TEST(DiffCli, PrintsChangesAndVerdicts) {
  auto o = run(kBin + " diff --noise-floor 10 " + kFix + "diff_base.json " + kFix + "diff_test.json");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("environment.nccl: 2.18.1 -> 2.19.3"));
  EXPECT_THAT(o.out, HasSubstr("slower"));
  EXPECT_THAT(o.out, HasSubstr("within noise"));
  // Without a floor, one launch per side measures no launch-to-launch noise: +20% is slower,
  // unconfirmed, and the sentence says how to confirm it.
  o = run(kBin + " diff " + kFix + "diff_base.json " + kFix + "diff_test.json");
  ASSERT_EQ(o.code, 0) << o.err;
  std::string flat = o.out;  // sentences are wrapped at 100 columns, continuation lines indented
  for (size_t at; (at = flat.find("\n    ")) != std::string::npos;) flat.replace(at, 5, " ");
  EXPECT_THAT(flat, HasSubstr("1M/1G: slower, unconfirmed (-20.0% at p50"));
  EXPECT_THAT(flat, HasSubstr("3 launches a side would confirm it"));
}

// fp32-strict against tf32 on one H100 (docs/results): a precision A/B pairs without --match
// (diff.py's rows); under --match all the error names the short list that pairs the rows; the
// text fits 100 columns (--wide: one line per row, the verdict beside it); Markdown under either name.
TEST(DiffCli, APrecisionAbPairsAndTheOutputFitsOneHundredColumns) {
  const std::string files =
      kResults + "h100_resnet50_b32_fp32_strict.json " + kResults + "h100_resnet50_b32_tf32_all.json";
  auto o = run(kBin + " diff --match all " + files);
  EXPECT_EQ(o.code, 2) << o.out;
  EXPECT_THAT(o.err, HasSubstr("pass --match ddp (it pairs 2 row(s) of each side)"));
  EXPECT_EQ(count_lines(o.err), 1u) << o.err;
  o = run(kBin + " diff " + files);
  ASSERT_EQ(o.code, 0) << o.err;
  size_t longest = 0, start = 0;
  for (size_t nl; (nl = o.out.find('\n', start)) != std::string::npos; start = nl + 1)
    longest = std::max(longest, nl - start);
  EXPECT_LE(longest, 100u) << o.out;
  EXPECT_THAT(o.out, HasSubstr("Benchmark: resnet50 with batch size 32 (224 px, fp32-strict -> tf32"));
  EXPECT_THAT(o.out, HasSubstr("\n1 GPU no ddp       0.023    1371  +43.7%"));
  const auto wide = run(kBin + " diff --wide " + files);
  ASSERT_EQ(wide.code, 0) << wide.err;
  EXPECT_THAT(wide.out, HasSubstr("faster, unconfirmed  base: noisy (cv 8.6%); test: noisy (cv 13.8%)"));
  const auto md = run(kBin + " diff --format markdown " + files);
  ASSERT_EQ(md.code, 0) << md.err;
  EXPECT_THAT(md.out, HasSubstr("| 1 GPU 1M/1G | 0.029 |"));
  EXPECT_EQ(md.out, run(kBin + " diff --format md " + files).out);
}

// The same configuration twice on one H100: no measured setting differs, and nothing is
// "faster" or "slower" without a measured noise floor.
TEST(DiffCli, TheH100RepeatIsNotCalledFaster) {
  const auto o = run(kBin + " diff " + kResults + "h100_resnet50_b32_fp32_default.json " + kResults +
                     "h100_resnet50_b32_fp32_default_repeat.json");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("What changed: no measured setting differs between the files."));
  EXPECT_EQ(o.out.find(": faster ("), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find(": slower ("), std::string::npos) << o.out;
  EXPECT_THAT(o.out, HasSubstr("1M/1G: faster, unconfirmed"));
  EXPECT_THAT(o.out, HasSubstr("within noise"));
  EXPECT_THAT(o.out, HasSubstr("1x20"));
}

// diff.py's own use case, two real `run`s: bucket_cap_mb 25 against 1, one launch each. The
// rows pair by GPU count without --match, the header is the one setting that changed, the no-DDP
// row is the control (a bucket cap cannot move it), and each row's warnings are beside its verdict.
TEST(DiffCli, ABucketAbOfTwoRunsIsDiffPy) {
  TempDir d;
  for (const char* cap : {"25", "1"}) {
    const auto r = run("OMP_NUM_THREADS=1 " + kBin + " run --model squeezenet1_0 --batch-size 2 --image-size 32 "
                       "--iters 6 --warmup 1 --quiet --bucket-cap-mb " + std::string(cap) + " --json " +
                       (d.path / (std::string("b") + cap + ".json")).string());
    ASSERT_EQ(r.code, 0) << r.err;
  }
  const auto o = run(kBin + " diff --format json " + (d.path / "b25.json").string() + " " + (d.path / "b1.json").string());
  ASSERT_EQ(o.code, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  // From torch 2.0 an explicit bucket cap caps DDP's first bucket too (distributed.py), so its
  // first bucket's cap changes with it there: a second measured setting.
  const std::string torch =
      nlohmann::json::parse(testutil::slurp(d.path / "b1.json"))["environment"]["torch"].get<std::string>();
  const bool torch2 = std::stoi(torch.substr(0, torch.find('.'))) >= 2;
  ASSERT_EQ(j["changes"].size(), torch2 ? 2u : 1u) << j["changes"].dump();
  EXPECT_EQ(j["changes"][0]["key"], "config.bucket_cap_mb");
  if (torch2) EXPECT_EQ(j["changes"][1]["key"], "config.first_bucket_cap_mb");
  EXPECT_GT(j["hidden_changes"].get<int>(), 0);  // job ids, paths: not the header
  ASSERT_EQ(j["rows"].size(), 3u);
  EXPECT_TRUE(j["rows"][0]["ddp"].get<bool>());
  EXPECT_EQ(j["rows"][0]["world_size"], 1);
  EXPECT_EQ(j["rows"][1]["world_size"], 2);
  EXPECT_FALSE(j["rows"][2]["ddp"].get<bool>());
  EXPECT_EQ(j["rows"][2]["verdict"], "control");
  for (const auto& r : j["rows"]) {
    EXPECT_NE(std::find(r["base_warnings"].begin(), r["base_warnings"].end(), "few_samples"), r["base_warnings"].end());
    const std::string v = r["verdict"];
    if (v.rfind("faster", 0) == 0 || v.rfind("slower", 0) == 0) EXPECT_EQ(r["method"], "bootstrap + control") << v;
  }
  EXPECT_EQ(j["claims"].size(), 3u);
}

TEST(DiffCli, SeveralLaunchesPerSide) {
  const std::string a = kResults + "h100_resnet50_b32_fp32_default.json ",
                    b = kResults + "h100_resnet50_b32_fp32_default_repeat.json ";
  const auto o = run(kBin + " diff --format json " + a + b + "-- " + b + a);
  ASSERT_EQ(o.code, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["base_files"].size(), 2u);
  EXPECT_EQ(j["test_files"].size(), 2u);
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["method"], "Welch t");  // the DDP row first
  EXPECT_EQ(j["rows"][0]["base_launch_medians_s"].size(), 2u);
  EXPECT_NEAR(j["rows"][0]["change"].get<double>(), 0.0, 1e-12);  // the same two launches on both sides
  EXPECT_EQ(j["rows"][1]["verdict"], "within noise");
}

TEST(DiffCli, ExitCodes) {
  const std::string pair = kFix + "diff_base.json " + kFix + "diff_test.json";
  // The 1-GPU row: +20%, interval above 0 with a 10% floor.
  EXPECT_EQ(run(kBin + " diff --noise-floor 10 --fail-if-slower 10 " + pair).code, 1);
  EXPECT_EQ(run(kBin + " diff --noise-floor 10 --fail-if-slower 30 " + pair).code, 0);
  // fp32 against bf16: nothing pairs; the message names the --match that pairs them.
  const auto o = run(kBin + " diff " + kResults + "h100_resnet50_b32_fp32_tf32_off.json " + kResults +
                     "h100_vit_b_16_bf16_b256.json");
  EXPECT_EQ(o.code, 2) << o.out;
  EXPECT_THAT(o.err, HasSubstr("--match"));
  const auto m = run(kBin + " diff --match device,ddp,world_size " + kResults +
                     "h100_resnet50_b32_fp32_tf32_off.json " + kResults + "h100_resnet50_bf16_cl_b256.json");
  EXPECT_EQ(m.code, 0) << m.err;
  EXPECT_THAT(m.out, HasSubstr("precision: fp32 -> bf16"));
  EXPECT_THAT(m.out, HasSubstr("batch_per_rank: 32 -> 256"));
  const auto h = run(kBin + " diff --help");
  EXPECT_EQ(h.code, 0);
  EXPECT_THAT(h.out, HasSubstr("Exit codes: 0"));
  EXPECT_THAT(h.out, HasSubstr("--noise-floor"));
}

TEST(CheckCli, HelpListsExitCodes) {
  const auto h = run(kBin + " check --help");
  EXPECT_EQ(h.code, 0);
  EXPECT_THAT(h.out, HasSubstr("Exit codes: 0"));
}

struct BadFile {
  std::string cmd, content, expect;
};

class AnalysisBadInput : public ::testing::TestWithParam<BadFile> {};

// @FIX is the fixtures folder; @F a file holding `content` (a missing path when content is empty).
TEST_P(AnalysisBadInput, ExitTwoWithOneLine) {
  TempDir d;
  const auto f = d.path / "input.json";
  if (!GetParam().content.empty()) std::ofstream(f) << GetParam().content;
  std::string cmd = GetParam().cmd;
  for (size_t p; (p = cmd.find("@FIX")) != std::string::npos;) cmd.replace(p, 4, kFix);
  for (size_t p; (p = cmd.find("@F")) != std::string::npos;) cmd.replace(p, 2, f.string());
  const auto o = run(kBin + " " + cmd);
  EXPECT_EQ(bad_input_problem(o, GetParam().expect), "");
}

const std::string kNewer = R"({"schema_version": "2.0.0", "results": []})";

INSTANTIATE_TEST_SUITE_P(
    Files, AnalysisBadInput,
    ::testing::Values(
        BadFile{"report @F", "", "cannot read"}, BadFile{"report @F", "{\"schema", "not valid JSON"},
        BadFile{"report @F", kNewer, "schema version 2.0.0"},
        BadFile{"report @F", R"({"schema_version": "1.0.0", "results": [{"model": 1}]})", "malformed"},
        BadFile{"diff @F @FIXdiff_test.json", "", "cannot read"},
        BadFile{"diff @FIXdiff_base.json @F", kNewer, "schema version 2.0.0"},
        BadFile{"check @F --reference @FIXreference_h100.json", "[1,", "not valid JSON"},
        BadFile{"check @FIXgpu_h100.json --reference @F", "{\"ddpbench_reference\": \"2.0\", \"references\": [{}]}",
                "references[0]"},
        BadFile{"check @FIXgpu_h100.json --reference @F",
                "{\"ddpbench_reference\": \"2.0\", \"uppper\": 1, \"references\": []}", "'uppper'"},
        BadFile{"diff @FIXdiff_base.json @FIXdiff_test.json --match modle", "", "'modle'"},
        BadFile{"diff @FIXdiff_base.json", "", "diff got 1 file"},
        BadFile{"diff @FIXdiff_base.json -- @FIXdiff_test.json --format json", "", "options go before"},
        BadFile{"diff @FIXdiff_base.json @FIXdiff_test.json --noise-floor 100", "", "--noise-floor"},
        BadFile{"check @FIXgpu_h100.json --reference @F", "", "cannot read"},
        BadFile{"report @FIXweak_cpu.json --format xml", "", "--format"},
        BadFile{"report @FIXweak_cpu.json --gpu-hour-cost -2", "", "--gpu-hour-cost"},
        BadFile{"report @FIXweak_cpu.json -o ''", "", "--output needs a file path"},
        BadFile{"report @FIXweak_cpu.json --html /dev/full", "",
                "--html '/dev/full' exists and is not a regular file; pass a new file name"},
        BadFile{"report @FIXweak_cpu.json -o /proc/version", "",
                "--output '/proc/version' is read-only; make it writable or pass a new file name"},
        BadFile{"report", "", "files"},
        BadFile{"report @F", R"({"schema_version": "1.5.0", "kind": "comm", "results": [], "comm_results": []})",
                "no DDP measurement and no collective result"},
        // Bounded numbers, strict references, versions beyond int.
        BadFile{"report @FIXweak_cpu.json --gpu-hour-cost inf", "", "--gpu-hour-cost inf must be > 0 and <="},
        BadFile{"report @FIXweak_cpu.json --gpu-hour-cost nan", "", "--gpu-hour-cost nan must be > 0"},
        BadFile{"report @FIXweak_cpu.json --gpu-hour-cost 2e6", "",
                "--gpu-hour-cost 2000000 must be > 0 and <= 1000000"},
        BadFile{"report @FIXweak_cpu.json --epochs 2000000", "", "--epochs 2000000 must be 1..1000000"},
        BadFile{"report @FIXweak_cpu.json --dataset-size 99999999999999999999", "",
                "--dataset-size: 99999999999999999999 is out of range (beyond 64 bits)"},
        BadFile{"diff @FIXdiff_base.json @FIXdiff_test.json --fail-if-slower inf", "",
                "--fail-if-slower inf must be a percentage in [0, 10000]"},
        BadFile{"diff @FIXdiff_base.json @FIXdiff_test.json --noise-floor nan", "", "--noise-floor nan"},
        BadFile{"report @F", R"({"schema_version": "99999999999.0.0", "results": []})",
                "is not readable by this ddpbench"},
        BadFile{"check @FIXgpu_h100.json --reference @F",
                R"({"ddpbench_reference": "99999999999.0", "references": []})",
                "reference format '99999999999.0' is not readable"},
        BadFile{"check @FIXgpu_h100.json --reference @F",
                R"({"ddpbench_reference": "2.0", "references": [{"device": "*", "model": "resnet50",
                                  "batch_per_rank": 32, "image_size": 224, "world_size": 1,
                                  "setup": {"precision": "fp32"}, "metric": "p50_s", "value": 0.05, "upper": true}]})",
                "\"upper\" must be a number, not boolean"}));

}  // namespace
}  // namespace ddpbench
