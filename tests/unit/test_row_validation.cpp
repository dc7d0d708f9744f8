// The bounded JSON reader (depth, DOM size, errors naming the file and the field) and the one
// rule of which result rows the analysis commands use (core/result/row_validation).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "common/testutil.hpp"
#include "core/analysis/report_analysis.hpp"
#include "core/result/result.hpp"
#include "core/result/row_validation.hpp"
#include "core/result/row_warnings.hpp"
#include "core/stats/stats.hpp"
#include "core/util/errors.hpp"
#include "core/util/json_reader.hpp"
#include "core/util/table.hpp"

namespace ddpbench {
namespace {

using ::testing::HasSubstr;
using testutil::usage_error;

const std::string kFixtures = std::string(DDPBENCH_SOURCE_DIR) + "/tests/fixtures/";

std::string nested(int depth) { return std::string(static_cast<size_t>(depth), '[') + std::string(depth, ']'); }

// --- the reader

TEST(JsonReader, CountsDepthValuesAndDomBytes) {
  const JsonShape s = json_shape(R"({"a": [1, 2, {"b": "a string longer than fifteen"}], "c": null})", "x", "fix");
  EXPECT_EQ(s.max_depth, 3);
  EXPECT_EQ(s.values, 7);  // the object, a, 1, 2, {b}, the string, c
  // 16 (top) + 64 (its map) + a: 96 + 32 + 1, 2: 2 x 32 + {b}: 32 + 64 + string: 96 + 48 + 48 (heap)
  // + c: 96
  EXPECT_EQ(s.dom_bytes, 16 + 64 + 96 + 32 + 64 + 32 + 64 + 96 + 48 + 48 + 96);
}

TEST(JsonReader, DepthAtTheLimitIsReadAndOneMoreIsRefusedNamingFileDepthAndLimit) {
  EXPECT_EQ(parse_json_bounded(nested(kMaxJsonDepth), "f.json", "fix").size(), 1u);
  const std::string e = usage_error([&] { parse_json_bounded(nested(kMaxJsonDepth + 1), "f.json", "fix it"); });
  EXPECT_EQ(e, "f.json: nested 513 deep, more than the 512 levels a ddpbench input may have; fix it");
}

// 100,000 deep inside config crashed every command (a recursive copy of the section).
TEST(JsonReader, AResultNested100000DeepInsideConfigIsBadInput) {
  std::string text = testutil::slurp(kFixtures + "weak_cpu.json");
  const auto at = text.find("\"config\": {");
  ASSERT_NE(at, std::string::npos);
  text.insert(at + 11, "\"deep\": " + nested(100000) + ", ");  // the file, config, then 100,000 arrays
  const std::string e = usage_error([&] { parse_result(text, "deep.json"); });
  EXPECT_THAT(e, HasSubstr("deep.json: nested 100002 deep, more than the 512 levels"));
}

TEST(JsonReader, ADomBeyondTheBoundIsRefusedBeforeItIsBuilt) {
  std::string text = "[";
  for (int i = 0; i < 1000; ++i) text += "{},";
  text += "{}]";
  // 1001 objects of 32 + 64 bytes, the array's 16 + 32.
  EXPECT_EQ(json_shape(text, "x", "fix").dom_bytes, 1001 * 96 + 48);
  EXPECT_NO_THROW(parse_json_bounded(text, "x", "fix", kMaxJsonDepth, 1001 * 96 + 48));
  // The pass stops at the value that crosses the bound: the array and 1000 objects.
  const std::string e = usage_error([&] { parse_json_bounded(text, "big.json", "fix", kMaxJsonDepth, 96 * 1000); });
  EXPECT_EQ(e,
            "big.json: its first 1001 JSON values would already take more than the 96000 bytes of memory one "
            "input may take; fix");
  const JsonShape cut = json_shape(text, "x", "fix", 96 * 1000);
  EXPECT_TRUE(cut.stopped);
  EXPECT_EQ(cut.values, 1001);
  EXPECT_FALSE(json_shape(text, "x", "fix").stopped);
}

TEST(JsonReader, InvalidJsonNamesTheByteAndTheFix) {
  EXPECT_EQ(usage_error([] { parse_json_bounded("{\"a\": 1,", "f.json", "fix it"); }),
            "f.json: not valid JSON (byte 9); fix it");  // nlohmann counts the end as byte 9
  EXPECT_THAT(usage_error([] { parse_json_bounded("[1e999]", "f.json", "fix it"); }),
              HasSubstr("f.json: not valid JSON ("));
  EXPECT_EQ(usage_error([] { parse_json_bounded("{} x", "f.json", "fix"); }), "f.json: not valid JSON (byte 4); fix");
}

// A field of the wrong type: one line naming the file and the field, not nlohmann's words alone.
TEST(JsonReader, AFieldOfTheWrongTypeNamesFileAndField) {
  nlohmann::json j = nlohmann::json::parse(testutil::slurp(kFixtures + "weak_cpu.json"));
  j["results"][2]["summary"]["p50_s"] = "fast";
  EXPECT_EQ(usage_error([&] { parse_result(j.dump(), "r.json"); }),
            "r.json: malformed result file (results[2].summary.p50_s is a string, not a number); pass a file written "
            "by ddpbench run --json");
  j = nlohmann::json::parse(testutil::slurp(kFixtures + "weak_cpu.json"));
  j["environment"]["world_size"] = "two";
  EXPECT_THAT(usage_error([&] { parse_result(j.dump(), "r.json"); }),
              HasSubstr("r.json: malformed result file (environment.world_size is not a number)"));
  j["environment"]["world_size"] = 1e30;  // printed as -2147483648 ranks before
  EXPECT_THAT(usage_error([&] { parse_result(j.dump(), "r.json"); }),
              HasSubstr("(environment.world_size is not an integer in range)"));
  j = nlohmann::json::parse(testutil::slurp(kFixtures + "weak_cpu.json"));
  j["environment"]["rendezvous"] = "job";
  EXPECT_THAT(usage_error([&] { parse_result(j.dump(), "r.json"); }),
              HasSubstr("(environment.rendezvous is a string, not an object)"));
  j = nlohmann::json::parse(testutil::slurp(kFixtures + "weak_cpu.json"));
  j["results"][0]["ranks"][1] = nlohmann::json{{"rank", 1}, {"host", 7}, {"samples_s", {0.1}}};
  EXPECT_THAT(usage_error([&] { parse_result(j.dump(), "r.json"); }),
              HasSubstr("(results[0].ranks[1].host is a number, not a string)"));
}

// --- the row rule

BenchResult valid_row() {
  BenchResult r;
  r.model = "resnet18";
  r.label = "1M/2C";
  r.batch_per_rank = 16;
  r.world_size = 2;
  r.nodes = 1;
  r.ranks.resize(2);
  r.summary = summarize({{0.2, 0.2, 0.2}, {0.2, 0.2, 0.2}}, 16, 2);
  return r;
}

TEST(RowRule, AMeasuredRowPasses) {
  EXPECT_EQ(row_problem(valid_row()), "");
  BenchResult acc = valid_row();
  acc.grad_accum = 4;
  acc.summary = summarize({{0.2, 0.2}, {0.2, 0.2}}, 16 * 4, 2);  // as the engine: K x batch per step
  EXPECT_EQ(row_problem(acc), "");
}

TEST(RowRule, EachBadFieldIsNamed) {
  const auto with = [](auto&& edit) {
    BenchResult r = valid_row();
    edit(r);
    return row_problem(r);
  };
  EXPECT_EQ(with([](BenchResult& r) { r.summary.p50_s = 0; }),
            "summary.p50_s is 0 s, not a step time in 1e-09..1e+06 s");
  EXPECT_EQ(with([](BenchResult& r) { r.summary.p50_s = -0.2; }),
            "summary.p50_s is -0.2 s, not a step time in 1e-09..1e+06 s");
  EXPECT_EQ(with([](BenchResult& r) { r.summary.p50_s = 1e308; }),
            "summary.p50_s is 1e+308 s, not a step time in 1e-09..1e+06 s");
  EXPECT_THAT(with([](BenchResult& r) { r.summary.p50_s = 4e-320; }), HasSubstr("not a step time"));  // denormal
  EXPECT_THAT(with([](BenchResult& r) { r.summary.p50_s = std::nan(""); }), HasSubstr("summary.p50_s is nan s"));
  EXPECT_EQ(with([](BenchResult& r) { r.world_size = 0; }), "world_size is 0, not a rank count in 1..10000000");
  EXPECT_EQ(with([](BenchResult& r) { r.world_size = 10'000'001; }),
            "world_size is 10000001, not a rank count in 1..10000000");
  EXPECT_EQ(with([](BenchResult& r) { r.nodes = 3; }), "nodes is 3, not in 1..world_size (2)");
  EXPECT_EQ(with([](BenchResult& r) { r.batch_per_rank = 0; }), "batch_per_rank is 0, not in 1..1000000000");
  EXPECT_EQ(with([](BenchResult& r) { r.grad_accum = 0; }), "grad_accum is 0, not 1 or more");
  EXPECT_EQ(with([](BenchResult& r) { r.summary.mean_s = -1; }),
            "summary.mean_s is -1 s, not a step time in 0..1e+06 s");
  EXPECT_EQ(with([](BenchResult& r) { r.summary.ex_per_s_per_gpu = 1e9; }),
            "summary.ex_per_s_per_gpu is 1e+09, but batch_per_rank x grad_accum / p50_s is 80 (edited or corrupted)");
  EXPECT_EQ(with([](BenchResult& r) { r.summary.ex_per_s_total = 80; }),
            "summary.ex_per_s_total is 80, but world_size x ex_per_s_per_gpu is 160 (edited or corrupted)");
  // Within rounding (1%): kept.
  EXPECT_EQ(with([](BenchResult& r) { r.summary.ex_per_s_per_gpu = 80.7; }), "");
}

// Numbers that cannot be, by hand: percentiles out of order, negative times, a mean outside
// min..max, a breakdown with a negative part or parts that do not sum to the step.
TEST(RowRule, ImpossibleNumbersAreNamed) {
  const auto with = [](auto&& edit) {
    BenchResult r = valid_row();
    // Pooled 0.1 0.2 0.2 0.2 0.2 0.3: numpy linear p90 = 0.2 + 0.5 x 0.1 = 0.25, p95 0.275.
    r.summary = summarize({{0.1, 0.2, 0.3}, {0.2, 0.2, 0.2}}, 16, 2);
    edit(r);
    return row_problem(r);
  };
  EXPECT_EQ(with([](BenchResult&) {}), "");
  // As a file was seen: p95 0.0019 s below its p50 0.0193 s.
  EXPECT_EQ(with([](BenchResult& r) { r.summary.p95_s = 0.0019; }),
            "summary.p95_s is 0.0019 s, below p90_s 0.25 s: percentiles out of order (edited or corrupted)");
  EXPECT_EQ(with([](BenchResult& r) { r.summary.min_s = -0.5; }),
            "summary.min_s is -0.5 s, not a time (negative or not a number)");
  EXPECT_EQ(with([](BenchResult& r) { r.summary.max_s = 0.15; }),
            "summary.max_s is 0.15 s, below p95_s 0.275 s: percentiles out of order (edited or corrupted)");
  EXPECT_EQ(with([](BenchResult& r) { r.summary.mean_s = 0.5; }),
            "summary.mean_s is 0.5 s, outside min_s..max_s (0.1..0.3 s) (edited or corrupted)");
  EXPECT_EQ(with([](BenchResult& r) { r.summary.p5_s = 0; }), "");  // absent before schema 1.10
  const auto breakdown = [&](double forward, double exposed) {
    return with([&](BenchResult& r) {
      PhaseSeconds p;
      p[Phase::forward] = forward;
      p[Phase::backward_compute] = 0.08;
      p[Phase::exposed_comm] = exposed;
      p[Phase::optimizer] = 0.02;
      p[Phase::other] = 0.01;
      p[Phase::step] = 0.2;
      r.breakdown.mean_over_ranks = p;
    });
  };
  EXPECT_EQ(breakdown(0.06, 0.03), "");  // 0.06 + 0.08 + 0.03 + 0.02 + 0.01 = 0.2
  EXPECT_EQ(breakdown(-1.0, 1.09),
            "breakdown.mean_over_ranks.forward_s is -1 s, a negative time (edited or corrupted)");
  EXPECT_EQ(breakdown(0.06, 0.5),
            "breakdown parts sum to 0.67 s, not the step's 0.2 s (forward + backward compute + exposed comm + "
            "optimizer + other = step; edited or corrupted)");
}

TEST(RowRule, DroppedRowsAreNamedByFileRowAndLabel) {
  ResultFile f = read_result_file(kFixtures + "weak_cpu.json");
  f.results[1].summary.p50_s = 0;
  f.results[3].world_size = 0;
  const auto lines = drop_invalid_rows(f, "w.json");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "w.json row 2 (resnet18 1M/1G): summary.p50_s is 0 s, not a step time in 1e-09..1e+06 s; it is "
            "left out");
  EXPECT_EQ(lines[1],
            "w.json row 4 (resnet18 1M/4G): world_size is 0, not a rank count in 1..10000000; it is left out");
  ASSERT_EQ(f.results.size(), 2u);
  EXPECT_EQ(f.results[0].label, "no ddp");
  EXPECT_EQ(f.results[1].label, "1M/2G");
}

TEST(RowRule, AFileWithRowsButNoneUsableIsBadInput) {
  ResultFile f = read_result_file(kFixtures + "weak_cpu.json");
  for (auto& r : f.results) r.batch_per_rank = -1;
  EXPECT_EQ(usage_error([&] { drop_invalid_rows(f, "w.json"); }),
            "w.json: none of its 4 rows can be used (row 1 (resnet18 no ddp): batch_per_rank is -1, not in "
            "1..1000000000); pass a file written by ddpbench run --json");
  ResultFile comm = read_result_file(kFixtures + "comm_cpu.json");  // no run rows at all: nothing to refuse
  EXPECT_TRUE(drop_invalid_rows(comm, "c.json").empty());
}

// report used to drop such rows silently; it now leaves out exactly the rows the rule refuses.
TEST(RowRule, ReportUsesTheSameRows) {
  ResultFile f = read_result_file(kFixtures + "weak_cpu.json");
  ResultFile g = f;
  g.results[2].summary.ex_per_s_per_gpu = 1e9;  // check passed this, report showed 72.7
  const Report all = build_report({{"f.json", f}}, {});
  const Report some = build_report({{"g.json", g}}, {});
  ASSERT_FALSE(all.weak.empty());
  ASSERT_FALSE(some.weak.empty());
  EXPECT_EQ(all.weak[0].rows.size(), some.weak[0].rows.size() + 1);
}

// A row's warnings follow from its data in every schema: a file written before warnings (or
// before one of them) gets them at intake, and a warning it records is not doubled.
TEST(RowWarnings, RecomputedFromTheDataOfAnySchema) {
  ResultFile f;
  f.kind = "run";
  f.environment = nlohmann::json::parse(R"({"device_type": "cpu", "threads_per_rank": 1,
      "ranks": [{"rank": 0, "host": "h", "cpus": "0"}, {"rank": 1, "host": "h", "cpus": "0"}]})");
  BenchResult one;
  one.world_size = 1;
  RankSamples r0;
  r0.samples_s = {0.1, 0.1, 0.1, 0.2, 0.1};  // mean 0.12, sd 0.04472: cv 37.3%, 5 iterations
  one.ranks = {r0};
  BenchResult two = one;
  two.world_size = 2;
  two.ranks.push_back(r0);
  two.warnings.push_back({"noisy", "recorded"});
  f.results = {one, two};
  EXPECT_NEAR(row_cv(one), std::sqrt(0.002) / 0.12, 1e-12);
  EXPECT_EQ(row_iterations(one), 5);
  EXPECT_EQ(complete_row_warnings(f), 4);  // noisy, few_samples; few_samples and oversubscribed on the 2-rank row
  ASSERT_EQ(f.results[0].warnings.size(), 2u);
  EXPECT_EQ(f.results[0].warnings[0].code, "noisy");
  EXPECT_EQ(f.results[0].warnings[0].message,
            "per-iteration times vary by 37.3% (cv > 5%); the percentiles may move between launches (recomputed from "
            "the row's data)");
  EXPECT_EQ(f.results[0].warnings[1].code, "few_samples");
  ASSERT_EQ(f.results[1].warnings.size(), 3u);
  EXPECT_EQ(f.results[1].warnings[0].message, "recorded");  // kept, not doubled
  EXPECT_EQ(f.results[1].warnings[2].code, "oversubscribed");
  EXPECT_EQ(f.results[1].warnings[2].message,
            "2 threads of this group's ranks on h share 1 CPUs; ranks compete for cores (recomputed from the row's "
            "data)");
  EXPECT_EQ(complete_row_warnings(f), 0);  // nothing left to add
  // The H100 file of schema 1.0 recorded none: its 5-iteration row is noisy (cv 20.5%) and short.
  ResultFile h = read_result_file(DDPBENCH_SOURCE_DIR "/docs/results/h100_resnet18_torchrun.json");
  complete_row_warnings(h);
  std::vector<std::string> codes;
  for (const auto& w : h.results[1].warnings) codes.push_back(w.code);
  EXPECT_EQ(codes, (std::vector<std::string>{"noisy", "few_samples"}));
  EXPECT_NEAR(row_cv(h.results[1]), 0.205, 0.001);
}

TEST(RowRule, TableNumbersStayBounded) {
  EXPECT_EQ(fmtcol::fixed(1)(1e308), "1e+308");
  EXPECT_EQ(fmtcol::fixed(1)(72.727), "72.7");
  EXPECT_EQ(fmtcol::percent()(1e300), "1e+302%");
  EXPECT_EQ(fmtcol::times()(1.5), "1.50x");
  EXPECT_EQ(fmtcol::bytes()(1e308), "9.313e+298 GiB");
}

}  // namespace
}  // namespace ddpbench
