// NVML (NVIDIA Management Library) loaded at run time: dlopen("libnvidia-ml.so.1") and
// dlsym, as PyTorch's c10/cuda/driver_api.cpp does, so ddpbench has no link-time dependency
// on the driver and runs unchanged where there is none. Torch-free.
//
// Only the v1 C API calls listed in nvml.cpp are used, declared there with the types and
// constants copied from NVIDIA's nvml.h. A call the loaded library lacks leaves its metric
// absent; a library that cannot be loaded or initialised is "unavailable", never an error.
#pragma once

#include <memory>
#include <optional>
#include <string>

namespace ddpbench {

/// The NVML library to load: `configured` when not empty, else $DDPBENCH_NVML_LIBRARY when
/// set (tests point it at their stub), else "libnvidia-ml.so.1" (the driver's soname).
std::string nvml_library_path(const std::string& configured);

/// Which GPU to open. The first non-empty of uuid, bus_id, index >= 0 is used: a UUID or a
/// PCI bus id names the same physical GPU whatever CUDA_VISIBLE_DEVICES says, while `index`
/// is NVML's numbering (nvidia-smi's), which equals the CUDA index only without
/// CUDA_VISIBLE_DEVICES and with CUDA_DEVICE_ORDER=PCI_BUS_ID.
struct GpuSelector {
  int index = -1;      ///< NVML index; -1: none
  std::string uuid;    ///< "GPU-xxxxxxxx-..." as nvidia-smi prints it
  std::string bus_id;  ///< PCI bus id, "0000:06:00.0" or "00000000:06:00.0"
  bool any() const { return index >= 0 || !uuid.empty() || !bus_id.empty(); }
};

/// What does not change while a GPU runs. Optional members are empty where NVML lacks the call.
struct GpuInfo {
  int index = -1;      ///< NVML index (nvidia-smi's) when nvmlDeviceGetIndex answers, else the selector's
  std::string name;    ///< "NVIDIA H100 80GB HBM3"
  std::string uuid;    ///< "GPU-..."
  std::string bus_id;  ///< "00000000:06:00.0" (nvmlPciInfo_t.busId)
  std::optional<double> mem_total_bytes;   ///< nvmlDeviceGetMemoryInfo .total, bytes
  std::optional<double> power_limit_w;     ///< nvmlDeviceGetEnforcedPowerLimit, mW / 1000
  std::optional<double> max_sm_clock_mhz;  ///< nvmlDeviceGetMaxClockInfo(NVML_CLOCK_SM), MHz
};

/// One reading of a GPU. Every member is empty where the call is missing or failed.
struct GpuReading {
  std::optional<double> sm_util_pct;   ///< nvmlUtilization_t.gpu: % of the driver's sample period with a kernel running
  std::optional<double> mem_util_pct;  ///< nvmlUtilization_t.memory: % of it with device memory read or written
  std::optional<double> mem_used_bytes;  ///< nvmlMemory_t.used, bytes
  std::optional<double> power_w;         ///< nvmlDeviceGetPowerUsage, mW / 1000
  std::optional<double> sm_clock_mhz;    ///< nvmlDeviceGetClockInfo(NVML_CLOCK_SM), MHz
  std::optional<double> temperature_c;   ///< nvmlDeviceGetTemperature(NVML_TEMPERATURE_GPU), degrees C
  /// nvmlDeviceGetCurrentClocksEventReasons (older name ...ClocksThrottleReasons): bit mask,
  /// bits as kClockEventReasons.
  std::optional<unsigned long long> clock_event_reasons;
  /// nvmlDeviceGetPcieThroughput(NVML_PCIE_UTIL_TX_BYTES / RX_BYTES): NVML's own rate over a
  /// 20 ms window, KB/s, converted here with 1 KB = 1024 bytes to bytes/s.
  std::optional<double> pcie_tx_bytes_per_s, pcie_rx_bytes_per_s;
  /// NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX / _RX summed over all links (scopeId UINT_MAX):
  /// cumulative counters in KiB, converted to bytes; rates come from differences.
  std::optional<double> nvlink_tx_bytes, nvlink_rx_bytes;
};

/// One clock-event (throttle) reason bit, as nvml.h defines nvmlClocksEventReason* (formerly
/// nvmlClocksThrottleReason*). `excluded` reasons do not count as throttling: an idle GPU and
/// clocks the administrator set are not slowdowns of a busy one.
struct ClockEventReason {
  unsigned long long bit;
  const char* name;
  bool excluded;
};
/// The reasons of nvml.h (values copied from it):
///   0x1 gpu_idle (excluded), 0x2 applications_clocks_setting (excluded), 0x4 sw_power_cap,
///   0x8 hw_slowdown, 0x10 sync_boost, 0x20 sw_thermal_slowdown, 0x40 hw_thermal_slowdown,
///   0x80 hw_power_brake_slowdown, 0x100 display_clock_setting.
extern const ClockEventReason kClockEventReasons[9];
/// Mask of the excluded bits (gpu_idle | applications_clocks_setting = 0x3).
inline constexpr unsigned long long kExcludedClockEventReasons = 0x1ULL | 0x2ULL;
/// The name of one reason bit: its kClockEventReasons name, or "reason_0x<hex>" for a bit
/// nvml.h did not define when this was written.
std::string clock_event_reason_name(unsigned long long bit);

/// One GPU opened through NVML. Construction never throws for a missing or failing NVML:
/// available() is then false and reason() says why. Not copyable; NVML is shut down and
/// the library closed on destruction. Reading from several threads is safe (NVML is
/// thread-safe), but one thread per object is the intended use.
class NvmlGpu {
 public:
  /// Loads `library` (see nvml_library_path), initialises NVML (nvmlInit_v2) and opens the
  /// GPU `which` names. `which.any()` false: unavailable, reason "no GPU selected".
  NvmlGpu(const std::string& library, const GpuSelector& which);
  ~NvmlGpu();
  NvmlGpu(const NvmlGpu&) = delete;
  NvmlGpu& operator=(const NvmlGpu&) = delete;

  bool available() const { return available_; }
  /// Why available() is false, e.g. "NVML not loaded: libnvidia-ml.so.1: cannot open shared
  /// object file: No such file or directory"; "" when available.
  const std::string& reason() const { return reason_; }
  /// Identity and limits, read once at construction (empty GpuInfo when unavailable).
  const GpuInfo& info() const { return info_; }
  /// One reading of every metric the library has (all empty when unavailable). With
  /// `counters_only`, only the cumulative counters (NVLink), as a window's baseline needs.
  GpuReading read(bool counters_only = false) const;

  struct Api;  // the dlsym'd entry points (nvml.cpp)

 private:
  static void read_nvlink(const Api& a, void* dev, GpuReading& g);
  void* lib_ = nullptr;
  std::unique_ptr<Api> api_;
  void* device_ = nullptr;  // nvmlDevice_t
  bool initialised_ = false;
  bool available_ = false;
  std::string reason_;
  GpuInfo info_;
};

}  // namespace ddpbench
