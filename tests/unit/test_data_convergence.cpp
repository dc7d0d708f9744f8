// Time-to-loss bookkeeping (core/analysis/convergence, core/render/report_convergence) and the time-to-loss
// options of RunConfig: targets, the bounded loss curve, the shipped baselines file (checked
// against Zalando's README table), the report's table, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "common/testutil.hpp"
#include "core/analysis/convergence.hpp"
#include "core/config/run_config.hpp"
#include "core/render/report_convergence.hpp"

namespace ddpbench {
namespace {

TEST(Convergence, TargetsCompareTheRightWay) {
  EXPECT_EQ(make_target(std::nullopt, std::nullopt).metric, "none");
  const auto acc = make_target(std::nullopt, 0.85);
  EXPECT_TRUE(target_reached(acc, 9.0, 0.85));
  EXPECT_FALSE(target_reached(acc, 0.1, 0.8499));
  const auto loss = make_target(0.5, std::nullopt);
  EXPECT_TRUE(target_reached(loss, 0.5, 0.0));
  EXPECT_FALSE(target_reached(loss, 0.51, 1.0));
  EXPECT_FALSE(target_reached(loss, NAN, 1.0));
  EXPECT_FALSE(target_reached(make_target(std::nullopt, std::nullopt), 0.0, 1.0));
}

TEST(Convergence, SubsampleKeepsAtMostTheBoundAndTheLastPoint) {
  EXPECT_TRUE(subsample_positions(0).empty());
  EXPECT_EQ(subsample_positions(5, 10), (std::vector<size_t>{0, 1, 2, 3, 4}));
  // 10 points, at most 4: stride ceil(10 / 4) = 3 -> 0, 3, 6, 9.
  EXPECT_EQ(subsample_positions(10, 4), (std::vector<size_t>{0, 3, 6, 9}));
  // 11 points, at most 4: stride 3 -> 0, 3, 6, 9, and the last (10).
  EXPECT_EQ(subsample_positions(11, 4), (std::vector<size_t>{0, 3, 6, 9, 10}));
  EXPECT_LE(subsample_positions(1'000'000).size(), kMaxLossPoints + 1);
}

TEST(Convergence, ShippedBaselinesAreZalandosTable) {
  const auto j = load_baselines(std::string(DDPBENCH_SOURCE_DIR) + "/benchmark/baselines.json");
  EXPECT_EQ(j["dataset"], "fashion-mnist");
  // Spot checks against the README's "Benchmark" table (zalandoresearch/fashion-mnist @ 55506a9).
  std::map<std::string, double> want = {
      {"ResNet18", 0.949}, {"Human Performance", 0.835}, {"MLP 256-128-100", 0.8833}, {"WRN40-4 8.9M params", 0.967}};
  int found = 0;
  for (const auto& b : j["baselines"])
    if (auto it = want.find(b["classifier"].get<std::string>()); it != want.end()) {
      EXPECT_DOUBLE_EQ(b["test_accuracy"].get<double>(), it->second) << it->first;
      ++found;
    }
  EXPECT_EQ(found, 4);
  EXPECT_EQ(j["baselines"].size(), 37u);
}

TEST(Convergence, NearbyBaselinesNameTheModelAndTheNeighbours) {
  nlohmann::json f = {{"baselines",
                       {{{"classifier", "A"}, {"test_accuracy", 0.80}},
                        {{"classifier", "ResNet18"}, {"test_accuracy", 0.949}},
                        {{"classifier", "B"}, {"test_accuracy", 0.90}},
                        {{"classifier", "C"}, {"test_accuracy", 0.92}},
                        {{"classifier", "Best"}, {"test_accuracy", 0.97}},
                        {{"classifier", "no number"}, {"test_accuracy", "x"}}}}};
  const auto near = nearby_baselines(f, 0.91, "resnet18");
  std::vector<std::string> names;
  for (const auto& b : near) names.push_back(b["classifier"]);
  // Best, the model's own, the nearest above (0.92) and below (0.90), by accuracy.
  EXPECT_EQ(names, (std::vector<std::string>{"Best", "ResNet18", "C", "B"}));
  EXPECT_EQ(baseline_lines(near).size(), 4u);
}

TEST(Convergence, FindsBaselinesNextToTheBinaryOrFromTheEnvironment) {
  testutil::TempDir d;
  std::filesystem::create_directories(d.path / "bin");
  std::filesystem::create_directories(d.path / "share" / "ddpbench");
  const auto installed = d.path / "share" / "ddpbench" / "baselines.json";
  std::ofstream(installed) << "{}";
  ::unsetenv("DDPBENCH_BASELINES");
  EXPECT_EQ(std::filesystem::path(find_baselines_file((d.path / "bin" / "ddpbench").string())),
            installed.lexically_normal());
  // The build tree: build/ddpbench reads build/share/ddpbench.
  std::filesystem::create_directories(d.path / "build" / "share" / "ddpbench");
  std::ofstream(d.path / "build" / "share" / "ddpbench" / "baselines.json") << "{}";
  EXPECT_EQ(std::filesystem::path(find_baselines_file((d.path / "build" / "ddpbench").string())),
            (d.path / "build" / "share" / "ddpbench" / "baselines.json").lexically_normal());
  ::setenv("DDPBENCH_BASELINES", "/x/y.json", 1);
  EXPECT_EQ(find_baselines_file("/nowhere/ddpbench"), "/x/y.json");
  ::unsetenv("DDPBENCH_BASELINES");
  EXPECT_EQ(find_baselines_file("/nowhere/ddpbench"), "");
  EXPECT_NE(testutil::usage_error([&] { load_baselines(installed.string()); }).find("baselines"), std::string::npos);
}

BenchResult ttl_row(int n, double reached_s, bool reached) {
  BenchResult r;
  r.model = "resnet18";
  r.world_size = n;
  r.global_batch = 64;
  r.convergence = nlohmann::json{
      {"dataset", "fashion-mnist"},
      {"epochs",
       {{{"epoch", 1},
         {"wall_s", reached_s},
         {"steps", 10},
         {"train_loss", 0.6},
         {"test_loss", 0.5},
         {"test_accuracy", 0.86},
         {"data_wait_s_mean", 0.002}}}},
      {"target",
       {{"metric", "test_accuracy"},
        {"value", 0.85},
        {"reached", reached},
        {"epoch", reached ? nlohmann::json(1) : nlohmann::json(nullptr)},
        {"wall_s", reached ? nlohmann::json(reached_s) : nlohmann::json(nullptr)}}},
      {"baselines", {{{"classifier", "ResNet18"}, {"test_accuracy", 0.949}}}},
      {"baselines_source",
       "README"}}.get<RowConvergence>();
  return r;
}

TEST(ReportConvergence, TableHasTimeToTargetAndSpeedupAgainstOneRank) {
  NamedResult f;
  f.name = "r.json";
  f.file.environment = {{"device_type", "cpu"}};
  f.file.results = {ttl_row(2, 50, true), ttl_row(1, 80, true), BenchResult{}};
  const auto groups = convergence_groups({f});
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].rows.size(), 2u);
  EXPECT_EQ(groups[0].rows[0].world_size, 1);  // sorted
  const auto tables = convergence_tables(groups);
  ASSERT_EQ(tables.size(), 1u);
  const Table& t = tables[0];
  EXPECT_EQ(t.kind, "time_to_loss");
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[1][t.col("target_wall_s")]), 50.0);
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[1][t.col("speedup")]), 80.0 / 50.0);
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[0][t.col("data_wait_ms")]), 2.0);
  bool quoted = false;
  for (const auto& n : t.notes) quoted = quoted || n.find("ResNet18 0.949") != std::string::npos;
  EXPECT_TRUE(quoted);
}

TEST(RunConfigData, TimeToLossOptionsAreChecked) {
  RunConfig c;
  c.models = {"resnet18"};
  c.world_sizes = {1};
  c.data = "fashion-mnist";
  c.num_classes = 10;
  EXPECT_EQ(testutil::usage_error([&] { validate_data(c); }), "");
  auto bad = [&](auto change, const std::string& expect) {
    RunConfig x = c;
    change(x);
    const std::string e = testutil::usage_error([&] { validate_data(x); });
    EXPECT_NE(e.find(expect), std::string::npos) << "got: " << e;
  };
  bad([](RunConfig& x) { x.data = "mnist"; }, "--data 'mnist' is unknown");
  bad([](RunConfig& x) { x.epochs = 0; }, "--epochs 0");
  bad([](RunConfig& x) { x.target_accuracy = 1.5; }, "--target-accuracy");
  bad([](RunConfig& x) { x.target_loss = -1; }, "--target-loss");
  bad(
      [](RunConfig& x) {
        x.target_loss = 0.5;
        x.target_accuracy = 0.8;
      },
      "give one target");
  bad([](RunConfig& x) { x.loader_workers = -1; }, "--loader-workers");
  bad([](RunConfig& x) { x.num_classes = 1000; }, "--num-classes");
  bad([](RunConfig& x) { x.comm_hooks = {"fp16"}; }, "--comm-hook");
  bad([](RunConfig& x) { x.lr = 0; }, "--lr");
  RunConfig syn;
  syn.models = {"resnet18"};
  syn.world_sizes = {1, 2};
  EXPECT_EQ(planned_rows(syn), 3);  // no-DDP + 2 DDP rows
  syn.data = "fashion-mnist";
  EXPECT_EQ(planned_rows(syn), 2);  // one time-to-loss row per world size
}

}  // namespace
}  // namespace ddpbench
