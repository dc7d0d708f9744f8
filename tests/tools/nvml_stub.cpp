// A stand-in for libnvidia-ml.so.1 implementing exactly the NVML calls core/telemetry/nvml.cpp makes,
// so the NVML path is tested on machines without a GPU (tests load it through
// DDPBENCH_NVML_LIBRARY). Built as two shared libraries by tests/CMakeLists.txt:
//   nvml_stub          every call; clock-event reasons under the old name
//                      nvmlDeviceGetCurrentClocksThrottleReasons only
//   nvml_stub_minimal  (NVML_STUB_MINIMAL) without nvmlDeviceGetPowerUsage,
//                      nvmlDeviceGetPcieThroughput and nvmlDeviceGetFieldValues; reasons under
//                      the new name nvmlDeviceGetCurrentClocksEventReasons only
//
// Two GPUs: index i has UUID "GPU-00000000-0000-0000-0000-00000000000<i>", bus id
// "00000000:0<6+i>:00.0", name "Stub GPU <i>". Values come from environment variables read
// at nvmlInit_v2 (which also rewinds every sequence): a comma-separated list is a sequence,
// one element per call of that function (the last repeats); numbers in C syntax (0x20).
//   NVML_STUB_INIT_ERROR   nvmlInit_v2 returns this code (default 0)
//   NVML_STUB_UTIL_GPU, NVML_STUB_UTIL_MEM   percent           (default 40, 20)
//   NVML_STUB_MEM_USED, NVML_STUB_MEM_TOTAL  bytes             (default 1 GiB, 16 GiB)
//   NVML_STUB_POWER_MW, NVML_STUB_POWER_LIMIT_MW               (default 100000, 300000)
//   NVML_STUB_SM_CLOCK, NVML_STUB_MAX_SM_CLOCK  MHz            (default 1400, 1980)
//   NVML_STUB_TEMP         degrees C                           (default 60)
//   NVML_STUB_REASONS      clock-event reason bits             (default 0)
//   NVML_STUB_PCIE_TX_KBS, NVML_STUB_PCIE_RX_KBS  KB/s         (default 0)
//   NVML_STUB_NVLINK_TX_KIB, NVML_STUB_NVLINK_RX_KIB  cumulative KiB (default 0)
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// nvml.h values (see src/core/telemetry/nvml.cpp)
constexpr int kSuccess = 0, kInvalidArgument = 2, kNotFound = 6, kInsufficientSize = 7;

struct Device {
  unsigned index;
};
Device g_devices[2] = {{0}, {1}};

struct Seq {
  const char* var;
  unsigned long long fallback;
  std::vector<unsigned long long> values;
  size_t calls = 0;
  void load() {
    values.clear();
    calls = 0;
    const char* s = std::getenv(var);
    if (s == nullptr || *s == '\0') {
      values.push_back(fallback);
      return;
    }
    for (const char* p = s; *p != '\0';) {
      char* end = nullptr;
      values.push_back(std::strtoull(p, &end, 0));
      p = (*end == ',') ? end + 1 : end + std::strlen(end);
    }
  }
  unsigned long long next() {
    const unsigned long long v = values[calls < values.size() ? calls : values.size() - 1];
    ++calls;
    return v;
  }
};

Seq util_gpu{"NVML_STUB_UTIL_GPU", 40, {}}, util_mem{"NVML_STUB_UTIL_MEM", 20, {}};
Seq mem_used{"NVML_STUB_MEM_USED", 1ULL << 30, {}}, mem_total{"NVML_STUB_MEM_TOTAL", 16ULL << 30, {}};
Seq power{"NVML_STUB_POWER_MW", 100000, {}}, power_limit{"NVML_STUB_POWER_LIMIT_MW", 300000, {}};
Seq sm_clock{"NVML_STUB_SM_CLOCK", 1400, {}}, max_sm_clock{"NVML_STUB_MAX_SM_CLOCK", 1980, {}};
Seq temp{"NVML_STUB_TEMP", 60, {}}, reasons{"NVML_STUB_REASONS", 0, {}};
Seq pcie_tx{"NVML_STUB_PCIE_TX_KBS", 0, {}}, pcie_rx{"NVML_STUB_PCIE_RX_KBS", 0, {}};
Seq nvlink_tx{"NVML_STUB_NVLINK_TX_KIB", 0, {}}, nvlink_rx{"NVML_STUB_NVLINK_RX_KIB", 0, {}};
Seq* g_all[] = {&util_gpu,     &util_mem, &mem_used, &mem_total, &power,   &power_limit, &sm_clock,
                &max_sm_clock, &temp,     &reasons,  &pcie_tx,   &pcie_rx, &nvlink_tx,   &nvlink_rx};
int g_refs = 0;

Device* dev(void* d) {
  for (auto& x : g_devices)
    if (d == &x) return &x;
  return nullptr;
}

std::string uuid_of(unsigned i) { return "GPU-00000000-0000-0000-0000-00000000000" + std::to_string(i); }
std::string bus_of(unsigned i) {
  char b[32];
  std::snprintf(b, sizeof b, "%08X:%02X:00.0", 0u, 6u + i);
  return b;
}

int copy_out(const std::string& s, char* out, unsigned len) {
  if (out == nullptr) return kInvalidArgument;
  if (s.size() + 1 > len) return kInsufficientSize;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return kSuccess;
}

struct Utilization {
  unsigned gpu, memory;
};
struct Memory {
  unsigned long long total, free, used;
};
struct PciInfo {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
union Value {
  double dVal;
  unsigned uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
};
struct FieldValue {
  unsigned fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType, nvmlReturn;
  Value value;
};

}  // namespace

extern "C" {

int nvmlInit_v2() {
  if (const char* e = std::getenv("NVML_STUB_INIT_ERROR"); e != nullptr && std::atoi(e) != 0) return std::atoi(e);
  if (g_refs++ == 0)
    for (Seq* s : g_all) s->load();
  return kSuccess;
}

int nvmlShutdown() {
  if (g_refs > 0) --g_refs;
  return kSuccess;
}

const char* nvmlErrorString(int r) {
  switch (r) {
    case 0: return "Success";
    case 6: return "Not Found";
    case 9: return "Driver Not Loaded";
    default: return "Unknown Error";
  }
}

int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** out) {
  if (i >= 2) return kInvalidArgument;
  *out = &g_devices[i];
  return kSuccess;
}

int nvmlDeviceGetHandleByUUID(const char* uuid, void** out) {
  for (unsigned i = 0; i < 2; ++i)
    if (uuid_of(i) == uuid) {
      *out = &g_devices[i];
      return kSuccess;
    }
  return kNotFound;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char* bus, void** out) {
  // domain:bus:device.function in hex; the domain may have 4 or 8 digits.
  unsigned domain = 0, b = 0, d = 0, f = 0;
  if (std::sscanf(bus, "%x:%x:%x.%x", &domain, &b, &d, &f) != 4) return kInvalidArgument;
  for (unsigned i = 0; i < 2; ++i)
    if (domain == 0 && b == 6 + i && d == 0 && f == 0) {
      *out = &g_devices[i];
      return kSuccess;
    }
  return kNotFound;
}

int nvmlDeviceGetIndex(void* d, unsigned* index) {
  if (dev(d) == nullptr) return kInvalidArgument;
  *index = dev(d)->index;
  return kSuccess;
}

int nvmlDeviceGetName(void* d, char* name, unsigned len) {
  if (dev(d) == nullptr) return kInvalidArgument;
  return copy_out("Stub GPU " + std::to_string(dev(d)->index), name, len);
}

int nvmlDeviceGetUUID(void* d, char* uuid, unsigned len) {
  if (dev(d) == nullptr) return kInvalidArgument;
  return copy_out(uuid_of(dev(d)->index), uuid, len);
}

int nvmlDeviceGetPciInfo_v3(void* d, PciInfo* pci) {
  if (dev(d) == nullptr || pci == nullptr) return kInvalidArgument;
  std::memset(pci, 0, sizeof *pci);
  pci->bus = 6 + dev(d)->index;
  std::snprintf(pci->busId, sizeof pci->busId, "%s", bus_of(dev(d)->index).c_str());
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", pci->bus);
  return kSuccess;
}

int nvmlDeviceGetUtilizationRates(void* d, Utilization* u) {
  if (dev(d) == nullptr) return kInvalidArgument;
  u->gpu = static_cast<unsigned>(util_gpu.next());
  u->memory = static_cast<unsigned>(util_mem.next());
  return kSuccess;
}

int nvmlDeviceGetMemoryInfo(void* d, Memory* m) {
  if (dev(d) == nullptr) return kInvalidArgument;
  m->total = mem_total.values.back();
  m->used = mem_used.next();
  m->free = m->total - m->used;
  return kSuccess;
}

#ifndef NVML_STUB_MINIMAL
int nvmlDeviceGetPowerUsage(void* d, unsigned* mw) {
  if (dev(d) == nullptr) return kInvalidArgument;
  *mw = static_cast<unsigned>(power.next());
  return kSuccess;
}
#endif

int nvmlDeviceGetEnforcedPowerLimit(void* d, unsigned* mw) {
  if (dev(d) == nullptr) return kInvalidArgument;
  *mw = static_cast<unsigned>(power_limit.next());
  return kSuccess;
}

int nvmlDeviceGetClockInfo(void* d, int type, unsigned* mhz) {
  if (dev(d) == nullptr || type != 1 /* NVML_CLOCK_SM */) return kInvalidArgument;
  *mhz = static_cast<unsigned>(sm_clock.next());
  return kSuccess;
}

int nvmlDeviceGetMaxClockInfo(void* d, int type, unsigned* mhz) {
  if (dev(d) == nullptr || type != 1) return kInvalidArgument;
  *mhz = static_cast<unsigned>(max_sm_clock.next());
  return kSuccess;
}

int nvmlDeviceGetTemperature(void* d, int sensor, unsigned* c) {
  if (dev(d) == nullptr || sensor != 0 /* NVML_TEMPERATURE_GPU */) return kInvalidArgument;
  *c = static_cast<unsigned>(temp.next());
  return kSuccess;
}

#ifdef NVML_STUB_MINIMAL
int nvmlDeviceGetCurrentClocksEventReasons(void* d, unsigned long long* bits) {
#else
int nvmlDeviceGetCurrentClocksThrottleReasons(void* d, unsigned long long* bits) {
#endif
  if (dev(d) == nullptr) return kInvalidArgument;
  *bits = reasons.next();
  return kSuccess;
}

#ifndef NVML_STUB_MINIMAL
int nvmlDeviceGetPcieThroughput(void* d, int counter, unsigned* kbs) {
  if (dev(d) == nullptr || counter < 0 || counter > 1) return kInvalidArgument;
  *kbs = static_cast<unsigned>(counter == 0 ? pcie_tx.next() : pcie_rx.next());
  return kSuccess;
}

int nvmlDeviceGetFieldValues(void* d, int count, FieldValue* values) {
  if (dev(d) == nullptr || count < 0 || values == nullptr) return kInvalidArgument;
  for (int i = 0; i < count; ++i) {
    FieldValue& f = values[i];
    f.valueType = 3;  // NVML_VALUE_TYPE_UNSIGNED_LONG_LONG
    if (f.fieldId == 138 && f.scopeId == UINT_MAX) {
      f.nvmlReturn = kSuccess;
      f.value.ullVal = nvlink_tx.next();
    } else if (f.fieldId == 139 && f.scopeId == UINT_MAX) {
      f.nvmlReturn = kSuccess;
      f.value.ullVal = nvlink_rx.next();
    } else {
      f.nvmlReturn = 3;  // NVML_ERROR_NOT_SUPPORTED
    }
  }
  return kSuccess;
}
#endif

}  // extern "C"
