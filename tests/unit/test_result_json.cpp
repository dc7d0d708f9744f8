// Result file: JSON against a hand-written schema 1.4.0 document and round trip, schema
// major-version check, atomic write, writability and what an output path may be.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "common/testutil.hpp"
#include "core/result/result.hpp"
#include "core/util/errors.hpp"

namespace fs = std::filesystem;

namespace ddpbench {
namespace {

using ::testing::HasSubstr;

using testutil::TempDir;
using testutil::usage_error;

/// A small result file built in code (one 2-rank DDP row, summary from summarize()).
ResultFile sample_file() {
  ResultFile f;
  f.tool = {{"name", "ddpbench"}, {"version", "0.1.0"}, {"git_sha", "abc"}, {"git_dirty", false}};
  f.created_utc = "2026-11-22T00:00:00Z";
  f.argv = {"ddpbench", "run", "--json", "x.json"};
  f.config = {{"batch_size", 8}};
  f.environment = {{"torch", "1.13.0"}, {"backend", "gloo"}};
  BenchResult r;
  r.model = "resnet18";
  r.label = "1M/2C";
  r.batch_per_rank = 8;
  r.image_size = 64;
  r.world_size = 2;
  r.nodes = 1;
  r.ddp = true;
  for (int rank = 0; rank < 2; ++rank) {
    RankSamples s;
    s.rank = rank;
    s.host = "h";
    s.local_rank = rank;
    s.device = "cpu";
    s.samples_s = {0.1 + rank, 0.2 + rank, 0.3 + rank};
    s.telemetry = nlohmann::json{{"peak_memory_bytes", 123}}.get<RankTelemetry>();
    r.ranks.push_back(s);
  }
  r.summary = summarize({{0.1, 0.2, 0.3}, {1.1, 1.2, 1.3}}, 8, 2);
  r.checks.grad_check_passed = true;
  f.results.push_back(r);
  return f;
}

// The file's text: containers indented by 2, arrays of scalars and short objects of scalars
// on one line, per-rank records (objects with "rank") one compact line each; it parses back
// to the same document.
TEST(ResultJson, ReadableTextPutsScalarArraysAndShortObjectsOnOneLine) {
  const nlohmann::json j = nlohmann::json::parse(R"({"a": [0.5, 1, null, "x"], "b": {"p50_s": 0.25, "n": 3},
    "c": [{"rank": 0, "samples_s": [0.1, 0.2]}], "d": {}, "e": [], "f": {"long": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}})");
  const std::string expected = R"({
  "a": [0.5, 1, null, "x"],
  "b": {"n": 3, "p50_s": 0.25},
  "c": [
    {"rank":0,"samples_s":[0.1,0.2]}
  ],
  "d": {},
  "e": [],
  "f": {
    "long": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
  }
}
)";
  EXPECT_EQ(readable_json(j), expected);
  EXPECT_EQ(nlohmann::json::parse(readable_json(j)), j);
}

TEST(ResultJson, RoundTripKeepsEveryField) {
  const ResultFile f = sample_file();
  const std::string text = nlohmann::json(f).dump();
  const ResultFile g = parse_result(text, "mem");
  EXPECT_EQ(nlohmann::json(g), nlohmann::json(f));
  ASSERT_EQ(g.results.size(), 1u);
  EXPECT_EQ(g.results[0].ranks[1].samples_s, (std::vector<double>{1.1, 1.2, 1.3}));
  EXPECT_DOUBLE_EQ(g.results[0].summary.p50_s, f.results[0].summary.p50_s);
  EXPECT_EQ(g.schema_version, kSchemaVersion);
}

// Schema 1.10's per-rank detail, by hand, every value distinct: a rank with its step summary
// and no samples_s (not kept in full), a rank with both, the row's iteration means, kept
// ranks and p5; it reads into the fields and writes back the same document.
TEST(ResultJson, PerRankDetailOfSchema110ReadsAndRoundTrips) {
  const std::string text = R"({"schema_version": "1.10.0", "tool": {}, "created_utc": "", "argv": [], "config": {},
    "environment": {}, "results": [{"model": "resnet18", "batch_per_rank": 8, "world_size": 2, "ddp": true,
      "summary": {"n": 4, "p5_s": 0.11, "p50_s": 0.2, "p75_s": 0.3, "p90_s": 0.35, "p95_s": 0.4, "mean_s": 0.25,
                  "ci95_s": 0.05, "ex_per_s_per_gpu": 40, "ex_per_s_total": 80},
      "iteration_means_s": [0.15, 0.35], "ranks_kept_in_full": [1],
      "ranks": [{"rank": 0, "host": "h", "step": {"n": 2, "mean_s": 0.21, "p50_s": 0.22, "p95_s": 0.23, "max_s": 0.24}},
                {"rank": 1, "host": "h", "samples_s": [0.31, 0.32],
                 "step": {"n": 2, "mean_s": 0.315, "p50_s": 0.316, "p95_s": 0.319, "max_s": 0.32}}]}]})";
  const ResultFile f = parse_result(text, "mem");
  ASSERT_EQ(f.results.size(), 1u);
  const BenchResult& r = f.results[0];
  EXPECT_EQ(r.summary.p5_s, 0.11);
  EXPECT_EQ(r.iteration_means_s, (std::vector<double>{0.15, 0.35}));
  ASSERT_TRUE(r.ranks_kept_in_full.has_value());
  EXPECT_EQ(*r.ranks_kept_in_full, (std::vector<int>{1}));
  ASSERT_EQ(r.ranks.size(), 2u);
  EXPECT_TRUE(r.ranks[0].samples_s.empty());
  ASSERT_TRUE(r.ranks[0].step.has_value());
  EXPECT_EQ(r.ranks[0].step->n, 2);
  EXPECT_EQ(r.ranks[0].step->mean_s, 0.21);
  EXPECT_EQ(r.ranks[0].step->p50_s, 0.22);
  EXPECT_EQ(r.ranks[0].step->p95_s, 0.23);
  EXPECT_EQ(r.ranks[0].step->max_s, 0.24);
  EXPECT_EQ(r.ranks[1].samples_s, (std::vector<double>{0.31, 0.32}));
  EXPECT_EQ(r.ranks[1].step->p95_s, 0.319);
  const nlohmann::json back = nlohmann::json(r);
  EXPECT_FALSE(back.at("ranks")[0].contains("samples_s"));
  EXPECT_EQ(parse_result(nlohmann::json(f).dump(), "again").results[0].ranks[1].step->max_s, 0.32);
  EXPECT_EQ(nlohmann::json(parse_result(nlohmann::json(f).dump(), "again")), nlohmann::json(f));
  // Before 1.10 every rank carries samples_s: a rank without it and without a step is refused.
  EXPECT_THROW(parse_result(R"({"schema_version": "1.9.0", "tool": {}, "created_utc": "", "argv": [], "config": {},
    "environment": {}, "results": [{"model": "m", "batch_per_rank": 1, "world_size": 1, "ddp": false,
      "summary": {"n": 1, "p50_s": 1, "p75_s": 1, "p90_s": 1, "p95_s": 1, "mean_s": 1, "ci95_s": 0,
                  "ex_per_s_per_gpu": 1, "ex_per_s_total": 1}, "ranks": [{"rank": 0, "host": "h"}]}]})",
                            "old"),
               UsageError);
}

// A schema 1.4.0 file written by hand, every field set to a value other than its default
// and every number distinct, so a field that to_json or from_json drops, renames or mixes
// up with another cannot go unnoticed (a round trip alone misses a field dropped on both
// sides).
const char* const kEveryField = R"({
  "schema_version": "1.5.0",
  "kind": "run",
  "complete": false,
  "rows_planned": 9,
  "tool": {"name": "ddpbench", "version": "0.1.0", "git_sha": "0123abc", "git_dirty": true},
  "created_utc": "2026-11-22T21:31:00Z",
  "argv": ["ddpbench", "run", "--precision", "bf16"],
  "config": {"batch_size": 16, "precision": "bf16"},
  "environment": {"torch": "2.11.0", "backend": "nccl", "world_size": 4},
  "results": [{
    "model": "resnet50",
    "label": "2M/4G",
    "batch_per_rank": 16,
    "image_size": 160,
    "precision": "bf16",
    "scaling": "strong",
    "global_batch": 64,
    "world_size": 4,
    "nodes": 2,
    "ddp": false,
    "ranks": [
      {"rank": 3, "host": "node-b", "local_rank": 1, "device": "cuda:1",
       "samples_s": [0.25, 0.5], "telemetry": {"peak_memory_bytes": 4096},
       "breakdown": {"forward_s": 0.125, "step_s": 0.375}},
      {"rank": 2, "host": "node-b", "local_rank": 2, "device": "cuda:2",
       "samples_s": [0.75], "telemetry": {"reducer": {"backward_compute_ns": 17}}}
    ],
    "summary": {"n": 3, "p50_s": 0.5, "p75_s": 0.625, "p90_s": 0.7, "p95_s": 0.725,
                "min_s": 0.25, "max_s": 0.75, "mean_s": 0.52, "stddev_s": 0.125, "ci95_s": 0.31,
                "iterations": 2, "cv": 0.04, "ex_per_s_per_gpu": 32.5, "ex_per_s_total": 130.5},
    "telemetry": {"bucket_count": 5},
    "checks": {"grad_check_passed": false, "grad_max_abs_diff_across_ranks": 1.5},
    "compute": {"mfu": 0.375, "peak_tflops": 989.5},
    "communication": {"trainable_parameters": 25557032, "allreduce_bytes_per_step": 102228128},
    "grad_accum": 3,
    "ddp_options": {"bucket_cap_mb": 5.0, "comm_hook": "powersgd:2"},
    "strategy": "zero2", "activation_checkpointing": true,
    "breakdown": {"mean_over_ranks": {"forward_s": 0.125}, "iterations": 2},
    "mode": "inference",
    "memory": {"per_rank": [{"rank": 3, "peak_allocated_bytes": 4096, "peak_reserved_bytes": 8192}],
               "max_over_ranks": {"peak_allocated_bytes": 4096, "peak_reserved_bytes": 8192, "peak_rss_bytes": null},
               "model_state_bytes": {"parameters": 12, "gradients": 0, "optimizer": 0, "total": 12},
               "source": "cuda caching allocator"},
    "stopping": {"mode": "auto", "reason": "target_ci", "target_ci_pct": 2.5, "achieved_ci_pct": 1.75},
    "warnings": [{"code": "noisy", "message": "cv 4% over 2 iterations"},
                 {"code": "oversubscribed", "message": "4 ranks x 2 threads on 4 cores"}]
  }]
})";

TEST(ResultJson, ReadsAHandWrittenFileFieldByField) {
  const ResultFile f = parse_result(kEveryField, "hand.json");
  EXPECT_EQ(f.schema_version, "1.5.0");
  EXPECT_EQ(f.kind, "run");
  EXPECT_TRUE(f.comm_results.empty());
  EXPECT_FALSE(f.complete);
  EXPECT_EQ(f.rows_planned, 9);
  EXPECT_EQ(f.tool, nlohmann::json::parse(R"({"name": "ddpbench", "version": "0.1.0", "git_sha": "0123abc",
                                              "git_dirty": true})"));
  EXPECT_EQ(f.created_utc, "2026-11-22T21:31:00Z");
  EXPECT_EQ(f.argv, (std::vector<std::string>{"ddpbench", "run", "--precision", "bf16"}));
  EXPECT_EQ(f.config, nlohmann::json::parse(R"({"batch_size": 16, "precision": "bf16"})"));
  EXPECT_EQ(f.environment, nlohmann::json::parse(R"({"torch": "2.11.0", "backend": "nccl", "world_size": 4})"));
  ASSERT_EQ(f.results.size(), 1u);
  const BenchResult& r = f.results[0];
  EXPECT_EQ(r.model, "resnet50");
  EXPECT_EQ(r.label, "2M/4G");
  EXPECT_EQ(r.batch_per_rank, 16);
  EXPECT_EQ(r.image_size, 160);
  EXPECT_EQ(r.precision, "bf16");
  EXPECT_EQ(r.scaling, "strong");
  EXPECT_EQ(r.global_batch, 64);
  EXPECT_EQ(r.world_size, 4);
  EXPECT_EQ(r.nodes, 2);
  EXPECT_FALSE(r.ddp);
  ASSERT_EQ(r.ranks.size(), 2u);
  EXPECT_EQ(r.ranks[0].rank, 3);
  EXPECT_EQ(r.ranks[0].host, "node-b");
  EXPECT_EQ(r.ranks[0].local_rank, 1);
  EXPECT_EQ(r.ranks[0].device, "cuda:1");
  EXPECT_EQ(r.ranks[0].samples_s, (std::vector<double>{0.25, 0.5}));
  EXPECT_EQ(nlohmann::json(r.ranks[0].telemetry), nlohmann::json::parse(R"({"peak_memory_bytes": 4096})"));
  EXPECT_EQ(r.ranks[1].rank, 2);
  EXPECT_EQ(r.ranks[1].local_rank, 2);
  EXPECT_EQ(r.ranks[1].device, "cuda:2");
  EXPECT_EQ(r.ranks[1].samples_s, (std::vector<double>{0.75}));
  EXPECT_EQ(nlohmann::json(r.ranks[1].telemetry), nlohmann::json::parse(R"({"reducer": {"backward_compute_ns": 17}})"));
  EXPECT_EQ(nlohmann::json(r.ranks[0].breakdown), nlohmann::json::parse(R"({"forward_s": 0.125, "step_s": 0.375})"));
  EXPECT_TRUE(r.ranks[1].breakdown.empty());
  EXPECT_EQ(r.grad_accum, 3);
  EXPECT_EQ(r.mode, "inference");
  EXPECT_EQ(r.memory.max_over_ranks.peak_reserved_bytes, 8192);
  EXPECT_EQ(r.memory.model_state_bytes.value().total(), 12);
  EXPECT_EQ(r.ddp_options.comm_hook, "powersgd:2");
  EXPECT_EQ(r.ddp_options.bucket_cap_mb, 5.0);
  EXPECT_EQ(r.breakdown.mean(Phase::forward), 0.125);
  const Summary& s = r.summary;
  EXPECT_EQ(s.n, 3);
  EXPECT_EQ(s.p50_s, 0.5);
  EXPECT_EQ(s.p75_s, 0.625);
  EXPECT_EQ(s.p90_s, 0.7);
  EXPECT_EQ(s.p95_s, 0.725);
  EXPECT_EQ(s.min_s, 0.25);
  EXPECT_EQ(s.max_s, 0.75);
  EXPECT_EQ(s.mean_s, 0.52);
  EXPECT_EQ(s.stddev_s, 0.125);
  EXPECT_EQ(s.ci95_s, 0.31);
  EXPECT_EQ(s.iterations, 2);
  EXPECT_EQ(s.cv, 0.04);
  EXPECT_EQ(s.ex_per_s_per_gpu, 32.5);
  EXPECT_EQ(s.ex_per_s_total, 130.5);
  EXPECT_EQ(nlohmann::json(r.telemetry), nlohmann::json::parse(R"({"bucket_count": 5})"));
  EXPECT_EQ(nlohmann::json(r.checks),
            nlohmann::json::parse(R"({"grad_check_passed": false, "grad_max_abs_diff_across_ranks": 1.5})"));
  EXPECT_EQ(r.compute.mfu, 0.375);
  EXPECT_EQ(r.compute.peak_tflops, 989.5);
  EXPECT_EQ(nlohmann::json(r.communication),
            nlohmann::json::parse(R"({"trainable_parameters": 25557032, "allreduce_bytes_per_step": 102228128})"));
  EXPECT_EQ(r.stopping.mode, "auto");
  EXPECT_EQ(r.stopping.reason, "target_ci");
  EXPECT_EQ(r.stopping.target_ci_pct, 2.5);
  EXPECT_EQ(r.stopping.achieved_ci_pct, 1.75);
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_EQ(r.warnings[0].code, "noisy");
  EXPECT_EQ(r.warnings[0].message, "cv 4% over 2 iterations");
  EXPECT_EQ(r.warnings[1].code, "oversubscribed");
  EXPECT_EQ(r.warnings[1].message, "4 ranks x 2 threads on 4 cores");
}

// Writing what was read gives the hand-written document back: no field lost, none added,
// none renamed (compared as JSON values, so key order and spacing do not matter).
TEST(ResultJson, WritesTheHandWrittenFileBack) {
  const auto doc = nlohmann::json::parse(kEveryField);
  const nlohmann::json written = parse_result(kEveryField, "hand.json");
  EXPECT_EQ(written, doc);
  // Field by field, so a failure names the field.
  for (const auto& [key, value] : doc.items())
    if (key != "results") EXPECT_EQ(written.value(key, nlohmann::json()), value) << key;
  ASSERT_EQ(written.at("results").size(), 1u);
  for (const auto& [key, value] : doc.at("results").at(0).items())
    EXPECT_EQ(written.at("results").at(0).value(key, nlohmann::json()), value) << "results[0]." << key;
}

// `ddpbench comm` files: kind "comm", nccl-tests' columns per row; an unknown kind is refused.
// Schema 1.7's mode and memory are absent from older rows: a training row without memory.
TEST(ResultJson, AnOlderRowReadsAsTrainingWithoutMemory) {
  const ResultFile f = read_result_file(DDPBENCH_SOURCE_DIR "/tests/fixtures/weak_cpu.json");
  ASSERT_FALSE(f.results.empty());
  EXPECT_EQ(f.results[0].mode, "train");
  EXPECT_TRUE(f.results[0].memory.empty());
  EXPECT_FALSE(nlohmann::json(f.results[0]).contains("memory"));  // not written back as {}
}

TEST(ResultJson, CommResultsRoundTrip) {
  ResultFile f;
  f.kind = "comm";
  CommResult c;
  c.collective = "allreduce";
  c.dtype = "float32";
  c.redop = "sum";
  c.bytes = 1048576;
  c.count = 262144;
  c.world_size = 3;
  c.label = "1M/3C";
  c.time_us = 1500.5;
  c.time_us_max_over_ranks = 1600.25;
  c.algbw_gbps = 0.6988;
  c.busbw_gbps = 0.9317;
  c.wrong = 4;
  c.extra = {{"emulated", "no"}};
  f.comm_results.push_back(c);
  c.cpu_cores = 0.625;  // schema 1.16; absent above (an older file's row)
  f.comm_results.push_back(c);
  const ResultFile back = parse_result(nlohmann::json(f).dump(), "comm.json");
  EXPECT_EQ(back.kind, "comm");
  ASSERT_EQ(back.comm_results.size(), 2u);
  EXPECT_EQ(nlohmann::json(back.comm_results[1]), nlohmann::json(c));
  EXPECT_EQ(nlohmann::json(back.comm_results[1]).at("cpu_cores"), 0.625);
  EXPECT_FALSE(back.comm_results[0].cpu_cores.has_value());
  EXPECT_FALSE(nlohmann::json(back.comm_results[0]).contains("cpu_cores"));
  auto doc = nlohmann::json(f);
  doc["kind"] = "train";
  EXPECT_THAT(usage_error([&] { parse_result(doc.dump(), "x.json"); }), HasSubstr("kind 'train'"));
}

// Before 1.4 only complete files were written, and they carry neither key.
TEST(ResultJson, AnOlderFileWithoutCompleteReadsAsComplete) {
  auto doc = nlohmann::json::parse(kEveryField);
  doc["schema_version"] = "1.3.0";
  doc.erase("complete");
  doc.erase("rows_planned");
  const ResultFile f = parse_result(doc.dump(), "old.json");
  EXPECT_TRUE(f.complete);
  EXPECT_EQ(f.rows_planned, 0);
  EXPECT_EQ(incomplete_warning("old.json", f), "");
}

TEST(ResultJson, CompleteAndRowsPlannedRoundTrip) {
  ResultFile f = sample_file();
  EXPECT_TRUE(f.complete);  // the default: what a finished run writes
  f.complete = false;
  f.rows_planned = 3;
  const nlohmann::json j = f;
  EXPECT_EQ(j.at("complete"), false);
  EXPECT_EQ(j.at("rows_planned"), 3);
  const ResultFile g = parse_result(j.dump(), "mem");
  EXPECT_FALSE(g.complete);
  EXPECT_EQ(g.rows_planned, 3);
}

TEST(ResultJson, IncompleteWarningSaysHowFarTheRunGot) {
  ResultFile f = sample_file();  // one row
  EXPECT_EQ(incomplete_warning("r.json", f), "");
  f.complete = false;
  f.rows_planned = 3;
  EXPECT_EQ(incomplete_warning("r.json.partial", f),
            "r.json.partial is incomplete (the run stopped after 1 of 3 rows); its numbers cover only those rows");
  f.rows_planned = 0;  // unknown
  EXPECT_EQ(incomplete_warning("r.json.partial", f),
            "r.json.partial is incomplete (the run stopped after 1 row); its numbers cover only those rows");
}

TEST(ResultJson, MinorVersionBumpIsReadable) {
  nlohmann::json j = sample_file();
  j["schema_version"] = "1.7.3";
  j["some_future_field"] = 1;
  EXPECT_NO_THROW(parse_result(j.dump(), "mem"));
}

TEST(ResultJson, OtherMajorVersionIsRejectedWithTheFix) {
  nlohmann::json j = sample_file();
  j["schema_version"] = "2.0.0";
  try {
    parse_result(j.dump(), "new.json");
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    EXPECT_THAT(msg, HasSubstr("new.json"));
    EXPECT_THAT(msg, HasSubstr("2.0.0"));
    EXPECT_EQ(msg.find('\n'), std::string::npos);
  }
}

TEST(ResultJson, MalformedInputIsAUsageError) {
  EXPECT_THROW(parse_result("{not json", "bad.json"), UsageError);
  EXPECT_THROW(parse_result("[]", "bad.json"), UsageError);
  EXPECT_THROW(parse_result(R"({"schema_version": "x"})", "bad.json"), UsageError);
  EXPECT_THROW(parse_result(R"({"schema_version": "1.0.0"})", "bad.json"), UsageError);  // no results
  nlohmann::json j = sample_file();
  j["results"][0].erase("summary");
  EXPECT_THROW(parse_result(j.dump(), "bad.json"), UsageError);
  EXPECT_THROW(read_result_file("/nonexistent/ddpbench.json"), UsageError);
  // Found by fuzz/: a number beyond double's range, and a float where an int belongs.
  EXPECT_THROW(parse_result(R"({"schema_version": "1.0.0", "results": [], "x": 1e999999})", "big.json"), UsageError);
  nlohmann::json k = sample_file();
  k["results"][0]["world_size"] = 7.7e47;
  EXPECT_THROW(parse_result(k.dump(), "float.json"), UsageError);
  k["results"][0]["world_size"] = 2.5;
  EXPECT_THROW(parse_result(k.dump(), "frac.json"), UsageError);
  k["results"][0]["world_size"] = 2.0;  // an integral float is fine
  EXPECT_EQ(parse_result(k.dump(), "ok.json").results[0].world_size, 2);
}

TEST(ResultJson, AtomicWriteReplacesAndLeavesNoTemporaries) {
  TempDir dir;
  const std::string path = (dir.path / "r.json").string();
  ResultFile f = sample_file();
  write_result_file_atomic(path, f);
  f.results[0].model = "resnet50";
  write_result_file_atomic(path, f);
  EXPECT_EQ(read_result_file(path).results[0].model, "resnet50");
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

// The one reader: a regular file is read whole; a fifo (no writer: a blocking open would
// hang), a device that never ends, a directory and a file above the size cap are refused
// with one UsageError naming the path, and nothing is read from them.
TEST(ResultJson, TheReaderTakesRegularFilesUpToTheCapOnly) {
  TempDir dir;
  const fs::path small = dir.path / "small.json", fifo = dir.path / "fifo";
  std::ofstream(small) << "0123456789";
  EXPECT_EQ(read_text_file(small.string()), "0123456789");
  EXPECT_EQ(read_text_file(small.string(), 10), "0123456789");  // exactly the cap
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto refused = [](const std::string& path, long long cap, const std::string& what) {
    try {
      (void)read_text_file(path, cap);
      ADD_FAILURE() << path << " was read";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(path)) << e.what();
      EXPECT_THAT(e.what(), ::testing::HasSubstr(what)) << e.what();
    }
  };
  refused(small.string(), 9, "larger than");
  refused(fifo.string(), kMaxInputFileBytes, "fifo");
  refused("/dev/zero", kMaxInputFileBytes, "device");
  refused(dir.path.string(), kMaxInputFileBytes, "directory");
  refused((dir.path / "missing.json").string(), kMaxInputFileBytes, "check the path");
}

// run --resume: which PATH a .partial continues, and when a stopped run's file can be
// continued by a run of a given configuration (hand-made files; the messages name the field).
TEST(ResultJson, ResumeChecksTheFileAndTheFlags) {
  EXPECT_EQ(resume_result_path("out/r.json.partial"), "out/r.json");
  EXPECT_THROW(resume_result_path("out/r.json"), UsageError);
  EXPECT_THROW(resume_result_path(".partial"), UsageError);
  ResultFile prior;
  prior.kind = "run";
  prior.complete = false;
  prior.environment = {{"world_size", 2}};
  prior.config = {{"batch_size", 16}, {"models", {"resnet18"}}, {"defaults_note", "x"}};
  BenchResult row;
  row.group = "resnet18/noddp-b16";
  prior.results = {row};
  const nlohmann::json same{{"batch_size", 16}, {"models", {"resnet18"}}};
  EXPECT_EQ(resume_mismatch(prior, same, 2), "");
  EXPECT_THAT(resume_mismatch(prior, {{"batch_size", 32}, {"models", {"resnet18"}}}, 2),
              ::testing::HasSubstr("batch_size is 16 there and 32 here"));
  EXPECT_THAT(resume_mismatch(prior, {{"batch_size", 16}}, 2), ::testing::HasSubstr("models is"));
  EXPECT_THAT(resume_mismatch(prior, same, 4), ::testing::HasSubstr("2 rank(s), this job has 4"));
  // A file from before schema 1.19 ran every instrument: it continues under none switched off only.
  nlohmann::json now = same;
  now["instruments_off"] = nlohmann::json::array();
  EXPECT_EQ(resume_mismatch(prior, now, 2), "");
  now["instruments_off"] = {"timers"};
  EXPECT_EQ(resume_mismatch(prior, now, 2), "its flags differ: instruments_off is [] there and [\"timers\"] here");
  ResultFile done = prior;
  done.complete = true;
  EXPECT_THAT(resume_mismatch(done, same, 2), ::testing::HasSubstr("complete"));
  ResultFile old = prior;
  old.results[0].group.clear();
  EXPECT_THAT(resume_mismatch(old, same, 2), ::testing::HasSubstr("no benchmark group"));
  ResultFile comm = prior;
  comm.kind = "comm";
  EXPECT_THAT(resume_mismatch(comm, same, 2), ::testing::HasSubstr("'comm'"));
}

// run --resume keeps only rows it can vouch for: none whose self-check failed, none outside
// the plan, one per group; the first bad row is named (1-based) with its group.
TEST(ResultJson, ResumeChecksTheRowsItKeeps) {
  ResultFile prior;
  prior.kind = "run";
  prior.complete = false;
  const std::vector<std::string> plan{"m/noddp-b2", "m/ddp1", "m/ddp2"};
  for (const char* g : {"m/noddp-b2", "m/ddp1"}) {
    BenchResult r;
    r.group = g;
    prior.results.push_back(r);
  }
  prior.results[1].checks.grad_check_passed = true;
  EXPECT_EQ(resume_rows_problem(prior, plan), "");
  ResultFile failed = prior;
  failed.results.push_back(prior.results[1]);
  failed.results[2].group = "m/ddp2";
  failed.results[2].checks.grad_check_passed = false;
  EXPECT_EQ(resume_rows_problem(failed, plan),
            "row 3 (m/ddp2) failed its self-check, so the stopped run's measurements are not valid; run the sweep "
            "again without --resume once the cause is fixed");
  ResultFile sharded_failed = prior;
  sharded_failed.results[1].checks.grad_check_passed.reset();
  sharded_failed.results[1].checks.param_check_passed = false;
  EXPECT_THAT(resume_rows_problem(sharded_failed, plan), ::testing::HasSubstr("row 2 (m/ddp1) failed its self-check"));
  ResultFile twice = prior;
  twice.results.push_back(prior.results[1]);
  EXPECT_THAT(resume_rows_problem(twice, plan), ::testing::HasSubstr("rows 2 and 3 are both of group m/ddp1"));
  ResultFile unplanned = prior;
  unplanned.results[1].group = "m/ddp4";
  EXPECT_THAT(resume_rows_problem(unplanned, plan),
              ::testing::HasSubstr("row 2 (m/ddp4) is not one of the 3 benchmark group(s) these flags plan"));
}

// run --resume continues only in the environment the stopped run measured in: the first
// difference is named; what names only the launch (ports, job ids) is not compared.
TEST(ResultJson, ResumeComparesTheMeasurementEnvironment) {
  const nlohmann::json there = nlohmann::json::parse(R"({
    "threads_per_rank": 1, "device_type": "cpu", "backend": "gloo", "torch": "1.13.0", "cuda": "none",
    "nccl": "none", "driver": "none", "cpu_model": "Xeon", "hosts": ["a", "b"],
    "env": {"OMP_NUM_THREADS": "1", "MASTER_PORT": "1234", "DDPBENCH_JOB_ID": "j1", "SLURM_JOB_ID": "7"},
    "ranks": [{"rank": 0, "host": "a", "device": "cpu", "gpu_name": "", "cpus": "0-3"},
              {"rank": 1, "host": "b", "device": "cpu", "gpu_name": "", "cpus": "0-3"}],
    "nodes": [{"host": "a", "torch": "1.13.0", "cpus": 4, "env": {"NCCL_ALGO": "Ring"}},
              {"host": "b", "torch": "1.13.0", "cpus": 4, "env": {}}],
    "math": {"cudnn_benchmark": true}, "malloc_tuning": {"applied": true}, "topology": ""})");
  EXPECT_EQ(resume_environment_mismatch(there, there), "");
  nlohmann::json here = there;
  here["env"]["MASTER_PORT"] = "999";
  here["env"]["DDPBENCH_JOB_ID"] = "j2";
  here["env"]["SLURM_JOB_ID"] = "8";
  EXPECT_EQ(resume_environment_mismatch(there, here), "");  // another launch, the same machine
  const auto differ = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json h = there;
    edit(h);
    return resume_environment_mismatch(there, h);
  };
  EXPECT_EQ(differ([](auto& h) {
              h["env"]["OMP_NUM_THREADS"] = "2";
              h["threads_per_rank"] = 2;
            }),
            "OMP_NUM_THREADS is 1 there and 2 here");
  EXPECT_EQ(differ([](auto& h) { h["env"].erase("OMP_NUM_THREADS"); }), "OMP_NUM_THREADS is 1 there and unset here");
  EXPECT_EQ(differ([](auto& h) { h["env"]["NCCL_IB_DISABLE"] = "1"; }), "NCCL_IB_DISABLE is unset there and 1 here");
  EXPECT_EQ(differ([](auto& h) { h["threads_per_rank"] = 4; }), "threads_per_rank is 1 there and 4 here");
  EXPECT_EQ(differ([](auto& h) { h["device_type"] = "cuda"; }), "device_type is cpu there and cuda here");
  EXPECT_EQ(differ([](auto& h) { h["torch"] = "2.11.0"; }), "torch is 1.13.0 there and 2.11.0 here");
  EXPECT_EQ(differ([](auto& h) { h["hosts"] = {"b", "a"}; }), "");  // a set: the order is not compared
  EXPECT_EQ(differ([](auto& h) { h["hosts"] = {"a", "c"}; }), "the hosts are a,b there and a,c here");
  EXPECT_EQ(differ([](auto& h) { h["ranks"][1]["cpus"] = "0-1"; }), "rank 1's cpus is 0-3 there and 0-1 here");
  EXPECT_EQ(differ([](auto& h) { h["nodes"][0]["env"]["NCCL_ALGO"] = "Tree"; }),
            "on host a, NCCL_ALGO is Ring there and Tree here");
  EXPECT_EQ(differ([](auto& h) { h["nodes"][1]["torch"] = "2.0.0"; }),
            "on host b, torch is 1.13.0 there and 2.0.0 here");
  EXPECT_EQ(differ([](auto& h) { h["malloc_tuning"]["applied"] = false; }),
            R"(malloc_tuning is {"applied":true} there and {"applied":false} here)");
  // What this launch does not know yet (before any rank starts) is not compared.
  EXPECT_EQ(resume_environment_mismatch(there, {{"threads_per_rank", 1}, {"env", {{"OMP_NUM_THREADS", "1"}}}}), "");
  EXPECT_EQ(resume_environment_mismatch(there, {{"torch", "2.1.0"}}), "torch is 1.13.0 there and 2.1.0 here");
  // A long value is cut on a character boundary.
  const std::string long_value = std::string(76, 'x') + "\xc3\xa9\xc3\xa9\xc3\xa9";
  EXPECT_EQ(differ([&](auto& h) { h["env"]["NCCL_DEBUG_FILE"] = long_value; }),
            "NCCL_DEBUG_FILE is unset there and " + std::string(76, 'x') + "... here");
}

TEST(ResultJson, CheckWritable) {
  TempDir dir;
  EXPECT_NO_THROW(check_writable((dir.path / "out.json").string()));
  EXPECT_FALSE(fs::exists(dir.path / "out.json"));  // the probe leaves nothing behind
  EXPECT_THROW(check_writable((dir.path / "missing" / "out.json").string()), UsageError);
  EXPECT_THROW(check_writable(dir.path.string()), UsageError);  // a directory
  EXPECT_THROW(check_writable(""), UsageError);
  // A directory nobody can create files in, root included (CI runs as root).
  EXPECT_THROW(check_writable("/proc/ddpbench-out.json"), UsageError);
  if (::geteuid() != 0) {  // root ignores permission bits
    ::chmod(dir.path.c_str(), 0500);
    EXPECT_THROW(check_writable((dir.path / "out.json").string()), UsageError);
    ::chmod(dir.path.c_str(), 0700);
  }
  // The message names the option that gave the path.
  try {
    check_writable(dir.path.string(), "--html");
    FAIL() << "a directory was accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--html '", 0), 0u) << e.what();
  }
}

// Every kind of path that is not a writable regular file, as the one output check and
// the atomic write see it: refused with a message naming the problem and the fix, and
// left exactly as it was (nothing written through a link, nothing renamed over a node).
TEST(ResultJson, OutputTargetsThatAreNotWritableRegularFilesAreRefused) {
  TempDir dir;
  const fs::path real = dir.path / "real.json", link = dir.path / "link.json", dangling = dir.path / "dangling.json",
                 fifo = dir.path / "fifo", ro = dir.path / "ro.json", sub = dir.path / "sub";
  std::ofstream(real) << "earlier\n";
  fs::create_symlink("real.json", link);
  fs::create_symlink("nowhere.json", dangling);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  std::ofstream(ro) << "read-only\n";
  fs::permissions(ro, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  fs::create_directory(sub);
  const auto entries = [&] {
    int n = 0;
    for (auto it = fs::directory_iterator(dir.path); it != fs::directory_iterator(); ++it) ++n;
    return n;
  };
  const int before = entries();

  struct Case {
    std::string path, expect;  // expect: the whole message after "--json '<path>'"
  };
  const std::vector<Case> cases = {
      {link.string(), " is a symbolic link, not a regular file; pass the file's real path or a new name"},
      {dangling.string(), " is a symbolic link, not a regular file; pass the file's real path or a new name"},
      {fifo.string(), " exists and is not a regular file; pass a new file name"},
      {"/dev/null", " exists and is not a regular file; pass a new file name"},
      {"/dev/full", " exists and is not a regular file; pass a new file name"},
      {ro.string(), " is read-only; make it writable or pass a new file name"},
      {"/proc/version", " is read-only; make it writable or pass a new file name"},
      {sub.string(), " is a directory; pass a file path such as " + sub.string() + "/result.json"},
  };
  for (const auto& c : cases) {
    try {
      check_writable(c.path, "--json");
      ADD_FAILURE() << "check_writable accepted " << c.path;
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), "--json '" + c.path + "'" + c.expect);
    }
    try {
      write_file_atomic(c.path, "new\n");
      ADD_FAILURE() << "write_file_atomic wrote " << c.path;
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), "'" + c.path + "'" + c.expect);
    }
  }
  // Unchanged: the links point where they did, the nodes are what they were, no content
  // changed, and no temporary file was left next to them.
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fs::read_symlink(link), fs::path("real.json"));
  EXPECT_EQ(testutil::slurp(real), "earlier\n");
  EXPECT_TRUE(fs::is_symlink(dangling));
  EXPECT_FALSE(fs::exists(dir.path / "nowhere.json"));
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_EQ(testutil::slurp(ro), "read-only\n");
  EXPECT_EQ(fs::status(ro).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  EXPECT_TRUE(fs::is_directory(sub));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
  EXPECT_EQ(entries(), before);

  // The empty path names the option it came from.
  try {
    check_writable("", "--output");
    ADD_FAILURE() << "an empty path was accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--output needs a file path; pass e.g. --output result.json");
  }
  // A writable regular file is a valid target: report -o replaces it.
  EXPECT_NO_THROW(check_writable(real.string(), "--output"));
  write_file_atomic(real.string(), "replaced\n");
  EXPECT_EQ(testutil::slurp(real), "replaced\n");
}

// run --json PATH: an earlier result, or the rows of an earlier run that stopped
// (PATH.partial), is only replaced with --overwrite; a link or read-only file never.
TEST(ResultJson, ResultTargetNeedsOverwriteForAnExistingResult) {
  TempDir dir;
  const std::string path = (dir.path / "r.json").string();
  EXPECT_EQ(partial_path(path), path + ".partial");
  EXPECT_NO_THROW(check_result_target(path, false));
  std::ofstream(path) << "earlier\n";
  try {
    check_result_target(path, false);
    ADD_FAILURE() << "an existing result was accepted without --overwrite";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--json '" + path +
                                         "' already exists; pass --overwrite to replace it once the new run "
                                         "completes, or choose a new name");
  }
  EXPECT_NO_THROW(check_result_target(path, true));
  fs::remove(path);
  std::ofstream(path + ".partial") << "{}\n";
  try {
    check_result_target(path, false);
    ADD_FAILURE() << "an earlier partial result was accepted without --overwrite";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--json '" + path + "': '" + path +
                                         ".partial' already exists (the rows of a run that stopped early); pass "
                                         "--overwrite to replace it or choose a new name (`run --resume " +
                                         path + ".partial` continues a stopped run)");
  }
  EXPECT_NO_THROW(check_result_target(path, true));
  fs::remove(path + ".partial");
  fs::create_symlink("elsewhere.json", path + ".partial");
  EXPECT_THROW(check_result_target(path, true), UsageError);  // --overwrite never writes through a link
  EXPECT_TRUE(fs::is_symlink(path + ".partial"));
  EXPECT_FALSE(fs::exists(path));  // nothing created either
}

TEST(ResultJson, SchemaMajor) {
  EXPECT_EQ(schema_major("1.0.0"), 1);
  EXPECT_EQ(schema_major("12.3.4"), 12);
  EXPECT_THROW(schema_major("v1"), UsageError);
  EXPECT_THROW(schema_major(""), UsageError);
}

}  // namespace
}  // namespace ddpbench
