// The analysis subcommands through the binary: exit codes, one-line errors, files written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/testutil.hpp"

namespace fs = std::filesystem;

namespace ddpbench {
namespace {

using ::testing::HasSubstr;

using testutil::count_lines;
using testutil::run;
using testutil::have;
using testutil::TempDir;

const std::string kBin = DDPBENCH_BINARY;
const std::string kFix = DDPBENCH_SOURCE_DIR "/tests/fixtures/";

TEST(ReportCli, TablesToStdout) {
  const auto o = run(kBin + " report " + kFix + "weak_cpu.json " + kFix + "strong_cpu.json --gpu-hour-cost 1.5");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("Weak scaling: resnet18"));
  EXPECT_THAT(o.out, HasSubstr("Strong scaling: resnet18"));
  EXPECT_THAT(o.out, HasSubstr("Most cost-efficient: 1 GPU(s)"));
}

TEST(ReportCli, JsonCsvAndFilesOnDisk) {
  TempDir d;
  auto o = run(kBin + " report " + kFix + "gpu_a100.json " + kFix + "gpu_h100.json --format json");
  ASSERT_EQ(o.code, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["comparison"]["groups"].size(), 2u);
  o = run(kBin + " report " + kFix + "weak_cpu.json --format csv -o " + (d.path / "r.csv").string());
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(testutil::slurp(d.path / "r.csv").rfind("table,device,model", 0), 0u);
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot not installed";
  o = run(kBin + " report " + kFix + "weak_cpu.json --plots " + (d.path / "plots").string() + " --html " +
          (d.path / "r.html").string());
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(fs::exists(d.path / "plots" / "weak-resnet18-fp32-cpu-fixture-cpu-i64-b16-throughput.png"));
  EXPECT_TRUE(fs::exists(d.path / "plots" / "weak-resnet18-fp32-cpu-fixture-cpu-i64-b16-latency.svg"));
  EXPECT_THAT(testutil::slurp(d.path / "r.html"), HasSubstr("<svg"));
}

TEST(CheckCli, ExitCodes) {
  auto o = run(kBin + " check " + kFix + "gpu_h100.json --reference " + kFix + "reference_h100_pass.json");
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_THAT(o.out, HasSubstr("2 passed, 0 failed, 0 missing"));
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

TEST(DiffCli, PrintsChangesAndVerdicts) {
  const auto o = run(kBin + " diff " + kFix + "diff_base.json " + kFix + "diff_test.json");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("environment.nccl: 2.18.1 -> 2.19.3"));
  EXPECT_THAT(o.out, HasSubstr("slower"));
  EXPECT_THAT(o.out, HasSubstr("within noise"));
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
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_EQ(count_lines(o.err), 1u) << o.err;
  EXPECT_EQ(o.err.rfind("ddpbench: error: ", 0), 0u) << o.err;
  EXPECT_THAT(o.err, HasSubstr(GetParam().expect)) << o.err;
}

const std::string kNewer = R"({"schema_version": "2.0.0", "results": []})";

INSTANTIATE_TEST_SUITE_P(
    Files, AnalysisBadInput,
    ::testing::Values(BadFile{"report @F", "", "cannot read"}, BadFile{"report @F", "{\"schema", "not valid JSON"},
                      BadFile{"report @F", kNewer, "schema version 2.0.0"},
                      BadFile{"report @F", R"({"schema_version": "1.0.0", "results": [{"model": 1}]})", "malformed"},
                      BadFile{"diff @F @FIXdiff_test.json", "", "cannot read"},
                      BadFile{"diff @FIXdiff_base.json @F", kNewer, "schema version 2.0.0"},
                      BadFile{"check @F --reference @FIXreference_h100.json", "[1,", "not valid JSON"},
                      BadFile{"check @FIXgpu_h100.json --reference @F", "{\"references\": [{}]}", "references[0]"},
                      BadFile{"check @FIXgpu_h100.json --reference @F", "", "cannot read"},
                      BadFile{"report @FIXweak_cpu.json --format xml", "", "--format"},
                      BadFile{"report @FIXweak_cpu.json --gpu-hour-cost -2", "", "--gpu-hour-cost"},
                      BadFile{"report", "", "files"}));

}  // namespace
}  // namespace ddpbench
