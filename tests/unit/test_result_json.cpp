// Result file: JSON round trip, schema major-version check, atomic write, writability.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/errors.hpp"
#include "core/result.hpp"
#include "common/testutil.hpp"

namespace fs = std::filesystem;

namespace ddpbench {
namespace {

using ::testing::HasSubstr;

using testutil::TempDir;

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
    s.telemetry = {{"peak_memory_bytes", 123}};
    r.ranks.push_back(s);
  }
  r.summary = summarize({{0.1, 0.2, 0.3}, {1.1, 1.2, 1.3}}, 8, 2);
  r.checks = {{"grad_check_passed", true}};
  f.results.push_back(r);
  return f;
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

TEST(ResultJson, SchemaMajor) {
  EXPECT_EQ(schema_major("1.0.0"), 1);
  EXPECT_EQ(schema_major("12.3.4"), 12);
  EXPECT_THROW(schema_major("v1"), UsageError);
  EXPECT_THROW(schema_major(""), UsageError);
}

}  // namespace
}  // namespace ddpbench
