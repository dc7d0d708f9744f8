// `ddpbench report`'s tables of strategies and memory (schema 1.7): zero2/fsdp and activation
// checkpointing side by side, the memory each technique saves against fp32 DDP, and inference.
// Torch-free.
#include "core/render/report_tables_internal.hpp"

#include "core/result/bench_table.hpp"

namespace ddpbench::report_tables_internal {

namespace {

// "resnet50, CPU (...), batch 32 per rank, 64x64 images" (a strategy group's key: precision varies).
std::string strategy_what(const ConfigKey& k) {
  const std::string u = unit_word(k);
  const std::string batch = k.scaling == "weak" ? fmt::format("batch {} per {}", with_thousands(k.batch_per_rank), u)
                                                : fmt::format("global batch {}", with_thousands(k.global_batch));
  return fmt::format("{}, {}, {} scaling, {}, {}", k.model, k.device, k.scaling, batch, k.input_label());
}

std::vector<std::pair<std::string, Value>> strategy_context(const ConfigKey& k) {
  return {{"device", k.device},
          {"model", k.model},
          {"image_size", static_cast<long long>(k.image_size)},
          {"scaling", k.scaling},
          {"batch_per_rank", k.scaling == "weak" ? Value(k.batch_per_rank) : Value()}};
}

}  // namespace

Table strategy_tab(const StrategyTable& m) {
  const std::string u = unit_word(m.key), us = u + "s";
  // GPU rows measure the caching allocator (a file too old to record it shows n/a, never RSS).
  const bool gpu = u == "GPU";
  std::vector<Col<StrategyRow>> cols = {
      {{"world_size", us, "", fmtcol::plain()},
       [](const StrategyRow& r) { return Value(static_cast<long long>(r.world_size)); }},
      {{"strategy", "strategy", "", fmtcol::plain()}, [](const StrategyRow& r) { return Value(r.strategy); }},
      {{"activation_checkpointing", "act. ckpt", "", fmtcol::plain()},
       [](const StrategyRow& r) { return Value(std::string(r.activation_checkpointing ? "on" : "off")); }},
      {{"precision", "precision", "", fmtcol::plain()}, [](const StrategyRow& r) { return Value(r.precision); }},
      {{"aggregate_ex_s", "throughput ex/s", "ex/s", fmtcol::fixed(1)},
       [](const StrategyRow& r) { return Value(r.aggregate_ex_s); }},
      {{"efficiency", "efficiency", "fraction", fmtcol::percent()},
       [](const StrategyRow& r) { return opt(r.efficiency); }},
      {{"step_ms", "step p50 ms", "ms", fmtcol::fixed(2)}, [](const StrategyRow& r) { return Value(r.step_s * 1e3); }},
      {{"exposed_comm", "exposed comm", "fraction", fmtcol::percent()},
       [](const StrategyRow& r) { return opt(r.exposed_comm); }},
  };
  // The peak the scaling tables print as "peak mem" (row_peak_memory_bytes: the caching
  // allocator's peak allocated bytes on GPUs, the process's peak RSS on CPUs).
  cols.push_back({{"peak_memory_bytes", std::string(gpu ? "peak allocated/" : "peak RSS/") + u, "bytes", fmtcol::bytes()},
                  [](const StrategyRow& r) { return opt(r.peak_memory_bytes); }});
  if (gpu)
    cols.push_back({{"peak_reserved_bytes", "peak reserved/" + u, "bytes", fmtcol::bytes()},
                    [](const StrategyRow& r) { return opt(r.peak_reserved_bytes); }});
  cols.push_back({{"model_state_bytes", "model state/" + u, "bytes", fmtcol::bytes()},
                  [](const StrategyRow& r) { return opt(r.model_state_bytes); }});
  add_notes_column(cols, m.rows);
  add_launch_column(cols);
  Table t =
      make_table("strategy", "Strategy comparison: " + strategy_what(m.key), strategy_context(m.key), cols, m.rows);
  const auto line = [&](const StrategyRow& r) {
    return fmt::format("{} {}, {}{}, {}", r.world_size, r.world_size == 1 ? u : us, r.strategy,
                       r.activation_checkpointing ? " with act. ckpt" : "", r.precision);
  };
  add_launch_notes(t, m.rows, line);
  for (const auto& r : m.rows)
    for (const auto& w : r.facts.warnings)
      t.notes.push_back(fmt::format("{}: {}: {}", line(r), w.code, w.message));
  if (std::none_of(m.rows.begin(), m.rows.end(), [](const StrategyRow& r) { return r.peak_memory_bytes.has_value(); }))
    t.notes.push_back(
        "peak memory: not measured in these files (no row records a peak; files of schema 1.6 and earlier from "
        "sharded runs hold none): rerun with today's ddpbench run to measure it");
  return t;
}

Table memory_tab(const MemoryTable& m) {
  const std::string u = unit_word(m.key), us = u + "s";
  std::vector<Col<MemoryRow>> cols = {
      {{"world_size", us, "", fmtcol::plain()},
       [](const MemoryRow& r) { return Value(static_cast<long long>(r.world_size)); }},
      {{"technique", "technique", "", fmtcol::plain()}, [](const MemoryRow& r) { return Value(r.technique); }},
      {{"peak_bytes", m.peak_kind + "/" + u, "bytes", fmtcol::bytes()},
       [](const MemoryRow& r) { return Value(r.peak_bytes); }},
      {{"baseline_peak_bytes", "fp32 DDP", "bytes", fmtcol::bytes()},
       [](const MemoryRow& r) { return Value(r.baseline_peak_bytes); }},
      {{"saved_bytes", "memory saved", "bytes", fmtcol::bytes()},
       [](const MemoryRow& r) { return Value(r.saved_bytes); }},
      {{"saved", "saved", "fraction", fmtcol::percent()}, [](const MemoryRow& r) { return Value(r.saved); }},
      {{"step_ms", "step p50 ms", "ms", fmtcol::fixed(2)}, [](const MemoryRow& r) { return Value(r.step_s * 1e3); }},
      {{"baseline_step_ms", "fp32 DDP ms", "ms", fmtcol::fixed(2)},
       [](const MemoryRow& r) { return Value(r.baseline_step_s * 1e3); }},
      {{"time_paid", "time paid", "fraction", fmtcol::percent()},
       [](const MemoryRow& r) { return Value(r.time_paid); }},
      {{"model_state_bytes", "model state/" + u, "bytes", fmtcol::bytes()},
       [](const MemoryRow& r) { return opt(r.model_state_bytes); }},
      {{"baseline_model_state_bytes", "fp32 DDP model state", "bytes", fmtcol::bytes(), false},
       [](const MemoryRow& r) { return opt(r.baseline_model_state_bytes); }},
  };
  add_launch_column(cols);
  Table t = make_table("memory", "Memory optimization (measured): " + strategy_what(m.key), strategy_context(m.key),
                       cols, m.rows);
  const auto name = [&](const MemoryRow& r) {
    return fmt::format("{} {}, {}", r.world_size, r.world_size == 1 ? u : us, r.technique);
  };
  add_launch_notes(t, m.rows, name);
  for (const auto& r : m.rows)
    if (r.baseline_file != r.launch.file)
      t.notes.push_back(
          fmt::format("{}: against the fp32 DDP row of {} (this row: {})", name(r), r.baseline_file, r.launch.file));
  return t;
}

Table inference_tab(const InferenceTable& m) {
  const std::string u = unit_word(m.key), us = u + "s";
  std::vector<Col<InferenceRow>> cols = {
      {{"world_size", us, "", fmtcol::plain()},
       [](const InferenceRow& r) { return Value(static_cast<long long>(r.world_size)); }},
      {{"aggregate_ex_s", "throughput ex/s", "ex/s", fmtcol::fixed(1)},
       [](const InferenceRow& r) { return Value(r.aggregate_ex_s); }},
      {{"p50_ms", "latency p50 ms", "ms", fmtcol::fixed(2)},
       [](const InferenceRow& r) { return Value(r.p50_s * 1e3); }},
      {{"p95_ms", "latency p95 ms", "ms", fmtcol::fixed(2)},
       [](const InferenceRow& r) { return Value(r.p95_s * 1e3); }},
      {{"peak_memory_bytes", "peak memory/" + u, "bytes", fmtcol::bytes()},
       [](const InferenceRow& r) { return opt(r.peak_memory_bytes); }},
  };
  add_launch_column(cols);
  auto ctx = key_context(m.key);
  ctx.emplace_back("batch_per_rank", m.key.batch_per_rank);
  Table t = make_table("inference",
                       fmt::format("Inference (forward only, no DDP): {}, {}, {}, batch {} per {}, {}", m.key.model,
                                   m.key.setup_label(), m.key.device, with_thousands(m.key.batch_per_rank), u,
                                   m.key.input_label()),
                       std::move(ctx), cols, m.rows);
  add_launch_notes(
      t, m.rows, [&](const InferenceRow& r) { return fmt::format("{} {}", r.world_size, r.world_size == 1 ? u : us); });
  return t;
}

}  // namespace ddpbench::report_tables_internal
