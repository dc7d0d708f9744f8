// Telemetry of one rank while it measures: GPU (NVML, core/telemetry/nvml) and host (/proc, /sys)
// readings taken by a background thread every --sample-ms, summarised per rank as
// RankSamples.telemetry.sampled (schema 1.6; docs/METHODOLOGY.md "Telemetry"). Torch-free.
//
// Layers, so everything but the thread is tested with exact numbers:
//   read_host()            one reading of /proc and /sys under a root tests can replace
//   TelemetryAccumulator   readings in, the JSON summary out (pure; no clock, no thread)
//   TelemetrySampler       a thread that reads every sample_ms and feeds an accumulator
//   telemetry_flags()      low_gpu_util / gpu_throttled from a summary, as row warnings
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/launch/launch_env.hpp"
#include "core/result/result.hpp"
#include "core/telemetry/nvml.hpp"

namespace ddpbench {

/// How a rank's sampler is set up. The GPU is chosen as GpuSelector does (UUID, else bus id,
/// else index); none of the three: a CPU rank, the "gpu" summary is unavailable.
struct TelemetryOptions {
  int sample_ms = 100;                 ///< --sample-ms: period of the sampling thread, ms (>= 1)
  int gpu_index = -1;                  ///< NVML index of the rank's GPU; -1 none
  std::string gpu_uuid;                ///< "GPU-..." (RankPlacement::gpu_uuid); preferred over the index
  std::string bus_id;                  ///< PCI bus id (RankPlacement::bus_id); preferred over the index
  std::string net_interface;           ///< interface whose byte counters are read ("" none), see interface_for_address
  std::string sysfs_root = "/";        ///< root of /proc and /sys (tests pass a fake tree)
  std::string nvml_library;            ///< NVML to load; "" -> nvml_library_path("")
  std::size_t max_series_points = 64;  ///< at most this many points per series (>= 1)
};

/// Byte counters of one InfiniBand port at one moment.
struct IbPortReading {
  std::string port;       ///< "<device>/<port>", e.g. "mlx5_0/1"
  double rcv_bytes = 0;   ///< counters/port_rcv_data * 4 (the counter counts 4-byte units)
  double xmit_bytes = 0;  ///< counters/port_xmit_data * 4
};

/// Host counters of this process and machine at one moment; members empty where unreadable.
struct HostReading {
  std::optional<double> cpu_time_s;       ///< utime + stime of /proc/self/stat, s (all threads)
  std::optional<double> peak_rss_bytes;   ///< VmHWM of /proc/self/status (bytes), else getrusage ru_maxrss
  std::optional<double> net_rx_bytes;     ///< /sys/class/net/<if>/statistics/rx_bytes
  std::optional<double> net_tx_bytes;     ///< /sys/class/net/<if>/statistics/tx_bytes
  std::vector<IbPortReading> infiniband;  ///< every port under /sys/class/infiniband
};

/// One reading: `t_s` seconds on a monotonic clock (any origin; differences are used).
struct TelemetryReading {
  double t_s = 0;
  GpuReading gpu;  ///< all empty without a GPU
  HostReading host;
};

/// Reads the host counters under `sysfs_root` ("/" on a real machine): /proc/self/stat
/// (fields 14 utime and 15 stime, in clock ticks of sysconf(_SC_CLK_TCK)), /proc/self/status
/// (VmHWM, kB), /sys/class/net/<net_interface>/statistics/{rx,tx}_bytes (skipped when
/// `net_interface` is empty) and /sys/class/infiniband/*/ports/*/counters/port_{rcv,xmit}_data.
/// Never throws: what cannot be read stays empty.
HostReading read_host(const std::string& sysfs_root, const std::string& net_interface);

/// CPU time this process has used, s: user + system of every thread, with nanosecond
/// resolution (clock_gettime(2) CLOCK_PROCESS_CPUTIME_ID; /proc/self/stat counts 10 ms ticks).
/// Differences over a span divided by its wall time give the CPU cores the process kept
/// busy. NaN where the clock cannot be read. Never throws.
double process_cpu_s();

/// The network interface a rank's process group talks through to `host` (the master
/// address): the first entry of GLOO_SOCKET_IFNAME, else of NCCL_SOCKET_IFNAME (its "="
/// prefix removed; a "^" exclusion list is not a name and is skipped), else the interface
/// (getifaddrs) owning the local address of a UDP socket connect()ed to `host` (no packet is
/// sent), else "". `host` is a name or an address. Never throws.
std::string interface_for_address(const std::string& host, const EnvMap& env);

/// Turns readings into the summary of RankSamples.telemetry.sampled (schema 1.6), without "flags":
///   {"interval_ms", "samples", "span_s", "gpu": {...}, "host": {...}, "series": {...}}.
/// begin() takes the reading at the window's start (its counters are the baseline of the
/// first interval; it is not a sample); each add() is one sample at the end of an interval.
///   - instantaneous metrics (GPU utilization, memory, power, clock, temperature, PCIe
///     throughput, which NVML averages itself): {"mean", "min", "max"} over the samples;
///   - rates from counters (CPU utilization, network, InfiniBand, NVLink): per interval,
///     (counter now - counter before) / (t now - t before); "min"/"max" over intervals, "mean"
///     the time-weighted one (whole difference / whole span); an interval where a counter
///     went down (reset) or time did not advance has no value;
///   - a metric no sample had is left out.
/// Series: at most max_series_points points; with n samples and m = min(n, max) points,
/// point k is the mean of samples floor(k*n/m) .. floor((k+1)*n/m)-1 (consecutive; sizes
/// differ by at most one); a sample without the metric is skipped, a point with none is null.
class TelemetryAccumulator {
 public:
  /// `interval_ms` is reported as "interval_ms"; max_series_points >= 1.
  explicit TelemetryAccumulator(int interval_ms, std::size_t max_series_points = 64);

  /// The GPU opened (its identity and limits); without it (or after set_gpu_unavailable) the
  /// summary's "gpu" is {"available": false, "reason": ...}.
  void set_gpu(const GpuInfo& info);
  void set_gpu_unavailable(const std::string& reason);
  /// The interface named in "host.net" ("" -> "net": null).
  void set_net_interface(const std::string& name);

  /// Starts a window: drops earlier samples, keeps `baseline` as the previous reading.
  void begin(const TelemetryReading& baseline);
  /// One sample (call begin() first; without it the first add() becomes the baseline).
  void add(const TelemetryReading& reading);
  std::size_t samples() const { return t_.size(); }
  /// Seconds from the baseline to the last sample (0 without samples).
  double span_s() const;

  nlohmann::json summary() const;

 private:
  using Series = std::vector<std::optional<double>>;
  struct Rate {  // per interval, plus the sums for the time-weighted mean
    Series values;
    double sum_delta = 0, sum_dt = 0;
  };
  void add_rate(Rate& r, std::optional<double> before, std::optional<double> now, double dt, double scale) const;
  nlohmann::json rate_stats(const Rate& r) const;
  nlohmann::json series(const Series& s) const;

  int interval_ms_;
  std::size_t max_points_;
  bool gpu_available_ = false;
  std::string gpu_reason_ = "no GPU: the rank runs on the CPU";
  GpuInfo gpu_info_;
  std::string net_interface_;
  std::optional<TelemetryReading> prev_;
  double t0_ = 0;
  std::vector<double> t_;  // seconds since the baseline, per sample
  Series sm_util_, mem_util_, mem_used_, power_, sm_clock_, temperature_, pcie_tx_, pcie_rx_;
  std::vector<std::optional<unsigned long long>> reasons_;
  Rate cpu_, net_rx_, net_tx_, nvlink_tx_, nvlink_rx_;
  std::vector<std::string> ib_ports_;  // in order of first appearance
  std::vector<Rate> ib_rx_, ib_tx_;    // parallel to ib_ports_
  std::optional<double> peak_rss_;
};

/// Samples one rank in a background thread. Construction opens NVML once (when a GPU is
/// named); each start() .. stop() is one window (e.g. a row's measured iterations) whose
/// summary() is that summary without "flags". Throws UsageError for sample_ms < 1 or
/// max_series_points < 1. NVML missing or failing is not an error (gpu unavailable).
class TelemetrySampler {
 public:
  explicit TelemetrySampler(TelemetryOptions options);
  ~TelemetrySampler();  ///< stops (joins) the thread
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  /// Starts a window: drops the last window's samples, takes the baseline reading, starts
  /// the thread (one reading every sample_ms). Calling start() while running restarts.
  void start();
  /// Ends the window: wakes and joins the thread (it waits at most sample_ms, plus one reading),
  /// then takes a last sample when none was taken or at least half a period has passed since
  /// the last one, so a window shorter than sample_ms still has one. No-op when not running.
  void stop();
  bool running() const { return running_; }

  /// Takes one reading now and adds it as a sample (the thread calls this; tests call it
  /// directly). Without a window started, the first call becomes the baseline.
  void sample_now();
  std::size_t samples() const;
  /// The current window's summary (thread-safe; may be called while running).
  nlohmann::json summary() const;
  const TelemetryOptions& options() const { return options_; }
  /// The opened GPU, or nullptr (CPU rank, NVML unavailable).
  const NvmlGpu* gpu() const { return gpu_ && gpu_->available() ? gpu_.get() : nullptr; }

 private:
  TelemetryReading read(bool baseline) const;  // baseline: GPU counters only
  void loop();

  TelemetryOptions options_;
  std::unique_ptr<NvmlGpu> gpu_;
  mutable std::mutex mu_;  // guards acc_, last_sample_t_, stop_requested_
  std::condition_variable cv_;
  TelemetryAccumulator acc_;
  bool started_ = false;
  double last_sample_t_ = 0;
  bool stop_requested_ = false;
  std::atomic<bool> running_{false};
  std::thread thread_;
};

/// Significant digits a result file keeps of telemetry's non-integer numbers (rounded_telemetry).
inline constexpr int kTelemetryDigits = 6;

/// `summary` (a TelemetryAccumulator::summary()) with every non-integer number rounded to
/// kTelemetryDigits significant digits, as a rank publishes it for the result file: NVML
/// reports utilization in whole percent and the sampler averages over --sample-ms, so more
/// digits say nothing and cost bytes per rank at scale. Integers (counts, byte totals) and
/// non-finite values are left as they are. Never throws.
nlohmann::json rounded_telemetry(nlohmann::json summary);

/// Many ranks' telemetry summaries (each a RankSamples.telemetry.sampled, or null) as one
/// set of series, so a row keeps the whole group's picture without every rank's series:
///   {"ranks": n, "t_s": [...], "<metric>": {"min": [...], "median": [...], "max": [...]}, ...}
/// over the n summaries that have a "series". Point i of a metric is taken over the ranks
/// whose series have a number at i (null where none has); "t_s" is the median of the ranks'
/// t_s at i; the length is the longest series. Median: core/stats/stats.hpp percentile (50).
/// Empty object when no summary has a series. Never throws.
nlohmann::json series_over_ranks(const std::vector<const TelemetrySummary*>& sampled);

/// Sets the flags of a summary made by TelemetryAccumulator/TelemetrySampler (`sampled`, in
/// place) and returns one row warning per flag, naming the rank, `host`, the GPU index and
/// the value:
///   low_gpu_util   the GPU is available, has sm_util_pct, and its mean < min_util_pct
///                  (min_util_pct <= 0 turns the check off): "rank 3 (node7, GPU 3): mean SM
///                  utilization 41% < --min-util 80%";
///   gpu_throttled  throttled_fraction > 0, i.e. some sample had a clock-event reason other
///                  than gpu_idle and applications_clocks_setting: "rank 3 (node7, GPU 3):
///                  clocks held down in 25% of samples (hw_thermal_slowdown)".
/// "flags" is [] when none fires (also without a GPU).
std::vector<RowWarning> telemetry_flags(TelemetrySummary& sampled, double min_util_pct, int rank,
                                        const std::string& host);

}  // namespace ddpbench
