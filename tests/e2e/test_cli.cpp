// End-to-end tests of the ddpbench binary: real processes, real launchers, real files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <regex>
#include <sstream>
#include <set>
#include <stdexcept>

#include "common/testutil.hpp"
#include "core/launch/spawn.hpp"
#include "core/result/result.hpp"
#include "core/config/run_options.hpp"
#include "e2e/cli_test_util.hpp"

namespace fs = std::filesystem;

namespace ddpbench {
namespace {

using namespace cli_tests;  // kBin, kTiny and the testutil and gmock names they use

void expect_tiny_sweep(const ResultFile& f, int world) {
  ASSERT_EQ(f.results.size(), world == 2 ? 3u : 2u);
  const auto& nd = f.results[0];
  EXPECT_FALSE(nd.ddp);
  EXPECT_EQ(nd.label, "no ddp");
  EXPECT_EQ(nd.world_size, 1);
  for (size_t i = 1; i < f.results.size(); ++i) {
    const auto& r = f.results[i];
    EXPECT_TRUE(r.ddp);
    EXPECT_EQ(r.world_size, static_cast<int>(i));
    ASSERT_EQ(r.ranks.size(), i);
    for (const auto& rk : r.ranks) {  // every rank's summary; raw samples where kept (the slowest)
      ASSERT_TRUE(rk.step.has_value());
      EXPECT_EQ(rk.step->n, 3);
      EXPECT_GT(rk.step->p50_s, 0.0);
      EXPECT_EQ(rk.samples_s.size(), rk.rank == r.ranks_kept_in_full.value().front() ? 3u : 0u);
      for (double s : rk.samples_s) EXPECT_GT(s, 0.0);
    }
    EXPECT_EQ(r.summary.n, static_cast<int>(3 * i));
    EXPECT_TRUE(r.checks.grad_check_passed.value());
    EXPECT_EQ(r.checks.grad_max_abs_diff_across_ranks.value(), 0.0);
    EXPECT_TRUE(r.checks.buckets_rebuilt.value());
  }
}

// The tiny sweep on 2 ranks of the built-in spawner with `flags`, and the JSON it wrote.
// Throws (failing the test) with ddpbench's stderr when it did not exit 0.
struct TinyRun {
  Outcome o;
  ResultFile f;
};
TinyRun run_tiny(const std::string& flags) {
  TempDir d;
  const auto json = (d.path / "r.json").string();
  auto o = run(kBin + kTiny + " --nproc-per-node 2" + flags + " --json " + json);
  if (o.code != 0) throw std::runtime_error("ddpbench exited " + std::to_string(o.code) + ":\n" + o.err);
  return {std::move(o), read_result_file(json)};
}

// Where the time goes: every rank's breakdown adds up to its measured step.
// forward and optimizer come from ddpbench's marks, backward compute / communication /
// overlap from the c10d::Reducer's own timers, step from the step timer; other_s is what
// is left. It stays within 10% of the step (+2 ms): more would mean the Reducer's spans
// and ours disagree about the backward pass. Also: one row per --bucket-cap-mb and
// --grad-accum value, with its settings recorded.
TEST(Cli, BreakdownAddsUpOnEveryRank) {
  const auto [o, f] = run_tiny(" --world-sizes 2 --bucket-cap-mb 1,25 --grad-accum 1,2 --breakdown");
  // Baselines at (2, 1) and (2, 2), then 4 variants at 2 ranks.
  ASSERT_EQ(f.results.size(), 6u);
  EXPECT_EQ(f.rows_planned, 6);
  EXPECT_THAT(o.out, HasSubstr("ms/step: forward "));
  EXPECT_THAT(o.out, HasSubstr("[bucket cap 1 MiB, grad accum 2]"));
  int ddp_rows = 0;
  for (const auto& r : f.results) {
    SCOPED_TRACE(r.label + " " + nlohmann::json(r.ddp_options).dump());
    EXPECT_EQ(r.grad_accum, r.ddp ? (ddp_rows % 2 == 0 ? 1 : 2) : (r.grad_accum));
    ASSERT_TRUE(r.breakdown.mean_over_ranks.has_value());
    ASSERT_EQ(r.ranks.size(), static_cast<size_t>(r.world_size));
    for (const auto& rk : r.ranks) {
      const nlohmann::json b = rk.breakdown;  // as the file holds it
      ASSERT_EQ(b.size(), kNumBreakdownComponents);
      ASSERT_TRUE(rk.step.has_value());
      const double mean_step = rk.step->mean_s;  // the mean of the rank's samples
      const double step = b.at("step_s").get<double>();
      EXPECT_NEAR(step, mean_step, 1e-9);
      for (const char* k :
           {"forward_s", "backward_compute_s", "backward_comm_s", "overlap_s", "exposed_comm_s", "optimizer_s"})
        EXPECT_GE(b.at(k).get<double>(), 0.0) << k;
      const double sum = b.at("forward_s").get<double>() + b.at("backward_compute_s").get<double>() +
                         b.at("exposed_comm_s").get<double>() + b.at("optimizer_s").get<double>();
      EXPECT_NEAR(sum, step, 0.1 * step + 0.002);
      EXPECT_NEAR(b.at("exposed_comm_s").get<double>(),
                  b.at("backward_comm_s").get<double>() - b.at("overlap_s").get<double>(), 1e-12);
      EXPECT_LE(b.at("overlap_s").get<double>(), b.at("backward_comm_s").get<double>());
      if (r.ddp) EXPECT_GT(b.at("backward_comm_s").get<double>(), 0.0);
      else EXPECT_EQ(b.at("backward_comm_s").get<double>(), 0.0);
    }
    if (!r.ddp) continue;
    ++ddp_rows;
    EXPECT_EQ(r.ddp_options.comm_hook, "none");
    const nlohmann::json c = r.communication;  // as the file holds it
    EXPECT_EQ(c.at("buckets").get<size_t>(), c.at("bucket_sizes_bytes").size());
    long long sum = 0;
    for (const auto& b : c.at("bucket_sizes_bytes")) sum += b.get<long long>();
    EXPECT_EQ(c.at("allreduce_bytes_per_step").get<long long>(), sum);
    // algbw = gradient bytes / the Reducer's communication span; busbw = algbw * 2(n-1)/n.
    const double comm_s = r.breakdown.mean(Phase::backward_comm).value();
    EXPECT_NEAR(c.at("effective_algbw_gbps").get<double>(), static_cast<double>(sum) / comm_s / 1e9, 1e-9);
    EXPECT_NEAR(c.at("effective_busbw_gbps").get<double>(), c.at("effective_algbw_gbps").get<double>(), 1e-12);
  }
  EXPECT_EQ(ddp_rows, 4);
  EXPECT_EQ(f.results[2].ddp_options.bucket_cap_mb, 1.0);
  EXPECT_EQ(f.results[5].ddp_options.bucket_cap_mb, 25.0);
  // 2 micro-steps: twice the examples per optimizer step.
  EXPECT_NEAR(f.results[3].summary.ex_per_s_per_gpu, 2.0 * 2 / f.results[3].summary.p50_s, 1e-6);
}

// The Reducer's bucket layout follows --bucket-cap-mb as PyTorch's own DDP computes it:
// the oracle is Python's DistributedDataParallel (the installed python3-torch, Gloo, one rank)
// on torchvision's resnet18, whose rebuilt bucket sizes after iteration 2 the c10d Logger
// reports as "rebuilt_bucket_sizes": for each explicit cap, and with bucket_cap_mb left at
// its default (torch 2.x caps the first bucket differently in the two cases).
TEST(Cli, BucketLayoutMatchesPythonDdpForEveryCap) {
  if (::access("/usr/bin/python3", X_OK) != 0 ||
      std::system("/usr/bin/python3 -c 'import torch.distributed, torchvision' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3-torch / python3-torchvision not installed (apt-get install python3-torchvision)";
  TempDir d;
  const std::string common =
      " run --model resnet18 --image-size 32 --batch-size 2 --warmup 1 --iters 2 "
      "--nproc-per-node 1 --json ";
  const auto json = (d.path / "r.json").string(), json_default = (d.path / "default.json").string();
  const auto o = run(kBin + common + json + " --bucket-cap-mb 1,5,25,100");
  ASSERT_EQ(o.code, 0) << o.err;
  const auto o_default = run(kBin + common + json_default);
  ASSERT_EQ(o_default.code, 0) << o_default.err;
  const auto f = read_result_file(json), f_default = read_result_file(json_default);
  // After each file's no-DDP row: one DDP row per cap in flag order, then the default's.
  std::vector<const BenchResult*> rows;
  for (size_t i = 1; i < f.results.size(); ++i) rows.push_back(&f.results[i]);
  ASSERT_EQ(f_default.results.size(), 2u);
  rows.push_back(&f_default.results[1]);
  const auto script = (d.path / "bk.py").string();
  std::ofstream(script) << R"(import os, sys, torch, torch.distributed as dist, torchvision
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + sys.argv[1], rank=0, world_size=1)
torch.set_num_threads(1)
for cap in (1, 5, 25, 100, None):
    torch.manual_seed(0)
    kw = {} if cap is None else {"bucket_cap_mb": cap}
    d = torch.nn.parallel.DistributedDataParallel(torchvision.models.resnet18(), **kw)
    x, y = torch.randn(2, 3, 32, 32), torch.randint(0, 1000, (2,))
    for _ in range(3):
        torch.nn.functional.cross_entropy(d(x), y).backward()
    print(d._get_ddp_logging_data()["rebuilt_bucket_sizes"])
)";
  // USE_LIBUV=0: a torch built without libuv (Debian's 2.6) refuses TCPStore's default libuv server.
  const auto py = run("env USE_LIBUV=0 /usr/bin/python3 " + script + " " + std::to_string(find_free_port()));
  ASSERT_EQ(py.code, 0) << py.err;
  std::istringstream lines(py.out);
  size_t i = 0;
  for (std::string line; std::getline(lines, line); ++i) {
    ASSERT_LT(i, rows.size());
    std::string ours;
    for (const long long b : rows[i]->communication.bucket_sizes_bytes.value())
      ours += (ours.empty() ? "" : ", ") + std::to_string(b);
    EXPECT_EQ(ours, line) << "bucket cap " << rows[i]->ddp_options.bucket_cap_mb.value_or(-1) << " (first bucket "
                          << rows[i]->ddp_options.first_bucket_cap_mb.value_or(-1) << ")"
                          << (i == 4 ? ", the default" : "");
  }
  EXPECT_EQ(i, 5u);
  // 1 MiB caps give more buckets than 100 MiB ones.
  EXPECT_GT(rows[0]->communication.buckets.value(), rows[3]->communication.buckets.value());
  // The first cap each row records is the rule of the linked torch (the file's "torch"):
  // 1 MiB on 1.x; on 2.x the explicit cap, and 1 MiB when bucket_cap_mb is left out.
  const std::string torch = f.environment.at("torch").get<std::string>();
  const bool torch2 = std::stoi(torch.substr(0, torch.find('.'))) >= 2;
  const double caps[] = {1, 5, 25, 100};
  for (size_t k = 0; k < 4; ++k) EXPECT_EQ(rows[k]->ddp_options.first_bucket_cap_mb, torch2 ? caps[k] : 1.0) << torch;
  EXPECT_EQ(rows[4]->ddp_options.first_bucket_cap_mb, 1.0);
  EXPECT_EQ(f.config.at("first_bucket_cap_mb"),
            torch2 ? nlohmann::json({1.0, 5.0, 25.0, 100.0}) : nlohmann::json({1.0, 1.0, 1.0, 1.0}));
  EXPECT_THAT(o.out, HasSubstr(torch2 ? "* Maximum bucket size: 1, 5, 25, 100 MiB (first bucket 1, 5, 25, 100 MiB)"
                                      : "* Maximum bucket size: 1, 5, 25, 100 MiB (first bucket 1, 1, 1, 1 MiB)"));
}

// --profile DIR writes one Chrome trace per rank and row (libtorch's profiler: the legacy
// one on Debian's torch, which has no Kineto) with the model's operators in it.
TEST(Cli, ProfileWritesOneTracePerRankAndRow) {
  TempDir d;
  const auto dir = (d.path / "traces").string();
  const auto [o, f] = run_tiny(" --world-sizes 2 --profile " + dir + " --profile-iters 1");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"squeezenet1_0-ddp2-rank0.json", "squeezenet1_0-ddp2-rank1.json",
                                             "squeezenet1_0-noddp-b2-rank0.json"}));
  const auto trace = nlohmann::json::parse(slurp(dir + "/squeezenet1_0-ddp2-rank1.json"));
  bool conv = false;
  for (const auto& ev : trace.is_array() ? trace : trace.at("traceEvents"))
    conv = conv || ev.value("name", "") == "aten::convolution";
  EXPECT_TRUE(conv);
  ASSERT_TRUE(f.results[1].telemetry.profile.has_value());
  EXPECT_EQ(f.results[1].telemetry.profile->file, "squeezenet1_0-ddp2-rank0.json");
}

// At scale a row keeps every rank's step summary, its per-iteration means over ranks and the
// group's telemetry as min/median/max over ranks, and each rank's raw step samples and
// telemetry series only for the ranks a reader looks at (telemetry flags; the slowest step),
// so the per-rank part of a row stays within 1 KB per rank; --per-rank-series all keeps every
// rank's. The oracles are the ranks' own samples and series, kept with "all", and sums
// written out here.
TEST(Cli, PerRankSeriesAreKeptForFlaggedRanksAndSummarisedOverRanks) {
  TempDir d;
  const int n = 6;
  const std::string args =
      " run " + testutil::kTinyArgs + " --warmup 1 --iters 6 --nproc-per-node 6 --world-sizes 6 --sample-ms 5 --json ";
  const auto json = (d.path / "r.json").string(), json_all = (d.path / "all.json").string();
  const auto o = run(kBin + args + json);
  ASSERT_EQ(o.code, 0) << o.err;
  const auto o_all = run(kBin + args + json_all + " --per-rank-series all");
  ASSERT_EQ(o_all.code, 0) << o_all.err;
  const auto f = read_result_file(json), f_all = read_result_file(json_all);
  EXPECT_EQ(f.config.at("per_rank_series"), "flagged");
  const BenchResult* row = nullptr;
  for (const auto& r : f.results)
    if (r.ddp && r.world_size == n) row = &r;
  ASSERT_NE(row, nullptr);
  const auto& over = row->telemetry.series_over_ranks.value();
  EXPECT_EQ(over.at("ranks"), n);
  ASSERT_TRUE(row->ranks_kept_in_full.has_value());
  const std::vector<int> kept = *row->ranks_kept_in_full;
  EXPECT_EQ(kept.size(), 1u);  // no flags on CPUs: the slowest rank only
  std::vector<std::pair<double, int>> util, step;
  for (const auto& rk : row->ranks) {
    ASSERT_TRUE(rk.telemetry.sampled.has_value()) << "rank " << rk.rank;
    const nlohmann::json s = *rk.telemetry.sampled;
    util.emplace_back(s.at("host").at("cpu_util_pct").at("mean").get<double>(), rk.rank);
    ASSERT_TRUE(rk.step.has_value()) << "rank " << rk.rank;
    EXPECT_EQ(rk.step->n, 6);
    step.emplace_back(rk.step->mean_s, rk.rank);
    const bool is_kept = std::find(kept.begin(), kept.end(), rk.rank) != kept.end();
    EXPECT_EQ(s.contains("series"), is_kept) << "rank " << rk.rank;
    EXPECT_EQ(rk.samples_s.size(), is_kept ? 6u : 0u) << "rank " << rk.rank;
    // Per rank and row, in the file: within 1 KB (its step summary, breakdown, telemetry summary).
    if (!is_kept) EXPECT_LE(nlohmann::json(rk).dump().size(), 1024u) << nlohmann::json(rk).dump();
  }
  // The slowest by mean step (the last on ties).
  std::stable_sort(step.begin(), step.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  EXPECT_EQ(kept.front(), step.back().second);
  // --per-rank-series all: every rank keeps its samples and series; the row's summaries
  // agree with them.
  const BenchResult* row_all = nullptr;
  for (const auto& r : f_all.results)
    if (r.ddp && r.world_size == n) row_all = &r;
  ASSERT_NE(row_all, nullptr);
  EXPECT_FALSE(row_all->ranks_kept_in_full.has_value());
  std::vector<std::vector<double>> cpu;
  std::vector<double> means(6, 0.0);
  for (const auto& rk : row_all->ranks) {
    ASSERT_TRUE(rk.telemetry.sampled && rk.telemetry.sampled->series) << "rank " << rk.rank;
    ASSERT_EQ(rk.samples_s.size(), 6u) << "rank " << rk.rank;
    double sum = 0, mx = 0;
    for (size_t i = 0; i < 6; ++i) {
      means[i] += rk.samples_s[i] / n;
      sum += rk.samples_s[i];
      mx = std::max(mx, rk.samples_s[i]);
    }
    ASSERT_TRUE(rk.step.has_value());
    EXPECT_NEAR(rk.step->mean_s, sum / 6, 1e-12) << "rank " << rk.rank;
    EXPECT_EQ(rk.step->max_s, mx) << "rank " << rk.rank;
    std::vector<double> v;
    for (double x : rk.telemetry.sampled->series->at("cpu_util_pct")) v.push_back(x);
    cpu.push_back(v);
  }
  ASSERT_EQ(row_all->iteration_means_s.size(), 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(row_all->iteration_means_s[i], means[i], 1e-12) << "iteration " << i;
  const auto& band = row_all->telemetry.series_over_ranks.value().at("cpu_util_pct");
  ASSERT_FALSE(cpu[0].empty());
  std::vector<double> at0;
  for (const auto& v : cpu)
    if (!v.empty() && std::isfinite(v[0])) at0.push_back(v[0]);
  ASSERT_FALSE(at0.empty());
  EXPECT_DOUBLE_EQ(band.at("min")[0].get<double>(), *std::min_element(at0.begin(), at0.end()));
  EXPECT_DOUBLE_EQ(band.at("max")[0].get<double>(), *std::max_element(at0.begin(), at0.end()));
}

// run, comm and find-max-bs write one environment (one builder): the keys
// docs/result-schema.md lists, whatever the command; one process has one host and one rank.
TEST(Cli, RunCommAndFindMaxBsWriteTheSameEnvironmentKeys) {
  TempDir d;
  const auto run_json = (d.path / "run.json").string(), comm_json = (d.path / "comm.json").string(),
             fmb_json = (d.path / "fmb.json").string();
  const auto r = run(kBin + " run " + testutil::kTinyArgs + " --warmup 0 --iters 2 --world-sizes 1 --json " + run_json);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto c = run(kBin + " comm --nproc-per-node 2 --world-sizes 2 -b 1K -e 1K -w 0 -n 1 --json " + comm_json);
  ASSERT_EQ(c.code, 0) << c.err;
  const auto m = run(kBin + " find-max-bs --model " + testutil::kTinyModel +
                     " --image-size 32 --memory-limit 512M --trial 2 --json " + fmb_json);
  ASSERT_EQ(m.code, 0) << m.err << m.out;
  const std::set<std::string> expected = {"torch",
                                          "cuda",
                                          "nccl",
                                          "driver",
                                          "backend",
                                          "device_type",
                                          "cpu_model",
                                          "launcher",
                                          "rendezvous",
                                          "world_size",
                                          "threads_per_rank",
                                          "hosts",
                                          "ranks",
                                          "gpus",
                                          "topology",
                                          "slurm_job_id",
                                          "malloc_tuning",
                                          "math",
                                          "env",
                                          "nodes",
                                          "node_differences"};
  for (const auto& path : {run_json, comm_json, fmb_json}) {
    const ResultFile f = read_result_file(path);
    std::set<std::string> keys;
    for (const auto& [k, v] : f.environment.items()) keys.insert(k);
    EXPECT_EQ(keys, expected) << path;
  }
  const ResultFile fmb = read_result_file(fmb_json);
  EXPECT_EQ(fmb.environment.at("backend"), "none");
  EXPECT_EQ(fmb.environment.at("world_size"), 1);
  ASSERT_EQ(fmb.environment.at("ranks").size(), 1u);
  EXPECT_EQ(fmb.environment.at("hosts"), nlohmann::json::array({fmb.environment.at("ranks")[0].at("host")}));
  EXPECT_TRUE(fmb.environment.at("math").is_object());
  const ResultFile comm = read_result_file(comm_json);
  EXPECT_EQ(comm.environment.at("rendezvous").at("master_addr"), "127.0.0.1");
  EXPECT_EQ(comm.environment.at("nodes").size(), 1u);
}

// Rank 0 records which TCPStore server it ran: the oracle is Python's TCPStore of the same
// torch asked for libuv (torch 2.4+ reports libuvBackend; a torch built without libuv refuses
// it; torch 1.13 has no such option and only the classic poll() server).
TEST(Cli, RendezvousRecordsTheStoreServerPythonRuns) {
  if (::access("/usr/bin/python3", X_OK) != 0 ||
      std::system("/usr/bin/python3 -c 'import torch.distributed' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3-torch not installed (apt-get install python3-torch)";
  TempDir d;
  const auto script = (d.path / "store.py").string(), json = (d.path / "comm.json").string();
  std::ofstream(script) << R"(import torch.distributed as d
try:
    s = d.TCPStore("127.0.0.1", 0, 1, True, wait_for_workers=False, use_libuv=True)
    print("libuv" if s.libuvBackend else "poll")
except TypeError:  # torch 1.13: no use_libuv, the classic server only
    print("poll")
except RuntimeError as e:  # a torch built without libuv refuses it
    print("poll" if "without libuv" in str(e) else "error: " + str(e))
)";
  const auto py = run("/usr/bin/python3 " + script);
  ASSERT_EQ(py.code, 0) << py.err;
  const std::string expected = py.out.substr(0, py.out.find('\n'));
  ASSERT_TRUE(expected == "libuv" || expected == "poll") << py.out;
  const auto c = run(kBin + " comm --nproc-per-node 2 --world-sizes 2 -b 1K -e 1K -w 0 -n 1 --json " + json);
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(read_result_file(json).environment.at("rendezvous").at("store_server"), expected);
}

TEST(Cli, TinyRunWithLocalSpawnerWritesJson) {
  const auto [o, f] = run_tiny("");
  expect_tiny_sweep(f, 2);
  EXPECT_EQ(f.schema_version, kSchemaVersion);
  EXPECT_EQ(f.environment.at("launcher"), "local");
  EXPECT_EQ(f.environment.at("backend"), "gloo");
  EXPECT_EQ(f.environment.at("world_size"), 2);
  EXPECT_EQ(f.environment.at("threads_per_rank"), 1);
  EXPECT_EQ(f.config.at("world_sizes"), nlohmann::json({1, 2}));
  EXPECT_THAT(o.out, HasSubstr("* Distributed backend: gloo"));
  EXPECT_THAT(o.out, HasSubstr("Benchmark: squeezenet1_0 with batch size 2"));
  EXPECT_THAT(o.out, HasSubstr("   1 CPUs --   no ddp:  p50:"));
  EXPECT_THAT(o.out, HasSubstr("   2 CPUs --    1M/2C:  p50:"));
  // On a machine without a GPU every build, a CUDA-enabled one too (a login node), trains on the CPU.
  if (!fs::exists("/dev/nvidia0")) EXPECT_EQ(f.environment.at("device_type"), "cpu");
  // The step's Optimizer.zero_grad follows the linked torch: set_to_none=True from torch 2.0
  // (torch/optim/optimizer.py), False before. Oracle: the torch version the file records.
  const std::string torch = f.environment.at("torch").get<std::string>();
  const bool torch2 = std::stoi(torch.substr(0, torch.find('.'))) >= 2;
  EXPECT_EQ(f.config.at("zero_grad_set_to_none"), torch2) << torch;
  EXPECT_THAT(o.out, HasSubstr(std::string("* Optimizer.zero_grad(set_to_none=") + (torch2 ? "True" : "False") +
                               "), the linked torch's default"));
}

// --instruments-off: each instrument switched off leaves its trace out of the file (the oracle:
// the same tiny sweep with every instrument on has each of them), and the header names what ran.
// The row of a switched-off instrument is still measured: the timings do not depend on them.
TEST(Cli, InstrumentsSwitchedOffLeaveTheirMeasurementsOut) {
  const auto raw = [](const std::string& flags, std::string& out, std::string& err) {
    TempDir d;
    const auto json = (d.path / "r.json").string();
    auto o = run(kBin + kTiny + " --nproc-per-node 2 --world-sizes 2" + flags + " --json " + json);
    if (o.code != 0) throw std::runtime_error("ddpbench exited " + std::to_string(o.code) + ":\n" + o.err);
    out = o.out;
    err = o.err;
    return nlohmann::json::parse(testutil::slurp(json));
  };
  std::string on_out, off_out, on_err, off_err;
  const auto on = raw("", on_out, on_err);
  const auto off = raw(" --instruments-off all", off_out, off_err);
  const auto ddp_row = [](const nlohmann::json& f) {
    for (const auto& r : f["results"])
      if (r["ddp"].get<bool>()) return r;
    throw std::runtime_error("no DDP row");
  };
  const auto sampled = [](const nlohmann::json& row) {
    int n = 0;
    for (const auto& rk : row["ranks"])
      if (rk.contains("telemetry") && rk["telemetry"].contains("sampled")) ++n;
    return n;
  };
  const auto has_metric = [](const nlohmann::json& row, const char* k) {
    return row.contains("metrics") && row["metrics"].contains(k);
  };
  const auto breakdown = [](const nlohmann::json& row) {
    return row.contains("breakdown") && !row["breakdown"].empty();
  };
  // Every instrument on: telemetry on every rank, the per-step counters, the breakdown, the scores.
  EXPECT_EQ(on["config"]["instruments_off"], nlohmann::json::array());
  EXPECT_EQ(sampled(ddp_row(on)), 2);
  EXPECT_TRUE(has_metric(ddp_row(on), "preemptions_per_step"));
  EXPECT_TRUE(has_metric(ddp_row(on), "cpu_cores"));
  EXPECT_TRUE(breakdown(ddp_row(on)));
  ASSERT_TRUE(on.contains("stragglers"));
  EXPECT_EQ(on["stragglers"].size(), 1u);
  EXPECT_TRUE(on.contains(nlohmann::json::json_pointer("/results/0/telemetry/concurrent_baseline_p50_s")));
  EXPECT_THAT(on_out, HasSubstr("* Instruments: telemetry sampler every 100 ms, per-step counters, breakdown "
                                "timers, progress, straggler series\n"));
  EXPECT_THAT(on_err, HasSubstr("[1/2] "));  // the progress line of the first row
  // Every one off: none of them, and the rows still there with their timings.
  EXPECT_EQ(off["config"]["instruments_off"],
            nlohmann::json({"telemetry", "counters", "timers", "progress", "stragglers"}));
  ASSERT_EQ(off["results"].size(), 2u);
  EXPECT_EQ(sampled(ddp_row(off)), 0);
  EXPECT_FALSE(has_metric(ddp_row(off), "preemptions_per_step"));
  EXPECT_FALSE(has_metric(ddp_row(off), "cpu_cores"));
  EXPECT_FALSE(breakdown(ddp_row(off)));
  EXPECT_TRUE(!off.contains("stragglers") || off["stragglers"].empty());
  EXPECT_FALSE(off.contains(nlohmann::json::json_pointer("/results/0/telemetry/concurrent_baseline_p50_s")));
  EXPECT_GT(ddp_row(off)["summary"]["p50_s"].get<double>(), 0.0);
  EXPECT_TRUE(ddp_row(off)["checks"]["grad_check_passed"].get<bool>());
  EXPECT_THAT(off_out, HasSubstr("* Instruments: none; off (--instruments-off): telemetry sampler every 100 ms, "
                                 "per-step counters, breakdown timers, progress, straggler series\n"));
  EXPECT_THAT(off_err, Not(HasSubstr("[1/2] ")));
  // A name that is no instrument: one line naming the known ones, exit 2.
  const auto bad = run(kBin + kTiny + " --instruments-off sampler");
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--instruments-off has 'sampler', which is no instrument; use a comma list of "
                                 "telemetry, counters, timers, progress, stragglers (or all, none)"));
}

// --zero-grad-set-to-none sets it whatever the torch, recorded, and named in the header as the
// flag's where it is not the linked torch's default (torch 2.x: True).
TEST(Cli, ZeroGradFlagIsRecordedAndNamed) {
  const auto [o, f] = run_tiny(" --world-sizes 2 --zero-grad-set-to-none false");
  EXPECT_EQ(f.config.at("zero_grad_set_to_none"), false);
  const std::string torch = f.environment.at("torch").get<std::string>();
  const bool torch2 = std::stoi(torch.substr(0, torch.find('.'))) >= 2;
  EXPECT_THAT(o.out, HasSubstr(std::string("* Optimizer.zero_grad(set_to_none=False)") +
                               (torch2 ? " (--zero-grad-set-to-none)" : ", the linked torch's default")));
  for (const auto& r : f.results)
    if (r.ddp) EXPECT_TRUE(r.checks.grad_check_passed.value());
}

// run --mode inference from a fresh process: forward only, so nothing allocates on the device
// before the first peak-memory window starts (its first CUDA call on a GPU is the allocator's
// peak reset). Every world size gives a row, every rank of it a measured peak.
void expect_inference_rows(const ResultFile& f, const std::vector<int>& world_sizes, bool cuda) {
  ASSERT_EQ(f.results.size(), world_sizes.size());
  for (size_t i = 0; i < world_sizes.size(); ++i) {
    const BenchResult& r = f.results[i];
    EXPECT_EQ(r.mode, "inference");
    EXPECT_FALSE(r.ddp);
    EXPECT_EQ(r.world_size, world_sizes[i]);
    ASSERT_EQ(r.memory.per_rank.size(), static_cast<size_t>(world_sizes[i]));
    for (const auto& m : r.memory.per_rank) {
      if (cuda) {
        ASSERT_TRUE(m.peak_allocated_bytes.has_value()) << "rank " << m.rank;
        EXPECT_GT(*m.peak_allocated_bytes, 0) << "rank " << m.rank;
      } else {
        ASSERT_TRUE(m.peak_rss_bytes.has_value()) << "rank " << m.rank;
        EXPECT_GT(*m.peak_rss_bytes, 0) << "rank " << m.rank;
      }
    }
  }
}

TEST(Inference, FreshProcessMeasuresEveryWorldSizeWithMemory) {
  TempDir d;
  const auto json = (d.path / "r.json").string();
  const auto o =
      run(kBin + kTiny + " --mode inference --device cpu --nproc-per-node 2 --world-sizes 1,2 --json " + json);
  ASSERT_EQ(o.code, 0) << o.err;
  expect_inference_rows(read_result_file(json), {1, 2}, false);
}

// GPU only: a fresh rank process whose first CUDA call is the caching allocator's peak reset
// (inference allocates nothing before it). Without CUDA's lazy initialisation where the rank
// sets its device, the allocator does not know the device yet and refuses it ("Invalid device
// argument") in the set-up of the first row.
TEST(Inference, OnAGpuAFreshProcessStartsWithThePeakReset) {
  if (!fs::exists("/dev/nvidia0")) GTEST_SKIP() << "no GPU on this machine";
  TempDir d;
  const auto json = (d.path / "r.json").string();
  const auto o =
      run(kBin + kTiny + " --mode inference --device cuda --nproc-per-node 1 --world-sizes 1 --json " + json);
  if (o.code == 2 && o.err.find("no GPU is visible") != std::string::npos)
    GTEST_SKIP() << "this ddpbench sees no GPU (a build without CUDA): " << o.err;
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.err.find("Invalid device argument"), std::string::npos) << o.err;
  expect_inference_rows(read_result_file(json), {1}, true);
}

// A CUDA-enabled build on a machine without a GPU (a login node): `env` says so.
TEST(LoginNode, EnvSaysNoGpu) {
  if (fs::exists("/dev/nvidia0")) GTEST_SKIP() << "this machine has a GPU";
  const auto o = run(kBin + " env");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.out, ::testing::ContainsRegex("gpus: +none"));
}

// The fixed-feature-extractor study: only the head's gradients are bucketed and allreduced.
TEST(Cli, FrozenBackboneAllreducesOnlyTheHead) {
  const auto f = run_tiny(" --freeze-backbone --num-classes 10 --dataset-size 1000").f;
  const long long head =
      512LL * 4096 + 4096 + 4096LL * 4096 + 4096 + 4096LL * 10 + 10;  // squeezenet1_0 features: 512 channels
  const auto& r = f.results.back();
  ASSERT_EQ(r.world_size, 2);
  long long bucketed = 0;
  for (const auto b : r.checks.bucket_sizes_bytes.value()) bucketed += b;
  EXPECT_EQ(bucketed, head * 4);  // fp32 gradients of the head, nothing else
  EXPECT_EQ(r.communication.trainable_parameters.value(), head);
  EXPECT_EQ(r.communication.allreduce_bytes_per_step.value(), head * 4);
  EXPECT_EQ(r.communication.steps_per_epoch.value(), 250);  // 1000 examples / (2 ranks x batch 2)
  EXPECT_EQ(r.communication.allreduce_bytes_per_epoch.value(), head * 4 * 250);
  EXPECT_EQ(r.compute.trainable_parameters.value(), head);
  EXPECT_TRUE(r.checks.grad_check_passed.value());
  EXPECT_EQ(f.config.at("freeze_backbone"), true);
}

TEST(Cli, Bf16RunRecordsPrecisionAndFlops) {
  const auto [o, f] = run_tiny(" --device cpu --precision bf16 --channels-last");
  for (const auto& r : f.results) {
    EXPECT_EQ(r.precision, "bf16");
    EXPECT_GT(r.compute.forward_macs_per_example.value(), 0.0);
    EXPECT_FALSE(r.compute.mfu.has_value());  // a CPU has no entry in the peak table
  }
  EXPECT_EQ(f.config.at("channels_last"), true);
  EXPECT_THAT(o.out, HasSubstr("* Precision: bf16, channels_last"));
}

// --iters auto: every rank of a group measures the same number of iterations, and each
// row says why its series stopped. A target no series can reach stops at --max-iters.
TEST(Cli, ItersAutoStopsEveryRankTogetherAtTheLimit) {
  TempDir d;
  const auto json = (d.path / "r.json").string();
  const auto o = run(kBin + " run " + testutil::kTinyArgs +
                     " --warmup 1 --nproc-per-node 2 "
                     "--iters auto --target-ci 0.000001 --min-iters 3 --max-iters 6 --json " +
                     json);
  ASSERT_EQ(o.code, 0) << o.err;
  const auto f = read_result_file(json);
  EXPECT_EQ(f.config.at("iters"), "auto");
  ASSERT_EQ(f.results.size(), 3u);
  for (const auto& r : f.results) {
    EXPECT_EQ(r.stopping.mode, "auto");
    EXPECT_EQ(r.stopping.reason, "max_iters") << r.label;
    EXPECT_EQ(r.summary.iterations, 6) << r.label;
    for (const auto& rk : r.ranks) EXPECT_EQ(rk.step.value().n, 6) << r.label << " rank " << rk.rank;
  }
  EXPECT_THAT(o.out, HasSubstr("(stopped at max_iters, not at the 1e-06% target)"));
}

// A target every series reaches: it stops there, at or after --min-iters, all ranks alike.
TEST(Cli, ItersAutoStopsAtTheTargetCi) {
  TempDir d;
  const auto json = (d.path / "r.json").string();
  // --target-ci alone implies --iters auto; 100% of the mean is reached within a few iterations.
  const auto o = run(kBin + " run " + testutil::kTinyArgs +
                     " --warmup 1 --nproc-per-node 2 "
                     "--target-ci 100 --min-iters 4 --max-iters 200 --json " +
                     json);
  ASSERT_EQ(o.code, 0) << o.err;
  const auto f = read_result_file(json);
  for (const auto& r : f.results) {
    EXPECT_EQ(r.stopping.reason, "target_ci") << r.label;
    EXPECT_GE(r.summary.iterations, 4) << r.label;
    EXPECT_LE(r.stopping.achieved_ci_pct, 100.0) << r.label;
    for (const auto& rk : r.ranks) EXPECT_EQ(rk.step.value().n, r.summary.iterations) << r.label << " rank " << rk.rank;
  }
}

// Numbers that should not be trusted as they stand are flagged: 3 iterations cannot carry
// a p95, in the JSON and under the row.
TEST(Cli, FewIterationsAreFlagged) {
  const auto [o, f] = run_tiny("");
  for (const auto& r : f.results) {
    bool few = false;
    for (const auto& w : r.warnings) few = few || w.code == "few_samples";
    EXPECT_TRUE(few) << r.label;
  }
  EXPECT_THAT(o.out, HasSubstr("! few_samples: 3 iterations: fewer than 20 leave less than one expected sample"));
  EXPECT_THAT(o.out, HasSubstr("n   3  ci ±"));
}

// Two one-thread ranks confined to one CPU compete for it: the 2-rank row says so, the
// 1-rank rows do not (a real restriction from outside the process, not a flag).
TEST(Cli, RanksSharingOneCpuAreFlaggedOversubscribed) {
  if (!testutil::have("taskset")) GTEST_SKIP() << "taskset not installed (apt-get install util-linux)";
  TempDir d;
  const auto json = (d.path / "r.json").string();
  const auto o = run("OMP_NUM_THREADS=1 taskset -c 0 " + kBin + kTiny + " --nproc-per-node 2 --json " + json);
  ASSERT_EQ(o.code, 0) << o.err;
  const auto f = read_result_file(json);
  ASSERT_EQ(f.results.size(), 3u);
  const auto flagged = [](const BenchResult& r) {
    for (const auto& w : r.warnings)
      if (w.code == "oversubscribed") return true;
    return false;
  };
  EXPECT_FALSE(flagged(f.results[0]));
  EXPECT_FALSE(flagged(f.results[1]));
  EXPECT_TRUE(flagged(f.results[2]));
  EXPECT_THAT(o.out, HasSubstr("! oversubscribed: 2 threads of this group's ranks on"));
}

TEST(Cli, WorldSizesFlagChoosesGroups) {
  const auto f = run_tiny(" --world-sizes 2").f;
  ASSERT_EQ(f.results.size(), 2u);
  EXPECT_EQ(f.results[1].world_size, 2);
}

TEST(Cli, ModelsListsTorchvisionCounts) {
  const auto o = run(kBin + " models --format json");
  ASSERT_EQ(o.code, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  ASSERT_EQ(j.size(), 21u);  // 15 image models, then 6 language models
  EXPECT_EQ(j[0]["name"], "resnet18");
  EXPECT_EQ(j[0]["parameters"], 11689512);
  EXPECT_EQ(j[2]["name"], "resnet50");
  EXPECT_NEAR(j[2]["forward_gmacs"].get<double>(), 4.09, 0.04);
  EXPECT_EQ(j[10]["name"], "vit_l_16");
  EXPECT_EQ(j[10]["parameters"], 304326632);
  // The language models at 1,024 tokens: the published totals, N of the PaLM formula and its
  // FLOPs per token by hand (gpt2: 6 x 123,653,376 + 12 x 12 x 12 x 64 x 1,024).
  EXPECT_EQ(j[15]["name"], "gpt2");
  EXPECT_EQ(j[15]["parameters"], 124439808);
  EXPECT_EQ(j[15]["palm_parameters"], 124439808 - 1024 * 768);
  EXPECT_DOUBLE_EQ(j[15]["train_gflops_per_token"].get<double>(), (6.0 * 123653376 + 12.0 * 12 * 12 * 64 * 1024) / 1e9);
  EXPECT_EQ(j[19]["name"], "llama3.2-1b");
  EXPECT_EQ(j[19]["parameters"], 1235814400);
  EXPECT_EQ(j[20]["name"], "llama3.1-8b");
  EXPECT_EQ(j[20]["parameters"], 8030261248LL);
}

// torchrun as a real launcher (Debian's python3-torch), with ranks that create their own
// store (--standalone) and with the elastic agent's store (static rendezvous).
class Torchrun : public ::testing::TestWithParam<std::string> {};

TEST_P(Torchrun, LaunchesRanksWithoutFlags) {
  if (::access("/usr/bin/torchrun", X_OK) != 0)
    GTEST_SKIP() << "torchrun not installed (apt-get install python3-torch)";
  TempDir d;
  const auto json = (d.path / "r.json").string();
  const std::string rdzv = GetParam() == "standalone"
                               ? "--standalone"
                               : "--nnodes 1 --master_addr 127.0.0.1 --master_port " + std::to_string(find_free_port());
  // Debian's torchrun 1.13 under Python 3.11 crashes on its default "--redirects 0" (Std.NONE
  // is no longer iterable in an IntFlag); "1" (stdout to a log, tee'd to the console) works.
  const auto o = run("/usr/bin/torchrun --redirects 1 --tee 1 " + rdzv + " --nproc_per_node 2 --no_python " + kBin +
                     kTiny + " --json " + json);
  ASSERT_EQ(o.code, 0) << o.err;
  const auto f = read_result_file(json);
  expect_tiny_sweep(f, 2);
  EXPECT_EQ(f.environment.at("launcher"), "torchrun");
  if (GetParam() == "agent-store") EXPECT_EQ(f.environment.at("env").value("TORCHELASTIC_USE_AGENT_STORE", ""), "True");
}

INSTANTIATE_TEST_SUITE_P(Rendezvous, Torchrun, ::testing::Values("standalone", "agent-store"),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           return i.param == "standalone" ? std::string("Standalone") : std::string("AgentStore");
                         });

// The slow rank named, with a real slowdown from outside the process: two ranks started by
// hand, rank 0 pinned to CPU 0 and rank 1 to CPU 1, and a busy loop pinned to CPU 1 that
// takes about half of rank 1's core. Rank 1's compute-only step is then about twice rank
// 0's (score about 0.5), far below the default threshold of 0.95; nothing inside the
// measured code knows about it. The oracle is the scheduler: a CPU shared by two runnable
// threads gives each about half.
TEST(Cli, SlowedRankIsNamedAsStraggler) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs 2 CPUs to pin the ranks apart";
  TempDir d;
  const std::string json = (d.path / "s.json").string();
  const std::string common = "OMP_NUM_THREADS=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(find_free_port()) +
                             " WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 ";
  const std::string args =
      " run --model resnet18 --image-size 32 --batch-size 4 --warmup 2 --iters 8 --world-sizes 2 "
      "--timeout 120 --json " +
      json;
  std::string cmd = "sh -c 'taskset -c 1 sh -c \"while :; do :; done\" & spin=$!; ";
  for (int r = 0; r < 2; ++r)
    cmd += "(" + common + "RANK=" + std::to_string(r) + " LOCAL_RANK=" + std::to_string(r) + " taskset -c " +
           std::to_string(r) + " " + kBin + args + (r == 0 ? "" : " >/dev/null") + " 2>" +
           (d.path / ("err" + std::to_string(r))).string() + "; echo $? >" +
           (d.path / ("rc" + std::to_string(r))).string() + ") & p" + std::to_string(r) + "=$!; ";
  cmd += "wait $p0 $p1; kill $spin'";
  const auto o = run(cmd);
  ASSERT_EQ(slurp(d.path / "rc0"), "0\n") << o.out << slurp(d.path / "err0") << slurp(d.path / "err1");
  EXPECT_THAT(o.out, HasSubstr("straggler: rank 1 (host ")) << o.out;
  const ResultFile f = read_result_file(json);
  ASSERT_EQ(f.stragglers.size(), 1u);
  const auto& e = f.stragglers[0];
  EXPECT_EQ(e["named"], nlohmann::json::array({1})) << e.dump(1);
  EXPECT_DOUBLE_EQ(e["ranks"][0]["score"].get<double>(), 1.0);
  EXPECT_LT(e["ranks"][1]["score"].get<double>(), 0.8) << e.dump(1);
  EXPECT_EQ(e["ranks"][1]["local_rank"], 1);
  EXPECT_EQ(e["ddp_world_size"], 2);
  // Its DDP step and the time it waited in communication come from the 2-rank group.
  EXPECT_GT(e["ranks"][1]["ddp_step_s"].get<double>(), 0.0);
  EXPECT_FALSE(e["ranks"][1]["comm_wait_s"].is_null());
  // The rank's own telemetry: its CPU utilization, sampled during the measured steps.
  for (const auto& row : f.results)
    for (const auto& rk : row.ranks) {
      ASSERT_TRUE(rk.telemetry.sampled.has_value()) << row.label;
      const nlohmann::json t = *rk.telemetry.sampled;
      EXPECT_FALSE(t["gpu"]["available"].get<bool>());
      EXPECT_GT(t["host"]["cpu_util_pct"]["mean"].get<double>(), 0.0);
      EXPECT_GT(t["host"]["peak_rss_bytes"].get<double>(), 0.0);
    }
}
}  // namespace
}  // namespace ddpbench

namespace ddpbench {
namespace {

// Every flag `ddpbench run --help` lists is one entry of the options catalogue (run_options) and
// every entry is listed, and every entry has a row in docs/guide/options.md's table of run's
// flags (and the table names no flag run lacks).
TEST(Cli, EveryRunFlagInHelpIsCataloguedAndDocumented) {
  const auto o = cli_tests::run(cli_tests::kBin + " run --help");
  ASSERT_EQ(o.code, 0) << o.err;
  std::set<std::string> in_help;
  const std::regex option_line(R"(^\s+(?:-[a-zA-Z], ?)?(--[a-z0-9-]+(?:, ?--[a-z0-9-]+)*))");
  const std::regex flag(R"(--[a-z0-9-]+)");
  std::istringstream lines(o.out);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, option_line)) continue;
    const std::string names = m[1].str();
    for (auto it = std::sregex_iterator(names.begin(), names.end(), flag); it != std::sregex_iterator(); ++it)
      in_help.insert(it->str());
  }
  in_help.erase("--help");
  std::set<std::string> catalogued, first_names;
  for (const auto& opt : run_options()) {
    first_names.insert(opt.name());
    for (auto it = std::sregex_iterator(opt.flag.begin(), opt.flag.end(), flag); it != std::sregex_iterator(); ++it)
      catalogued.insert(it->str());
  }
  ASSERT_GT(in_help.size(), 40u) << o.out;
  EXPECT_EQ(in_help, catalogued);

  // The table of run's flags: from its header row to the first line that is not a table row.
  const std::string doc = cli_tests::slurp(std::string(DDPBENCH_SOURCE_DIR) + "/docs/guide/options.md");
  const size_t start = doc.find("| flag | default | meaning |");
  ASSERT_NE(start, std::string::npos) << "docs/guide/options.md has no run flag table";
  std::set<std::string> documented;
  std::istringstream rows(doc.substr(start));
  for (std::string row; std::getline(rows, row) && row.rfind("|", 0) == 0;) {
    const std::string first_cell = row.substr(1, row.find('|', 1) - 1);
    const std::regex quoted("`(--[a-z0-9][a-z0-9-]*)");  // `--flag` or `--flag VALUE`
    for (auto it = std::sregex_iterator(first_cell.begin(), first_cell.end(), quoted); it != std::sregex_iterator();
         ++it)
      documented.insert((*it)[1].str());
  }
  for (const auto& n : first_names) EXPECT_EQ(documented.count(n), 1u) << n << " has no row in docs/guide/options.md";
  for (const auto& n : documented) EXPECT_EQ(catalogued.count(n), 1u) << n << " is documented but run has no such flag";
}

// --skip-all-reduce-unused-params: where the linked torch's DDP has the setting (2.7+) a run
// records it in every DDP row; before, it is refused in one line naming the torch it links.
TEST(Cli, SkipAllReduceUnusedParamsRunsWhereTheLinkedTorchHasIt) {
  const auto env = cli_tests::run(cli_tests::kBin + " env --json");
  ASSERT_EQ(env.code, 0) << env.err;
  const std::string torch = nlohmann::json::parse(env.out).at("torch").get<std::string>();
  const int major = std::stoi(torch.substr(0, torch.find('.')));
  const int minor = std::stoi(torch.substr(torch.find('.') + 1));
  const bool has_it = major > 2 || (major == 2 && minor >= 7);
  cli_tests::TempDir d;
  const std::string json = (d.path / "skip.json").string();
  const auto o = cli_tests::run(cli_tests::kBin + cli_tests::kTiny +
                                " --world-sizes 2 --find-unused-parameters --skip-all-reduce-unused-params --json " +
                                json);
  if (!has_it) {
    EXPECT_EQ(o.code, 2) << o.err;
    EXPECT_THAT(o.err, ::testing::HasSubstr("--skip-all-reduce-unused-params needs a torch whose DDP has "
                                            "skip_all_reduce_unused_params (2.7+), and this build links torch " +
                                            torch));
    EXPECT_FALSE(fs::exists(json));
    return;
  }
  ASSERT_EQ(o.code, 0) << o.err;
  const ResultFile f = read_result_file(json);
  EXPECT_EQ(f.config.at("skip_all_reduce_unused_params"), true);
  for (const auto& r : f.results)
    if (r.ddp) EXPECT_EQ(r.ddp_options.skip_all_reduce_unused_params, true);
}

// A language model's weak-scaling sweep (a Llama 3.2 1B shape reduced to 2 blocks of width 64,
// 16-token sequences) and its report. The oracles are by hand: tokens = examples x 16, and the
// PaLM formula's FLOPs for this shape (vocab 128,256, 32 heads of width 2, 8 key/value heads,
// SwiGLU width 8,192 x 64 / 2,048 = 256): N = 128,256 x 64 + 64 + 2 x (64 x 64 x 2 + 64 x 16 x 2
// + 3 x 64 x 256 + 2 x 64) = 8,327,488; per token 6 N + 12 x 2 x 32 x 2 x 16.
TEST(Cli, LanguageModelSweepReportsTokensAndPalmFlops) {
  TempDir d;
  const std::string json = (d.path / "llm.json").string();
  const auto o = run(kBin + " run --model llama3.2-1b --model-layers 2 --model-width 64 --seq-len 16 --batch-size 2 "
                            "--warmup 1 --iters 3 --json " + json);
  ASSERT_EQ(o.code, 0) << o.err;
  const ResultFile f = read_result_file(json);
  EXPECT_THAT(f.config.at("optimizer").get<std::string>(), HasSubstr("AdamW(lr=0.001"));
  ASSERT_GE(f.results.size(), 2u);
  const double n = 128256.0 * 64 + 64 + 2 * (64.0 * 64 * 2 + 64.0 * 16 * 2 + 3.0 * 64 * 256 + 2 * 64);
  EXPECT_EQ(n, 8327488.0);
  const double per_token = 6 * n + 12.0 * 2 * 32 * 2 * 16;
  bool ddp_row = false;
  for (const auto& r : f.results) {
    ASSERT_EQ(r.compute.seq_len.value_or(0), 16) << r.label;
    EXPECT_NEAR(*r.compute.tokens_per_s_per_gpu, r.summary.ex_per_s_per_gpu * 16, 1e-6 * *r.compute.tokens_per_s_per_gpu);
    EXPECT_NEAR(*r.compute.tokens_per_s, r.summary.ex_per_s_total * 16, 1e-6 * *r.compute.tokens_per_s);
    EXPECT_DOUBLE_EQ(*r.compute.train_flops_per_example, 16 * per_token) << r.label;
    EXPECT_EQ(*r.compute.parameters, 8327488);
    ddp_row = ddp_row || r.ddp;
  }
  EXPECT_TRUE(ddp_row);
  EXPECT_THAT(o.out, HasSubstr("tokens/s per rank"));
  const auto rep = run(kBin + " report " + json);
  ASSERT_EQ(rep.code, 0) << rep.err;
  EXPECT_THAT(rep.out, HasSubstr("per-rank tokens/s"));
  EXPECT_THAT(rep.out, HasSubstr("seq 16"));
}

// Where every --model is a language model, the CPU defaults are 2 sequences of 64 tokens, and
// the header says so (the image defaults' note does not appear).
TEST(Cli, LanguageModelCpuDefaultsAreSaidInTheHeader) {
  TempDir d;
  const std::string json = (d.path / "lm.json").string();
  const auto o = run(kBin + " run --model gpt2 --model-layers 1 --model-width 96 --world-sizes 1 --warmup 0 --iters 1 "
                            "--json " + json);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("no GPU: CPU language-model defaults 64-token sequences, batch 2"));
  EXPECT_THAT(o.out, Not(HasSubstr("64x64")));
  EXPECT_THAT(o.out, HasSubstr("(64-token sequences, AdamW, fp32)"));
  const ResultFile f = read_result_file(json);
  EXPECT_EQ(f.config.at("seq_len"), 64);
  for (const auto& r : f.results) {
    EXPECT_EQ(r.batch_per_rank, 2);
    EXPECT_EQ(r.compute.seq_len.value_or(0), 64);
  }
}

// A language model's forward-only rows report tokens/s too (ex/s x the sequence length), and
// their header names no optimizer.
TEST(Cli, LanguageModelInferenceRowsReportTokens) {
  TempDir d;
  const std::string json = (d.path / "inf.json").string();
  const auto o = run(kBin + " run --model gpt2 --model-layers 1 --model-width 96 --seq-len 16 --mode inference "
                            "--world-sizes 1 --warmup 1 --iters 2 --json " + json);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("(16-token sequences, fp32)"));
  const ResultFile f = read_result_file(json);
  ASSERT_FALSE(f.results.empty());
  for (const auto& r : f.results) {
    EXPECT_EQ(r.mode, "inference");
    ASSERT_EQ(r.compute.seq_len.value_or(0), 16);
    EXPECT_NEAR(*r.compute.tokens_per_s_per_gpu, 16 * r.summary.ex_per_s_per_gpu, 1e-6 * *r.compute.tokens_per_s_per_gpu);
  }
}

}  // namespace
}  // namespace ddpbench
