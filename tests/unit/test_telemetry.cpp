// core/telemetry/telemetry and core/telemetry/nvml: summaries against hand-computed numbers (the accumulator
// takes readings with chosen times, so nothing depends on the clock), the NVML path through
// the stub library tests/tools/nvml_stub.cpp, host counters from a fake /proc and /sys tree,
// the flags, and the thread (only that it samples and stops).
#include <gtest/gtest.h>
#include <net/if.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <unistd.h>

#include "common/testutil.hpp"
#include "core/telemetry/nvml.hpp"
#include "core/telemetry/telemetry.hpp"
#include "core/util/errors.hpp"

namespace ddpbench {
namespace {

using Flags = std::vector<std::string>;

namespace fs = std::filesystem;
using nlohmann::json;
using testutil::TempDir;

constexpr double kEps = 1e-9;

// Sets environment variables for one test and restores them after it.
class EnvGuard {
 public:
  ~EnvGuard() {
    for (const auto& [k, v] : saved_) {
      if (v) ::setenv(k.c_str(), v->c_str(), 1);
      else ::unsetenv(k.c_str());
    }
  }
  void set(const std::string& k, const std::string& v) {
    remember(k);
    ::setenv(k.c_str(), v.c_str(), 1);
  }
  void unset(const std::string& k) {
    remember(k);
    ::unsetenv(k.c_str());
  }

 private:
  void remember(const std::string& k) {
    for (const auto& s : saved_)
      if (s.first == k) return;
    const char* v = std::getenv(k.c_str());
    saved_.emplace_back(k, v ? std::optional<std::string>(v) : std::nullopt);
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// The stub's variables, all unset, and DDPBENCH_NVML_LIBRARY pointing at `library`.
void use_stub(EnvGuard& env, const std::string& library) {
  for (const char* v : {"NVML_STUB_INIT_ERROR", "NVML_STUB_UTIL_GPU", "NVML_STUB_UTIL_MEM", "NVML_STUB_MEM_USED",
                        "NVML_STUB_MEM_TOTAL", "NVML_STUB_POWER_MW", "NVML_STUB_POWER_LIMIT_MW", "NVML_STUB_SM_CLOCK",
                        "NVML_STUB_MAX_SM_CLOCK", "NVML_STUB_TEMP", "NVML_STUB_REASONS", "NVML_STUB_PCIE_TX_KBS",
                        "NVML_STUB_PCIE_RX_KBS", "NVML_STUB_NVLINK_TX_KIB", "NVML_STUB_NVLINK_RX_KIB"})
    env.unset(v);
  env.set("DDPBENCH_NVML_LIBRARY", library);
}

void expect_stats(const json& s, double mean, double min, double max, const std::string& what) {
  SCOPED_TRACE(what + ": " + s.dump());
  ASSERT_TRUE(s.is_object());
  EXPECT_NEAR(s["mean"].get<double>(), mean, kEps * std::max(1.0, std::abs(mean)));
  EXPECT_NEAR(s["min"].get<double>(), min, kEps * std::max(1.0, std::abs(min)));
  EXPECT_NEAR(s["max"].get<double>(), max, kEps * std::max(1.0, std::abs(max)));
}

std::set<std::string> keys(const json& j) {
  std::set<std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) out.insert(it.key());
  return out;
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// ---------------------------------------------------------------- accumulator (exact)

TelemetryReading reading(double t, double util, unsigned long long reasons, double power, double cpu_s, double rx) {
  TelemetryReading r;
  r.t_s = t;
  r.gpu.sm_util_pct = util;
  r.gpu.clock_event_reasons = reasons;
  r.gpu.power_w = power;
  r.host.cpu_time_s = cpu_s;
  r.host.net_rx_bytes = rx;
  r.host.net_tx_bytes = 0;
  r.host.peak_rss_bytes = 1000 + t;
  return r;
}

TelemetryAccumulator three_samples() {
  TelemetryAccumulator acc(250);
  GpuInfo info;
  info.index = 3;
  info.name = "G";
  acc.set_gpu(info);
  acc.set_net_interface("eth0");
  TelemetryReading base;  // t = 0: counters only
  base.host.cpu_time_s = 0;
  base.host.net_rx_bytes = 0;
  base.host.net_tx_bytes = 0;
  acc.begin(base);
  // intervals 0.25, 0.25, 0.5 s; CPU time +0.25, +0.25, +0.25 s; rx +1000, +2000, +0 bytes
  acc.add(reading(0.25, 40, 0x1, 100, 0.25, 1000));
  acc.add(reading(0.50, 60, 0x20 | 0x1, 150, 0.50, 3000));
  acc.add(reading(1.00, 90, 0x0, 200, 0.75, 3000));
  return acc;
}

TEST(TelemetryAccumulator, SummaryEqualsHandComputedMeansMinMaxAndRates) {
  const json s = three_samples().summary();
  EXPECT_EQ(s["interval_ms"], 250);
  EXPECT_EQ(s["samples"], 3);
  EXPECT_DOUBLE_EQ(s["span_s"].get<double>(), 1.0);
  const json& g = s["gpu"];
  EXPECT_EQ(g["available"], true);
  EXPECT_EQ(g["index"], 3);
  expect_stats(g["sm_util_pct"], (40 + 60 + 90) / 3.0, 40, 90, "sm_util_pct");
  expect_stats(g["power_w"], 150, 100, 200, "power_w");
  // gpu_idle (0x1) is excluded; 0x20 in one sample of three.
  EXPECT_EQ(g["throttle_reasons"], json::array({"sw_thermal_slowdown"}));
  EXPECT_NEAR(g["throttled_fraction"].get<double>(), 1.0 / 3.0, kEps);
  // Metrics no reading had are left out.
  EXPECT_FALSE(g.contains("temperature_c"));
  EXPECT_FALSE(g.contains("pcie_tx_bytes_per_s"));
  EXPECT_FALSE(g.contains("nvlink_tx_bytes_per_s"));
  // CPU: 0.25 s / 0.25 s = 100 %, 0.25/0.25 = 100 %, 0.25/0.5 = 50 %; time-weighted mean 0.75/1.0 = 75 %.
  expect_stats(s["host"]["cpu_util_pct"], 75, 50, 100, "cpu_util_pct");
  // rx: 1000/0.25 = 4000, 2000/0.25 = 8000, 0/0.5 = 0 B/s; mean 3000/1.0.
  EXPECT_EQ(s["host"]["net"]["interface"], "eth0");
  expect_stats(s["host"]["net"]["rx_bytes_per_s"], 3000, 0, 8000, "rx");
  expect_stats(s["host"]["net"]["tx_bytes_per_s"], 0, 0, 0, "tx");
  EXPECT_EQ(s["host"]["peak_rss_bytes"], 1001);
  EXPECT_EQ(s["host"]["infiniband"], json::array());
  // Series: three samples, fewer than 64 points, so one point per sample.
  EXPECT_EQ(s["series"]["t_s"], json::array({0.25, 0.5, 1.0}));
  EXPECT_EQ(s["series"]["sm_util_pct"], json::array({40.0, 60.0, 90.0}));
  EXPECT_EQ(s["series"]["cpu_util_pct"], json::array({100.0, 100.0, 50.0}));
  EXPECT_EQ(s["series"]["net_rx_bytes_per_s"], json::array({4000.0, 8000.0, 0.0}));
  EXPECT_EQ(s["series"]["sm_clock_mhz"], json::array({nullptr, nullptr, nullptr}));
  EXPECT_EQ(keys(s["series"]), (std::set<std::string>{"t_s", "sm_util_pct", "sm_clock_mhz", "temperature_c", "power_w",
                                                      "cpu_util_pct", "net_rx_bytes_per_s", "net_tx_bytes_per_s"}));
}

TEST(TelemetryAccumulator, SeriesPointsAreMeansOfConsecutiveSamples) {
  // 7 samples into 3 points: samples floor(k*7/3) .. floor((k+1)*7/3)-1 = {0,1}, {2,3}, {4,5,6}.
  TelemetryAccumulator acc(100, 3);
  acc.set_gpu(GpuInfo{});
  TelemetryReading base;
  base.host.cpu_time_s = 0;
  acc.begin(base);
  for (int i = 1; i <= 7; ++i) {
    TelemetryReading r;
    r.t_s = i;
    r.gpu.sm_util_pct = 10.0 * i;
    r.host.cpu_time_s = i * i * 0.01;     // rates 1, 3, 5, ..., 13 %
    if (i != 2) r.gpu.temperature_c = i;  // sample 2 lacks it: skipped in its point
    acc.add(r);
  }
  const json s = acc.summary()["series"];
  EXPECT_EQ(s["t_s"], json::array({1.5, 3.5, 6.0}));
  EXPECT_EQ(s["sm_util_pct"], json::array({15.0, 35.0, 60.0}));
  EXPECT_EQ(s["temperature_c"], json::array({1.0, 3.5, 6.0}));
  ASSERT_EQ(s["cpu_util_pct"].size(), 3u);
  EXPECT_NEAR(s["cpu_util_pct"][0].get<double>(), 2.0, kEps);   // (1+3)/2
  EXPECT_NEAR(s["cpu_util_pct"][1].get<double>(), 6.0, kEps);   // (5+7)/2
  EXPECT_NEAR(s["cpu_util_pct"][2].get<double>(), 11.0, kEps);  // (9+11+13)/3
  EXPECT_EQ(s["power_w"], json::array({nullptr, nullptr, nullptr}));
  EXPECT_FALSE(s.contains("net_rx_bytes_per_s"));  // no interface
}

TEST(TelemetryAccumulator, ACounterThatWentDownHasNoRateForThatInterval) {
  TelemetryAccumulator acc(100);
  acc.set_net_interface("eth0");
  TelemetryReading r;
  r.host.net_rx_bytes = 5000;
  r.host.net_tx_bytes = 0;
  acc.begin(r);
  for (auto [t, rx] : {std::pair{1.0, 6000.0}, {2.0, 100.0}, {3.0, 400.0}}) {  // reset between 1 and 2
    r.t_s = t;
    r.host.net_rx_bytes = rx;
    acc.add(r);
  }
  const json s = acc.summary();
  EXPECT_EQ(s["series"]["net_rx_bytes_per_s"], json::array({1000.0, nullptr, 300.0}));
  // Time-weighted over the two intervals that have a value: 1300 bytes / 2 s.
  expect_stats(s["host"]["net"]["rx_bytes_per_s"], 650, 300, 1000, "rx");
  EXPECT_EQ(s["gpu"], (json{{"available", false}, {"reason", "no GPU: the rank runs on the CPU"}}));
  EXPECT_FALSE(s["series"].contains("sm_util_pct"));
  EXPECT_FALSE(s["host"].contains("cpu_util_pct"));
}

// ---------------------------------------------------------------- flags

// A row's series over ranks: per point, min / median / max over the ranks with a number
// there (hand-computed; median of 3 = the middle one, of 2 = their mean).
// What a rank publishes: non-integer numbers to 6 significant digits, by hand; integers,
// zero, strings and structure untouched.
TEST(TelemetryRounding, SixSignificantDigitsOfNonIntegersOnly) {
  const json in = {{"host",
                    {{"cpu_util_pct", {{"mean", 27.902456027179657}, {"min", 0.0}, {"max", 100.0}}},
                     {"peak_rss_bytes", 251482112},
                     {"net", {{"interface", "lo"}, {"rx_bytes_per_s", {{"mean", 94438239.52583061}}}}}}},
                   {"span_s", 136.2852525060007},
                   {"series", {{"t_s", {0.104948484000488, 1.0022488640024676, nullptr}}}},
                   {"tiny", 1.234567e-7},
                   {"flags", json::array({"low_gpu_util"})}};
  const json out = rounded_telemetry(in);
  EXPECT_EQ(out["host"]["cpu_util_pct"]["mean"].dump(), "27.9025");
  EXPECT_EQ(out["host"]["cpu_util_pct"]["min"].dump(), "0.0");
  EXPECT_EQ(out["host"]["cpu_util_pct"]["max"].dump(), "100.0");
  EXPECT_EQ(out["host"]["peak_rss_bytes"].dump(), "251482112");
  EXPECT_EQ(out["host"]["net"]["rx_bytes_per_s"]["mean"].dump(), "94438200.0");
  EXPECT_EQ(out["host"]["net"]["interface"], "lo");
  EXPECT_EQ(out["span_s"].dump(), "136.285");
  EXPECT_EQ(out["series"]["t_s"].dump(), "[0.104948,1.00225,null]");
  EXPECT_EQ(out["tiny"].dump(), "1.23457e-07");
  EXPECT_EQ(out["flags"], in["flags"]);
}

TEST(TelemetrySeriesOverRanks, MinMedianMaxPerPointOverTheRanksThatHaveIt) {
  const json a = {{"series", {{"t_s", {0.1, 0.2, 0.3}}, {"cpu_util_pct", {10.0, 50.0, 90.0}}}}};
  const json b = {{"series", {{"t_s", {0.1, 0.2}}, {"cpu_util_pct", {30.0, nullptr}}}}};
  const json c = {{"series", {{"t_s", {0.3, 0.4, 0.5}}, {"cpu_util_pct", {20.0, 70.0, 60.0}}}}};
  const json no_series = {{"samples", 0}};
  const json null;
  const auto ta = a.get<TelemetrySummary>(), tb = b.get<TelemetrySummary>(), tc = c.get<TelemetrySummary>(),
             tn = no_series.get<TelemetrySummary>(), tnull = null.get<TelemetrySummary>();
  const json o = series_over_ranks({&ta, &tb, &tn, &tc, &tnull, nullptr});
  EXPECT_EQ(o["ranks"], 3);
  EXPECT_EQ(o["t_s"], json::array({0.1, 0.2, 0.4}));
  EXPECT_EQ(o["cpu_util_pct"]["min"], json::array({10.0, 50.0, 60.0}));
  EXPECT_EQ(o["cpu_util_pct"]["median"], json::array({20.0, 60.0, 75.0}));
  EXPECT_EQ(o["cpu_util_pct"]["max"], json::array({30.0, 70.0, 90.0}));
  const json d = {{"series", {{"t_s", {0.1}}, {"cpu_util_pct", {nullptr}}}}};
  const auto td = d.get<TelemetrySummary>();
  EXPECT_EQ(series_over_ranks({&td})["cpu_util_pct"]["median"], json::array({nullptr}));
  EXPECT_TRUE(series_over_ranks({&tn, nullptr}).empty());
}

TEST(TelemetryFlags, LowUtilisationAndThrottlingAreFlaggedWithRankHostGpuAndValue) {
  auto s = three_samples().summary().get<TelemetrySummary>();
  const auto w = telemetry_flags(s, 80, 3, "node7");
  EXPECT_EQ(s.flags, (Flags{"low_gpu_util", "gpu_throttled"}));
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].code, "low_gpu_util");
  EXPECT_EQ(w[0].message, "rank 3 (node7, GPU 3): mean SM utilization 63% < --min-util 80%");
  EXPECT_EQ(w[1].code, "gpu_throttled");
  EXPECT_EQ(w[1].message, "rank 3 (node7, GPU 3): clocks held down in 33% of samples (sw_thermal_slowdown)");
  // --min-util 60 is met (63.3 %); --min-util 0 turns the check off.
  auto s60 = three_samples().summary().get<TelemetrySummary>();
  EXPECT_EQ(telemetry_flags(s60, 60, 3, "node7").size(), 1u);
  EXPECT_EQ(s60.flags, (Flags{"gpu_throttled"}));
}

TEST(TelemetryFlags, NoFlagForABusyGpuThatIsOnlyIdleOrAtApplicationClocks) {
  TelemetryAccumulator acc(100);
  acc.set_gpu(GpuInfo{});
  acc.begin(TelemetryReading{});
  for (unsigned long long bits : {0x0ULL, 0x1ULL, 0x2ULL, 0x3ULL}) {
    TelemetryReading r;
    r.t_s = static_cast<double>(bits) + 1;
    r.gpu.sm_util_pct = 95;
    r.gpu.clock_event_reasons = bits;
    acc.add(r);
  }
  json s = acc.summary();
  EXPECT_EQ(s["gpu"]["throttle_reasons"], json::array());
  EXPECT_EQ(s["gpu"]["throttled_fraction"], 0.0);
  auto ts = s.get<TelemetrySummary>();
  EXPECT_TRUE(telemetry_flags(ts, 80, 0, "h").empty());
  EXPECT_EQ(ts.flags, Flags{});
  // Without a GPU there is nothing to flag.
  auto cpu = TelemetryAccumulator(100).summary().get<TelemetrySummary>();
  EXPECT_TRUE(telemetry_flags(cpu, 80, 0, "h").empty());
  EXPECT_EQ(cpu.flags, Flags{});
}

TEST(TelemetryFlags, ReasonNamesFollowNvmlH) {
  EXPECT_EQ(clock_event_reason_name(0x1), "gpu_idle");
  EXPECT_EQ(clock_event_reason_name(0x4), "sw_power_cap");
  EXPECT_EQ(clock_event_reason_name(0x8), "hw_slowdown");
  EXPECT_EQ(clock_event_reason_name(0x10), "sync_boost");
  EXPECT_EQ(clock_event_reason_name(0x20), "sw_thermal_slowdown");
  EXPECT_EQ(clock_event_reason_name(0x40), "hw_thermal_slowdown");
  EXPECT_EQ(clock_event_reason_name(0x80), "hw_power_brake_slowdown");
  EXPECT_EQ(clock_event_reason_name(0x100), "display_clock_setting");
  EXPECT_EQ(clock_event_reason_name(0x200), "reason_0x200");
}

// ---------------------------------------------------------------- NVML through the stub

TEST(TelemetryNvml, StubValuesGiveTheHandComputedSummary) {
  EnvGuard env;
  use_stub(env, DDPBENCH_NVML_STUB);
  env.set("NVML_STUB_UTIL_GPU", "40,60,90");
  env.set("NVML_STUB_UTIL_MEM", "10,20,30");
  env.set("NVML_STUB_MEM_USED", "5,1000,2000,6000");  // construction reads the memory (its total) once
  env.set("NVML_STUB_POWER_MW", "100000,150000,200500");
  env.set("NVML_STUB_SM_CLOCK", "1980,1410,1200");
  env.set("NVML_STUB_TEMP", "60,70,83");
  env.set("NVML_STUB_REASONS", "0x21,0x1,0x44");  // sw_thermal+idle, idle only, hw_thermal+sw_power_cap
  env.set("NVML_STUB_PCIE_TX_KBS", "1,2,6");
  env.set("NVML_STUB_PCIE_RX_KBS", "3");
  env.set("NVML_STUB_NVLINK_TX_KIB", "100,101,103,106");  // the baseline reads the first
  env.set("NVML_STUB_NVLINK_RX_KIB", "7");
  TelemetryOptions o;
  o.gpu_uuid = "GPU-00000000-0000-0000-0000-000000000001";
  o.gpu_index = 0;  // the UUID wins
  TelemetrySampler sampler(o);
  ASSERT_NE(sampler.gpu(), nullptr) << sampler.summary().dump();
  for (int i = 0; i < 4; ++i) sampler.sample_now();  // baseline + 3 samples
  const json s = sampler.summary();
  EXPECT_EQ(s["samples"], 3);
  const json& g = s["gpu"];
  EXPECT_EQ(g["available"], true);
  EXPECT_EQ(g["index"], 1);
  EXPECT_EQ(g["name"], "Stub GPU 1");
  EXPECT_EQ(g["uuid"], "GPU-00000000-0000-0000-0000-000000000001");
  EXPECT_EQ(g["bus_id"], "00000000:07:00.0");
  expect_stats(g["sm_util_pct"], 190 / 3.0, 40, 90, "sm_util_pct");
  expect_stats(g["mem_util_pct"], 20, 10, 30, "mem_util_pct");
  expect_stats(g["mem_used_bytes"], 3000, 1000, 6000, "mem_used_bytes");
  EXPECT_EQ(g["mem_total_bytes"], 16ULL << 30);
  expect_stats(g["power_w"], 450.5 / 3, 100, 200.5, "power_w");  // mW / 1000
  EXPECT_EQ(g["power_limit_w"], 300.0);
  expect_stats(g["sm_clock_mhz"], 4590 / 3.0, 1200, 1980, "sm_clock_mhz");
  EXPECT_EQ(g["max_sm_clock_mhz"], 1980.0);
  expect_stats(g["temperature_c"], 71, 60, 83, "temperature_c");
  EXPECT_EQ(g["throttle_reasons"], json::array({"sw_power_cap", "sw_thermal_slowdown", "hw_thermal_slowdown"}));
  EXPECT_NEAR(g["throttled_fraction"].get<double>(), 2.0 / 3.0, kEps);
  expect_stats(g["pcie_tx_bytes_per_s"], 3 * 1024, 1024, 6 * 1024, "pcie_tx");  // KB/s * 1024
  expect_stats(g["pcie_rx_bytes_per_s"], 3 * 1024, 3 * 1024, 3 * 1024, "pcie_rx");
  // NVLink counters rose by 6 KiB over the window; rates use the real clock, so the oracle
  // is the time-weighted mean times the span.
  EXPECT_NEAR(g["nvlink_tx_bytes_per_s"]["mean"].get<double>() * s["span_s"].get<double>(), 6 * 1024.0, 1e-6);
  EXPECT_EQ(g["nvlink_rx_bytes_per_s"]["max"], 0.0);
  EXPECT_EQ(keys(s), (std::set<std::string>{"interval_ms", "samples", "span_s", "gpu", "host", "series"}));
  EXPECT_EQ(keys(g), (std::set<std::string>{"available",
                                            "index",
                                            "name",
                                            "uuid",
                                            "bus_id",
                                            "sm_util_pct",
                                            "mem_util_pct",
                                            "mem_used_bytes",
                                            "mem_total_bytes",
                                            "power_w",
                                            "power_limit_w",
                                            "sm_clock_mhz",
                                            "max_sm_clock_mhz",
                                            "temperature_c",
                                            "throttle_reasons",
                                            "throttled_fraction",
                                            "pcie_tx_bytes_per_s",
                                            "pcie_rx_bytes_per_s",
                                            "nvlink_tx_bytes_per_s",
                                            "nvlink_rx_bytes_per_s"}));
  EXPECT_EQ(s["series"]["sm_util_pct"], json::array({40.0, 60.0, 90.0}));
  auto flagged = s.get<TelemetrySummary>();
  EXPECT_EQ(telemetry_flags(flagged, 80, 1, "n1").size(), 2u);
  EXPECT_EQ(flagged.flags, (Flags{"low_gpu_util", "gpu_throttled"}));
}

TEST(TelemetryNvml, GoodValuesRaiseNoFlag) {
  EnvGuard env;
  use_stub(env, DDPBENCH_NVML_STUB);
  env.set("NVML_STUB_UTIL_GPU", "97,99");
  env.set("NVML_STUB_REASONS", "0x0,0x1");
  TelemetryOptions o;
  o.gpu_index = 0;
  TelemetrySampler sampler(o);
  for (int i = 0; i < 3; ++i) sampler.sample_now();
  json s = sampler.summary();
  EXPECT_EQ(s["gpu"]["index"], 0);
  expect_stats(s["gpu"]["sm_util_pct"], 98, 97, 99, "sm_util_pct");
  auto ts = s.get<TelemetrySummary>();
  EXPECT_TRUE(telemetry_flags(ts, 80, 0, "n0").empty());
  EXPECT_EQ(ts.flags, Flags{});
}

TEST(TelemetryNvml, TheGpuIsFoundByPciBusIdInEitherDomainWidth) {
  EnvGuard env;
  use_stub(env, DDPBENCH_NVML_STUB);
  for (const char* bus : {"0000:07:00.0", "00000000:07:00.0"}) {
    TelemetryOptions o;
    o.bus_id = bus;
    TelemetrySampler sampler(o);
    ASSERT_NE(sampler.gpu(), nullptr) << bus;
    EXPECT_EQ(sampler.gpu()->info().index, 1) << bus;
    EXPECT_EQ(sampler.gpu()->info().uuid, "GPU-00000000-0000-0000-0000-000000000001");
  }
}

TEST(TelemetryNvml, CallsTheLibraryLacksLeaveTheirMetricsOut) {
  EnvGuard env;
  use_stub(env, DDPBENCH_NVML_STUB_MINIMAL);
  env.set("NVML_STUB_REASONS", "0x80");
  TelemetryOptions o;
  o.gpu_index = 1;
  TelemetrySampler sampler(o);
  ASSERT_NE(sampler.gpu(), nullptr);
  for (int i = 0; i < 3; ++i) sampler.sample_now();
  const json g = sampler.summary()["gpu"];
  EXPECT_EQ(g["available"], true);
  for (const char* absent :
       {"power_w", "pcie_tx_bytes_per_s", "pcie_rx_bytes_per_s", "nvlink_tx_bytes_per_s", "nvlink_rx_bytes_per_s"})
    EXPECT_FALSE(g.contains(absent)) << absent;
  expect_stats(g["sm_util_pct"], 40, 40, 40, "sm_util_pct (stub default)");
  // Clock-event reasons under the new name nvmlDeviceGetCurrentClocksEventReasons only.
  EXPECT_EQ(g["throttle_reasons"], json::array({"hw_power_brake_slowdown"}));
  EXPECT_EQ(g["throttled_fraction"], 1.0);
  EXPECT_EQ(sampler.summary()["series"]["power_w"], json::array({nullptr, nullptr}));
}

TEST(TelemetryNvml, WithoutNvmlTheGpuIsUnavailableWithAReasonNotAnError) {
  EnvGuard env;
  use_stub(env, "/nonexistent/libnvidia-ml.so.1");
  TelemetryOptions o;
  o.gpu_index = 0;
  TelemetrySampler sampler(o);
  EXPECT_EQ(sampler.gpu(), nullptr);
  sampler.sample_now();
  sampler.sample_now();
  json s = sampler.summary();
  EXPECT_EQ(s["gpu"]["available"], false);
  EXPECT_EQ(s["gpu"]["reason"].get<std::string>().rfind("NVML not loaded: /nonexistent/libnvidia-ml.so.1", 0), 0u)
      << s["gpu"];
  EXPECT_EQ(keys(s["gpu"]), (std::set<std::string>{"available", "reason"}));
  EXPECT_EQ(s["samples"], 1);
  EXPECT_TRUE(s["host"].contains("cpu_util_pct"));  // the host is still sampled
  auto ts = s.get<TelemetrySummary>();
  EXPECT_TRUE(telemetry_flags(ts, 80, 0, "h").empty());
  // The options' library wins over the variable.
  EXPECT_EQ(nvml_library_path("/x/libnvml.so"), "/x/libnvml.so");
  EXPECT_EQ(nvml_library_path(""), "/nonexistent/libnvidia-ml.so.1");
  env.unset("DDPBENCH_NVML_LIBRARY");
  EXPECT_EQ(nvml_library_path(""), "libnvidia-ml.so.1");
}

TEST(TelemetryNvml, InitFailureAndUnknownGpuAreReasons) {
  EnvGuard env;
  use_stub(env, DDPBENCH_NVML_STUB);
  env.set("NVML_STUB_INIT_ERROR", "9");
  TelemetryOptions o;
  o.gpu_index = 0;
  EXPECT_EQ(TelemetrySampler(o).summary()["gpu"]["reason"], "nvmlInit_v2 failed: Driver Not Loaded (NVML error 9)");
  env.unset("NVML_STUB_INIT_ERROR");
  o.gpu_uuid = "GPU-ffffffff";
  EXPECT_EQ(TelemetrySampler(o).summary()["gpu"]["reason"],
            "NVML has no GPU with UUID GPU-ffffffff: Not Found (NVML error 6)");
}

TEST(TelemetryNvml, ACpuRankLoadsNoNvml) {
  EnvGuard env;
  use_stub(env, DDPBENCH_NVML_STUB);
  TelemetrySampler sampler(TelemetryOptions{});
  EXPECT_EQ(sampler.gpu(), nullptr);
  EXPECT_EQ(sampler.summary()["gpu"], (json{{"available", false}, {"reason", "no GPU: the rank runs on the CPU"}}));
}

// ---------------------------------------------------------------- host counters (fake tree)

// A fake root: /proc/self/{stat,status}, one net interface, two InfiniBand ports.
struct FakeSys {
  TempDir dir;
  fs::path root = dir.path;
  void set(unsigned long long utime, unsigned long long stime, unsigned long long hwm_kb, unsigned long long rx,
           unsigned long long tx, unsigned long long ib0_rcv, unsigned long long ib0_xmit) {
    // The command name holds ") " to check that fields are counted after the last ')'.
    write(root / "proc/self/stat", "4242 (ddp) bench) S 1 1 1 0 -1 4194560 100 0 0 0 " + std::to_string(utime) + " " +
                                       std::to_string(stime) + " 0 0 20 0 3 0 100 1000 10\n");
    write(root / "proc/self/status",
          "Name:\tddpbench\nVmPeak:\t  999999 kB\nVmHWM:\t" + std::to_string(hwm_kb) + " kB\nVmRSS:\t     10 kB\n");
    write(root / "sys/class/net/eth9/statistics/rx_bytes", std::to_string(rx) + "\n");
    write(root / "sys/class/net/eth9/statistics/tx_bytes", std::to_string(tx) + "\n");
    write(root / "sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data", std::to_string(ib0_rcv) + "\n");
    write(root / "sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data", std::to_string(ib0_xmit) + "\n");
    write(root / "sys/class/infiniband/mlx5_1/ports/1/counters/port_rcv_data", "7\n");
    write(root / "sys/class/infiniband/mlx5_1/ports/1/counters/port_xmit_data", "9\n");
  }
};

TEST(TelemetryHost, ReadsProcAndSysUnderTheRootWithIbCountersInFourByteUnits) {
  FakeSys f;
  f.set(250, 50, 2048, 123456, 654321, 1000, 2500);
  const HostReading h = read_host(f.root.string(), "eth9");
  ASSERT_TRUE(h.cpu_time_s.has_value());
  EXPECT_DOUBLE_EQ(*h.cpu_time_s, 300.0 / static_cast<double>(::sysconf(_SC_CLK_TCK)));
  EXPECT_EQ(h.peak_rss_bytes, 2048.0 * 1024);
  EXPECT_EQ(h.net_rx_bytes, 123456.0);
  EXPECT_EQ(h.net_tx_bytes, 654321.0);
  ASSERT_EQ(h.infiniband.size(), 2u);
  EXPECT_EQ(h.infiniband[0].port, "mlx5_0/1");
  EXPECT_EQ(h.infiniband[0].rcv_bytes, 4000.0);  // 1000 units of 4 octets
  EXPECT_EQ(h.infiniband[0].xmit_bytes, 10000.0);
  EXPECT_EQ(h.infiniband[1].port, "mlx5_1/1");
  EXPECT_EQ(h.infiniband[1].rcv_bytes, 28.0);
  // No interface named: no net counters.
  EXPECT_FALSE(read_host(f.root.string(), "").net_rx_bytes.has_value());
  EXPECT_FALSE(read_host(f.root.string(), "eth0").net_rx_bytes.has_value());
}

TEST(TelemetryHost, TheSamplerTurnsAdvancingCountersIntoRates) {
  FakeSys f;
  f.set(100, 0, 4096, 1000, 0, 0, 0);
  TelemetryOptions o;
  o.sysfs_root = f.root.string();
  o.net_interface = "eth9";
  TelemetrySampler sampler(o);
  sampler.sample_now();                      // baseline
  f.set(110, 10, 8192, 51000, 0, 250, 500);  // +20 ticks, +50000 B, IB +250/+500 units
  sampler.sample_now();
  const json s = sampler.summary();
  const double span = s["span_s"].get<double>();
  ASSERT_GT(span, 0);
  const json& host = s["host"];
  // Rates use the real clock; the oracle is rate * span = the counters' advance.
  EXPECT_NEAR(host["net"]["rx_bytes_per_s"]["mean"].get<double>() * span, 50000, 1e-6);
  EXPECT_EQ(host["net"]["tx_bytes_per_s"]["max"], 0.0);
  EXPECT_NEAR(host["cpu_util_pct"]["mean"].get<double>() * span / 100,
              20.0 / static_cast<double>(::sysconf(_SC_CLK_TCK)), 1e-9);
  EXPECT_EQ(host["peak_rss_bytes"], 8192 * 1024);
  ASSERT_EQ(host["infiniband"].size(), 2u);
  EXPECT_EQ(host["infiniband"][0]["port"], "mlx5_0/1");
  EXPECT_NEAR(host["infiniband"][0]["rx_bytes_per_s"]["mean"].get<double>() * span, 1000, 1e-6);  // 250 * 4
  EXPECT_NEAR(host["infiniband"][0]["tx_bytes_per_s"]["mean"].get<double>() * span, 2000, 1e-6);  // 500 * 4
  EXPECT_EQ(host["infiniband"][1]["rx_bytes_per_s"]["max"], 0.0);
  EXPECT_EQ(keys(host), (std::set<std::string>{"cpu_util_pct", "peak_rss_bytes", "net", "infiniband"}));
}

TEST(TelemetryHost, InterfaceForAddress) {
  EXPECT_EQ(interface_for_address("10.0.0.1", {{"GLOO_SOCKET_IFNAME", "eth7,eth8"}, {"NCCL_SOCKET_IFNAME", "ib0"}}),
            "eth7");
  EXPECT_EQ(interface_for_address("10.0.0.1", {{"NCCL_SOCKET_IFNAME", "=ib0,ib1"}}), "ib0");
  EXPECT_EQ(interface_for_address("", {}), "");
  if (::if_nametoindex("lo") == 0) GTEST_SKIP() << "no loopback interface named lo";
  EXPECT_EQ(interface_for_address("127.0.0.1", {}), "lo");
  // An exclusion list names no interface: the address decides.
  EXPECT_EQ(interface_for_address("127.0.0.1", {{"NCCL_SOCKET_IFNAME", "^docker,veth"}}), "lo");
}

// ---------------------------------------------------------------- the thread

TEST(TelemetrySampler, TheThreadSamplesAndStops) {
  FakeSys f;
  f.set(1, 1, 1, 1, 1, 1, 1);
  TelemetryOptions o;
  o.sample_ms = 1;
  o.sysfs_root = f.root.string();
  TelemetrySampler sampler(o);
  sampler.start();
  EXPECT_TRUE(sampler.running());
  // Bounded wait for the thread's second sample (no timing threshold: only that it comes).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (sampler.samples() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  sampler.stop();
  EXPECT_FALSE(sampler.running());
  const std::size_t n = sampler.samples();
  EXPECT_GE(n, 2u);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(sampler.samples(), n);  // stopped: nothing more
  EXPECT_EQ(sampler.summary()["samples"], n);
  // A new window starts from zero; a window shorter than a period still gets its one sample.
  TelemetryOptions slow = o;
  slow.sample_ms = 60000;
  TelemetrySampler once(slow);
  once.start();
  once.stop();
  EXPECT_EQ(once.samples(), 1u);
  // The destructor stops a running sampler.
  auto running = std::make_unique<TelemetrySampler>(slow);
  running->start();
  running.reset();
}

TEST(TelemetrySampler, BadPeriodIsAUsageError) {
  TelemetryOptions o;
  o.sample_ms = 0;
  EXPECT_THROW(TelemetrySampler{o}, UsageError);
}

}  // namespace
}  // namespace ddpbench
