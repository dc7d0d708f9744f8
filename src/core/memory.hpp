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
};

/// A row's "memory" object: {"per_rank": [{"rank", "peak_allocated_bytes", "peak_reserved_bytes",
/// "peak_rss_bytes"}] (null where not measured), "max_over_ranks": {the same three: max over
/// the ranks that have one, else null}, "model_state_bytes": state->to_json() (null when
/// absent), "source"}.
nlohmann::json memory_json(const std::vector<RankMemory>& ranks, const std::optional<ModelStateBytes>& state,
                           const std::string& source);

/// The peak memory per rank a report compares for a row: max over ranks of the peak allocated
/// bytes (GPU rows), else of the peak RSS (CPU rows); nullopt when the row has no "memory".
std::optional<double> row_peak_memory_bytes(const nlohmann::json& memory);

}  // namespace ddpbench
