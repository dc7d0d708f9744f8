// `ddpbench check`: reference tolerances, pinned configurations, voiding warnings, the text
// output, malformed references.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/analysis/check.hpp"
#include "core/analysis/diff.hpp"
#include "core/result/config_key.hpp"
#include "core/util/errors.hpp"
#include "unit/diff_check_test_util.hpp"

namespace ddpbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace diff_check_tests;

// ------------------------------------------------------------------ check

TEST(Check, PassFailMissingAndSkipped) {
  const auto refs = parse_reference(read_text_file(kFix + "reference_h100.json"), "ref");
  int skipped = -1;
  const auto rows = check_against(read_result_file(kFix + "gpu_h100.json"), refs, skipped);
  EXPECT_EQ(skipped, 1);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].status, "PASS");  // 640 ex/s >= 600 * 0.9
  EXPECT_NEAR(*rows[0].lo, 540, 1e-9);
  EXPECT_FALSE(rows[0].hi.has_value());
  ASSERT_TRUE(rows[0].row.has_value());
  EXPECT_EQ(rows[0].row->setup_label(), "fp32 (cuDNN TF32)");
  EXPECT_EQ(rows[1].status, "PASS");  // p50 0.05 within +-5%
  EXPECT_EQ(rows[2].status, "FAIL");  // efficiency 0.8 < 0.9 * 0.95
  EXPECT_NEAR(*rows[2].measured, 0.8, 1e-12);
  EXPECT_EQ(rows[3].status, "MISSING");  // nothing measured on 8 GPUs
  const auto text = render_check_text(rows, "NVIDIA H100 80GB HBM3", skipped);
  EXPECT_THAT(text, HasSubstr("fp32 (cuDNN TF32)"));  // names the configuration compared
  EXPECT_THAT(text, HasSubstr("2 passed, 1 failed, 0 warned, 1 missing"));
  // MISSING names the closest row measured and how it differs from what the entry asked for.
  EXPECT_EQ(rows[3].nearest.find("resnet50, fp32 (cuDNN TF32), batch 32/GPU"), 0u) << rows[3].nearest;
  EXPECT_THAT(rows[3].nearest, HasSubstr("world_size: 8 -> 1"));
  EXPECT_THAT(text, HasSubstr("MISSING resnet50 (8 ranks): nearest measured row: "));
}

// A value in range from a row whose warnings void it is WARN, never PASS: few_samples voids p95
// only; a timing warning (negative DDP overhead) voids every number from step times.
TEST(Check, AWarningThatVoidsTheNumberMakesItWarnNotPass) {
  ResultFile f = read_result_file(kFix + "gpu_h100.json");
  auto refs = parse_reference(R"({"ddpbench_reference": "2.0", "references": [
      {"device": "*", "model": "resnet50", "batch_per_rank": 32, "image_size": 224, "world_size": 1,
       "setup": {"precision": "fp32"}, "metric": "p95_s", "value": 0.06, "upper": 1.0},
      {"device": "*", "model": "resnet50", "batch_per_rank": 32, "image_size": 224, "world_size": 1,
       "setup": {"precision": "fp32"}, "metric": "p50_s", "value": 0.05, "lower": -0.1, "upper": 0.1},
      {"device": "*", "model": "resnet50", "batch_per_rank": 32, "image_size": 224, "world_size": 1,
       "setup": {"precision": "fp32"}, "metric": "peak_memory_bytes", "value": 3308238848, "upper": 0.1}]})",
                              "ref.json");
  int skipped = 0;
  for (auto& r : f.results)
    if (r.ddp && r.world_size == 1) r.warnings.push_back({"few_samples", "12 iterations"});
  auto rows = check_against(f, refs, skipped);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].status, "WARN (few_samples)");  // p95 from too few samples
  EXPECT_EQ(rows[1].status, "PASS");                // the median stands
  EXPECT_EQ(rows[2].status, "PASS");                // memory is not a timing
  EXPECT_THAT(render_check_text(rows, "NVIDIA H100 80GB HBM3", skipped), HasSubstr("2 passed, 0 failed, 1 warned"));
  for (auto& r : f.results)
    if (r.ddp && r.world_size == 1) r.warnings.push_back({"negative_ddp_overhead", "DDP below no-DDP"});
  rows = check_against(f, refs, skipped);
  EXPECT_EQ(rows[1].status, "WARN (negative_ddp_overhead)");
  EXPECT_EQ(rows[2].status, "PASS");
}

// ddp_overhead = (t_DDP - t_noDDP) / t_DDP at p50: weak_cpu.json's 4-rank row 0.25 s against its
// no-DDP row 0.20 s gives 0.05 / 0.25 = 0.2 by hand.
TEST(Check, DdpOverheadIsDdpsShareOfTheStepAgainstTheNoDdpRow) {
  const ResultFile f = read_result_file(kFix + "weak_cpu.json");
  const auto refs = parse_reference(R"({"ddpbench_reference": "2.0", "references": [
      {"device": "*", "model": "resnet18", "batch_per_rank": 16, "image_size": 64, "world_size": 4,
       "setup": {"precision": "fp32"}, "metric": "ddp_overhead", "value": 0.15, "upper": 0.0},
      {"device": "*", "model": "resnet18", "batch_per_rank": 16, "image_size": 64, "world_size": 4,
       "setup": {"precision": "fp32"}, "metric": "ddp_overhead", "value": 0.25, "upper": 0.0}]})",
                                    "ref.json");
  int skipped = 0;
  const auto rows = check_against(f, refs, skipped);
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_TRUE(rows[0].measured.has_value()) << rows[0].status;
  EXPECT_NEAR(*rows[0].measured, 0.2, 1e-12);
  EXPECT_EQ(rows[0].status, "FAIL");  // 20% > 15%
  EXPECT_EQ(rows[1].status, "PASS");  // 20% <= 25%
}

TEST(Check, EntriesMatchOnlyTheConfigurationTheyPin) {
  int skipped = 0;
  const auto f = read_result_file(kFix + "gpu_h100.json");
  EXPECT_EQ(check_against(f, one(R"("setup": {"precision": "fp32"}})"), skipped)[0].status, "PASS");
  // Another batch, image size, math, channels_last or backend: never measured, so MISSING.
  for (const auto& rest :
       {std::string(R"("setup": {"precision": "fp32-strict"}})"), std::string(R"("setup": {"precision": "tf32"}})"),
        std::string(R"("setup": {"precision": "bf16"}})"),
        std::string(R"("setup": {"precision": "fp32", "channels_last": true}})"),
        std::string(R"("setup": {"precision": "fp32", "backend": "gloo"}})"),
        std::string(R"("setup": {"precision": "fp32", "frozen_backbone": "mlp4096"}})")}) {
    const auto rows = check_against(f, one(rest), skipped);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].status, "MISSING") << rest;
  }
  auto b64 = R"({"ddpbench_reference": "2.0", "references": [)" + kEntry + R"("setup": {"precision": "fp32"}}]})";
  const std::string b32 = R"("batch_per_rank": 32)";
  b64.replace(b64.find(b32), b32.size(), R"("batch_per_rank": 64)");
  EXPECT_EQ(check_against(f, parse_reference(b64, "r.json"), skipped)[0].status, "MISSING");
}

// A reference pins the DDP knobs too (Python DDP's defaults when it names none): a row that
// ran with a comm hook or grad accumulation matches only an entry that says so.
TEST(Check, EntriesPinTheDdpKnobs) {
  int skipped = 0;
  auto f = read_result_file(kFix + "gpu_h100.json");
  EXPECT_EQ(check_against(f, one(R"("setup": {"precision": "fp32", "comm_hook": "fp16"}})"), skipped)[0].status,
            "MISSING");
  for (auto& r : f.results)
    if (r.ddp) {
      r.ddp_options.comm_hook = "fp16";
      r.ddp_options.static_graph = true;
    }
  EXPECT_EQ(check_against(f, one(R"("setup": {"precision": "fp32"}})"), skipped)[0].status, "MISSING");
  EXPECT_EQ(check_against(f, one(R"("setup": {"precision": "fp32", "comm_hook": "fp16"}})"), skipped)[0].status,
            "MISSING");  // static graph too
  EXPECT_EQ(
      check_against(f, one(R"("setup": {"precision": "fp32", "comm_hook": "fp16", "static_graph": true}})"), skipped)[0]
          .status,
      "PASS");
  for (auto& r : f.results) r.grad_accum = 2;
  EXPECT_EQ(
      check_against(f, one(R"("setup": {"precision": "fp32", "comm_hook": "fp16", "static_graph": true}})"), skipped)[0]
          .status,
      "MISSING");
  EXPECT_EQ(check_against(f,
                          one(R"("setup": {"precision": "fp32", "comm_hook": "fp16", "static_graph": true, )"
                              R"("grad_accum": 2}})"),
                          skipped)[0]
                .status,
            "PASS");
}

// The issue's case: an fp32-strict target must not pass a TF32 or channels_last run, and
// must apply to an old file whose "fp32" ran with TF32 off.
TEST(Check, Fp32StrictReferenceAgainstTf32ChannelsLastAndOldFp32) {
  const auto refs = parse_reference(read_text_file(DDPBENCH_SOURCE_DIR "/docs/reference/example.json"), "example");
  int skipped = 0;
  const auto statuses = [&](const ResultFile& f) {
    std::vector<std::string> s;
    for (const auto& r : check_against(f, refs, skipped)) s.push_back(r.status);
    return s;
  };
  const std::vector<std::string> missing = {"MISSING", "MISSING"};
  EXPECT_EQ(statuses(h100("h100_resnet50_b32_tf32.json")), missing);          // TF32 everywhere
  EXPECT_EQ(statuses(h100("h100_resnet50_b32_fp32_default.json")), missing);  // cuDNN TF32 (PyTorch's default)
  auto cl = h100("h100_resnet50_b32_fp32_tf32_off.json");
  cl.config["channels_last"] = true;
  EXPECT_EQ(statuses(cl), missing);
  auto old = h100("h100_resnet50_b32_fp32_default.json");  // schema 1.0, "fp32"
  old.environment["math"]["cudnn_allow_tf32"] = false;
  const auto rows = check_against(old, refs, skipped);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0].row.has_value());  // matched; its numbers (1059 ex/s) are another matter
  EXPECT_NEAR(*rows[0].measured, 1058.75, 0.01);
}

TEST(Check, UpperBoundFails) {
  int skipped = 0;
  auto refs = one(R"("setup": {"precision": "fp32"}})");
  refs[0].value = 0.04;  // allowed up to 0.044 s; measured 0.05
  const auto rows = check_against(read_result_file(kFix + "gpu_h100.json"), refs, skipped);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, "FAIL");
}

// A row the run declared invalid fails whatever its numbers: the same entry that passes
// on the real row fails on a copy whose self-check failed, or whose fp16 steps were skipped.
TEST(Check, RowsTheRunDeclaredInvalidFail) {
  int skipped = 0;
  const auto refs = one(R"("setup": {"precision": "fp32"}})");
  auto f = read_result_file(kFix + "gpu_h100.json");
  ASSERT_EQ(check_against(f, refs, skipped)[0].status, "PASS");
  for (auto& r : f.results) r.checks.grad_check_passed = false;
  auto rows = check_against(f, refs, skipped);
  EXPECT_EQ(rows[0].status, "FAIL (self-check failed)");
  EXPECT_THAT(render_check_text(rows, "x", skipped), HasSubstr("0 passed, 1 failed"));
  f = read_result_file(kFix + "gpu_h100.json");
  for (auto& r : f.results) r.checks.fp16_skipped_steps_in_measurement = 2;
  EXPECT_EQ(check_against(f, refs, skipped)[0].status, "FAIL (fp16 steps skipped among the timed ones)");
}

// check's text fits 100 columns: one table per configuration the entries pin, titled by it,
// the sentences under it wrapped; a table made wider by a long status prints in parts.
TEST(CheckText, OneTablePerConfigurationWithinOneHundredColumns) {
  const auto refs = parse_reference(read_text_file(kFix + "reference_h100.json"), "ref");
  int skipped = 0;
  auto f = read_result_file(kFix + "gpu_h100.json");
  const auto rows = check_against(f, refs, skipped);
  const auto text = render_check_text(rows, "NVIDIA H100 80GB HBM3", skipped);
  EXPECT_LE(longest_line(text), 100u) << text;
  EXPECT_EQ(text.rfind("Reference check on NVIDIA H100 80GB HBM3\n\n", 0), 0u) << text;
  EXPECT_THAT(text, HasSubstr("\nresnet50, fp32 (cuDNN TF32), batch 32/rank, 224 px, 1 rank\n"
                              "metric            measured  reference     allowed range  status\n"));
  EXPECT_THAT(text, HasSubstr("\nex_per_s_per_gpu     640.0      600.0     [540.0, +inf]    PASS\n"));
  EXPECT_THAT(text, HasSubstr("\nresnet50, fp32 (cuDNN TF32), batch 32/rank, 224 px, 16 ranks\n"));
  EXPECT_THAT(text, HasSubstr("\nweak_scaling_efficiency     80.0%      90.0%  [85.5%, +inf]    FAIL\n"));
  EXPECT_THAT(text, HasSubstr("\nresnet50, fp32 (cuDNN TF32), batch 32/rank, 224 px, 8 ranks\n"));
  EXPECT_EQ(lines_starting(text, "metric "), 3u);
  EXPECT_THAT(text, HasSubstr("\n2 passed, 1 failed, 0 warned, 1 missing; 1 reference entry for other devices "
                              "skipped\n"));
  EXPECT_THAT(text, HasSubstr("MISSING resnet50 (8 ranks): nearest measured row: resnet50, fp32 (cuDNN TF32),"));
  for (auto& r : f.results) r.checks.fp16_skipped_steps_in_measurement = 2;
  const auto invalid = check_against(f, refs, skipped);
  const auto failing = render_check_text(invalid, "NVIDIA H100 80GB HBM3", skipped);
  EXPECT_LE(longest_line(failing), 100u) << failing;
  EXPECT_THAT(failing, HasSubstr("FAIL (fp16 steps skipped among the timed ones)"));
}

TEST(Check, NothingApplicable) {
  int skipped = 0;
  const auto refs = parse_reference(read_text_file(kFix + "reference_h100.json"), "ref");
  EXPECT_TRUE(check_against(read_result_file(kFix + "weak_cpu.json"), refs, skipped).empty());  // `check` exits 1
  EXPECT_EQ(skipped, 5);
}

// The example the README points to stays true to the committed H100 measurement.
TEST(Check, ShippedExampleReferencePassesTheCommittedH100Result) {
  const std::string root = DDPBENCH_SOURCE_DIR;
  const auto refs = parse_reference(read_text_file(root + "/docs/reference/example.json"), "example.json");
  const auto result = read_result_file(root + "/docs/results/h100_resnet50_b32_fp32_tf32_off.json");
  int skipped = -1;
  const auto rows = check_against(result, refs, skipped);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(skipped, 0);
  for (const auto& r : rows) {
    EXPECT_EQ(r.status, "PASS") << r.ref.metric;
    EXPECT_EQ(r.row->setup_label(), "fp32-strict");
  }
  EXPECT_NEAR(*rows[0].measured, 724.05, 0.01);
}

std::string usage_error(const std::string& text) {
  try {
    parse_reference(text, "r.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Check, MalformedReferencesNameTheProblem) {
  EXPECT_THAT(usage_error("{"), HasSubstr("not valid JSON"));
  EXPECT_THAT(usage_error(R"({"ddpbench_reference": "2.0", "references": 3})"), HasSubstr("\"references\""));
  EXPECT_THAT(usage_error(R"({"references": []})"), HasSubstr("ddpbench_reference"));
  EXPECT_THAT(usage_error(R"({"ddpbench_reference": "1.0", "references": []})"),
              HasSubstr("batch_per_rank, image_size and setup"));
  EXPECT_THAT(usage_error(R"({"ddpbench_reference": "3.0", "references": []})"), HasSubstr("reads 2.x"));
  EXPECT_THAT(usage_error(R"({"ddpbench_reference": "2.0", "refs": []})"), HasSubstr("unknown key 'refs'"));
  const std::string head = R"({"ddpbench_reference": "2.0", "references": [)";
  const std::string setup = R"("setup": {"precision": "fp32"})";
  EXPECT_THAT(usage_error(head + kEntry + setup + R"(, "uppper": 0.2}]})"), HasSubstr("unknown key 'uppper'"));
  EXPECT_THAT(usage_error(head + kEntry + setup + R"(, "metric": "speed"}]})"), HasSubstr("unknown metric 'speed'"));
  EXPECT_THAT(usage_error(head + kEntry + R"("setup": {"precision": "fp32", "chanels_last": true}}]})"),
              HasSubstr("unknown key 'chanels_last'"));
  EXPECT_THAT(usage_error(head + kEntry + R"("setup": {"channels_last": true}}]})"), HasSubstr("\"precision\""));
  EXPECT_THAT(usage_error(head + kEntry + R"("setup": {"precision": "fp64"}}]})"), HasSubstr("fp64"));
  EXPECT_THAT(usage_error(head + R"({"device": "*", "model": "m", "world_size": 1, "metric": "p50_s", "value": 1,
                                     "upper": 0.1, )" +
                          setup + "}]}"),
              HasSubstr("missing \"batch_per_rank\""));
  std::string no_bounds = head + kEntry + setup + "}]}";
  const std::string bounds = R"("lower": -0.1, "upper": 0.1, )";
  no_bounds.erase(no_bounds.find(bounds), bounds.size());
  EXPECT_THAT(usage_error(no_bounds), HasSubstr("never fail"));
  EXPECT_THAT(usage_error(head + kEntry + setup + R"(, "value": -1}]})"), HasSubstr("positive"));
  EXPECT_THAT(usage_error(head + kEntry + setup + R"(, "lower": 0.1}]})"), HasSubstr("[-1, 0]"));
  EXPECT_THAT(usage_error(head + kEntry + setup + R"(, "world_size": 0}]})"), HasSubstr("references[0]"));
  EXPECT_THAT(usage_error(head + R"({"device": "*"}]})"), HasSubstr("references[0]"));
}

// Reference files are read strictly: an unknown key at any level, a missing or
// foreign format version, and a value of the wrong type or outside what `run` accepts are
// each an error naming the key, never a silently open bound.
TEST(Check, ReferencesAreValidatedStrictly) {
  const std::string entry =
      R"({"device": "*", "model": "resnet50", "batch_per_rank": 32, "image_size": 224, "world_size": 1,
          "setup": {"precision": "fp32"}, "metric": "p50_s", "value": 0.05, "lower": -0.1, "upper": 0.1)";
  const auto file = [&](const std::string& extra_entry, const std::string& top = "") {
    return R"({"ddpbench_reference": "2.0", )" + top + R"("references": [)" + entry + extra_entry + "}]}";
  };
  const auto setup = [&](const std::string& fields) {
    std::string e = file("");
    const std::string s = R"("setup": {"precision": "fp32"})";
    e.replace(e.find(s), s.size(), R"("setup": {"precision": "fp32", )" + fields + "}");
    return e;
  };
  ASSERT_EQ(parse_reference(file(""), "r.json").size(), 1u);
  struct Case {
    std::string text, expect;
  };
  const std::vector<Case> cases = {
      // Unknown keys, at every level.
      {file("", R"("descripton": "x", )"), "r.json: unknown key 'descripton'"},
      {file(R"(, "uppper": 0.1)"), "r.json: references[0]: unknown key 'uppper'"},
      {setup(R"("bucket_cap": 25)"), "references[0].setup: unknown key 'bucket_cap'"},
      // The format version: missing, of the wrong type, malformed, or another major.
      {R"({"references": []})", "no \"ddpbench_reference\""},
      {R"({"ddpbench_reference": 2.0, "references": []})", "no \"ddpbench_reference\""},
      {R"({"ddpbench_reference": "", "references": []})", "reference format '' is not a version"},
      {R"({"ddpbench_reference": "2.x", "references": []})", "reference format '2.x' is not a version"},
      {R"({"ddpbench_reference": "v2.0", "references": []})", "reference format 'v2.0' is not a version"},
      {R"({"ddpbench_reference": "2.0.", "references": []})", "is not a version"},
      {R"({"ddpbench_reference": "99999999999.0", "references": []})", "not readable by this ddpbench"},
      {R"({"ddpbench_reference": "1.0", "references": []})", "set \"ddpbench_reference\": \"2.0\""},
      {R"({"ddpbench_reference": "3.0", "references": []})", "reads 2.x"},
      {R"({"ddpbench_reference": "2.0", "references": {}})", "no \"references\" list"},
      {R"([])", "not a reference file"},
      // Wrong types, each named.
      {file("", R"("description": 5, )"), "\"description\" must be a string, not number"},
      {file(R"(, "value": true)"), "\"value\" must be a number, not boolean"},
      {file(R"(, "value": "0.05")"), "\"value\" must be a number, not string"},
      {file(R"(, "upper": false)"), "\"upper\" must be a number, not boolean"},
      {file(R"(, "lower": "-0.1")"), "\"lower\" must be a number, not string"},
      {file(R"(, "device": 1)"), "\"device\" must be a string, not number"},
      {file(R"(, "model": ["resnet50"])"), "\"model\" must be a string, not array"},
      {file(R"(, "metric": null)"), "missing \"metric\""},
      {file(R"(, "unit": 1)"), "\"unit\" must be a string, not number"},
      {file(R"(, "note": {})"), "\"note\" must be a string, not object"},
      {file(R"(, "world_size": "1")"), "\"world_size\" must be a whole number in 1..1048576"},
      {file(R"(, "world_size": 1.5)"), "\"world_size\" must be a whole number"},
      {file(R"(, "world_size": 4294967297)"), "\"world_size\" must be a whole number in 1..1048576"},
      {file(R"(, "batch_per_rank": 99999999999)"), "\"batch_per_rank\" must be a whole number in 1..16777216"},
      {file(R"(, "image_size": 16)"), "\"image_size\" must be a whole number in 32..16384"},
      {file(R"(, "setup": [])"), "\"setup\" must be an object"},
      {setup(R"("channels_last": 1)"), "\"channels_last\" must be true or false, not number"},
      {setup(R"("broadcast_buffers": "yes")"), "\"broadcast_buffers\" must be true or false, not string"},
      {setup(R"("math": 3)"), "\"math\" must be a string, not number"},
      {setup(R"("backend": "mpi")"), "backend 'mpi' is not one of auto, nccl, gloo"},
      {setup(R"("backend": true)"), "\"backend\" must be a string, not boolean"},
      {setup(R"("bucket_cap_mb": true)"), "\"bucket_cap_mb\" must be a number, not boolean"},
      {setup(R"("bucket_cap_mb": 0)"), "bucket_cap_mb 0 must be a size in (0, 65536] MiB"},
      {setup(R"("first_bucket_cap_mb": 1e300)"), "first_bucket_cap_mb 1e+300 must be a size in (0, 65536] MiB"},
      {setup(R"("frozen_backbone": true)"), "frozen_backbone must be false or the head's name"},
      {setup(R"("static_graph": 1)"), "\"static_graph\" must be true or false, not number"},
      {setup(R"("comm_hook": "")"), "comm_hook must name a hook"},
      {setup(R"("comm_hook": false)"), "\"comm_hook\" must be a string, not boolean"},
      {setup(R"("grad_accum": 0)"), "\"grad_accum\" must be a whole number in 1..1000000"},
      // Values outside their ranges.
      {file(R"(, "upper": 1e300, "value": 1e300)"), "(no error)"},  // finite: allowed
      {file(R"(, "value": 0)"), "value 0 must be a positive number"},
      {file(R"(, "lower": -2)"), "lower -2 must be a fraction in [-1, 0]"},
      {file(R"(, "upper": -0.1)"), "upper -0.1 must be a fraction >= 0"},
      {file(R"(, "device": "")"), "\"device\" and \"model\" must not be empty"},
      {file(R"(, "upper": 1e400)"), "not valid JSON"},  // beyond a double
  };
  for (const auto& c : cases) EXPECT_THAT(usage_error(c.text), HasSubstr(c.expect)) << c.text;
  // What stays accepted: a version with a minor or patch, a bare major, null bounds and a
  // string description.
  for (const std::string v : {"2.0", "2.1", "2.0.3", "2"})
    EXPECT_EQ(usage_error(R"({"ddpbench_reference": ")" + v + R"(", "references": []})"), "(no error)") << v;
}
}  // namespace
}  // namespace ddpbench
