#include "core/telemetry/nvml.hpp"

#include <dlfcn.h>

#include <fmt/format.h>

#include <climits>
#include <cstdlib>
#include <cstring>

namespace ddpbench {

// ------------------------------------------------------------------ nvml.h, the parts used
// Types, constants and signatures copied from NVIDIA's nvml.h (NVML API version 11/12; the
// v1 C API, stable across drivers). Only what the calls below need. A named namespace, not an
// anonymous one: NvmlGpu::Api (a class of the header) holds pointers to these types, and a class
// with external linkage should not depend on types of internal linkage (GCC's -Wsubobject-linkage;
// GCC 14 crashes on it where this file is compiled inside a unity batch).
namespace nvml_abi {

using nvmlReturn_t = int;  // enum nvmlReturn_enum
constexpr nvmlReturn_t NVML_SUCCESS = 0;
using nvmlDevice_t = void*;                 // typedef struct nvmlDevice_st* nvmlDevice_t
constexpr int NVML_CLOCK_SM = 1;            // nvmlClockType_t
constexpr int NVML_TEMPERATURE_GPU = 0;     // nvmlTemperatureSensors_t
constexpr int NVML_PCIE_UTIL_TX_BYTES = 0;  // nvmlPcieUtilCounter_t ("1KB granularity")
constexpr int NVML_PCIE_UTIL_RX_BYTES = 1;
constexpr unsigned NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX = 138;  // "NVLink TX Data throughput in KiB"
constexpr unsigned NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX = 139;  // "NVLink RX Data throughput in KiB"
constexpr int NVML_VALUE_TYPE_DOUBLE = 0;                        // nvmlValueType_t
constexpr int NVML_VALUE_TYPE_UNSIGNED_INT = 1;
constexpr int NVML_VALUE_TYPE_UNSIGNED_LONG = 2;
constexpr int NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3;
constexpr int NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4;
constexpr unsigned kNameBuffer = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kUuidBuffer = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE

struct nvmlUtilization_t {
  unsigned int gpu;     // "Percent of time over the past sample period during which one or more kernels was executing"
  unsigned int memory;  // "... during which global (device) memory was being read or written"
};
struct nvmlMemory_t {                    // v1
  unsigned long long total, free, used;  // bytes
};
struct nvmlPciInfo_t {  // as nvmlDeviceGetPciInfo_v2/_v3 fill it
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE: "%08X:%02X:%02X.0"
};
union nvmlValue_t {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
};
struct nvmlFieldValue_t {
  unsigned int fieldId;
  unsigned int scopeId;  // for NVLink throughput: the link, UINT_MAX = summed over all links
  long long timestamp;
  long long latencyUsec;
  int valueType;  // nvmlValueType_t
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
};

}  // namespace nvml_abi
using namespace nvml_abi;  // this file speaks nvml.h's names

struct NvmlGpu::Api {
  nvmlReturn_t (*init)() = nullptr;                                         // nvmlInit_v2
  nvmlReturn_t (*shutdown)() = nullptr;                                     // nvmlShutdown
  const char* (*error_string)(nvmlReturn_t) = nullptr;                      // nvmlErrorString
  nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t*) = nullptr;              // nvmlDeviceGetHandleByIndex_v2
  nvmlReturn_t (*by_uuid)(const char*, nvmlDevice_t*) = nullptr;            // nvmlDeviceGetHandleByUUID
  nvmlReturn_t (*by_bus_id)(const char*, nvmlDevice_t*) = nullptr;          // nvmlDeviceGetHandleByPciBusId_v2
  nvmlReturn_t (*get_index)(nvmlDevice_t, unsigned*) = nullptr;             // nvmlDeviceGetIndex
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;            // nvmlDeviceGetName
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;            // nvmlDeviceGetUUID
  nvmlReturn_t (*pci_info)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;         // nvmlDeviceGetPciInfo_v3 / _v2
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;  // nvmlDeviceGetUtilizationRates
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;            // nvmlDeviceGetMemoryInfo
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;                 // nvmlDeviceGetPowerUsage (mW)
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned*) = nullptr;           // nvmlDeviceGetEnforcedPowerLimit (mW)
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;            // nvmlDeviceGetClockInfo (MHz)
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned*) = nullptr;        // nvmlDeviceGetMaxClockInfo (MHz)
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;      // nvmlDeviceGetTemperature (C)
  // nvmlDeviceGetCurrentClocksEventReasons (driver 535+), else ...ClocksThrottleReasons
  nvmlReturn_t (*event_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*pcie)(nvmlDevice_t, int, unsigned*) = nullptr;                  // nvmlDeviceGetPcieThroughput (KB/s)
  nvmlReturn_t (*field_values)(nvmlDevice_t, int, nvmlFieldValue_t*) = nullptr;  // nvmlDeviceGetFieldValues
};

const ClockEventReason kClockEventReasons[9] = {
    // nvml.h: nvmlClocksEventReason* (formerly nvmlClocksThrottleReason*)
    {0x0000000000000001ULL, "gpu_idle", true},                     // ...GpuIdle
    {0x0000000000000002ULL, "applications_clocks_setting", true},  // ...ApplicationsClocksSetting
    {0x0000000000000004ULL, "sw_power_cap", false},                // ...SwPowerCap
    {0x0000000000000008ULL, "hw_slowdown", false},                 // ...HwSlowdown
    {0x0000000000000010ULL, "sync_boost", false},                  // ...SyncBoost
    {0x0000000000000020ULL, "sw_thermal_slowdown", false},         // ...SwThermalSlowdown
    {0x0000000000000040ULL, "hw_thermal_slowdown", false},         // ...HwThermalSlowdown
    {0x0000000000000080ULL, "hw_power_brake_slowdown", false},     // ...HwPowerBrakeSlowdown
    {0x0000000000000100ULL, "display_clock_setting", false},       // ...DisplayClockSetting
};

std::string clock_event_reason_name(unsigned long long bit) {
  for (const auto& r : kClockEventReasons)
    if (r.bit == bit) return r.name;
  return fmt::format("reason_{:#x}", bit);
}

std::string nvml_library_path(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (const char* env = std::getenv("DDPBENCH_NVML_LIBRARY"); env != nullptr && *env != '\0') return env;
  return "libnvidia-ml.so.1";
}

namespace {

template <class F>
void bind(void* lib, F& fn, const char* name) {
  fn = reinterpret_cast<F>(::dlsym(lib, name));
}

}  // namespace

NvmlGpu::NvmlGpu(const std::string& library, const GpuSelector& which) : api_(std::make_unique<Api>()) {
  if (!which.any()) {
    reason_ = "no GPU selected";
    return;
  }
  // RTLD_LOCAL: NVML's symbols stay out of the global namespace (as PyTorch loads it).
  lib_ = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib_ == nullptr) {
    const char* err = ::dlerror();
    reason_ = fmt::format("NVML not loaded: {}", err != nullptr ? err : library);
    return;
  }
  Api& a = *api_;
  bind(lib_, a.init, "nvmlInit_v2");
  bind(lib_, a.shutdown, "nvmlShutdown");
  bind(lib_, a.error_string, "nvmlErrorString");
  bind(lib_, a.by_index, "nvmlDeviceGetHandleByIndex_v2");
  bind(lib_, a.by_uuid, "nvmlDeviceGetHandleByUUID");
  bind(lib_, a.by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
  bind(lib_, a.get_index, "nvmlDeviceGetIndex");
  bind(lib_, a.name, "nvmlDeviceGetName");
  bind(lib_, a.uuid, "nvmlDeviceGetUUID");
  bind(lib_, a.pci_info, "nvmlDeviceGetPciInfo_v3");
  if (a.pci_info == nullptr) bind(lib_, a.pci_info, "nvmlDeviceGetPciInfo_v2");
  bind(lib_, a.utilization, "nvmlDeviceGetUtilizationRates");
  bind(lib_, a.memory, "nvmlDeviceGetMemoryInfo");
  bind(lib_, a.power, "nvmlDeviceGetPowerUsage");
  bind(lib_, a.power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  bind(lib_, a.clock, "nvmlDeviceGetClockInfo");
  bind(lib_, a.max_clock, "nvmlDeviceGetMaxClockInfo");
  bind(lib_, a.temperature, "nvmlDeviceGetTemperature");
  bind(lib_, a.event_reasons, "nvmlDeviceGetCurrentClocksEventReasons");
  if (a.event_reasons == nullptr) bind(lib_, a.event_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  bind(lib_, a.pcie, "nvmlDeviceGetPcieThroughput");
  bind(lib_, a.field_values, "nvmlDeviceGetFieldValues");

  auto err = [&](nvmlReturn_t r) -> std::string {
    const char* s = a.error_string != nullptr ? a.error_string(r) : nullptr;
    return s != nullptr ? fmt::format("{} (NVML error {})", s, r) : fmt::format("NVML error {}", r);
  };
  if (a.init == nullptr) {
    reason_ = fmt::format("NVML not usable: {} has no nvmlInit_v2", library);
    return;
  }
  if (const nvmlReturn_t r = a.init(); r != NVML_SUCCESS) {
    reason_ = fmt::format("nvmlInit_v2 failed: {}", err(r));
    return;
  }
  initialised_ = true;

  nvmlDevice_t dev = nullptr;
  nvmlReturn_t r = NVML_SUCCESS;
  std::string what;
  if (!which.uuid.empty()) {
    what = "UUID " + which.uuid;
    r = a.by_uuid != nullptr ? a.by_uuid(which.uuid.c_str(), &dev) : -1;
  } else if (!which.bus_id.empty()) {
    what = "PCI bus id " + which.bus_id;
    r = a.by_bus_id != nullptr ? a.by_bus_id(which.bus_id.c_str(), &dev) : -1;
  } else {
    what = fmt::format("index {}", which.index);
    r = a.by_index != nullptr ? a.by_index(static_cast<unsigned>(which.index), &dev) : -1;
  }
  if (r != NVML_SUCCESS || dev == nullptr) {
    reason_ = r == -1 ? fmt::format("NVML cannot look a GPU up by {} (call missing)", what)
                      : fmt::format("NVML has no GPU with {}: {}", what, err(r));
    return;
  }
  device_ = dev;
  available_ = true;

  info_.index = which.index;
  if (unsigned idx = 0; a.get_index != nullptr && a.get_index(dev, &idx) == NVML_SUCCESS)
    info_.index = static_cast<int>(idx);
  char buf[kNameBuffer > kUuidBuffer ? kNameBuffer : kUuidBuffer] = {};
  if (a.name != nullptr && a.name(dev, buf, kNameBuffer) == NVML_SUCCESS)
    info_.name.assign(buf, strnlen(buf, sizeof buf));
  std::memset(buf, 0, sizeof buf);
  if (a.uuid != nullptr && a.uuid(dev, buf, kUuidBuffer) == NVML_SUCCESS)
    info_.uuid.assign(buf, strnlen(buf, sizeof buf));
  if (nvmlPciInfo_t pci{}; a.pci_info != nullptr && a.pci_info(dev, &pci) == NVML_SUCCESS)
    info_.bus_id.assign(pci.busId, strnlen(pci.busId, sizeof pci.busId));
  if (nvmlMemory_t m{}; a.memory != nullptr && a.memory(dev, &m) == NVML_SUCCESS)
    info_.mem_total_bytes = static_cast<double>(m.total);
  if (unsigned mw = 0; a.power_limit != nullptr && a.power_limit(dev, &mw) == NVML_SUCCESS)
    info_.power_limit_w = mw / 1000.0;
  if (unsigned mhz = 0; a.max_clock != nullptr && a.max_clock(dev, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS)
    info_.max_sm_clock_mhz = mhz;
}

NvmlGpu::~NvmlGpu() {
  if (initialised_ && api_->shutdown != nullptr) api_->shutdown();
  if (lib_ != nullptr) ::dlclose(lib_);
}

GpuReading NvmlGpu::read(bool counters_only) const {
  GpuReading g;
  if (!available_) return g;
  const Api& a = *api_;
  nvmlDevice_t dev = device_;
  if (counters_only) {
    read_nvlink(a, dev, g);
    return g;
  }
  if (nvmlUtilization_t u{}; a.utilization != nullptr && a.utilization(dev, &u) == NVML_SUCCESS) {
    g.sm_util_pct = u.gpu;
    g.mem_util_pct = u.memory;
  }
  if (nvmlMemory_t m{}; a.memory != nullptr && a.memory(dev, &m) == NVML_SUCCESS)
    g.mem_used_bytes = static_cast<double>(m.used);
  if (unsigned mw = 0; a.power != nullptr && a.power(dev, &mw) == NVML_SUCCESS) g.power_w = mw / 1000.0;
  if (unsigned mhz = 0; a.clock != nullptr && a.clock(dev, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS) g.sm_clock_mhz = mhz;
  if (unsigned c = 0; a.temperature != nullptr && a.temperature(dev, NVML_TEMPERATURE_GPU, &c) == NVML_SUCCESS)
    g.temperature_c = c;
  if (unsigned long long bits = 0; a.event_reasons != nullptr && a.event_reasons(dev, &bits) == NVML_SUCCESS)
    g.clock_event_reasons = bits;
  if (unsigned kbs = 0; a.pcie != nullptr && a.pcie(dev, NVML_PCIE_UTIL_TX_BYTES, &kbs) == NVML_SUCCESS)
    g.pcie_tx_bytes_per_s = kbs * 1024.0;
  if (unsigned kbs = 0; a.pcie != nullptr && a.pcie(dev, NVML_PCIE_UTIL_RX_BYTES, &kbs) == NVML_SUCCESS)
    g.pcie_rx_bytes_per_s = kbs * 1024.0;
  read_nvlink(a, dev, g);
  return g;
}

void NvmlGpu::read_nvlink(const Api& a, void* dev, GpuReading& g) {
  if (a.field_values != nullptr) {
    nvmlFieldValue_t fv[2] = {};
    fv[0].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
    fv[1].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
    fv[0].scopeId = fv[1].scopeId = UINT_MAX;  // summed over all links
    if (a.field_values(dev, 2, fv) == NVML_SUCCESS) {
      auto value = [](const nvmlFieldValue_t& f) -> std::optional<double> {
        if (f.nvmlReturn != NVML_SUCCESS) return std::nullopt;
        switch (f.valueType) {
          case NVML_VALUE_TYPE_DOUBLE: return f.value.dVal;
          case NVML_VALUE_TYPE_UNSIGNED_INT: return f.value.uiVal;
          case NVML_VALUE_TYPE_UNSIGNED_LONG: return static_cast<double>(f.value.ulVal);
          case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: return static_cast<double>(f.value.ullVal);
          case NVML_VALUE_TYPE_SIGNED_LONG_LONG: return static_cast<double>(f.value.sllVal);
          default: return std::nullopt;
        }
      };
      if (auto v = value(fv[0])) g.nvlink_tx_bytes = *v * 1024.0;  // KiB
      if (auto v = value(fv[1])) g.nvlink_rx_bytes = *v * 1024.0;
    }
  }
}

}  // namespace ddpbench
