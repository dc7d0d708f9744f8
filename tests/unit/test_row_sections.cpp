// Typed row sections (core/result/row_sections): each round-trips a hand-written document with
// every field set, keeps what it does not know, and answers the questions readers ask.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/result/result.hpp"
#include "core/result/row_sections.hpp"

namespace ddpbench {
namespace {

using nlohmann::json;

TEST(RowSections, ChecksRoundTripEveryField) {
  const json doc = json::parse(R"({
    "grad_check_ran": true, "grad_check_passed": false, "grad_max_abs_diff_across_ranks": 1.5,
    "grad_max_abs": 2.5, "grad_check_limit": 2.5e-05, "buckets_rebuilt": true,
    "bucket_sizes_bytes": [1048576, 26214400],
    "param_check_ran": true, "param_check_passed": true, "param_max_abs_diff_across_ranks": 0.25,
    "param_max_abs": 3.5, "param_check_limit": 3.5e-05,
    "dp_output_rel_diff": 1e-07, "dp_grad_rel_diff": 2e-07, "dp_check_limit": 0.001, "dp_check_passed": true,
    "fp16_skipped_steps_in_measurement": 3, "note": "by hand"})");
  const RowChecks c = doc.get<RowChecks>();
  EXPECT_EQ(c.grad_check_ran, true);
  EXPECT_EQ(c.grad_check_passed, false);
  EXPECT_EQ(c.grad_max_abs_diff_across_ranks, 1.5);
  EXPECT_EQ(c.grad_max_abs, 2.5);
  EXPECT_EQ(c.grad_check_limit, 2.5e-05);
  EXPECT_EQ(c.buckets_rebuilt, true);
  EXPECT_EQ(c.bucket_sizes_bytes, (std::vector<long long>{1048576, 26214400}));
  EXPECT_EQ(c.param_check_ran, true);
  EXPECT_EQ(c.param_check_passed, true);
  EXPECT_EQ(c.param_max_abs_diff_across_ranks, 0.25);
  EXPECT_EQ(c.param_max_abs, 3.5);
  EXPECT_EQ(c.param_check_limit, 3.5e-05);
  EXPECT_EQ(c.dp_output_rel_diff, 1e-07);
  EXPECT_EQ(c.dp_grad_rel_diff, 2e-07);
  EXPECT_EQ(c.dp_check_limit, 0.001);
  EXPECT_EQ(c.dp_check_passed, true);
  EXPECT_EQ(c.fp16_skipped_steps_in_measurement, 3);
  EXPECT_EQ(c.note, "by hand");
  EXPECT_TRUE(c.extra.empty());
  EXPECT_EQ(json(c), doc);
}

TEST(RowSections, ComputeRoundTripsEveryFieldAndLeavesAnUnknownPeakOut) {
  const json doc = json::parse(R"J({
    "forward_macs_per_example": 4089184256.0, "train_flops_per_example": 24535105536.0,
    "achieved_tflops_per_gpu": 15.7, "peak_tflops": 67.0, "mfu": 0.234, "peak_basis": "FP32 peak (TF32 off)",
    "peak_source": "NVIDIA H100 datasheet", "parameters": 25557032, "trainable_parameters": 25557031})J");
  const RowCompute c = doc.get<RowCompute>();
  EXPECT_EQ(c.forward_macs_per_example, 4089184256.0);
  EXPECT_EQ(c.train_flops_per_example, 24535105536.0);
  EXPECT_EQ(c.achieved_tflops_per_gpu, 15.7);
  EXPECT_EQ(c.peak_tflops, 67.0);
  EXPECT_EQ(c.mfu, 0.234);
  EXPECT_EQ(c.peak_basis, "FP32 peak (TF32 off)");
  EXPECT_EQ(c.peak_source, "NVIDIA H100 datasheet");
  EXPECT_EQ(c.parameters, 25557032);
  EXPECT_EQ(c.trainable_parameters, 25557031);
  EXPECT_EQ(json(c), doc);
  // A device without a peak: no peak, MFU or basis (schema 1.11; older files wrote null,
  // which reads as no value and is written back as it was).
  RowCompute cpu;
  cpu.parameters = 11689512;
  EXPECT_EQ(json(cpu), json::parse(R"({"parameters": 11689512})"));
  const json old = json::parse(R"({"parameters": 11689512, "mfu": null})");
  EXPECT_FALSE(old.get<RowCompute>().mfu.has_value());
  EXPECT_EQ(json(old.get<RowCompute>()), old);
}

TEST(RowSections, CommunicationRoundTripsEveryFieldAndKeepsAStrategysOwnTerms) {
  const json doc = json::parse(R"({
    "trainable_parameters": 11689512, "buckets": 2, "bucket_sizes_bytes": [1048576, 45709472],
    "allreduce_bytes_per_step": 46758048, "wire_bytes_per_step": 23379024.5, "effective_algbw_gbps": 1.25,
    "effective_busbw_gbps": 1.875, "dataset_size": 1281167, "steps_per_epoch": 10010,
    "allreduce_bytes_per_epoch": 468047060480,
    "reduce_scatter_bytes_per_step": 46758048, "formula": "zero2's own terms stay as they are"})");
  const RowCommunication c = doc.get<RowCommunication>();
  EXPECT_EQ(c.trainable_parameters, 11689512);
  EXPECT_EQ(c.buckets, 2);
  EXPECT_EQ(c.bucket_sizes_bytes, (std::vector<long long>{1048576, 45709472}));
  EXPECT_EQ(c.allreduce_bytes_per_step, 46758048);
  EXPECT_EQ(c.wire_bytes_per_step, 23379024.5);
  EXPECT_EQ(c.effective_algbw_gbps, 1.25);
  EXPECT_EQ(c.effective_busbw_gbps, 1.875);
  EXPECT_EQ(c.dataset_size, 1281167);
  EXPECT_EQ(c.steps_per_epoch, 10010);
  EXPECT_EQ(c.allreduce_bytes_per_epoch, 468047060480);
  EXPECT_EQ(c.extra, json::parse(R"({"reduce_scatter_bytes_per_step": 46758048,
                                     "formula": "zero2's own terms stay as they are"})"));
  EXPECT_EQ(json(c), doc);
}

TEST(RowSections, DdpOptionsRoundTripEveryField) {
  // Every field away from DDP's defaults, and a knob of a newer version.
  const json doc = json::parse(R"({
    "bucket_cap_mb": 5.5, "first_bucket_cap_mb": 2.0, "broadcast_buffers": false,
    "gradient_as_bucket_view": true, "static_graph": true, "find_unused_parameters": true,
    "skip_all_reduce_unused_params": true, "comm_hook": "powersgd:4", "init_sync": false})");
  const RowDdpOptions o = doc.get<RowDdpOptions>();
  EXPECT_EQ(o.bucket_cap_mb, 5.5);
  EXPECT_EQ(o.first_bucket_cap_mb, 2.0);
  EXPECT_EQ(o.broadcast_buffers, false);
  EXPECT_EQ(o.gradient_as_bucket_view, true);
  EXPECT_EQ(o.static_graph, true);
  EXPECT_EQ(o.find_unused_parameters, true);
  EXPECT_EQ(o.skip_all_reduce_unused_params, true);
  EXPECT_EQ(o.comm_hook, "powersgd:4");
  EXPECT_EQ(o.extra, json::parse(R"({"init_sync": false})"));
  EXPECT_EQ(json(o), doc);
  // A no-DDP row's empty object: nothing set, written back empty.
  const RowDdpOptions none = json::object().get<RowDdpOptions>();
  EXPECT_FALSE(none.bucket_cap_mb.has_value());
  EXPECT_FALSE(none.comm_hook.has_value());
  EXPECT_EQ(json(none), json::object());
}

TEST(RowSections, BurnInRoundTripsEveryFieldAndReadsABadWindowAsNaN) {
  const json doc = json::parse(R"({
    "duration_s": 60.0, "window_s": 12.0, "drift_threshold_pct": 5.0, "note": "windows of 12 s",
    "per_rank": [{"rank": 0, "ex_per_s": [100.5, 98.25], "steps": 300, "samples_kept": 150, "subsample_stride": 2},
                 {"rank": 1, "ex_per_s": [101.0, 90.0], "steps": 301, "samples_kept": 151, "subsample_stride": 2}],
    "drift": [{"rank": 0, "first_ex_per_s": 100.5, "last_ex_per_s": 98.25, "change_pct": -2.2388,
               "resolution_pct": 0.5, "flagged": false},
              {"rank": 1, "first_ex_per_s": 101.0, "last_ex_per_s": 90.0, "change_pct": -10.8911,
               "resolution_pct": 0.5, "flagged": true}],
    "from_a_newer_version": [1, 2]})");
  const RowBurnIn b = doc.get<RowBurnIn>();
  EXPECT_EQ(b.duration_s, 60.0);
  EXPECT_EQ(b.window_s, 12.0);
  EXPECT_EQ(b.drift_threshold_pct, 5.0);
  EXPECT_EQ(b.note, "windows of 12 s");
  ASSERT_EQ(b.per_rank.size(), 2u);
  EXPECT_EQ(b.per_rank[1].rank, 1);
  EXPECT_EQ(b.per_rank[1].ex_per_s, (std::vector<double>{101.0, 90.0}));
  EXPECT_EQ(b.per_rank[1].steps, 301);
  EXPECT_EQ(b.per_rank[1].samples_kept, 151);
  EXPECT_EQ(b.per_rank[1].subsample_stride, 2);
  ASSERT_EQ(b.drift.size(), 2u);
  EXPECT_EQ(b.drift[1].rank, 1);
  EXPECT_EQ(b.drift[1].first_ex_per_s, 101.0);
  EXPECT_EQ(b.drift[1].last_ex_per_s, 90.0);
  EXPECT_EQ(b.drift[1].change_pct, -10.8911);
  EXPECT_EQ(b.drift[1].resolution_pct, 0.5);
  EXPECT_TRUE(b.drift[1].flagged);
  EXPECT_EQ(b.extra, json::parse(R"({"from_a_newer_version": [1, 2]})"));
  EXPECT_FALSE(b.empty());
  EXPECT_EQ(json(b), doc);
  // A window that is not a number reads as NaN (written back as null); an entry that is not
  // an object is skipped; no burn-in reads as empty and writes nothing.
  const RowBurnIn odd =
      json::parse(R"({"per_rank": [{"rank": 3, "ex_per_s": [1.0, "x"]}, 7], "drift": [null]})").get<RowBurnIn>();
  ASSERT_EQ(odd.per_rank.size(), 1u);
  EXPECT_EQ(odd.per_rank[0].rank, 3);
  ASSERT_EQ(odd.per_rank[0].ex_per_s.size(), 2u);
  EXPECT_TRUE(std::isnan(odd.per_rank[0].ex_per_s[1]));
  EXPECT_TRUE(odd.drift.empty());
  EXPECT_TRUE(json::object().get<RowBurnIn>().empty());
  EXPECT_EQ(json(RowBurnIn{}), json::object());
}

TEST(RowSections, BreakdownRoundTripsEveryFieldAndKeepsDataParallelsSplit) {
  const json doc = json::parse(R"({
    "mean_over_ranks": {"forward_s": 0.125, "backward_compute_s": 0.25, "backward_comm_s": 0.0625,
                        "overlap_s": 0.03125, "exposed_comm_s": 0.03125, "optimizer_s": 0.015625,
                        "other_s": 0.0078125, "step_s": 0.4375},
    "max_over_ranks": {"forward_s": 0.5, "backward_compute_s": 0.5, "backward_comm_s": 0.5, "overlap_s": 0.5,
                       "exposed_comm_s": 0.5, "optimizer_s": 0.5, "other_s": 0.5, "step_s": 0.5},
    "iterations": 20, "note": "by hand",
    "banerjee_shah_split": {"call_return_s": 0.25, "sync_wait_s": 0.125}})");
  const RowBreakdown b = doc.get<RowBreakdown>();
  ASSERT_TRUE(b.mean_over_ranks && b.max_over_ranks);
  EXPECT_TRUE(b.mean_over_ranks->complete());
  EXPECT_EQ(b.mean(Phase::forward), 0.125);
  EXPECT_EQ(b.mean(Phase::backward_compute), 0.25);
  EXPECT_EQ(b.mean(Phase::backward_comm), 0.0625);
  EXPECT_EQ(b.mean(Phase::overlap), 0.03125);
  EXPECT_EQ(b.mean(Phase::exposed_comm), 0.03125);
  EXPECT_EQ(b.mean(Phase::optimizer), 0.015625);
  EXPECT_EQ(b.mean(Phase::other), 0.0078125);
  EXPECT_EQ(b.mean(Phase::step), 0.4375);
  EXPECT_EQ((*b.max_over_ranks)[Phase::step], 0.5);
  EXPECT_EQ(b.iterations, 20);
  EXPECT_EQ(b.note, "by hand");
  EXPECT_EQ(b.extra.size(), 1u);
  EXPECT_EQ(json(b), doc);
  EXPECT_STREQ(phase_key(Phase::exposed_comm), "exposed_comm_s");
  // A partial object: the phases it has, none of the others, and not complete.
  const PhaseSeconds part = json::parse(R"({"forward_s": 1, "step_s": "x"})").get<PhaseSeconds>();
  EXPECT_EQ(part[Phase::forward], 1.0);
  EXPECT_FALSE(part[Phase::step].has_value());
  EXPECT_FALSE(part.complete());
  EXPECT_FALSE(part.empty());
  EXPECT_TRUE(PhaseSeconds{}.empty());
}

TEST(RowSections, RowTelemetryRoundTripsEveryField) {
  const json doc = json::parse(R"({
    "baseline": "rank 0's series", "comm_hook_note": "fp16 halves the bytes",
    "peak_memory_bytes_max_over_ranks": 3758096384,
    "loss_scaling": {"final_scale": 32768.0, "skipped_steps": 4, "skipped_steps_measured": 1, "note": "rank 0's"},
    "profile": {"file": "resnet18-ddp2-rank0.json", "profiler": "kineto", "iterations": 3},
    "series_over_ranks": {"ranks": 2, "t_s": [0.1, 0.2]},
    "devices": ["cuda:0", "cuda:1"], "peak_memory_bytes_per_device": [1024, null], "primitives": "native"})");
  const RowTelemetry t = doc.get<RowTelemetry>();
  EXPECT_EQ(t.baseline, "rank 0's series");
  EXPECT_EQ(t.comm_hook_note, "fp16 halves the bytes");
  EXPECT_EQ(t.peak_memory_bytes_max_over_ranks, 3758096384LL);
  ASSERT_TRUE(t.loss_scaling.has_value());
  EXPECT_EQ(t.loss_scaling->final_scale, 32768.0);
  EXPECT_EQ(t.loss_scaling->skipped_steps, 4);
  EXPECT_EQ(t.loss_scaling->skipped_steps_measured, 1);
  EXPECT_EQ(t.loss_scaling->note, "rank 0's");
  ASSERT_TRUE(t.profile.has_value());
  EXPECT_EQ(t.profile->file, "resnet18-ddp2-rank0.json");
  EXPECT_EQ(t.profile->profiler, "kineto");
  EXPECT_EQ(t.profile->iterations, 3);
  EXPECT_EQ(t.series_over_ranks, json::parse(R"({"ranks": 2, "t_s": [0.1, 0.2]})"));
  EXPECT_EQ(t.devices, (std::vector<std::string>{"cuda:0", "cuda:1"}));
  EXPECT_EQ(t.peak_memory_bytes_per_device, json::parse("[1024, null]"));
  EXPECT_EQ(t.primitives, "native");
  EXPECT_TRUE(t.extra.empty());
  EXPECT_EQ(json(t), doc);
  // An older file's keys, and a profile of another shape, are kept as read.
  const json old = json::parse(R"({"reducer_timers_ns_mean_over_ranks": {"a": 1}, "profile": "x"})");
  const RowTelemetry o = old.get<RowTelemetry>();
  EXPECT_FALSE(o.profile.has_value());
  EXPECT_EQ(json(o), old);
}

TEST(RowSections, TelemetrySummaryRoundTripsEveryField) {
  const json doc = json::parse(R"({
    "interval_ms": 100, "samples": 3, "span_s": 0.3,
    "gpu": {"available": true, "reason": "by hand", "index": 3, "name": "NVIDIA H100 80GB HBM3",
            "uuid": "GPU-1", "bus_id": "00000000:1B:00.0",
            "sm_util_pct": {"mean": 63.3, "min": 40.0, "max": 90.0},
            "mem_util_pct": {"mean": 20.0, "min": 10.0, "max": 30.0},
            "mem_used_bytes": {"mean": 1e9, "min": 5e8, "max": 2e9}, "mem_total_bytes": 85899345920,
            "power_w": {"mean": 300.0, "min": 100.0, "max": 500.0}, "power_limit_w": 700.0,
            "sm_clock_mhz": {"mean": 1700.0, "min": 1500.0, "max": 1980.0}, "max_sm_clock_mhz": 1980.0,
            "temperature_c": {"mean": 50.0, "min": 40.0, "max": 60.0},
            "throttle_reasons": ["sw_thermal_slowdown"], "throttled_fraction": 0.333333,
            "pcie_tx_bytes_per_s": {"mean": 1.0, "min": 0.5, "max": 2.0},
            "pcie_rx_bytes_per_s": {"mean": 3.0, "min": 2.5, "max": 4.0},
            "nvlink_tx_bytes_per_s": {"mean": 5.0, "min": 4.5, "max": 6.0},
            "nvlink_rx_bytes_per_s": {"mean": 7.0, "min": 6.5, "max": 8.0}},
    "host": {"cpu_util_pct": {"mean": 27.9, "min": 0.0, "max": 100.0}, "peak_rss_bytes": 251482112,
             "net": {"interface": "eth0", "rx_bytes_per_s": {"mean": 9.0, "min": 8.0, "max": 10.0},
                     "tx_bytes_per_s": {"mean": 11.0, "min": 10.5, "max": 12.0}},
             "infiniband": [{"port": "mlx5_0/1", "rx_bytes_per_s": {"mean": 13.0, "min": 12.0, "max": 14.0},
                             "tx_bytes_per_s": {"mean": 15.0, "min": 14.0, "max": 16.0}}]},
    "series": {"t_s": [0.1, 0.2, 0.3], "sm_util_pct": [40.0, null, 90.0]},
    "flags": ["low_gpu_util", "gpu_throttled"], "series_dropped": "the series exceeded 32768 bytes"})");
  const TelemetrySummary t = doc.get<TelemetrySummary>();
  EXPECT_EQ(t.interval_ms, 100);
  EXPECT_EQ(t.samples, 3);
  EXPECT_EQ(t.span_s, 0.3);
  ASSERT_TRUE(t.gpu.has_value());
  const GpuTelemetry& g = *t.gpu;
  EXPECT_EQ(g.available, true);
  EXPECT_EQ(g.reason, "by hand");
  EXPECT_EQ(g.index, 3);
  EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.uuid, "GPU-1");
  EXPECT_EQ(g.bus_id, "00000000:1B:00.0");
  EXPECT_EQ(g.sm_util_pct->mean, 63.3);
  EXPECT_EQ(g.sm_util_pct->min, 40.0);
  EXPECT_EQ(g.sm_util_pct->max, 90.0);
  EXPECT_EQ(g.mem_util_pct->mean, 20.0);
  EXPECT_EQ(g.mem_used_bytes->max, 2e9);
  EXPECT_EQ(g.mem_total_bytes, 85899345920LL);
  EXPECT_EQ(g.power_w->max, 500.0);
  EXPECT_EQ(g.power_limit_w, 700.0);
  EXPECT_EQ(g.sm_clock_mhz->min, 1500.0);
  EXPECT_EQ(g.max_sm_clock_mhz, 1980.0);
  EXPECT_EQ(g.temperature_c->max, 60.0);
  EXPECT_EQ(g.throttle_reasons, (std::vector<std::string>{"sw_thermal_slowdown"}));
  EXPECT_EQ(g.throttled_fraction, 0.333333);
  EXPECT_EQ(g.pcie_tx_bytes_per_s->mean, 1.0);
  EXPECT_EQ(g.pcie_rx_bytes_per_s->mean, 3.0);
  EXPECT_EQ(g.nvlink_tx_bytes_per_s->mean, 5.0);
  EXPECT_EQ(g.nvlink_rx_bytes_per_s->mean, 7.0);
  ASSERT_TRUE(t.host.has_value());
  EXPECT_EQ(t.host->cpu_util_pct->mean, 27.9);
  EXPECT_EQ(t.host->peak_rss_bytes, 251482112);
  ASSERT_TRUE(t.host->net.has_value());
  EXPECT_EQ(t.host->net->interface, "eth0");
  EXPECT_EQ(t.host->net->rx_bytes_per_s->mean, 9.0);
  EXPECT_EQ(t.host->net->tx_bytes_per_s->max, 12.0);
  ASSERT_EQ(t.host->infiniband->size(), 1u);
  EXPECT_EQ(t.host->infiniband->front().port, "mlx5_0/1");
  EXPECT_EQ(t.host->infiniband->front().rx_bytes_per_s->mean, 13.0);
  EXPECT_EQ(t.host->infiniband->front().tx_bytes_per_s->mean, 15.0);
  ASSERT_TRUE(t.series.has_value());
  EXPECT_EQ(t.series->at("t_s"), (std::vector<double>{0.1, 0.2, 0.3}));
  EXPECT_TRUE(std::isnan(t.series->at("sm_util_pct")[1]));  // null: a point without a value
  EXPECT_EQ(t.flags, (std::vector<std::string>{"low_gpu_util", "gpu_throttled"}));
  EXPECT_EQ(t.series_dropped, "the series exceeded 32768 bytes");
  EXPECT_TRUE(t.extra.empty());
  EXPECT_EQ(json(t), doc);
  // A CPU rank's summary: no GPU (a reason), no interface (net null, kept as read).
  const json cpu = json::parse(
      R"({"gpu": {"available": false, "reason": "NVML not loaded"}, "host": {"net": null, "infiniband": []}})");
  const TelemetrySummary c = cpu.get<TelemetrySummary>();
  EXPECT_EQ(c.gpu->available, false);
  EXPECT_FALSE(c.host->net.has_value());
  EXPECT_EQ(json(c), cpu);
}

TEST(RowSections, RankTelemetryRoundTripsEveryField) {
  const json doc = json::parse(R"({
    "sampled": {"interval_ms": 100, "samples": 7, "flags": ["low_gpu_util"]},
    "comm_hook_wire_bytes_per_step": 51114064.0, "devices": ["cuda:0", "cuda:1"]})");
  const RankTelemetry t = doc.get<RankTelemetry>();
  ASSERT_TRUE(t.sampled.has_value());
  EXPECT_EQ(t.sampled->interval_ms, 100);
  EXPECT_EQ(t.sampled->samples, 7);
  EXPECT_EQ(t.sampled->flags, (std::vector<std::string>{"low_gpu_util"}));
  EXPECT_EQ(t.comm_hook_wire_bytes_per_step, 51114064.0);
  EXPECT_EQ(t.devices, (std::vector<std::string>{"cuda:0", "cuda:1"}));
  EXPECT_TRUE(t.extra.empty());
  EXPECT_EQ(json(t), doc);
}

TEST(RowSections, ConvergenceRoundTripsEveryFieldAndReadsANullLossAsNaN) {
  const json doc = json::parse(R"({
    "dataset": "fashion-mnist", "train_examples": 2048, "test_examples": 512, "image_size": 32,
    "normalization": {"mean": 0.286, "std": 0.353, "source": "training images"}, "loader_workers": 2,
    "optimizer": {"name": "sgd", "lr": 0.05, "momentum": 0.9, "weight_decay": 0.0001}, "steps_per_epoch": 32,
    "epochs": [{"epoch": 1, "wall_s": 12.5, "train_s": 11.0, "eval_s": 1.5, "steps": 32, "train_loss": 0.75,
                "test_loss": 0.5, "test_accuracy": 0.8125, "data_wait_s_mean": 0.002, "data_wait_s_max": 0.01}],
    "loss": {"step": [1, 32], "wall_s": [0.25, 11.0], "value": [2.25, 0.5], "steps_total": 32,
             "subsample_stride": 31, "note": "mean over ranks"},
    "target": {"metric": "test_accuracy", "value": 0.8, "reached": true, "epoch": 1, "wall_s": 12.5},
    "baselines": [{"classifier": "ResNet18", "test_accuracy": 0.949}], "baselines_source": "README",
    "reference": "the 1-rank row", "note": "by hand"})");
  const RowConvergence c = doc.get<RowConvergence>();
  EXPECT_EQ(c.dataset, "fashion-mnist");
  EXPECT_EQ(c.train_examples, 2048);
  EXPECT_EQ(c.test_examples, 512);
  EXPECT_EQ(c.image_size, 32);
  EXPECT_EQ(c.normalization->at("source"), "training images");
  EXPECT_EQ(c.loader_workers, 2);
  EXPECT_EQ(c.optimizer->at("lr"), 0.05);
  EXPECT_EQ(c.steps_per_epoch, 32);
  ASSERT_TRUE(c.epochs.has_value());
  ASSERT_EQ(c.epochs->size(), 1u);
  const ConvergenceEpoch& e = c.epochs->front();
  EXPECT_EQ(e.epoch, 1);
  EXPECT_EQ(e.wall_s, 12.5);
  EXPECT_EQ(e.train_s, 11.0);
  EXPECT_EQ(e.eval_s, 1.5);
  EXPECT_EQ(e.steps, 32);
  EXPECT_EQ(e.train_loss, 0.75);
  EXPECT_EQ(e.test_loss, 0.5);
  EXPECT_EQ(e.test_accuracy, 0.8125);
  EXPECT_EQ(e.data_wait_s_mean, 0.002);
  EXPECT_EQ(e.data_wait_s_max, 0.01);
  ASSERT_TRUE(c.loss.has_value());
  EXPECT_EQ(c.loss->step, (std::vector<long long>{1, 32}));
  EXPECT_EQ(c.loss->wall_s, (std::vector<double>{0.25, 11.0}));
  EXPECT_EQ(c.loss->value, (std::vector<double>{2.25, 0.5}));
  EXPECT_EQ(c.loss->steps_total, 32);
  EXPECT_EQ(c.loss->subsample_stride, 31);
  EXPECT_EQ(c.loss->note, "mean over ranks");
  ASSERT_TRUE(c.target.has_value());
  EXPECT_EQ(c.target->metric, "test_accuracy");
  EXPECT_EQ(c.target->value, 0.8);
  EXPECT_EQ(c.target->reached, true);
  EXPECT_EQ(c.target->epoch, 1);
  EXPECT_EQ(c.target->wall_s, 12.5);
  EXPECT_EQ(c.baselines->size(), 1u);
  EXPECT_EQ(c.baselines_source, "README");
  EXPECT_EQ(c.reference, "the 1-rank row");
  EXPECT_EQ(c.note, "by hand");
  EXPECT_TRUE(c.extra.empty());
  EXPECT_EQ(json(c), doc);
  // A diverged step's loss is written as null (NaN in JSON); it reads back as NaN, the rest kept.
  const LossCurve l = json::parse(R"({"value": [2.25, null]})").get<LossCurve>();
  ASSERT_TRUE(l.value.has_value());
  EXPECT_EQ(l.value->front(), 2.25);
  EXPECT_TRUE(std::isnan(l.value->back()));
  // Schema < 1.13 wrote an unreached target's epoch and time as null: they read as no value.
  const TargetOutcome t =
      json::parse(R"({"metric": "test_loss", "value": 0.3, "reached": false, "epoch": null, "wall_s": null})")
          .get<TargetOutcome>();
  EXPECT_EQ(t.reached, false);
  EXPECT_FALSE(t.epoch.has_value());
  EXPECT_FALSE(t.wall_s.has_value());
}

TEST(RowSections, UnknownKeysAndKnownKeysOfAnotherTypeAreKeptAsRead) {
  const json doc = json::parse(R"({"grad_check_passed": "yes", "from_a_newer_version": {"x": 1},
                                   "bucket_sizes_bytes": [1, -2.5], "grad_max_abs": 2})");
  const RowChecks c = doc.get<RowChecks>();
  EXPECT_FALSE(c.grad_check_passed.has_value());   // a string is no verdict
  EXPECT_FALSE(c.bucket_sizes_bytes.has_value());  // not all integers
  EXPECT_EQ(c.grad_max_abs, 2.0);                  // an integer is a number
  EXPECT_EQ(c.extra.size(), 3u);
  EXPECT_EQ(json(c), doc);  // nothing lost
  EXPECT_EQ(json("not an object").get<RowChecks>(), RowChecks{});
  EXPECT_FALSE(json::parse(R"({"parameters": 1e300})").get<RowCompute>().parameters.has_value());
}

TEST(RowSections, TheSelfCheckVerdictOfEveryKindOfRow) {
  RowChecks none;
  EXPECT_FALSE(none.passed().has_value());
  EXPECT_EQ(none.invalid_reason(), "");
  RowChecks ddp;
  ddp.grad_check_passed = false;
  EXPECT_EQ(ddp.passed(), false);
  EXPECT_EQ(ddp.invalid_reason(), "self-check failed");
  RowChecks sharded;  // zero2 and fsdp rows check their parameters
  sharded.param_check_passed = false;
  EXPECT_EQ(sharded.passed(), false);
  RowChecks dp;
  dp.dp_check_passed = true;
  EXPECT_EQ(dp.passed(), true);
  EXPECT_EQ(dp.invalid_reason(), "");
  dp.fp16_skipped_steps_in_measurement = 1;
  EXPECT_EQ(dp.invalid_reason(), "fp16 steps skipped among the timed ones");
}

TEST(RowSections, AResultRowReadsAndWritesItsSections) {
  BenchResult b;
  b.model = "resnet18";
  b.checks.param_check_passed = true;
  b.compute.mfu = 0.5;
  b.communication.steps_per_epoch = 7;
  b.breakdown.iterations = 5;
  const json j = b;
  EXPECT_EQ(j["checks"], json::parse(R"({"param_check_passed": true})"));
  EXPECT_EQ(j["compute"]["mfu"], 0.5);
  const BenchResult back = j.get<BenchResult>();
  EXPECT_EQ(back.checks, b.checks);
  EXPECT_EQ(back.compute, b.compute);
  EXPECT_EQ(back.communication, b.communication);
  EXPECT_EQ(back.breakdown, b.breakdown);
}

}  // namespace
}  // namespace ddpbench
