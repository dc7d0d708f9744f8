// Peak memory per rank, torch-free: reading /proc/self/status and putting every rank's
// peaks into a row's "memory" object (schema 1.7; docs/METHODOLOGY.md "Memory per rank and
// inference mode"). The measurement itself (CUDA caching allocator, VmHWM reset) is in
// engine/memory.hpp.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ddpbench {

/// "source" of a row measured on GPUs.
inline constexpr const char* kMemorySourceCuda = "cuda caching allocator";
/// "source" of a row measured on CPUs whose peak was reset before the series.
inline constexpr const char* kMemorySourceRss = "process peak RSS (VmHWM, reset per row via /proc/self/clear_refs)";
/// "source" of a CPU row where the reset failed: the peak is the process's since it started.
inline constexpr const char* kMemorySourceRssNoReset =
    "process peak RSS (VmHWM since the process started: writing 5 to /proc/self/clear_refs failed, Linux < 4.0 or "
    "not permitted)";

/// The value of a "Key:   123 kB" line of /proc/<pid>/status-formatted `text` (proc(5): kB
/// are units of 1024 bytes), in bytes, for `key` given with its colon ("VmHWM:"); nullopt
/// when the line is absent or malformed.
std::optional<double> proc_status_bytes(const std::string& text, const std::string& key);

/// proc_status_bytes of the file at `path` (e.g. "/proc/self/status"); nullopt when it
/// cannot be read.
std::optional<double> read_proc_status_bytes(const std::string& path, const std::string& key);

/// One rank's peaks over a measured series, bytes; empty where not measured (allocated and
/// reserved: GPUs only; RSS: every rank).
struct RankMemory {
  int rank = 0;
  std::optional<double> peak_allocated_bytes;  ///< CUDA caching allocator: allocated_bytes peak
  std::optional<double> peak_reserved_bytes;   ///< CUDA caching allocator: reserved_bytes peak
  std::optional<double> peak_rss_bytes;        ///< VmHWM of /proc/self/status
};

/// Bytes of model state one rank holds persistently between steps, counted from the tensors
/// (engine/memory model_state_bytes; the sharded strategies count their shards). The one
/// definition for plain DDP and the sharded trainer alike.
struct ModelStateBytes {
  int64_t parameters = 0;  ///< parameter tensors (shards under zero2 / fsdp), each storage once
  int64_t gradients = 0;   ///< gradient tensors kept between steps, each storage once
  int64_t optimizer = 0;   ///< optimizer state (SGD: momentum buffers)
  int64_t total() const { return parameters + gradients + optimizer; }
  /// {"parameters", "gradients", "optimizer", "total"}, bytes.
  nlohmann::json to_json() const;
  bool operator==(const ModelStateBytes& o) const {
    return parameters == o.parameters && gradients == o.gradients && optimizer == o.optimizer;
  }
};

/// results[].memory (schema 1.7; METHODOLOGY "Memory per rank and inference mode"): every
/// rank's peaks, each peak's max over the ranks that have one, the model state one rank
/// holds, and where the peaks come from. Empty in rows that measured none (older files).
struct RowMemory {
  std::vector<RankMemory> per_rank;
  RankMemory max_over_ranks;  ///< its rank is unused
  std::optional<ModelStateBytes> model_state_bytes;
  std::string source;                               ///< kMemorySourceCuda, kMemorySourceRss, ...
  nlohmann::json extra = nlohmann::json::object();  ///< keys this version does not know, as read

  bool empty() const { return per_rank.empty() && !model_state_bytes && source.empty() && extra.empty(); }
  /// The memory section's peak: max over ranks of the peak allocated bytes (GPU rows), else of
  /// the peak RSS (CPU rows); nullopt when the row measured neither. Readers use
  /// row_peak_memory_bytes, which falls back to the telemetry's copy for older files.
  std::optional<double> peak_bytes() const;
  bool operator==(const RowMemory& o) const;
};

struct BenchResult;

/// The peak memory of a row, in bytes: the largest peak over its ranks. The one accessor every
/// reader of a row's peak uses (the "peak_memory_bytes" row metric, hence the scaling tables,
/// `check` and `diff`; `report`'s memory and inference tables; the strategy plots). Of its two
/// sources the memory section wins: RowMemory::peak_bytes (schema 1.7: the CUDA caching
/// allocator's peak allocated bytes on GPUs, else the process's peak RSS, VmHWM), else
/// telemetry.peak_memory_bytes_max_over_ranks (every schema; `run` writes it from the same
/// measurement, so where a row has both they agree), counted only when > 0 (0: not measured).
/// nullopt when the row recorded neither.
std::optional<double> row_peak_memory_bytes(const BenchResult& row);

/// {"per_rank": [{"rank", "peak_allocated_bytes", "peak_reserved_bytes", "peak_rss_bytes"}]
/// (null where not measured), "max_over_ranks": {the same three}, "model_state_bytes":
/// ModelStateBytes::to_json() or null, "source"}, then `extra`; {} when empty.
void to_json(nlohmann::json& j, const RowMemory& m);
/// Reads that shape; never throws: a peak that is not a number is not measured, a
/// model_state_bytes that is not an object of integers is absent.
void from_json(const nlohmann::json& j, RowMemory& m);

/// A row's memory from its ranks' peaks: max_over_ranks folded from `ranks`.
RowMemory row_memory(const std::vector<RankMemory>& ranks, const std::optional<ModelStateBytes>& state,
                     const std::string& source);

}  // namespace ddpbench
