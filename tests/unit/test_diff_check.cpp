// "The same configuration" (ConfigKey), `ddpbench diff` (noise rule, launches, --match)
// and `ddpbench check` (reference tolerances, pinned configurations).
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

namespace ddpbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kFix = DDPBENCH_SOURCE_DIR "/tests/fixtures/";
const std::string kResults = DDPBENCH_SOURCE_DIR "/docs/results/";

ResultFile h100(const std::string& name) { return read_result_file(kResults + name); }

const BenchResult& ddp_row(const ResultFile& f) {
  for (const auto& r : f.results)
    if (r.ddp) return r;
  throw std::logic_error("no DDP row");
}

// ------------------------------------------------------------------ ConfigKey

TEST(ConfigKey, MathComesFromTheRecordedFlagsNotThePrecisionName) {
  const auto strict = h100("h100_resnet50_b32_fp32_tf32_off.json");  // "fp32", both TF32 flags off
  auto defmath = h100("h100_resnet50_b32_fp32_default.json");        // "fp32", cuDNN TF32 on
  // That run also had cuDNN autotuning off (the strict one on): a difference of its own.
  EXPECT_EQ(differences(ConfigKey::of(strict, ddp_row(strict)), ConfigKey::of(defmath, ddp_row(defmath))).size(), 2u);
  defmath.environment["math"]["cudnn_benchmark"] = true;
  const auto tf32 = h100("h100_resnet50_b32_tf32.json");  // "tf32", both on
  const auto ks = ConfigKey::of(strict, ddp_row(strict));
  const auto kd = ConfigKey::of(defmath, ddp_row(defmath));
  const auto kt = ConfigKey::of(tf32, ddp_row(tf32));
  EXPECT_EQ(ks.precision, "fp32");
  EXPECT_EQ(ks.math, "no-tf32");
  EXPECT_EQ(ks.setup_label(), "fp32-strict");
  EXPECT_EQ(kd.math, "cudnn-tf32");
  EXPECT_EQ(kd.setup_label(), "fp32 (cuDNN TF32)");
  EXPECT_EQ(kt.precision, "fp32");
  EXPECT_EQ(kt.setup_label(), "tf32");
  EXPECT_NE(ks, kd);
  EXPECT_NE(ks, kt);
  ASSERT_EQ(differences(ks, kd).size(), 1u);
  EXPECT_EQ(differences(ks, kd)[0].field, ConfigField::math);
  EXPECT_EQ(describe_differences(differences(ks, kd)), "math: no-tf32 -> cudnn-tf32");
}

TEST(ConfigKey, OldFp32WithFlagsOffIsTheNewFp32Strict) {
  // A schema-1.0 file whose "fp32" ran with both TF32 flags off ...
  auto old = h100("h100_resnet50_b32_fp32_default.json");
  old.environment["math"]["cudnn_allow_tf32"] = false;
  old.environment["math"]["cudnn_benchmark"] = true;  // as the renamed run had it
  // ... and a run under the new name for that math.
  auto renamed = h100("h100_resnet50_b32_fp32_tf32_off.json");
  for (auto& r : renamed.results) r.precision = "fp32-strict";
  EXPECT_EQ(ConfigKey::of(old, ddp_row(old)), ConfigKey::of(renamed, ddp_row(renamed)))
      << describe_differences(differences(ConfigKey::of(old, ddp_row(old)), ConfigKey::of(renamed, ddp_row(renamed))));
}

// Settings beyond the math that change a step's time are part of the configuration too.
TEST(ConfigKey, ThreadsMallocClassesAndAutotuningSeparateRows) {
  const auto cpu = read_result_file(kFix + "weak_cpu.json");
  const auto k = ConfigKey::of(cpu, ddp_row(cpu));
  EXPECT_EQ(k.cudnn_benchmark, "");  // a GPU setting
  auto threads = cpu;
  threads.environment["threads_per_rank"] = 7;
  auto untuned = cpu;
  untuned.environment["malloc_tuning"] = {{"applied", false}};
  auto classes = cpu;
  classes.config["num_classes"] = 10;
  EXPECT_EQ(differences(k, ConfigKey::of(threads, ddp_row(threads)))[0].field, ConfigField::threads_per_rank);
  EXPECT_EQ(differences(k, ConfigKey::of(untuned, ddp_row(untuned)))[0].field, ConfigField::malloc_tuning);
  EXPECT_EQ(differences(k, ConfigKey::of(classes, ddp_row(classes)))[0].field, ConfigField::num_classes);
  EXPECT_THAT(ConfigKey::of(untuned, ddp_row(untuned)).setup_label(), HasSubstr("malloc untuned"));
  auto huge = cpu;
  huge.config["num_classes"] = 1e300;  // a foreign file's value: the default, not undefined behaviour
  EXPECT_EQ(ConfigKey::of(huge, ddp_row(huge)).num_classes, 1000);
  const auto gpu = h100("h100_resnet50_b32_fp32_tf32_off.json");
  auto untuned_gpu = gpu;
  untuned_gpu.environment["math"]["cudnn_benchmark"] = false;
  EXPECT_EQ(differences(ConfigKey::of(gpu, ddp_row(gpu)), ConfigKey::of(untuned_gpu, ddp_row(untuned_gpu)))[0].field,
            ConfigField::cudnn_benchmark);
}

// Optimizer.zero_grad(set_to_none) separates rows; files before schema 1.8 zeroed in place on
// every torch (compared, not labelled); a label names a recorded value only where it is not
// the file's torch's default (True from 2.0).
TEST(ConfigKey, ZeroGradSeparatesRowsAndIsNamedWhereNotTheTorchDefault) {
  auto old = h100("h100_resnet50_b32_fp32_tf32_off.json");  // torch 2.x, before schema 1.8
  old.config.erase("zero_grad_set_to_none");
  const auto k_old = ConfigKey::of(old, ddp_row(old));
  EXPECT_EQ(k_old.zero_grad, "zeros");
  EXPECT_THAT(k_old.setup_label(), Not(HasSubstr("zero_grad")));
  auto zeros = old;
  zeros.config["zero_grad_set_to_none"] = false;  // recorded, and not torch 2.x's default
  EXPECT_THAT(ConfigKey::of(zeros, ddp_row(zeros)).setup_label(), HasSubstr("zero_grad zeros"));
  EXPECT_TRUE(differences(k_old, ConfigKey::of(zeros, ddp_row(zeros))).empty());
  auto now = old;
  now.config["zero_grad_set_to_none"] = true;
  const auto k_now = ConfigKey::of(now, ddp_row(now));
  EXPECT_EQ(k_now.zero_grad, "set_to_none");
  EXPECT_THAT(k_now.setup_label(), Not(HasSubstr("zero_grad")));
  ASSERT_EQ(differences(k_old, k_now).size(), 1u);
  EXPECT_EQ(differences(k_old, k_now)[0].field, ConfigField::zero_grad);
  auto t113 = now;
  t113.environment["torch"] = "1.13.0";
  EXPECT_THAT(ConfigKey::of(t113, ddp_row(t113)).setup_label(), HasSubstr("zero_grad set_to_none"));
  t113.config["zero_grad_set_to_none"] = false;
  EXPECT_THAT(ConfigKey::of(t113, ddp_row(t113)).setup_label(), Not(HasSubstr("zero_grad")));
}

TEST(ConfigKey, TheSetupSeparatesRows) {
  const auto base = h100("h100_resnet50_b32_fp32_tf32_off.json");
  const auto k = ConfigKey::of(base, ddp_row(base));
  auto cl = base;
  cl.config["channels_last"] = true;
  auto frozen = base;
  frozen.config["freeze_backbone"] = true;
  frozen.config["head"] = "mlp4096";
  auto gloo = base;
  gloo.environment["backend"] = "gloo";
  auto buckets = base;
  buckets.config["bucket_cap_mb"] = 50.0;
  EXPECT_EQ(ConfigKey::of(cl, ddp_row(cl)).setup_label(), "fp32-strict, channels_last");
  EXPECT_EQ(ConfigKey::of(frozen, ddp_row(frozen)).setup_label(), "fp32-strict, frozen backbone + mlp4096");
  EXPECT_EQ(ConfigKey::of(gloo, ddp_row(gloo)).setup_label(), "fp32-strict, gloo");
  EXPECT_EQ(ConfigKey::of(buckets, ddp_row(buckets)).setup_label(), "fp32-strict, bucket cap 50 MiB");
  for (const auto* f : {&cl, &frozen, &gloo, &buckets}) EXPECT_NE(ConfigKey::of(*f, ddp_row(*f)), k);
  // The no-DDP row neither communicates nor buckets: its key ignores the DDP settings.
  const auto nd = [](const ResultFile& f) { return ConfigKey::of(f, f.results.front()); };
  ASSERT_FALSE(base.results.front().ddp);
  EXPECT_EQ(nd(gloo), nd(base));
  EXPECT_EQ(nd(buckets), nd(base));
  EXPECT_NE(nd(cl), nd(base));
}

// Schema 1.5: a list-valued sweep (`--bucket-cap-mb 25,1 --comm-hook none,fp16`) gives the rows
// of one file different DDP knobs; each row's ddp_options decide, the file's config (which holds
// the lists) only for older files, and Python DDP's defaults where neither says.
TEST(ConfigKey, DdpKnobsComeFromTheRowFirstThenTheFileThenPythonsDefaults) {
  auto f = read_result_file(kFix + "weak_cpu.json");
  f.config["bucket_cap_mb"] = {25.0, 1.0};
  f.config["comm_hook"] = {"none", "fp16"};
  BenchResult r = ddp_row(f);
  const ConfigKey plain = ConfigKey::of(f, r);  // no ddp_options, a list in the config: every default
  EXPECT_EQ(plain.bucket_cap_mb, 25.0);
  EXPECT_EQ(plain.first_bucket_cap_mb, 1.0);
  EXPECT_TRUE(plain.broadcast_buffers);
  EXPECT_FALSE(plain.gradient_as_bucket_view);
  EXPECT_FALSE(plain.static_graph);
  EXPECT_FALSE(plain.find_unused_parameters);
  EXPECT_EQ(plain.comm_hook, "none");
  EXPECT_EQ(plain.grad_accum, 1);
  EXPECT_EQ(plain.knob_label(), "");
  EXPECT_EQ(plain.setup_label(), "fp32");

  r.ddp_options = nlohmann::json{{"bucket_cap_mb", 1.0},      {"first_bucket_cap_mb", 1.0},
                                 {"broadcast_buffers", true}, {"gradient_as_bucket_view", false},
                                 {"static_graph", false},     {"find_unused_parameters", false},
                                 {"comm_hook", "fp16"}}
                      .get<RowDdpOptions>();
  const ConfigKey swept = ConfigKey::of(f, r);
  EXPECT_EQ(swept.bucket_cap_mb, 1.0);
  EXPECT_EQ(swept.comm_hook, "fp16");
  EXPECT_EQ(swept.knob_label(), "bucket cap 1 MiB, comm hook fp16");
  EXPECT_EQ(swept.setup_label(), "fp32, bucket cap 1 MiB, comm hook fp16");
  EXPECT_EQ(describe_differences(differences(plain, swept)), "bucket_cap_mb: 25 -> 1; comm_hook: none -> fp16");

  // An older file: the settings in its config.
  auto old = read_result_file(kFix + "weak_cpu.json");
  old.config["bucket_cap_mb"] = 50.0;
  old.config["static_graph"] = true;
  EXPECT_EQ(ConfigKey::of(old, ddp_row(old)).setup_label(), "fp32, bucket cap 50 MiB, static graph");
  // The row wins over the config.
  BenchResult both = ddp_row(old);
  both.ddp_options.bucket_cap_mb = 5.0;
  both.ddp_options.static_graph = false;
  EXPECT_EQ(ConfigKey::of(old, both).setup_label(), "fp32, bucket cap 5 MiB");

  // Each knob alone makes another configuration, named in the label.
  struct Knob {
    nlohmann::json options;
    int grad_accum;
    ConfigField field;
    std::string label;
  };
  const std::vector<Knob> knobs = {
      {{{"gradient_as_bucket_view", true}}, 1, ConfigField::gradient_as_bucket_view, "gradient as bucket view"},
      {{{"static_graph", true}}, 1, ConfigField::static_graph, "static graph"},
      {{{"find_unused_parameters", true}}, 1, ConfigField::find_unused_parameters, "find unused parameters"},
      {{{"comm_hook", "powersgd:2"}}, 1, ConfigField::comm_hook, "comm hook powersgd:2"},
      {{{"broadcast_buffers", false}}, 1, ConfigField::broadcast_buffers, "no buffer broadcast"},
      {{{"first_bucket_cap_mb", 2.0}}, 1, ConfigField::first_bucket_cap_mb, "first bucket 2 MiB"},
      {nlohmann::json::object(), 4, ConfigField::grad_accum, "grad accum 4"},
  };
  for (const auto& k : knobs) {
    BenchResult x = ddp_row(f);
    x.ddp_options = k.options.get<RowDdpOptions>();
    x.grad_accum = k.grad_accum;
    const ConfigKey key = ConfigKey::of(f, x);
    const auto d = differences(plain, key);
    ASSERT_EQ(d.size(), 1u) << k.label;
    EXPECT_EQ(d[0].field, k.field) << k.label;
    EXPECT_EQ(key.knob_label(), k.label);
    EXPECT_TRUE(ddp_knob_fields().test(static_cast<size_t>(k.field))) << k.label;
  }

  // A no-DDP row has no DDP knobs, but accumulates like its DDP rows.
  BenchResult nd = f.results.front();
  ASSERT_FALSE(nd.ddp);
  nd.ddp_options.comm_hook = "fp16";
  EXPECT_EQ(ConfigKey::of(f, nd).comm_hook, "");
  EXPECT_EQ(ConfigKey::of(f, nd).value(ConfigField::comm_hook), "n/a");
  nd.grad_accum = 4;
  EXPECT_EQ(ConfigKey::of(f, nd).grad_accum, 4);
  EXPECT_EQ(ConfigKey::of(f, nd).setup_label(), "fp32, grad accum 4");
  EXPECT_FALSE(ddp_only_fields().test(static_cast<size_t>(ConfigField::grad_accum)));
  EXPECT_TRUE(ddp_only_fields().test(static_cast<size_t>(ConfigField::comm_hook)));
  // diff --match can name the new fields.
  EXPECT_EQ(parse_field_list("comm_hook,grad_accum,static_graph").count(), 3u);
}

TEST(ConfigKey, CpuRunsHaveNoTf32) {
  auto cpu = read_result_file(kFix + "weak_cpu.json");
  cpu.environment["math"] = {{"cudnn_allow_tf32", true}, {"cublas_allow_tf32", true}};
  const auto k = ConfigKey::of(cpu, cpu.results[1]);
  EXPECT_EQ(k.math, "");
  EXPECT_EQ(k.setup_label(), "fp32");
  EXPECT_EQ(k.device, "CPU (Fixture CPU)");
  EXPECT_EQ(k.global_batch, 16);
}

TEST(ConfigKey, FieldLists) {
  const FieldSet s = parse_field_list("model,world_size");
  EXPECT_EQ(s.count(), 2u);
  EXPECT_TRUE(s.test(static_cast<size_t>(ConfigField::model)));
  EXPECT_TRUE(s.test(static_cast<size_t>(ConfigField::world_size)));
  EXPECT_EQ(parse_field_list("all"), all_fields());
  try {
    parse_field_list("model,modle");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("'modle'"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("batch_per_rank"));
  }
  EXPECT_EQ(config_field_names().size(), kConfigFieldCount);
  EXPECT_EQ(math_of_precision_name("fp32"), "cudnn-tf32");
  EXPECT_EQ(math_of_precision_name("fp32-strict"), "no-tf32");
  EXPECT_EQ(math_from_flags(false, false), "no-tf32");
  EXPECT_EQ(math_from_flags(true, std::nullopt), "unrecorded");
  EXPECT_THROW(math_of_precision_name("fp33"), UsageError);
}

// ------------------------------------------------------------------ statistics

TEST(Bootstrap, ConstantSamplesGiveAPointIntervalAtTheShift) {
  const auto ci = bootstrap_median_diff_ci({0.2, 0.2, 0.2}, {0.25, 0.25, 0.25}, 500, 1);
  EXPECT_NEAR(ci.lo, 0.05, 1e-12);
  EXPECT_NEAR(ci.hi, 0.05, 1e-12);
  const std::vector<double> a = {0.1, 0.2, 0.3, 0.4};
  const auto same = bootstrap_median_diff_ci(a, a, 500, 1);
  EXPECT_LT(same.lo, 0.0);  // the same spread on both sides: an interval around 0
  EXPECT_GT(same.hi, 0.0);
}

TEST(Bootstrap, SeparatedSamplesExcludeZeroAndBracketTheShift) {
  std::vector<double> a, b;
  for (int i = 0; i < 20; ++i) {
    a.push_back(1.0 + 0.001 * i);
    b.push_back(1.5 + 0.001 * i);
  }
  const auto ci = bootstrap_median_diff_ci(a, b);
  EXPECT_GT(ci.lo, 0.45);
  EXPECT_LT(ci.hi, 0.55);
}

TEST(Bootstrap, DeterministicForASeed) {
  const std::vector<double> a = {0.3, 0.1, 0.5, 0.2, 0.9}, b = {0.4, 0.35, 0.6, 0.1, 0.8};
  const auto x = bootstrap_median_diff_ci(a, b, 300, 42), y = bootstrap_median_diff_ci(a, b, 300, 42);
  EXPECT_EQ(x.lo, y.lo);
  EXPECT_EQ(x.hi, y.hi);
  EXPECT_THROW(bootstrap_median_diff_ci({}, b), std::invalid_argument);
}

TEST(TInterval, WelchByHand) {
  // means 0.100 and 0.120; s 0.002 and 0.001 (n 3 each): se^2 = 4e-6/3 + 1e-6/3,
  // Welch-Satterthwaite dof = 2.94 -> 2, t(0.975, 2) = 4.303.
  const auto ci = t_diff_ci({0.100, 0.102, 0.098}, {0.120, 0.121, 0.119});
  const double h = 4.303 * std::sqrt(4e-6 / 3 + 1e-6 / 3);
  EXPECT_NEAR(ci.lo, 0.02 - h, 1e-9);
  EXPECT_NEAR(ci.hi, 0.02 + h, 1e-9);
}

TEST(TInterval, OneObservationOnASideUsesTheOthersSpread) {
  // s of {0.12, 0.13} = 0.0070711; se = s * sqrt(1/1 + 1/2); dof 1 -> t = 12.706.
  const auto ci = t_diff_ci({0.1}, {0.12, 0.13});
  const double h = 12.706 * std::sqrt(0.00005) * std::sqrt(1.5);
  EXPECT_NEAR(ci.lo, 0.025 - h, 1e-9);
  EXPECT_NEAR(ci.hi, 0.025 + h, 1e-9);
  EXPECT_THROW(t_diff_ci({0.1}, {0.2}), std::invalid_argument);
}

// ------------------------------------------------------------------ diff

TEST(Diff, TooFewIterationsGiveNoVerdict) {
  auto base = read_result_file(kFix + "diff_base.json");
  auto test = read_result_file(kFix + "diff_test.json");
  for (auto* f : {&base, &test})
    for (auto& rk : f->results[0].ranks) rk.samples_s.resize(3);
  const auto d = diff_results(base, test);
  EXPECT_EQ(d.rows[0].verdict, "too few samples");
  EXPECT_FALSE(d.rows[0].ci.has_value());
}

TEST(Diff, FixturePairOneRealChangeOneWithinNoise) {
  DiffOptions floor10;  // a floor given with --noise-floor 10
  floor10.noise_floor = 0.10;
  const auto d =
      diff_results(read_result_file(kFix + "diff_base.json"), read_result_file(kFix + "diff_test.json"), floor10);
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0].key, "environment.nccl");
  EXPECT_EQ(d.changes[0].base, "2.18.1");
  EXPECT_EQ(d.changes[0].test, "2.19.3");
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_EQ(d.rows[0].base_key.world_size, 1);
  // 10 samples symmetric around 0.100 and 0.120 s: medians exact, change +20%.
  EXPECT_NEAR(d.rows[0].base_s, 0.100, 1e-9);
  EXPECT_NEAR(d.rows[0].change, 0.2, 1e-9);
  EXPECT_NEAR(d.rows[0].test_ex_s, 32 / 0.12, 1e-6);
  EXPECT_EQ(d.rows[0].verdict, "slower");
  EXPECT_EQ(d.rows[0].method, "bootstrap + noise floor");
  // The bootstrap interval (about [0.0195, 0.0205] s) widened by 10% of 0.100 s on both sides.
  EXPECT_GT(d.rows[0].ci->lo, 0.0085);
  EXPECT_LT(d.rows[0].ci->lo, 0.0105);
  EXPECT_EQ(d.rows[0].base_iterations, 10);
  EXPECT_EQ(d.rows[1].base_key.world_size, 2);
  EXPECT_NEAR(d.rows[1].change, 0.01, 0.01);
  EXPECT_EQ(d.rows[1].verdict, "within noise");
  ASSERT_EQ(gate_failures(d, 0.15).size(), 1u);
  EXPECT_THAT(gate_failures(d, 0.15)[0], HasSubstr("slower by 20.0% (limit 15.0%)"));
  EXPECT_TRUE(gate_failures(d, 0.25).empty());
  const auto text = render_diff_text(d);
  EXPECT_THAT(text, HasSubstr("environment.nccl: 2.18.1 -> 2.19.3"));
  EXPECT_THAT(text, HasSubstr("within noise"));
  EXPECT_THAT(text, HasSubstr("1x10"));  // n: 1 launch x 10 iterations
}

// The same configuration launched twice on one H100 (docs/results): the DDP row's p50
// moved 9.7% between the launches. One launch per side cannot tell that from a change.
TEST(Diff, TheH100RepeatOfTheDefaultJobIsWithinNoise) {
  const auto a = h100("h100_resnet50_b32_fp32_default.json"), b = h100("h100_resnet50_b32_fp32_default_repeat.json");
  const auto d = diff_results(a, b);
  EXPECT_TRUE(d.changes.empty());
  ASSERT_EQ(d.rows.size(), 2u);
  for (const auto& r : d.rows) {
    EXPECT_TRUE(r.differs.empty());
    EXPECT_EQ(r.verdict, "within noise") << r.label;
  }
  EXPECT_NEAR(d.rows[1].change, 0.02728 / 0.03022 - 1, 0.003);
  // Without the floor the within-launch bootstrap alone would call it faster: the floor decides.
  DiffOptions no_floor;
  no_floor.noise_floor = 0;
  EXPECT_EQ(diff_results(a, b, no_floor).rows[1].verdict, "faster");
}

// Two launches of one configuration that differ only in how many iterations they measured
// (--iters 20 against --iters auto, docs/results): the DDP row moved -18.2%. The default floor,
// the spread measured on H100 (19.5%), keeps that within noise, while turning TF32 on (a
// real change: 44.4 -> 29.3 ms, -34%) still gets its verdict.
TEST(Diff, TheDefaultFloorIsTheMeasuredSpreadOfTheDevice) {
  const auto fixed = h100("h100_resnet50_b32_default_math.json");
  const auto d = diff_results(fixed, h100("h100_resnet50_b32_default_math_iters_auto.json"));
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_NEAR(d.rows[1].change, -0.182, 0.001);
  EXPECT_EQ(d.rows[1].verdict, "within noise");
  EXPECT_DOUBLE_EQ(d.rows[1].noise_floor, 0.195);
  EXPECT_EQ(d.rows[1].floor_basis, "NVIDIA H100");
  DiffOptions old_floor;
  old_floor.noise_floor = 0.10;  // the former default called it faster
  EXPECT_EQ(diff_results(fixed, h100("h100_resnet50_b32_default_math_iters_auto.json"), old_floor).rows[1].verdict,
            "faster");
  DiffOptions across_math;
  across_math.match = parse_field_list("device,model,image_size,batch_per_rank,world_size,ddp", "--match");
  const auto tf32 =
      diff_results(h100("h100_resnet50_b32_fp32_strict.json"), h100("h100_resnet50_b32_tf32_all.json"), across_math);
  ASSERT_EQ(tf32.rows.size(), 2u);
  EXPECT_EQ(tf32.rows[1].verdict, "faster");
  EXPECT_EQ(measured_launch_spread("CPU (AMD EPYC)").spread, 0.198);
  EXPECT_STREQ(measured_launch_spread("NVIDIA B200").device, "");  // unmeasured: the widest measured
  EXPECT_EQ(measured_launch_spread("NVIDIA B200").spread, 0.198);
}

// Files with the 1-GPU row only, its 10 samples symmetric around `center`.
ResultFile launch(double center) {
  auto f = read_result_file(kFix + "diff_base.json");
  f.results.resize(1);
  auto& s = f.results[0].ranks[0].samples_s;
  for (size_t i = 0; i < s.size(); ++i) s[i] = center + 0.0002 * (static_cast<double>(i) - 4.5);
  return f;
}

TEST(Diff, SeveralLaunchesUseTheSpreadBetweenLaunches) {
  const std::vector<NamedResult> base = {{"a1", launch(0.100)}, {"a2", launch(0.102)}, {"a3", launch(0.098)}};
  const std::vector<NamedResult> test = {{"b1", launch(0.120)}, {"b2", launch(0.121)}, {"b3", launch(0.119)}};
  const auto d = diff_results(base, test);
  ASSERT_EQ(d.rows.size(), 1u);
  const auto& r = d.rows[0];
  EXPECT_EQ(r.base_launches.size(), 3u);
  EXPECT_EQ(r.base_iterations, 30);
  EXPECT_EQ(r.method, "Welch t");
  const double h = 4.303 * std::sqrt(4e-6 / 3 + 1e-6 / 3);  // as TInterval.WelchByHand
  EXPECT_NEAR(r.ci->lo, 0.02 - h, 1e-7);
  EXPECT_NEAR(r.ci->hi, 0.02 + h, 1e-7);
  EXPECT_EQ(r.verdict, "slower");
  EXPECT_THAT(render_diff_text(d), HasSubstr("3x, 30 it"));
}

TEST(Diff, LaunchesThatDisagreeMakeAChangeWithinNoise) {
  // Each launch is tight, but launches of one side differ by 10%: a 5% change is noise.
  const std::vector<NamedResult> base = {{"a1", launch(0.100)}, {"a2", launch(0.110)}};
  const std::vector<NamedResult> test = {{"b1", launch(0.108)}, {"b2", launch(0.112)}};
  EXPECT_EQ(diff_results(base, test).rows[0].verdict, "within noise");
  // One launch per side with no floor would have called it.
  DiffOptions no_floor;
  no_floor.noise_floor = 0;
  EXPECT_EQ(diff_results(launch(0.100), launch(0.108), no_floor).rows[0].verdict, "slower");
}

TEST(Diff, LaunchesWithoutSpreadFallBackToTheFloor) {
  // The same launch twice per side: zero spread is no evidence of a small one.
  const std::vector<NamedResult> base = {{"a", launch(0.100)}, {"a", launch(0.100)}};
  const std::vector<NamedResult> test = {{"b", launch(0.105)}, {"b", launch(0.105)}};
  DiffOptions floor10;
  floor10.noise_floor = 0.10;
  const auto r = diff_results(base, test, floor10).rows[0];
  EXPECT_EQ(r.method, "Welch t + noise floor");
  EXPECT_NEAR(r.ci->lo, 0.005 - 0.010, 1e-9);
  EXPECT_NEAR(r.ci->hi, 0.005 + 0.010, 1e-9);
  EXPECT_EQ(r.verdict, "within noise");
}

TEST(Diff, MatchPairsAcrossAChangedPrecision) {
  auto a = read_result_file(kFix + "diff_base.json");
  auto b = read_result_file(kFix + "diff_base.json");
  for (auto& r : b.results) r.precision = "bf16";
  try {
    diff_results(a, b);
    FAIL() << "rows of different precisions paired";
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    EXPECT_THAT(msg, HasSubstr("precision: fp32 -> bf16"));
    // The rows of each side differ in world_size (and so global_batch) only: that pairs them.
    EXPECT_THAT(msg, HasSubstr("pass --match world_size (it pairs 2 row(s) of each side)"));
  }
  DiffOptions o;
  o.match = all_fields() & ~fields({ConfigField::precision, ConfigField::math});
  const auto d = diff_results(a, b, o);
  ASSERT_EQ(d.rows.size(), 2u);
  ASSERT_EQ(d.rows[0].differs.size(), 2u);
  EXPECT_EQ(d.rows[0].differs[0].field, ConfigField::precision);
  EXPECT_EQ(d.rows[0].differs[1].field, ConfigField::math);  // fp32's math; bf16 has none
  EXPECT_THAT(render_diff_text(d), HasSubstr("precision: fp32 -> bf16"));
  // Too few fields: the 1- and 2-GPU rows become indistinguishable.
  o.match = fields({ConfigField::model});
  EXPECT_THROW(diff_results(a, b, o), UsageError);
}

TEST(Diff, TheSpawnerPidIsNotAChange) {
  auto a = read_result_file(kFix + "diff_base.json"), b = a;
  a.environment["env"]["DDPBENCH_LOCAL_SPAWNER"] = "1234";
  b.environment["env"]["DDPBENCH_LOCAL_SPAWNER"] = "5678";
  b.environment["env"]["NCCL_ALGO"] = "Ring";
  const auto d = diff_results(a, b);
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0].key, "environment.env.NCCL_ALGO");
}

TEST(Diff, UnmatchedRowsAreListed) {
  auto base = read_result_file(kFix + "diff_base.json");
  auto test = read_result_file(kFix + "diff_test.json");
  test.results.pop_back();
  const auto d = diff_results(base, test);
  EXPECT_EQ(d.rows.size(), 1u);
  ASSERT_EQ(d.only_base.size(), 1u);
  EXPECT_THAT(d.only_base[0], HasSubstr("1M/2G"));
  EXPECT_THAT(d.only_base[0], HasSubstr("DDP on 2 GPUs"));
  // A CI gate does not pass on a row it never saw, however large its limit.
  const auto why = gate_failures(d, 10.0);
  ASSERT_EQ(why.size(), 1u);
  EXPECT_THAT(why[0], HasSubstr("not in the test files"));
}

// The message diff_results throws, or "(no error)".
std::string diff_error(const ResultFile& base, const ResultFile& test, const DiffOptions& o = {}) {
  try {
    diff_results(base, test, o);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t nl = text.find('\n', start);
    out.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    start = nl == std::string::npos ? text.size() : nl + 1;
  }
  return out;
}

// The cell of the row named `row` under `header` in diff's text: the part whose header line
// holds `header` (columns after the first are right-aligned: a cell ends where its header
// ends, and cells are separated by at least two spaces). "(none)" when there is no such cell.
std::string column_cell(const std::string& text, const std::string& row, const std::string& header) {
  size_t end = std::string::npos;
  for (const auto& line : lines_of(text)) {
    if (line.rfind("row ", 0) == 0) {
      const size_t at = line.find("  " + header);
      const size_t e = at == std::string::npos ? std::string::npos : at + 2 + header.size();
      end = e != std::string::npos && (e == line.size() || line[e] == ' ') ? e : std::string::npos;
      continue;
    }
    if (end == std::string::npos || line.rfind(row + "  ", 0) != 0 || line.size() < end) continue;
    const std::string head = line.substr(0, end);
    const size_t gap = head.rfind("  ");
    return head.substr(head.find_first_not_of(' ', gap));
  }
  return "(none)";
}

size_t longest_line(const std::string& text) {
  size_t n = 0;
  for (const auto& l : lines_of(text)) n = std::max(n, l.size());
  return n;
}

size_t lines_starting(const std::string& text, const std::string& prefix) {
  size_t n = 0;
  for (const auto& l : lines_of(text)) n += l.rfind(prefix, 0) == 0;
  return n;
}

// Hand-built pair (tests/fixtures/make_fixtures_diff_match.py): one H100 sweep, no DDP and
// DDP on 1 and 2 GPUs, with TF32 off and then on; nothing else differs.
ResultFile match_base() { return read_result_file(kFix + "diff_match_base.json"); }
ResultFile match_test() { return read_result_file(kFix + "diff_match_test.json"); }

// Without --match nothing pairs: the hint is the shortest list that pairs these files' rows,
// computed from them (ddp tells the no-DDP row from the 1-GPU row, world_size the 1- from
// the 2-GPU row; math and precision differ between the sides only, so they are not in it),
// and that list does pair every row.
TEST(DiffMatch, TheHintIsTheShortestListThatPairsTheFixtureRows) {
  const auto msg = diff_error(match_base(), match_test());
  EXPECT_THAT(msg, HasSubstr("(the closest differ in math: no-tf32 -> tf32)"));
  EXPECT_THAT(msg, HasSubstr("pass --match world_size,ddp (it pairs 3 row(s) of each side)"));
  EXPECT_EQ(msg.find('\n'), std::string::npos);
  const auto s = suggest_match({{"a", match_base()}}, {{"b", match_test()}});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(match_list(s->fields), "world_size,ddp");
  EXPECT_EQ(s->pairs, 3u);
  DiffOptions o;
  o.match = s->fields;
  const auto d = diff_results(match_base(), match_test(), o);
  ASSERT_EQ(d.rows.size(), 3u);
  EXPECT_TRUE(d.only_base.empty());
  EXPECT_TRUE(d.only_test.empty());
  EXPECT_FALSE(d.better_match.has_value());
  // One field less is not enough: each leaves two rows of a side alike.
  o.match = fields({ConfigField::ddp});
  EXPECT_THAT(diff_error(match_base(), match_test(), o), HasSubstr("alike"));
  o.match = fields({ConfigField::world_size});
  EXPECT_THAT(diff_error(match_base(), match_test(), o), HasSubstr("alike"));
}

// What differs between the sides never enters the hint, even where it also tells rows apart
// on one side: with the batch doubled on the test side, global_batch (32, 32, 64 against 64,
// 64, 128) would pair the base's 2-GPU row with the test's 1-GPU rows; world_size does not.
TEST(DiffMatch, AFieldThatChangedBetweenTheSidesIsNotSuggested) {
  auto test = match_test();
  for (auto& r : test.results) {
    r.batch_per_rank = 64;
    r.global_batch = 64LL * r.world_size;
  }
  const auto msg = diff_error(match_base(), test);
  EXPECT_THAT(msg, HasSubstr("pass --match world_size,ddp (it pairs 3 row(s) of each side)"));
  DiffOptions o;
  o.match = parse_field_list("world_size,ddp");
  const auto d = diff_results(match_base(), test, o);
  ASSERT_EQ(d.rows.size(), 3u);
  EXPECT_EQ(describe_differences(d.rows[2].differs),
            "math: no-tf32 -> tf32; batch_per_rank: 32 -> 64; global_batch: 64 -> 128");
  EXPECT_EQ(column_cell(render_diff_text(d), "resnet50 1M/2G", "batch"), "32 -> 64");
}

// The H100 files of docs/results: fp32-strict against tf32, a no-DDP and a 1-GPU row each.
// The hint is ddp alone (not backend or the bucket caps, which split the rows alike).
TEST(DiffMatch, TheH100Fp32StrictAgainstTf32HintIsDdp) {
  const auto strict = h100("h100_resnet50_b32_fp32_strict.json"), tf32 = h100("h100_resnet50_b32_tf32_all.json");
  const auto msg = diff_error(strict, tf32);
  EXPECT_THAT(msg, HasSubstr("(the closest differ in math: no-tf32 -> tf32)"));
  EXPECT_THAT(msg, HasSubstr("pass --match ddp (it pairs 2 row(s) of each side)"));
  DiffOptions o;
  o.match = parse_field_list("ddp");
  const auto d = diff_results(strict, tf32, o);
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_EQ(d.rows[0].label, "no ddp");
  EXPECT_EQ(d.rows[1].label, "1M/1G");
  EXPECT_EQ(d.rows[1].test_label, "1M/1G");
}

// One row a side: nothing tells rows apart, so the hint is the plainest field the two agree on.
TEST(DiffMatch, OneRowASidePairsOnTheModel) {
  auto a = read_result_file(kFix + "diff_base.json"), b = a;
  a.results.resize(1);
  b.results.resize(1);
  b.results[0].precision = "bf16";
  EXPECT_THAT(diff_error(a, b), HasSubstr("pass --match model (it pairs 1 row(s) of each side)"));
  b.results[0].model = "vit_b_16";
  EXPECT_THAT(diff_error(a, b), HasSubstr("pass --match ddp (it pairs 1 row(s) of each side)"));
}

// When some rows pair and others are left on both sides, a note names the --match that
// pairs more: here the DDP rows of the test side ran with a comm hook.
TEST(DiffMatch, RowsLeftOnBothSidesGetTheMatchThatPairsThem) {
  auto test = match_base();
  for (auto& r : test.results)
    if (r.ddp) r.ddp_options.comm_hook = "fp16";
  const auto d = diff_results(match_base(), test);
  ASSERT_EQ(d.rows.size(), 1u);  // the no-DDP rows: the same configuration
  ASSERT_TRUE(d.better_match.has_value());
  // The no-DDP rows pair first, exactly; world_size then tells the DDP rows apart.
  EXPECT_EQ(match_list(d.better_match->fields), "world_size");
  EXPECT_EQ(d.better_match->pairs, 3u);
  const auto text = render_diff_text(d);
  EXPECT_THAT(text, HasSubstr("2 base and 2 test row(s) did not pair; --match world_size pairs 3 row(s) of each side"));
  EXPECT_EQ(diff_json(d)["better_match"]["match"], "world_size");
  DiffOptions o;
  o.match = d.better_match->fields;
  const auto paired = diff_results(match_base(), test, o);
  EXPECT_EQ(paired.rows.size(), 3u);
  EXPECT_EQ(column_cell(render_diff_text(paired), "resnet50 1M/2G", "setup"),
            "fp32-strict -> fp32-strict, comm hook fp16");
}

// With --match the setup column shows each side's own setup, in text, Markdown and JSON.
TEST(DiffMatch, TheSetupColumnShowsEachSide) {
  DiffOptions o;
  o.match = parse_field_list("world_size,ddp");
  const auto d = diff_results(match_base(), match_test(), o);
  ASSERT_EQ(d.rows.size(), 3u);
  const auto text = render_diff_text(d);
  for (const std::string row : {"resnet50 no ddp", "resnet50 1M/1G", "resnet50 1M/2G"}) {
    EXPECT_EQ(column_cell(text, row, "setup"), "fp32-strict -> tf32") << row;
    EXPECT_EQ(column_cell(text, row, "batch"), "32") << row;
  }
  EXPECT_EQ(column_cell(text, "resnet50 1M/2G", "verdict"), "faster");
  EXPECT_EQ(column_cell(text, "resnet50 1M/2G", "change"), "-28.0%");  // 0.050 -> 0.036 s
  EXPECT_THAT(text, HasSubstr("Rows paired on --match world_size,ddp; the other fields may differ."));
  EXPECT_THAT(text, HasSubstr("Outside --match, every pair differs in math: no-tf32 -> tf32\n"));
  const auto j = diff_json(d);
  EXPECT_EQ(j["rows"][2]["setup"], "fp32-strict");
  EXPECT_EQ(j["rows"][2]["test_setup"], "tf32");
  EXPECT_EQ(j["match"], "world_size,ddp");
  const auto md = render_diff_markdown(d);
  EXPECT_THAT(md, HasSubstr("| resnet50 1M/2G | 0.0500 | 0.0360 | -28.0% |"));
  EXPECT_THAT(md, HasSubstr("| faster | fp32-strict -> tf32 | 32 |"));
  // Rows of the same setup show it once.
  const auto same = diff_results(match_base(), match_base());
  EXPECT_EQ(column_cell(render_diff_text(same), "resnet50 1M/1G", "setup"), "fp32-strict");
}

// A pair built to be wide: long setups on both sides (channels_last, a frozen backbone, every
// DDP knob), file names of 120 characters, three launches a side, the H100 rows' metrics.
std::vector<NamedResult> wide_side(bool test) {
  auto f = test ? match_test() : match_base();
  f.config["channels_last"] = true;
  f.config["freeze_backbone"] = true;
  f.config["head"] = "mlp4096";
  for (auto& r : f.results) {
    if (!r.ddp) continue;
    r.ddp_options =
        nlohmann::json{
            {"bucket_cap_mb", test ? 100.0 : 50.0},     {"first_bucket_cap_mb", 2.0}, {"broadcast_buffers", false},
            {"gradient_as_bucket_view", true},          {"static_graph", !test},      {"find_unused_parameters", test},
            {"comm_hook", test ? "powersgd:2" : "fp16"}}
            .get<RowDdpOptions>();
    r.telemetry.peak_memory_bytes_max_over_ranks = 3308238848LL;
  }
  std::vector<NamedResult> side;
  for (int i = 0; i < 3; ++i)
    side.push_back({fmt::format("/{}/launch{}-{}.json", std::string(100, test ? 't' : 'b'), i, test), f});
  return side;
}

// The default text fits 100 columns whatever the rows hold: the table in parts, each led by
// the row's name; long cells wrapped in their column; long sentences and names wrapped.
// --wide (width 0) keeps one line per row with every column.
TEST(DiffText, DefaultOutputFitsOneHundredColumns) {
  DiffOptions o;
  o.match = parse_field_list("world_size,ddp");
  const auto h = diff_results(h100("h100_resnet50_b32_fp32_strict.json"), h100("h100_resnet50_b32_tf32_all.json"), [] {
    DiffOptions x;
    x.match = parse_field_list("ddp");
    return x;
  }());
  const auto wide = diff_results(wide_side(false), wide_side(true), o);
  const std::vector<std::pair<std::string, DiffReport>> cases = {
      {"fixture", diff_results(match_base(), match_test(), o)},
      {"h100", h},
      {"wide", wide},
      {"repeat",
       diff_results(h100("h100_resnet50_b32_fp32_default.json"), h100("h100_resnet50_b32_fp32_default_repeat.json"))}};
  for (const auto& [name, d] : cases) {
    const auto text = render_diff_text(d);
    EXPECT_LE(longest_line(text), 100u) << name << "\n" << text;
    EXPECT_EQ(longest_line(text), longest_line(render_diff_text(d, kDiffTextWidth))) << name;
    // Every part of the table is led by the row: as many lines start with the last row's name
    // as there are parts (header lines), at least.
    const std::string last = "resnet50 " + d.rows.back().label;
    EXPECT_GE(lines_starting(text, last), lines_starting(text, "row  ")) << name << "\n" << text;
    EXPECT_GE(lines_starting(text, "row  "), 1u) << name;
    // --wide: one line per row and part, the differing fields as a column.
    const auto one = render_diff_text(d, 0);
    EXPECT_EQ(lines_starting(one, "row  "), 1u) << name;
    EXPECT_EQ(lines_starting(one, last), 1u) << name;
  }
  // The real pair was 326 columns on one line per row; it is still that with --wide.
  EXPECT_GT(longest_line(render_diff_text(h, 0)), 100u);
  EXPECT_THAT(render_diff_text(h, 0), HasSubstr("differs (outside --match)"));
  // The long setups are wrapped inside their column, and still say both sides.
  const auto text = render_diff_text(wide);
  EXPECT_THAT(text, HasSubstr("3x, 30 it"));
  EXPECT_THAT(text, HasSubstr("base peak mem"));
  EXPECT_GT(lines_starting(text, "resnet50 1M/2G"), lines_starting(text, "row  "));  // a row over several lines
  std::string flat;  // the text with its wrapping undone
  for (const auto& l : lines_of(text)) flat += " " + l.substr(std::min(l.find_first_not_of(' '), l.size()));
  EXPECT_THAT(flat, HasSubstr("comm hook fp16 ->"));
  EXPECT_THAT(flat, HasSubstr("comm hook powersgd:2"));
  EXPECT_THAT(flat, HasSubstr("Base: /" + std::string(100, 'b').substr(0, 80)));
}
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

const std::string kEntry =
    R"({"device": "*", "model": "resnet50", "batch_per_rank": 32, "image_size": 224, "world_size": 1, "metric": "p50_s",
        "value": 0.05, "lower": -0.1, "upper": 0.1, )";

std::vector<ReferenceEntry> one(const std::string& rest) {
  return parse_reference(R"({"ddpbench_reference": "2.0", "references": [)" + kEntry + rest + "]}", "r.json");
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
