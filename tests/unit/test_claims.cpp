// Claims (core/analysis/claim.hpp): every kind's sentence on the repository's own files, pinned
// in tests/golden/claims.txt (regenerate with DDPBENCH_UPDATE_GOLDEN=1 after a deliberate change:
// the test then writes the file and fails, so review its diff and run it again without it); the
// catalogue renders every kind and refuses an unknown one; the JSON carries the evidence. Whether
// each claim is supported by its files is the independent checker's job
// (tests/tools/check_claims.py, in ctest).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>

#include "common/testutil.hpp"
#include "core/analysis/claim.hpp"
#include "core/analysis/diff.hpp"
#include "core/analysis/report_analysis.hpp"
#include "core/analysis/summary.hpp"
#include "core/result/row_validation.hpp"

namespace ddpbench {
namespace {

namespace fs = std::filesystem;
const std::string kSrc = DDPBENCH_SOURCE_DIR "/";

// The result files under `dir` (relative to the source tree) whose name passes `keep`, in name
// order, named by their path relative to the source tree, read as the commands read them.
std::vector<NamedResult> files_under(const std::string& dir, bool recursive,
                                     const std::function<bool(const fs::path&)>& keep) {
  std::vector<std::string> paths;
  const auto add = [&](const fs::path& p) {
    if (p.extension() == ".json" && keep(p)) paths.push_back(fs::relative(p, kSrc).string());
  };
  if (recursive)
    for (const auto& e : fs::recursive_directory_iterator(kSrc + dir)) add(e.path());
  else
    for (const auto& e : fs::directory_iterator(kSrc + dir)) add(e.path());
  std::sort(paths.begin(), paths.end());
  std::vector<NamedResult> out;
  for (const auto& p : paths) {
    ResultFile f = read_result_file(kSrc + p);
    drop_invalid_rows(f, p);
    out.push_back({p, std::move(f)});
  }
  return out;
}

std::string lines_of(const std::string& title, const std::vector<Claim>& cs, std::set<std::string>& kinds) {
  std::string out = "== " + title + "\n";
  for (const auto& c : cs) {
    out += c.kind + " | " + c.verdict + " | " + c.text + "\n";
    kinds.insert(c.kind);
  }
  return out + "\n";
}

TEST(ClaimGolden, EveryKindOnTheRepositorysFiles) {
  std::set<std::string> kinds;
  std::string out;
  ReportOptions h100;
  h100.gpu_hour_usd = 2.50;
  const auto results = files_under("docs/results", false, [](const fs::path& p) {
    return p.filename().string().rfind("h100_", 0) == 0;
  });
  out += lines_of("report docs/results/h100_*.json --gpu-hour-cost 2.50", build_report(results, h100).summary.claims(),
                  kinds);
  ReportOptions cpu;
  cpu.gpu_hour_usd = 0.10;
  const auto examples = files_under("docs/examples", true, [](const fs::path& p) {
    return p.string().find("/report/") == std::string::npos;
  });
  out += lines_of("report docs/examples (every result file) --gpu-hour-cost 0.10",
                  build_report(examples, cpu).summary.claims(), kinds);
  const std::vector<NamedResult> b25 = {
      {"tests/fixtures/diff_bucket25.json", read_result_file(kSrc + "tests/fixtures/diff_bucket25.json")}};
  const std::vector<NamedResult> b1 = {
      {"tests/fixtures/diff_bucket1.json", read_result_file(kSrc + "tests/fixtures/diff_bucket1.json")}};
  out += lines_of("diff tests/fixtures/diff_bucket25.json tests/fixtures/diff_bucket1.json",
                  diff_results(b25, b1).claims(), kinds);
  // validate's verdict: its own checks beside a target of the report.
  Claim env;
  env.kind = "validate_check";
  env.subject = "01-env";
  env.verdict = "not evaluated";
  env.word("what", "nodes agree").word("detail", "one node: nothing to compare it with");
  SummaryCheck e;
  e.what = "01-env nodes agree";
  e.metric = "nodes agree";
  e.measured = "one node: nothing to compare it with";
  e.status = "not evaluated";
  e.from = "01-env";
  e.claim = finish_claim(env);
  std::vector<SummaryCheck> checks = build_report(results, h100).summary.checks;
  checks.push_back(e);
  out += lines_of("validate: the H100 report's targets and an env step", {e.claim, tally_claim(checks, "validate", "GPU")},
                  kinds);
  const std::string path = kSrc + "tests/golden/claims.txt";
  if (std::getenv("DDPBENCH_UPDATE_GOLDEN")) {
    std::ofstream(path) << out;
    FAIL() << "wrote " << path << " (DDPBENCH_UPDATE_GOLDEN is set): review its diff, then run without it";
  }
  EXPECT_EQ(out, testutil::slurp(path)) << "golden file " << path << " differs";
  // Every kind of the catalogue has a sentence here.
  for (const auto& k : claim_kinds()) EXPECT_TRUE(kinds.count(k.kind)) << k.kind << " has no claim in the golden";
}

TEST(Claims, TheCatalogueRendersEveryKindAndRefusesAnUnknownOne) {
  Claim c;
  c.kind = "no such kind";
  EXPECT_THROW(finish_claim(c), std::logic_error);
  Claim t;
  t.kind = "target";
  t.subject = "resnet50, bf16, batch 64 per GPU";
  t.verdict = "FAIL";
  t.num("measured", 0.80, "fraction").num("threshold", 0.85, "fraction");
  t.word("metric", "weak-scaling efficiency").word("required", ">= 85.0%").word("measured", "80.0%");
  t.word("size", "8 GPUs").word("from", "weak scaling, F2");
  t.rows.push_back({"a.json", "F2", 3, "measured"});
  t.warnings = {"noisy"};
  const Claim done = finish_claim(t);
  EXPECT_EQ(done.text,
            "FAIL   weak-scaling efficiency 80.0% (required >= 85.0%) on 8 GPUs: resnet50, bf16, batch 64 per GPU "
            "[weak scaling, F2] (row warnings: noisy)");
  EXPECT_EQ(done.rule, "docs/METHODOLOGY.md Executive summary and recommendations: Targets");
  const auto j = claim_json(done);
  EXPECT_EQ(j["numbers"]["measured"]["value"], 0.80);
  EXPECT_EQ(j["numbers"]["threshold"]["unit"], "fraction");
  EXPECT_EQ(j["rows"][0]["row"], 3);
  EXPECT_EQ(j["rows"][0]["file"], "a.json");
  EXPECT_EQ(j["warnings"][0], "noisy");
  EXPECT_THROW(done.number("absent"), std::logic_error);
}

}  // namespace
}  // namespace ddpbench
