// "The same configuration" (ConfigKey) that `ddpbench diff`, `check` and `report` match rows on:
// its fields, math and setup, the DDP knobs. `diff` itself: test_diff.cpp; `check`: test_check.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <variant>

#include "core/analysis/check.hpp"
#include "core/analysis/diff.hpp"
#include "core/config/run_config.hpp"
#include "core/config/run_options.hpp"
#include "core/result/config_key.hpp"
#include "core/util/errors.hpp"
#include "unit/diff_check_test_util.hpp"

namespace ddpbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace diff_check_tests;

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
// The "config" object's keys are one catalogue: the writer emits exactly its keys, each once,
// each with its identity rule (a reason where it is not part of a row's identity).
TEST(ConfigCatalogue, TheWriterEmitsEachCataloguedKeyOnce) {
  std::set<std::string> catalogue;
  for (const auto& k : config_json_keys()) {
    EXPECT_TRUE(catalogue.insert(k.key).second) << k.key << " is listed twice";
    EXPECT_FALSE(k.why.empty()) << k.key;
  }
  RunConfig cfg;
  for (const RunConfig& c : {cfg, [] {
         RunConfig t;
         t.iters_auto = true;
         t.freeze_backbone = true;
         t.data = "fashion-mnist";
         return t;
       }()}) {
    std::set<std::string> written;
    const nlohmann::json j = to_json(c);  // items() of a temporary would outlive it
    for (const auto& [key, value] : j.items()) written.insert(key);
    EXPECT_EQ(written, catalogue);
  }
}

// Every identity key changes the configuration key: a file or row that differs in it alone
// is another configuration for report, diff, check and --resume. A new identity key needs its
// change here (the test fails until it has one).
TEST(ConfigCatalogue, EveryIdentityKeyChangesTheConfigurationKey) {
  using Change = std::function<void(ResultFile&, BenchResult&)>;
  const auto gpu = [](ResultFile& f, BenchResult&) {
    f.environment["device_type"] = "cuda";
    f.environment["gpus"] = nlohmann::json::array({{{"name", "NVIDIA H100 80GB HBM3"}}});
    f.environment["math"] = {{"cudnn_benchmark", false}};
  };
  const std::map<std::string, std::pair<Change, Change>> changes = {
      {"models", {{}, [](ResultFile&, BenchResult& r) { r.model = "resnet50"; }}},
      {"batch_size", {{}, [](ResultFile&, BenchResult& r) { r.batch_per_rank *= 2; }}},
      {"scaling", {{}, [](ResultFile&, BenchResult& r) { r.scaling = "strong"; }}},
      {"global_batch_size", {{}, [](ResultFile&, BenchResult& r) { r.global_batch = 12345; }}},
      {"image_size", {{}, [](ResultFile&, BenchResult& r) { r.image_size *= 2; }}},
      {"num_classes", {{}, [](ResultFile& f, BenchResult&) { f.config["num_classes"] = 10; }}},
      {"world_sizes", {{}, [](ResultFile&, BenchResult& r) { r.world_size += 1; }}},
      {"bucket_cap_mb", {{}, [](ResultFile&, BenchResult& r) { r.ddp_options.bucket_cap_mb = 1; }}},
      {"first_bucket_cap_mb", {{}, [](ResultFile&, BenchResult& r) { r.ddp_options.first_bucket_cap_mb = 0.5; }}},
  // Each DDP flag setting away from DDP's default in the row's ddp_options.
#define DDPBENCH_FLIP_DDP_FLAG(X, name, def, flag, label, help) \
  {#name, {{}, [](ResultFile&, BenchResult& r) { r.ddp_options.name = !(def); }}},
      DDPBENCH_DDP_FLAG_SETTINGS(DDPBENCH_FLIP_DDP_FLAG, _)
#undef DDPBENCH_FLIP_DDP_FLAG
      {"comm_hook", {{}, [](ResultFile&, BenchResult& r) { r.ddp_options.comm_hook = "fp16"; }}},
      {"grad_accum", {{}, [](ResultFile&, BenchResult& r) { r.grad_accum = 4; }}},
      {"strategy", {{}, [](ResultFile&, BenchResult& r) { r.strategy = "zero2"; }}},
      {"activation_checkpointing", {{}, [](ResultFile&, BenchResult& r) { r.activation_checkpointing = true; }}},
      {"cpu_offload", {{}, [](ResultFile&, BenchResult& r) { r.cpu_offload = true; }}},
      {"backend", {{}, [](ResultFile& f, BenchResult&) { f.environment["backend"] = "mpi"; }}},
      {"device", {{}, [](ResultFile& f, BenchResult&) { f.environment["cpu_model"] = "Another CPU"; }}},
      {"precision", {{}, [](ResultFile&, BenchResult& r) { r.precision = "bf16"; }}},
      {"channels_last", {{}, [](ResultFile& f, BenchResult&) { f.config["channels_last"] = true; }}},
      {"cudnn_benchmark", {gpu, [](ResultFile& f, BenchResult&) { f.environment["math"]["cudnn_benchmark"] = true; }}},
      {"zero_grad_set_to_none", {{}, [](ResultFile& f, BenchResult&) { f.config["zero_grad_set_to_none"] = true; }}},
      {"freeze_backbone", {{}, [](ResultFile& f, BenchResult&) { f.config["freeze_backbone"] = true; }}},
      {"head",
       {[](ResultFile& f, BenchResult&) {
          f.config["freeze_backbone"] = true;
          f.config["head"] = "mlp";
        },
        [](ResultFile& f, BenchResult&) { f.config["head"] = "linear"; }}},
      {"data", {{}, [](ResultFile&, BenchResult& r) { r.convergence.dataset = "fashion-mnist"; }}},
      {"mode", {{}, [](ResultFile&, BenchResult& r) { r.mode = "inference"; }}},
      // A language model's row: its sequence length, and a reduced depth or width.
      {"seq_len", {{}, [](ResultFile&, BenchResult& r) { r.compute.seq_len = 1024; }}},
      {"model_layers",
       {[](ResultFile&, BenchResult& r) { r.compute.seq_len = 1024; },
        [](ResultFile& f, BenchResult&) { f.config["model_layers"] = 2; }}},
      {"model_width",
       {[](ResultFile&, BenchResult& r) { r.compute.seq_len = 1024; },
        [](ResultFile& f, BenchResult&) { f.config["model_width"] = 64; }}},
  };
  const ResultFile file = read_result_file(kFix + "weak_cpu.json");
  const BenchResult& row = ddp_row(file);
  for (const auto& k : config_json_keys()) {
    if (k.from == ConfigJsonKey::From::kNot) {
      EXPECT_EQ(changes.count(k.key), 0u) << k.key << " changes the key but is declared not to";
      continue;
    }
    const auto it = changes.find(k.key);
    ASSERT_NE(it, changes.end()) << "identity key " << k.key << " has no change in this test";
    ResultFile f = file;
    BenchResult r = row;
    if (it->second.first) it->second.first(f, r);
    const ConfigKey before = ConfigKey::of(f, r);
    it->second.second(f, r);
    EXPECT_FALSE(ConfigKey::of(f, r) == before) << k.key << " (" << k.why << ") does not change the configuration key";
  }
}


// The run options catalogue: each option once, each recorded key with one identity rule and in
// the writer's catalogue, the bounds on integer members, and the DDP flag settings wired through
// every struct that carries them (options, config, row, configuration key, reference setup).
TEST(RunOptions, EachOptionOnceAndEachRecordedKeyWithOneRule) {
  std::set<std::string> names;
  std::map<std::string, const RunOption*> by_key;
  std::set<std::string> written;
  for (const auto& k : config_json_keys()) written.insert(k.key);
  for (const auto& o : run_options()) {
    EXPECT_TRUE(names.insert(o.name()).second) << o.name() << " is listed twice";
    EXPECT_EQ(o.name().rfind("--", 0), 0u) << o.name();
    EXPECT_FALSE(o.help.empty()) << o.name();
    EXPECT_FALSE(o.group.empty()) << o.name();
    EXPECT_FALSE(o.why.empty()) << o.name() << " says neither its identity rule nor where it is recorded";
    if (o.lo || o.hi) {
      EXPECT_TRUE(o.lo && o.hi && *o.lo <= *o.hi) << o.name();
      EXPECT_TRUE(std::holds_alternative<int RunConfig::*>(o.field) ||
                  std::holds_alternative<long long RunConfig::*>(o.field))
          << o.name() << ": bounds need an integer member";
    }
    if (o.json_key.empty()) {
      EXPECT_EQ(o.from, ConfigJsonKey::From::kNot) << o.name();
      continue;
    }
    EXPECT_EQ(written.count(o.json_key), 1u) << o.name() << " records " << o.json_key << ", which to_json does not write";
    const auto [it, first] = by_key.emplace(o.json_key, &o);
    if (!first) {
      EXPECT_EQ(it->second->from, o.from) << o.json_key << ": " << it->second->name() << " and " << o.name();
      EXPECT_EQ(it->second->why, o.why) << o.json_key;
    }
  }
  // Every written key comes from an option, but for the two the step fixes.
  for (const auto& k : config_json_keys())
    if (k.key != "optimizer" && k.key != "loss") EXPECT_EQ(by_key.count(k.key), 1u) << k.key << " has no option";
}

TEST(RunOptions, EveryDdpFlagSettingIsAnOptionAConfigKeyFieldAndASetupKey) {
  const std::vector<std::string> fields = config_field_names();
  const ResultFile f = read_result_file(kFix + "weak_cpu.json");
  const ConfigKey row = ConfigKey::of(f, ddp_row(f));
  ASSERT_FALSE(ddp_flag_settings().empty());
  for (const auto& d : ddp_flag_settings()) {
    const RunOption* o = find_run_option(d.flag);
    ASSERT_NE(o, nullptr) << d.flag;
    EXPECT_EQ(o->json_key, d.name);
    EXPECT_EQ(o->from, ConfigJsonKey::From::kRow);
    EXPECT_TRUE(o->flag_only);
    EXPECT_EQ(o->negated, d.ddp_default) << d.flag << " sets the value other than DDP's default";
    const auto field = std::find(fields.begin(), fields.end(), d.name);
    ASSERT_NE(field, fields.end()) << d.name << " is not a ConfigKey field";
    const auto index = static_cast<size_t>(field - fields.begin());
    EXPECT_TRUE(ddp_knob_fields().test(index)) << d.name;
    EXPECT_TRUE(ddp_only_fields().test(index)) << d.name;
    // A reference that pins the setting away from DDP's default expects another configuration
    // than the (default) row; pinned at the default, the row's own.
    for (const bool value : {d.ddp_default, !d.ddp_default}) {
      const std::string text = fmt::format(
          R"({{"ddpbench_reference": "2.0", "references": [{{"device": "*", "model": "{}", "world_size": {},
          "batch_per_rank": {}, "image_size": {}, "setup": {{"precision": "fp32", "{}": {}}},
          "metric": "ex_per_s_total", "value": 100, "lower": -0.1}}]}})",
          row.model, row.world_size, row.batch_per_rank, row.image_size, d.name, value ? "true" : "false");
      const auto refs = parse_reference(text, "t");
      ASSERT_EQ(refs.size(), 1u);
      EXPECT_EQ(refs[0].expected(row) == row, value == d.ddp_default) << d.name << " = " << value;
    }
    // The written config carries it under its name, at DDP's default.
    EXPECT_EQ(to_json(RunConfig{}).at(d.name), d.ddp_default) << d.name;
  }
}

TEST(RunOptions, CatalogueBoundsGiveTheOneLineError) {
  RunConfig cfg;
  cfg.warmup = -1;
  try {
    check_option_bounds(cfg);
    FAIL() << "--warmup -1 passed";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--warmup -1 is out of range; use 0..100000000");
  }
  cfg.warmup = 5;
  cfg.sample_ms = 0;
  try {
    check_option_bounds(cfg);
    FAIL() << "--sample-ms 0 passed";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--sample-ms 0 is out of range; use 1..60000 milliseconds");
  }
  cfg.sample_ms = 100;
  EXPECT_NO_THROW(check_option_bounds(cfg));
}

}  // namespace
}  // namespace ddpbench
