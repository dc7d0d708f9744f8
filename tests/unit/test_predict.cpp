// The scaling predictor (core/analysis/predict.hpp) against hand-computed numbers: the cost models'
// coefficients, the alpha-beta fit on synthetic rows with known alpha and beta, the exposed
// communication of a bucket pipeline, and the prediction from the fixture files
// tests/fixtures/predict_{run,comm}.json (their numbers are in the comments below).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "common/testutil.hpp"
#include "core/analysis/predict.hpp"
#include "core/util/errors.hpp"

namespace ddpbench {
namespace {

using ::testing::HasSubstr;
using testutil::usage_error;

const std::string kFix = DDPBENCH_SOURCE_DIR "/tests/fixtures/";

// Relative comparison for the values computed by hand below.
#define EXPECT_REL(actual, expected) EXPECT_NEAR((actual), (expected), 1e-9 * std::abs(expected) + 1e-15)

TEST(CostModel, RingAllreduceCoefficients) {
  // T = 2(p-1) alpha + 2(p-1)/p n beta, n = 1000 bytes.
  CostTerms t = cost_terms("allreduce", CostModel::ring, 2, 1000);
  EXPECT_DOUBLE_EQ(t.alpha_coef, 2);
  EXPECT_DOUBLE_EQ(t.beta_coef, 1000);
  t = cost_terms("allreduce", CostModel::ring, 8, 1000);
  EXPECT_DOUBLE_EQ(t.alpha_coef, 14);
  EXPECT_DOUBLE_EQ(t.beta_coef, 1750);
  t = cost_terms("allreduce", CostModel::ring, 4096, 1000);
  EXPECT_DOUBLE_EQ(t.alpha_coef, 8190);
  EXPECT_DOUBLE_EQ(t.beta_coef, 1999.51171875);  // 2 * 4095/4096 * 1000
}

TEST(CostModel, TreeAllreduceCoefficients) {
  // T = 2 ceil(log2 p) alpha + 2 n beta.
  CostTerms t = cost_terms("allreduce", CostModel::tree, 2, 1000);
  EXPECT_DOUBLE_EQ(t.alpha_coef, 2);
  EXPECT_DOUBLE_EQ(t.beta_coef, 2000);
  t = cost_terms("allreduce", CostModel::tree, 8, 1000);
  EXPECT_DOUBLE_EQ(t.alpha_coef, 6);
  EXPECT_DOUBLE_EQ(t.beta_coef, 2000);
  t = cost_terms("allreduce", CostModel::tree, 4096, 1000);
  EXPECT_DOUBLE_EQ(t.alpha_coef, 24);
  EXPECT_DOUBLE_EQ(t.beta_coef, 2000);
  EXPECT_DOUBLE_EQ(cost_terms("allreduce", CostModel::tree, 5, 1000).alpha_coef, 6);  // ceil(log2 5) = 3
}

TEST(CostModel, TimesAtScale) {
  // alpha 10 us, beta 1 ns/byte (1 GB/s), 100 MB at 4096 ranks:
  // ring 8190 * 10 us + 2 * 4095/4096 * 0.1 s = 0.0819 + 0.199951171875; tree 24 * 10 us + 0.2 s.
  const AlphaBeta ab{10e-6, 1e-9};
  EXPECT_REL(model_time_s(ab, "allreduce", CostModel::ring, 4096, 1e8), 0.281851171875);
  EXPECT_REL(model_time_s(ab, "allreduce", CostModel::tree, 4096, 1e8), 0.20024);
  // p = 2: ring 2 alpha + n beta = 20 us + 100 ms, tree 2 alpha + 2 n beta.
  EXPECT_REL(model_time_s(ab, "allreduce", CostModel::ring, 2, 1e8), 0.10002);
  EXPECT_REL(model_time_s(ab, "allreduce", CostModel::tree, 2, 1e8), 0.20002);
  // reduce_scatter / all_gather: (p-1) alpha + (p-1)/p n beta; 8 ranks, 8 MB: 70 us + 7 ms.
  EXPECT_REL(model_time_s(ab, "reduce_scatter", CostModel::ring, 8, 8e6), 0.00707);
  EXPECT_REL(model_time_s(ab, "all_gather", CostModel::ring, 8, 8e6), 0.00707);
  EXPECT_EQ(model_time_s(ab, "allreduce", CostModel::ring, 1, 1e8), 0);  // one rank: nothing to send
}

TEST(CostModel, RefusesWhatItDoesNotModel) {
  EXPECT_THAT(usage_error([] { cost_terms("broadcast", CostModel::ring, 4, 10); }), HasSubstr("no ring cost model"));
  EXPECT_THAT(usage_error([] { cost_terms("all_gather", CostModel::tree, 4, 10); }), HasSubstr("no tree cost model"));
  EXPECT_THAT(usage_error([] { cost_terms("allreduce", CostModel::ring, 0, 10); }), HasSubstr("not positive"));
  EXPECT_EQ(parse_cost_models("both").size(), 2u);
  EXPECT_THAT(usage_error([] { parse_cost_models("star"); }), HasSubstr("use ring, tree or both"));
}

// Rows of one collective whose times are exactly the model's with known alpha and beta.
std::vector<CommResult> synthetic(const std::string& coll, CostModel model, int p, int nodes, AlphaBeta ab) {
  std::vector<CommResult> rows;
  for (long long n = 4096; n <= 64LL << 20; n *= 8) {
    CommResult r;
    r.collective = coll;
    r.dtype = "float32";
    r.bytes = n;
    r.world_size = p;
    r.nodes = nodes;
    r.time_us = model_time_s(ab, coll, model, p, static_cast<double>(n)) * 1e6;
    rows.push_back(r);
  }
  return rows;
}

TEST(AlphaBetaFit, RecoversKnownAlphaAndBeta) {
  const AlphaBeta ab{7.5e-6, 2.5e-10};  // 7.5 us, 4 GB/s
  std::vector<CostTerms> terms;
  std::vector<double> times;
  for (const auto& r : synthetic("allreduce", CostModel::ring, 8, 1, ab)) {
    terms.push_back(cost_terms("allreduce", CostModel::ring, 8, static_cast<double>(r.bytes)));
    times.push_back(r.time_us * 1e-6);
  }
  const LinearFit f = fit_alpha_beta(terms, times);
  EXPECT_REL(f.ab.alpha_s, 7.5e-6);
  EXPECT_REL(f.ab.beta_s_per_byte, 2.5e-10);
  EXPECT_NEAR(f.r2, 1.0, 1e-12);
  EXPECT_LT(f.max_rel_residual, 1e-9);
}

TEST(AlphaBetaFit, NeedsTwoSizes) {
  const std::vector<CostTerms> one_size = {{2, 1000}, {2, 1000}};
  EXPECT_THAT(usage_error([&] { fit_alpha_beta(one_size, {1e-3, 1.1e-3}); }), HasSubstr("two or more sizes"));
  EXPECT_THAT(usage_error([] { fit_alpha_beta({{2, 1}, {2, 5}}, {1e-3, 0}); }), HasSubstr("not positive"));
}

TEST(AlphaBetaFit, PerLevelWorldSizeAndModel) {
  const AlphaBeta intra{20e-6, 1e-9}, inter{50e-6, 4e-9};
  std::vector<CommResult> rows = synthetic("allreduce", CostModel::ring, 4, 1, intra);
  for (const auto& r : synthetic("allreduce", CostModel::ring, 2, 1, intra)) rows.push_back(r);
  for (const auto& r : synthetic("allreduce", CostModel::ring, 4, 2, inter)) rows.push_back(r);
  for (const auto& r : synthetic("reduce_scatter", CostModel::ring, 4, 1, intra)) rows.push_back(r);
  CommResult bad = rows.front();
  bad.wrong = 3;
  bad.time_us *= 100;  // would spoil the fit were it used
  rows.push_back(bad);
  CommResult bcast = rows.front();
  bcast.collective = "broadcast";
  rows.push_back(bcast);

  std::vector<std::string> notes;
  const auto fits = fit_comm(rows, notes);
  const auto find = [&](const std::string& c, LinkLevel l, CostModel m, int p) -> const CommFit* {
    for (const auto& f : fits)
      if (f.collective == c && f.level == l && f.model == m && f.world_size == p) return &f;
    return nullptr;
  };
  // Ring fits give back the ring alpha and beta, per world size and pooled over 2 and 4.
  for (int p : {2, 4, 0}) {
    const CommFit* f = find("allreduce", LinkLevel::intra, CostModel::ring, p);
    ASSERT_NE(f, nullptr) << p;
    EXPECT_REL(f->fit.ab.alpha_s, 20e-6);
    EXPECT_REL(f->fit.ab.beta_s_per_byte, 1e-9);
    EXPECT_REL(f->bandwidth_gbps(), 1.0);
  }
  EXPECT_EQ(find("allreduce", LinkLevel::intra, CostModel::ring, 0)->world_sizes, (std::vector<int>{2, 4}));
  const CommFit* in = find("allreduce", LinkLevel::inter, CostModel::ring, 4);
  ASSERT_NE(in, nullptr);
  EXPECT_REL(in->fit.ab.alpha_s, 50e-6);
  EXPECT_REL(in->fit.ab.beta_s_per_byte, 4e-9);
  EXPECT_EQ(find("allreduce", LinkLevel::inter, CostModel::ring, 0), nullptr);  // one world size: no pooled fit
  // The tree model inverted at p = 4 on ring-generated times: 6 alpha_r = 4 alpha_t, 1.5 beta_r = 2 beta_t.
  const CommFit* tree = find("allreduce", LinkLevel::inter, CostModel::tree, 4);
  ASSERT_NE(tree, nullptr);
  EXPECT_REL(tree->fit.ab.alpha_s, 75e-6);
  EXPECT_REL(tree->fit.ab.beta_s_per_byte, 3e-9);
  const CommFit* rs = find("reduce_scatter", LinkLevel::intra, CostModel::ring, 4);
  ASSERT_NE(rs, nullptr);
  EXPECT_REL(rs->fit.ab.alpha_s, 20e-6);
  EXPECT_EQ(find("reduce_scatter", LinkLevel::intra, CostModel::tree, 4), nullptr);
  EXPECT_THAT(notes, ::testing::Contains(HasSubstr("1 comm row(s) with #wrong > 0")));
  EXPECT_THAT(notes, ::testing::Contains(HasSubstr("not fitted (no cost model here): broadcast")));
}

TEST(ExposedComm, BucketPipelineByHand) {
  // Backward 50 ms; buckets of 1 and 4 units ready at 10 and 50 ms.
  // Comm faster than compute: only the last bucket's 4 ms is exposed.
  EXPECT_REL(exposed_comm_s({1, 4}, {0.001, 0.004}, 0.05), 0.004);
  // Comm slower: 10 ms + 50 ms + 40 ms = 100 ms, exposed 50 ms = T_comm - (hideable - ready_0).
  EXPECT_REL(exposed_comm_s({1, 4}, {0.05, 0.04}, 0.05), 0.05);
  // A long middle bucket: ready 10, 20, 30 ms; max(10+22, 20+21, 30+1) = 41 ms, exposed 11 ms.
  EXPECT_REL(exposed_comm_s({1, 1, 1}, {0.001, 0.02, 0.001}, 0.03), 0.011);
  // Nothing to hide behind: all of it.
  EXPECT_REL(exposed_comm_s({1, 1}, {0.002, 0.003}, 0.0), 0.005);
  EXPECT_EQ(exposed_comm_s({}, {}, 0.05), 0);
  EXPECT_THROW(exposed_comm_s({1}, {}, 0.05), std::invalid_argument);
}

// The backward and the allreduces sharing a CPU budget, worked by hand (fluid processor
// sharing: while both run the allreduce gets min(phi, 1/2) of the budget, the backward the rest).
TEST(OverlapTimeline, CpuSharingByHand) {
  // No sharing: the FIFO pipeline of exposed_comm_s; the backward is never slowed.
  auto none = overlap_timeline({1, 4}, {0.05, 0.04}, 0.05, 0);
  EXPECT_REL(none.backward_end_s, 0.05);
  EXPECT_REL(none.comm_end_s, 0.10);
  EXPECT_REL(none.exposed_s(), 0.05);
  EXPECT_REL(none.span_s(), 0.10);
  // One bucket, ready when the backward ends: nothing overlaps, nothing is shared.
  auto one = overlap_timeline({1}, {0.03}, 0.05, 1);
  EXPECT_REL(one.backward_end_s, 0.05);
  EXPECT_REL(one.comm_end_s, 0.08);
  // phi = 1 (the allreduce alone keeps the whole budget busy): two buckets of 20 ms, backward
  // 40 ms. Bucket 0 ready at 20 ms; then each runs at half speed, so the backward's last
  // 20 ms and bucket 0's 20 ms both end at 60 ms; bucket 1 alone ends at 80 ms (all 80 ms of
  // CPU work done back to back).
  auto full = overlap_timeline({1, 1}, {0.02, 0.02}, 0.04, 1);
  EXPECT_REL(full.backward_end_s, 0.06);
  EXPECT_REL(full.comm_end_s, 0.08);
  EXPECT_REL(full.exposed_s(), 0.02);
  // phi = 0.25: the allreduce takes a quarter of the budget and runs at full speed, the
  // backward at 3/4. Bucket 0 ends at 40 ms with the backward at 20 + 15 = 35 ms of its work;
  // alone it reaches 40 ms at 45 ms, bucket 1 then ends at 65 ms.
  auto quarter = overlap_timeline({1, 1}, {0.02, 0.02}, 0.04, 0.25);
  EXPECT_REL(quarter.backward_end_s, 0.045);
  EXPECT_REL(quarter.comm_end_s, 0.065);
  // phi = 0.8: half the budget each; the allreduce at 0.5 / 0.8 = 0.625 of its speed (bucket 0
  // ends 32 ms after 20 ms), the backward at 0.5 (at 52 ms: 20 + 16 = 36 ms of work), then
  // alone to 56 ms; bucket 1 ends at 76 ms.
  auto most = overlap_timeline({1, 1}, {0.02, 0.02}, 0.04, 0.8);
  EXPECT_REL(most.backward_end_s, 0.056);
  EXPECT_REL(most.comm_end_s, 0.076);
  // No buckets: the backward alone.
  EXPECT_REL(overlap_timeline({}, {}, 0.05, 1).backward_end_s, 0.05);
  EXPECT_THROW(overlap_timeline({1}, {0.01}, 0.05, 1.5), std::invalid_argument);
  EXPECT_THROW(overlap_timeline({1}, {-0.01}, 0.05, 0.5), std::invalid_argument);
  EXPECT_THROW(overlap_timeline({1, 1}, {0.01}, 0.05, 0.5), std::invalid_argument);
}

NamedResult fixture(const std::string& name) { return {name, read_result_file(kFix + name)}; }

const PredictedPoint& point(const Prediction& p, int base_world, int world, CostModel m) {
  for (const auto& rp : p.rows)
    if (rp.base.world_size == base_world)
      for (const auto& pt : rp.points)
        if (pt.world_size == world && pt.model == m) return pt;
  throw std::logic_error("no such point");
}

// The fixtures: comm rows are the ring model with alpha 20 us, beta 1 ns/byte on 2 ranks of one
// node and alpha 50 us, beta 4 ns/byte on 4 ranks of 2 nodes (tree inverted at 4 ranks:
// 75 us, 3 ns/byte). The run: no-DDP p50 0.100 s (160 ex/s per rank at batch 16); DDP on
// 2 ranks (1 node) p50 0.110 s, exposed 0.005 s; on 4 ranks (2 nodes) p50 0.140 s, exposed
// 0.030 s; both backward compute 0.050 s, buckets of 1 MiB and 4 MiB (ready at 10 and 50 ms).
// Each base row's comm factor k makes the model reproduce its own measured exposed comm; the
// predictions at other sizes multiply every modelled allreduce by it.
TEST(Predict, FixturesByHand) {
  const Prediction p = build_prediction({fixture("predict_run.json")}, {fixture("predict_comm.json")}, {});
  EXPECT_EQ(p.gpus_per_node, 2);
  ASSERT_EQ(p.rows.size(), 2u);
  // The 2-rank row (intra): T = 2 alpha + n beta: 1.088576 ms and 4.234304 ms; exposed = the
  // last bucket (10 + 5.32288 < 50 + 4.234304) = 4.234304 ms against 5 ms measured, so
  // k2 = 5 / 4.234304 (the last bucket stays the critical path: 10 + k2 5.32288 < 55).
  const double k2 = 0.005 / 0.004234304;
  EXPECT_REL(p.rows[0].comm_factor.at(CostModel::ring), k2);
  const PredictedPoint& a = point(p, 2, 2, CostModel::ring);
  EXPECT_EQ(a.level, LinkLevel::intra);
  EXPECT_FALSE(a.level_substituted);
  EXPECT_REL(a.comm_s, k2 * 0.00532288);
  EXPECT_REL(a.exposed_s, 0.005);
  EXPECT_REL(a.step_s, 0.11);  // its own size: reproduced
  EXPECT_NEAR(*a.error, 0.0, 1e-9);
  EXPECT_REL(*a.efficiency, 16 / 0.11 / 160);
  EXPECT_REL(*a.measured_efficiency, 16 / 0.11 / 160);
  EXPECT_REL(*a.measured_exposed_s, 0.005);
  // Tree, fitted at the same 2 ranks, gives the same times there.
  EXPECT_REL(point(p, 2, 2, CostModel::tree).step_s, 0.11);
  // At 4 ranks (measured on 2 nodes: inter): T = 6 alpha + 1.5 n beta = 300 us + 6 ns * n:
  // 6.591456 and 25.465824 ms, times k2; exposed the last bucket; from the 2-rank row 0.105 + that.
  const double s24 = 0.105 + k2 * 0.025465824;
  EXPECT_REL(point(p, 2, 4, CostModel::ring).step_s, s24);
  EXPECT_REL(*point(p, 2, 4, CostModel::ring).error, (s24 - 0.14) / 0.14);
  EXPECT_EQ(point(p, 2, 4, CostModel::ring).nodes, 2);
  // The backtest of the 2-rank row: its prediction of the 4-rank row is off by |s24 - 0.14| / 0.14.
  EXPECT_REL(*point(p, 2, 8, CostModel::ring).backtest_error, std::abs(s24 - 0.14) / 0.14);
  // From the 4-rank row (0.140 - 0.030 = 0.110 s without exposed comm) at its own size: k4 =
  // 30 / 25.465824 reproduces it.
  EXPECT_REL(p.rows[1].comm_factor.at(CostModel::ring), 0.030 / 0.025465824);
  EXPECT_REL(point(p, 4, 4, CostModel::ring).step_s, 0.14);
  // 8 ranks: 4 nodes, inter. Ring 14 alpha + 1.75 n beta = 700 us + 7 ns * n: buckets 8.040032 and
  // 30.060128 ms, times k2: max(10 + k2 38.10016, 50 + k2 30.060128) - 50 = k2 30.060128 ms exposed.
  const PredictedPoint& r8 = point(p, 2, 8, CostModel::ring);
  EXPECT_EQ(r8.nodes, 4);
  EXPECT_EQ(r8.level, LinkLevel::inter);
  EXPECT_REL(r8.comm_s, k2 * 0.03810016);
  EXPECT_REL(r8.step_s, 0.105 + k2 * 0.030060128);
  EXPECT_FALSE(r8.measured_step_s.has_value());
  EXPECT_FALSE(r8.error.has_value());
  // Tree 6 alpha + 2 n beta = 450 us + 6 ns * n: 6.741456 and 25.615824 ms; exposed the last.
  EXPECT_REL(point(p, 2, 8, CostModel::tree).step_s, 0.105 + point(p, 2, 8, CostModel::tree).exposed_s);
  EXPECT_REL(point(p, 2, 8, CostModel::tree).exposed_s, p.rows[0].comm_factor.at(CostModel::tree) * 0.025615824);
  // 4096 ranks, ring: 8190 * 50 us + 2 * 4095/4096 * 4 ns * n per bucket; the comm-bound case:
  // exposed = T_comm - (50 ms - 10 ms).
  const double t0 = 8190 * 50e-6 + 2 * 4095.0 / 4096 * 4e-9 * 1048576;
  const double t1 = 8190 * 50e-6 + 2 * 4095.0 / 4096 * 4e-9 * 4194304;
  EXPECT_REL(point(p, 2, 4096, CostModel::ring).step_s, 0.105 + k2 * (t0 + t1) - 0.04);
}

TEST(Predict, GpusPerNodeChoosesTheLevel) {
  PredictOptions o;
  o.gpus_per_node = 8;
  o.world_sizes = {8};
  o.models = {CostModel::ring};
  const Prediction p = build_prediction({fixture("predict_run.json")}, {fixture("predict_comm.json")}, o);
  // 8 ranks on one node: intra alpha-beta, 14 * 20 us + 1.75 ns * n: 2.115008 and 7.620032 ms.
  const PredictedPoint& r8 = point(p, 2, 8, CostModel::ring);
  EXPECT_EQ(r8.nodes, 1);
  EXPECT_EQ(r8.level, LinkLevel::intra);
  EXPECT_REL(r8.step_s, 0.105 + 0.005 / 0.004234304 * 0.007620032);  // times the comm factor
  EXPECT_EQ(p.rows.front().points.size(), 3u);                       // 2 and 4 (measured) and 8
}

TEST(Predict, MissingLevelIsSubstitutedAndSaid) {
  NamedResult comm = fixture("predict_comm.json");
  auto& rows = comm.file.comm_results;
  rows.erase(std::remove_if(rows.begin(), rows.end(), [](const CommResult& r) { return r.nodes > 1; }), rows.end());
  const Prediction p = build_prediction({fixture("predict_run.json")}, {comm}, {});
  const PredictedPoint& r4 = point(p, 2, 4, CostModel::ring);
  EXPECT_EQ(r4.level, LinkLevel::intra);
  EXPECT_TRUE(r4.level_substituted);
  EXPECT_THAT(p.notes, ::testing::Contains(HasSubstr("no allreduce fit of that level")));
  EXPECT_THAT(render_prediction(p, TableFormat::text), HasSubstr("intra-node*"));
}

TEST(Predict, CompressionHookScalesTheBuckets) {
  NamedResult run = fixture("predict_run.json");
  for (auto& r : run.file.results)
    if (r.ddp) {
      r.ddp_options.comm_hook = "fp16";
      r.communication.wire_bytes_per_step = 5242880 / 2;
    }
  const Prediction p = build_prediction({run}, {fixture("predict_comm.json")}, {});
  // Half the bytes, float32's fit (no float16 rows): 2 alpha + n/2 beta: last bucket 40 us + 2.097152 ms
  // modelled, against 5 ms measured: the comm factor.
  EXPECT_REL(p.rows[0].comm_factor.at(CostModel::ring), 0.005 / 0.002137152);
  EXPECT_THAT(p.notes, ::testing::Contains(HasSubstr("no float16 allreduce fit")));
  for (auto& r : run.file.results) r.ddp_options.comm_hook = "powersgd:2";
  EXPECT_THAT(usage_error([&] { build_prediction({run}, {fixture("predict_comm.json")}, {}); }),
              HasSubstr("no weak-scaling DDP row"));
}

TEST(Predict, NegativeAlphaIsTakenAsZero) {
  // Intra-node rows generated with alpha = -5 us, beta 1 ns/byte (positive times from 32 KiB up; the
  // 4 KiB row, negative, is left out).
  NamedResult comm = fixture("predict_comm.json");
  comm.file.comm_results = synthetic("allreduce", CostModel::ring, 2, 1, AlphaBeta{-5e-6, 1e-9});
  PredictOptions o;
  o.world_sizes = {};
  o.models = {CostModel::ring};
  const Prediction p = build_prediction({fixture("predict_run.json")}, {comm}, o);
  ASSERT_EQ(p.fits.size(), 1u);
  EXPECT_REL(p.fits[0].fit.ab.alpha_s, -5e-6);  // reported as fitted
  // Used as 0: at 2 ranks the last bucket costs n beta = 4.194304 ms, against 5 ms measured.
  EXPECT_REL(p.rows[0].comm_factor.at(CostModel::ring), 0.005 / 0.004194304);
  EXPECT_THAT(p.notes, ::testing::Contains(HasSubstr("alpha < 0")));
}

// Timings that describe other links than the run used: 40 us (2 ranks) / 300 us (4 ranks) +
// 1 ps per byte (1/beta = 1,000 GB/s). The 4-rank row's modelled exposed communication is
// then 0.304 ms against 30 ms measured: the comm factor would be about 100, beyond 64, so the
// row is uncalibrated (k = 1). Its prediction of its own size is 0.110304 s against 0.14 s
// measured, -21.2%, and the backtest says so (the base's own size counts); nothing is
// predicted at the unmeasured sizes.
TEST(Predict, AnUncalibratedRowPredictsNoUnmeasuredSize) {
  NamedResult comm = fixture("predict_comm.json");
  for (auto& r : comm.file.comm_results) r.time_us = (r.world_size == 2 ? 40 : 300) + static_cast<double>(r.bytes) * 1e-6;
  const Prediction p = build_prediction({fixture("predict_run.json")}, {comm}, {});
  ASSERT_EQ(p.rows.size(), 2u);
  const RowPrediction& four = p.rows[1];
  ASSERT_EQ(four.base.world_size, 4);
  ASSERT_TRUE(four.uncalibrated.count(CostModel::ring));
  EXPECT_THAT(four.uncalibrated.at(CostModel::ring), HasSubstr("outside [1/64, 64]"));
  EXPECT_EQ(four.comm_factor.at(CostModel::ring), 1.0);
  const PredictedPoint& own = point(p, 4, 4, CostModel::ring);
  // The 4-rank fit reproduces its rows exactly (alpha 50 us, 1.5 beta = 1 ps/byte): the buckets
  // cost 301.048576 and 304.194304 us; exposed = the last bucket (ready at 50 ms, after the first ends).
  EXPECT_REL(own.step_s, 0.11 + 304.194304e-6);
  EXPECT_REL(*own.error, (0.11 + 304.194304e-6 - 0.14) / 0.14);
  EXPECT_REL(*own.backtest_error, std::abs(*own.error));
  const PredictedPoint& r8 = point(p, 4, 8, CostModel::ring);
  EXPECT_TRUE(r8.withheld);
  EXPECT_EQ(r8.withheld_reason, "uncalibrated");
  const std::string text = render_prediction(p, TableFormat::text);
  EXPECT_THAT(text, HasSubstr("withheld: uncalibrated"));
  EXPECT_THAT(text, HasSubstr("uncalibrated (ring)"));
}

// A row whose backtest has nothing but its own size (the calibration reproduces it by
// construction) gives no number for an unmeasured size.
TEST(Predict, NoOtherMeasuredSizeIsNoBacktest) {
  NamedResult run = fixture("predict_run.json");
  auto& rows = run.file.results;
  rows.erase(std::remove_if(rows.begin(), rows.end(), [](const BenchResult& r) { return r.ddp && r.world_size == 4; }),
             rows.end());
  const Prediction p = build_prediction({run}, {fixture("predict_comm.json")}, {});
  ASSERT_EQ(p.rows.size(), 1u);
  EXPECT_NEAR(*point(p, 2, 2, CostModel::ring).backtest_error, 0.0, 1e-9);
  EXPECT_TRUE(point(p, 2, 8, CostModel::ring).withheld);
  EXPECT_EQ(point(p, 2, 8, CostModel::ring).withheld_reason, "no backtest");
}

// Flat timings (1/beta beyond any link) predict nothing; times that fall as the size grows
// make their fit unusable, and the other level's fit is used in its place, marked.
TEST(Predict, FitsThatCannotHoldAreNotUsed) {
  const NamedResult run = fixture("predict_run.json");
  NamedResult flat = fixture("predict_comm.json");
  for (auto& r : flat.file.comm_results) r.time_us = (r.world_size == 2 ? 40 : 300) + static_cast<double>(r.bytes) * 1e-12;
  const std::string why = usage_error([&] { build_prediction({run}, {flat}, {}); });
  EXPECT_THAT(why, HasSubstr("beyond any link"));
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  // A 64 MiB row on 2 ranks at 10 ms, after 16.8 ms at 16 MiB: both where the bandwidth term
  // dominates, and more than 25% lower.
  NamedResult falls = fixture("predict_comm.json");
  for (const auto& r : fixture("predict_comm.json").file.comm_results)
    if (r.world_size == 2 && r.bytes == 16777216) {
      CommResult big = r;
      big.bytes = 67108864;
      big.time_us = 10000;
      falls.file.comm_results.push_back(big);
    }
  const Prediction p = build_prediction({run}, {falls}, {});
  for (const auto& f : p.fits)
    if (f.world_size == 2) EXPECT_THAT(f.unusable, HasSubstr("falls as the size grows"));
  EXPECT_TRUE(point(p, 2, 2, CostModel::ring).level_substituted);
  EXPECT_EQ(point(p, 2, 2, CostModel::ring).level, LinkLevel::inter);
}

// Times that scatter where the latency term dominates (a real 2-core Gloo measurement: 2.35 ms
// at 16 KiB, then 1.64 ms at 64 KiB) do not make a fit unusable.
TEST(Predict, ScatterAtLatencyBoundSizesIsTolerated) {
  NamedResult comm = fixture("predict_comm.json");
  for (auto& r : comm.file.comm_results)
    if (r.world_size == 2 && r.bytes == 1024) r.time_us = 2000;  // then 1,088.576 us at 1 MiB: 46% lower
  const Prediction p = build_prediction({fixture("predict_run.json")}, {comm}, {});
  for (const auto& f : p.fits) EXPECT_EQ(f.unusable, "") << f.world_size;
}

// comm rows at the predicted size are used there: with 2- and 4-rank rows on one node (pooled
// 2,4 fit beside each size's own), the 4-rank point takes the 4-rank fit, the 8-rank one the pooled.
TEST(Predict, CommMeasuredAtTheSizeIsUsedThere) {
  NamedResult comm = fixture("predict_comm.json");
  for (auto& r : comm.file.comm_results) r.nodes = 1;
  PredictOptions o;
  o.gpus_per_node = 8;
  o.world_sizes = {8};
  o.models = {CostModel::ring};
  const Prediction p = build_prediction({fixture("predict_run.json")}, {comm}, o);
  const PredictedPoint& r4 = point(p, 2, 4, CostModel::ring);
  EXPECT_TRUE(r4.comm_measured_here);
  EXPECT_REL(r4.ab.alpha_s, 50e-6);  // the 4-rank rows' own alpha and beta
  EXPECT_REL(r4.ab.beta_s_per_byte, 4e-9);
  EXPECT_FALSE(point(p, 2, 8, CostModel::ring).comm_measured_here);
  EXPECT_THAT(render_prediction(p, TableFormat::text), HasSubstr("comm here"));
}

// A fit's CPU cores: its rows' CPU time over their time (100 us at 0.2 cores, 300 us at 0.6:
// 20 + 180 us of CPU in 400 us = 0.5), none when a row lacks it.
TEST(AlphaBetaFit, CpuCoresAreTheRowsCpuTimeOverTheirTime) {
  std::vector<CommResult> rows(2);
  for (auto& r : rows) {
    r.collective = "allreduce";
    r.dtype = "float32";
    r.world_size = 2;
  }
  rows[0].bytes = 1 << 20;
  rows[0].time_us = 100;
  rows[0].cpu_cores = 0.2;
  rows[1].bytes = 1 << 24;
  rows[1].time_us = 300;
  rows[1].cpu_cores = 0.6;
  std::vector<std::string> notes;
  auto fits = fit_comm(rows, notes);
  ASSERT_FALSE(fits.empty());
  ASSERT_TRUE(fits.front().cpu_cores.has_value());
  EXPECT_REL(*fits.front().cpu_cores, 0.5);
  rows[1].cpu_cores.reset();
  fits = fit_comm(rows, notes);
  ASSERT_FALSE(fits.empty());
  EXPECT_FALSE(fits.front().cpu_cores.has_value());
}

// CPU rows (the fixture's) whose run measured cpu_cores and whose comm rows measured the
// allreduce's: the backward and the allreduces share the cores (overlap_timeline with
// phi = comm's cores / the row's). The calibration reproduces both the base's measured backward
// and its exposed communication at its size, and every other size is that timeline with the
// backward alone.
TEST(Predict, GlooOnCpuSharesTheCoresWithTheBackward) {
  NamedResult run = fixture("predict_run.json");
  NamedResult comm = fixture("predict_comm.json");
  for (auto& r : run.file.results) r.metrics["cpu_cores"] = r.world_size == 4 ? 0.4 : 0.5;
  for (auto& c : comm.file.comm_results) c.cpu_cores = 0.25;
  PredictOptions o;
  o.world_sizes = {1, 8};
  o.models = {CostModel::ring};
  const Prediction p = build_prediction({run}, {comm}, o);
  const RowPrediction& r2 = p.rows.at(0);
  ASSERT_EQ(r2.base.world_size, 2);
  ASSERT_TRUE(r2.base.cpu_cores.has_value());
  EXPECT_REL(*r2.base.cpu_cores, 0.5);
  const PredictedPoint& own = point(p, 2, 2, CostModel::ring);
  EXPECT_REL(own.cpu_share, 0.5);    // 0.25 cores in comm / 0.5 in the run
  EXPECT_REL(own.backward_s, 0.05);  // the measured backward compute
  EXPECT_REL(own.exposed_s, 0.005);  // and exposed communication
  EXPECT_REL(own.step_s, 0.11);
  // The 4-rank row read 0.4 cores (waiting on the network): its budget is the 2-rank row's 0.5.
  EXPECT_REL(*p.rows.at(1).base.cpu_cores, 0.5);
  EXPECT_REL(point(p, 4, 4, CostModel::ring).cpu_share, 0.5);
  const double alone = r2.backward_alone_s.at(CostModel::ring);
  EXPECT_LT(alone, 0.05);  // the allreduce beside it took some of its CPU
  // 1 rank: no allreduce, the backward alone: 0.11 - 0.005 - 0.05 + alone.
  EXPECT_REL(point(p, 2, 1, CostModel::ring).step_s, 0.055 + alone);
  // 8 ranks (4 nodes, inter: 700 us + 7 ns * n per bucket, times the comm factor), the same timeline.
  const double k = r2.comm_factor.at(CostModel::ring);
  const OverlapTimeline tl =
      overlap_timeline({1048576, 4194304}, {k * (700e-6 + 7e-9 * 1048576), k * (700e-6 + 7e-9 * 4194304)}, alone, 0.5);
  EXPECT_REL(point(p, 2, 8, CostModel::ring).step_s, 0.055 + tl.span_s());
  EXPECT_REL(point(p, 2, 8, CostModel::ring).backward_s, tl.backward_end_s);
  // The same files measured on GPUs: nothing is shared (the collective runs on the GPU).
  NamedResult gpu = run;
  gpu.file.environment["device_type"] = "cuda";
  const Prediction g = build_prediction({gpu}, {comm}, o);
  EXPECT_EQ(point(g, 2, 8, CostModel::ring).cpu_share, 0);
  EXPECT_REL(g.rows.at(0).backward_alone_s.at(CostModel::ring), 0.05);
  // One comm row without cpu_cores (an older file): the fit has none, nothing is shared.
  comm.file.comm_results.front().cpu_cores.reset();
  EXPECT_EQ(point(build_prediction({run}, {comm}, o), 2, 2, CostModel::ring).cpu_share, 0);
  EXPECT_THAT(render_prediction(p, TableFormat::text), HasSubstr("CPU shared (ring)"));
}

// The budget counts the no-DDP baseline's cores (the step alone, nothing to wait for): a file
// whose DDP rows read fewer cores, waiting on the network, without a 1-rank DDP row, divides by it.
TEST(Predict, CpuBudgetIncludesTheNoDdpBaseline) {
  NamedResult run = fixture("predict_run.json");
  NamedResult comm = fixture("predict_comm.json");
  for (auto& r : run.file.results) r.metrics["cpu_cores"] = r.ddp ? 0.5 : 0.8;
  for (auto& c : comm.file.comm_results) c.cpu_cores = 0.25;
  PredictOptions o;
  o.world_sizes = {8};
  o.models = {CostModel::ring};
  const Prediction p = build_prediction({run}, {comm}, o);
  ASSERT_EQ(p.rows.at(0).base.world_size, 2);
  EXPECT_REL(*p.rows.at(0).base.cpu_cores, 0.8);
  EXPECT_REL(point(p, 2, 2, CostModel::ring).cpu_share, 0.25 / 0.8);
  // A baseline of another configuration (another batch) is not this series' budget.
  for (auto& r : run.file.results)
    if (!r.ddp) r.batch_per_rank *= 2;
  EXPECT_REL(*build_prediction({run}, {comm}, o).rows.at(0).base.cpu_cores, 0.5);
}

TEST(Predict, BadInputIsOneLineNamingTheFix) {
  const NamedResult run = fixture("predict_run.json"), comm = fixture("predict_comm.json");
  EXPECT_THAT(usage_error([&] { build_prediction({run}, {}, {}); }), HasSubstr("pass --comm FILE"));
  EXPECT_THAT(usage_error([&] { build_prediction({comm}, {comm}, {}); }), HasSubstr("is a comm result"));
  EXPECT_THAT(usage_error([&] { build_prediction({run}, {run}, {}); }), HasSubstr("--comm takes files written by"));
  NamedResult one_size = comm;
  for (auto& r : one_size.file.comm_results) r.bytes = 1024;
  EXPECT_THAT(usage_error([&] { build_prediction({run}, {one_size}, {}); }), HasSubstr("two or more sizes"));
  NamedResult rs_only = comm;
  for (auto& r : rs_only.file.comm_results) r.collective = "reduce_scatter";
  EXPECT_THAT(usage_error([&] { build_prediction({run}, {rs_only}, {}); }), HasSubstr("no allreduce timings"));
  NamedResult flat = comm;  // times that do not grow with size: beta <= 0
  for (auto& r : flat.file.comm_results) r.time_us = 100 - static_cast<double>(r.bytes) * 1e-6;
  EXPECT_THAT(usage_error([&] { build_prediction({run}, {flat}, {}); }), HasSubstr("no bandwidth"));
  NamedResult old = run;
  for (auto& r : old.file.results) r.breakdown = RowBreakdown{};
  EXPECT_THAT(usage_error([&] { build_prediction({old}, {comm}, {}); }), HasSubstr("step breakdown"));
  PredictOptions o;
  o.world_sizes = {0};
  EXPECT_THAT(usage_error([&] { build_prediction({run}, {comm}, o); }), HasSubstr("--world-sizes 0"));
  for (const auto& msg : {usage_error([&] { build_prediction({run}, {}, {}); }),
                          usage_error([&] { build_prediction({old}, {comm}, {}); })})
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST(Predict, TablesInEveryFormat) {
  const Prediction p = build_prediction({fixture("predict_run.json")}, {fixture("predict_comm.json")}, {});
  const std::string text = render_prediction(p, TableFormat::text);
  EXPECT_THAT(text, HasSubstr("alpha-beta fits"));
  EXPECT_THAT(text, HasSubstr("Predicted step time: resnet18"));
  EXPECT_THAT(text, HasSubstr("-3.5%"));  // the 4-rank row from the 2-rank one (FixturesByHand)
  EXPECT_THAT(text, HasSubstr("comm factor 1.18 (ring)"));
  EXPECT_THAT(text, HasSubstr("20.00 us"));
  const auto j = nlohmann::json::parse(render_prediction(p, TableFormat::json));
  EXPECT_EQ(j["gpus_per_node"], 2);
  ASSERT_EQ(j["tables"].size(), 3u);
  EXPECT_EQ(j["tables"][0]["kind"], "fit");
  EXPECT_EQ(j["tables"][1]["kind"], "prediction");
  const auto& row = j["tables"][1]["rows"][0];
  EXPECT_EQ(row["world_size"], 2);
  EXPECT_NEAR(row["step_s"].get<double>(), 0.11, 1e-12);
  EXPECT_EQ(render_prediction(p, TableFormat::csv).rfind("table,", 0), 0u);
}

}  // namespace
}  // namespace ddpbench
