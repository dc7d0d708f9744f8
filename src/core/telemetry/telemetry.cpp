#include "core/telemetry/telemetry.hpp"

#include "core/result/row_memory.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/stats/stats.hpp"
#include "core/util/errors.hpp"

namespace ddpbench {

namespace fs = std::filesystem;
using nlohmann::json;

// ------------------------------------------------------------------ host readings
namespace {

std::optional<double> read_number(const fs::path& p) {
  std::ifstream in(p);
  unsigned long long v = 0;
  if (in >> v) return static_cast<double>(v);
  return std::nullopt;
}

// utime + stime of /proc/<pid>/stat (fields 14 and 15, clock ticks; proc(5)). The command
// name (field 2) may hold spaces and parentheses, so fields are counted after the last ')'.
std::optional<double> read_cpu_time_s(const fs::path& stat) {
  std::ifstream in(stat);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  std::string f;
  unsigned long long utime = 0, stime = 0;
  for (int field = 3; fields >> f; ++field) {  // the first field after ')' is field 3 (state)
    if (field == 14) utime = std::strtoull(f.c_str(), nullptr, 10);
    if (field == 15) {
      stime = std::strtoull(f.c_str(), nullptr, 10);
      const long ticks = ::sysconf(_SC_CLK_TCK);
      return static_cast<double>(utime + stime) / static_cast<double>(ticks > 0 ? ticks : 100);
    }
  }
  return std::nullopt;
}

// VmHWM ("peak resident set size") of /proc/<pid>/status, in bytes (core/result/row_memory).
std::optional<double> read_vm_hwm_bytes(const fs::path& status) {
  return read_proc_status_bytes(status.string(), "VmHWM:");
}

std::vector<fs::path> sorted_dir(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

HostReading read_host(const std::string& sysfs_root, const std::string& net_interface) {
  const fs::path root(sysfs_root.empty() ? "/" : sysfs_root);
  HostReading h;
  h.cpu_time_s = read_cpu_time_s(root / "proc/self/stat");
  h.peak_rss_bytes = read_vm_hwm_bytes(root / "proc/self/status");
  if (!h.peak_rss_bytes) {
    rusage ru{};
    if (::getrusage(RUSAGE_SELF, &ru) == 0)
      h.peak_rss_bytes = static_cast<double>(ru.ru_maxrss) * 1024.0;  // KiB on Linux
  }
  if (!net_interface.empty()) {
    const fs::path stats = root / "sys/class/net" / net_interface / "statistics";
    h.net_rx_bytes = read_number(stats / "rx_bytes");
    h.net_tx_bytes = read_number(stats / "tx_bytes");
  }
  // port_rcv_data / port_xmit_data count octets divided by 4 (Linux
  // Documentation/ABI/stable/sysfs-class-infiniband; IBA PortRcvData/PortXmitData).
  for (const fs::path& dev : sorted_dir(root / "sys/class/infiniband")) {
    for (const fs::path& port : sorted_dir(dev / "ports")) {
      const auto rcv = read_number(port / "counters/port_rcv_data");
      const auto xmit = read_number(port / "counters/port_xmit_data");
      if (!rcv || !xmit) continue;
      h.infiniband.push_back({dev.filename().string() + "/" + port.filename().string(), *rcv * 4.0, *xmit * 4.0});
    }
  }
  return h;
}

double process_cpu_s() {
  timespec ts{};
  if (::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return std::nan("");
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// ------------------------------------------------------------------ interface_for_address
namespace {

std::string first_ifname(const std::string& value) {
  std::string first = value.substr(0, value.find(','));
  if (!first.empty() && first[0] == '^') return "";          // an exclusion list names no interface
  if (!first.empty() && first[0] == '=') first.erase(0, 1);  // NCCL's "exact match" prefix
  return first;
}

bool same_address(const sockaddr* a, const sockaddr_storage& b) {
  if (a == nullptr || a->sa_family != b.ss_family) return false;
  if (a->sa_family == AF_INET)
    return reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(&b)->sin_addr.s_addr;
  if (a->sa_family == AF_INET6)
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr,
                       &reinterpret_cast<const sockaddr_in6*>(&b)->sin6_addr, sizeof(in6_addr)) == 0;
  return false;
}

}  // namespace

std::string interface_for_address(const std::string& host, const EnvMap& env) {
  for (const char* var : {"GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"}) {
    const auto it = env.find(var);
    if (it == env.end()) continue;
    if (std::string name = first_ifname(it->second); !name.empty()) return name;
  }
  if (host.empty()) return "";
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), "9", &hints, &res) != 0 || res == nullptr) return "";
  sockaddr_storage local{};
  bool have_local = false;
  for (addrinfo* ai = res; ai != nullptr && !have_local; ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    // connect() on a UDP socket only picks the route and the local address; nothing is sent.
    socklen_t len = sizeof local;
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0)
      have_local = true;
    ::close(fd);
  }
  ::freeaddrinfo(res);
  if (!have_local) return "";
  ifaddrs* ifs = nullptr;
  if (::getifaddrs(&ifs) != 0) return "";
  std::string name;
  for (ifaddrs* i = ifs; i != nullptr; i = i->ifa_next)
    if (same_address(i->ifa_addr, local)) {
      name = i->ifa_name;
      break;
    }
  ::freeifaddrs(ifs);
  return name;
}

// ------------------------------------------------------------------ TelemetryAccumulator
namespace {

json stats(const std::vector<std::optional<double>>& s) {
  std::vector<double> v;
  for (const auto& x : s)
    if (x) v.push_back(*x);
  if (v.empty()) return nullptr;
  return {{"mean", mean(v)},
          {"min", *std::min_element(v.begin(), v.end())},
          {"max", *std::max_element(v.begin(), v.end())}};
}

void put_if(json& obj, const char* key, json value) {
  if (!value.is_null()) obj[key] = std::move(value);
}

}  // namespace

TelemetryAccumulator::TelemetryAccumulator(int interval_ms, std::size_t max_series_points)
    : interval_ms_(interval_ms), max_points_(std::max<std::size_t>(1, max_series_points)) {}

void TelemetryAccumulator::set_gpu(const GpuInfo& info) {
  gpu_available_ = true;
  gpu_info_ = info;
  gpu_reason_.clear();
}

void TelemetryAccumulator::set_gpu_unavailable(const std::string& reason) {
  gpu_available_ = false;
  gpu_reason_ = reason;
}

void TelemetryAccumulator::set_net_interface(const std::string& name) { net_interface_ = name; }

void TelemetryAccumulator::begin(const TelemetryReading& baseline) {
  prev_ = baseline;
  t0_ = baseline.t_s;
  t_.clear();
  for (Series* s : {&sm_util_, &mem_util_, &mem_used_, &power_, &sm_clock_, &temperature_, &pcie_tx_, &pcie_rx_})
    s->clear();
  reasons_.clear();
  for (Rate* r : {&cpu_, &net_rx_, &net_tx_, &nvlink_tx_, &nvlink_rx_}) *r = Rate{};
  ib_ports_.clear();
  ib_rx_.clear();
  ib_tx_.clear();
  peak_rss_ = baseline.host.peak_rss_bytes;
}

void TelemetryAccumulator::add_rate(Rate& r, std::optional<double> before, std::optional<double> now, double dt,
                                    double scale) const {
  if (!before || !now || !(dt > 0) || *now < *before) {
    r.values.push_back(std::nullopt);
    return;
  }
  const double delta = *now - *before;
  r.values.push_back(delta / dt * scale);
  r.sum_delta += delta * scale;
  r.sum_dt += dt;
}

void TelemetryAccumulator::add(const TelemetryReading& x) {
  if (!prev_) {
    begin(x);
    return;
  }
  const TelemetryReading& p = *prev_;
  const double dt = x.t_s - p.t_s;
  t_.push_back(x.t_s - t0_);
  const GpuReading& g = x.gpu;
  sm_util_.push_back(g.sm_util_pct);
  mem_util_.push_back(g.mem_util_pct);
  mem_used_.push_back(g.mem_used_bytes);
  power_.push_back(g.power_w);
  sm_clock_.push_back(g.sm_clock_mhz);
  temperature_.push_back(g.temperature_c);
  pcie_tx_.push_back(g.pcie_tx_bytes_per_s);
  pcie_rx_.push_back(g.pcie_rx_bytes_per_s);
  reasons_.push_back(g.clock_event_reasons);
  add_rate(nvlink_tx_, p.gpu.nvlink_tx_bytes, g.nvlink_tx_bytes, dt, 1.0);
  add_rate(nvlink_rx_, p.gpu.nvlink_rx_bytes, g.nvlink_rx_bytes, dt, 1.0);
  add_rate(cpu_, p.host.cpu_time_s, x.host.cpu_time_s, dt, 100.0);  // percent of one CPU
  add_rate(net_rx_, p.host.net_rx_bytes, x.host.net_rx_bytes, dt, 1.0);
  add_rate(net_tx_, p.host.net_tx_bytes, x.host.net_tx_bytes, dt, 1.0);
  const std::size_t i = t_.size() - 1;  // this sample's index
  for (const IbPortReading& port : x.host.infiniband)
    if (std::find(ib_ports_.begin(), ib_ports_.end(), port.port) == ib_ports_.end()) {
      ib_ports_.push_back(port.port);
      ib_rx_.push_back(Rate{Series(i), 0, 0});
      ib_tx_.push_back(Rate{Series(i), 0, 0});
    }
  for (std::size_t k = 0; k < ib_ports_.size(); ++k) {
    auto find = [&](const HostReading& h) -> const IbPortReading* {
      for (const auto& r : h.infiniband)
        if (r.port == ib_ports_[k]) return &r;
      return nullptr;
    };
    const IbPortReading* before = find(p.host);
    const IbPortReading* now = find(x.host);
    add_rate(ib_rx_[k], before ? std::optional(before->rcv_bytes) : std::nullopt,
             now ? std::optional(now->rcv_bytes) : std::nullopt, dt, 1.0);
    add_rate(ib_tx_[k], before ? std::optional(before->xmit_bytes) : std::nullopt,
             now ? std::optional(now->xmit_bytes) : std::nullopt, dt, 1.0);
  }
  if (x.host.peak_rss_bytes) peak_rss_ = std::max(peak_rss_.value_or(0.0), *x.host.peak_rss_bytes);
  prev_ = x;
}

double TelemetryAccumulator::span_s() const { return t_.empty() ? 0.0 : t_.back(); }

json TelemetryAccumulator::rate_stats(const Rate& r) const {
  json s = stats(r.values);
  if (!s.is_null()) s["mean"] = r.sum_delta / r.sum_dt;  // time-weighted: whole difference / whole span
  return s;
}

json TelemetryAccumulator::series(const Series& s) const {
  const std::size_t n = s.size();
  const std::size_t m = std::min(n, max_points_);
  json out = json::array();
  for (std::size_t k = 0; k < m; ++k) {
    const std::size_t lo = k * n / m, hi = (k + 1) * n / m;
    double sum = 0;
    std::size_t count = 0;
    for (std::size_t i = lo; i < hi; ++i)
      if (s[i]) {
        sum += *s[i];
        ++count;
      }
    out.push_back(count > 0 ? json(sum / static_cast<double>(count)) : json(nullptr));
  }
  return out;
}

json TelemetryAccumulator::summary() const {
  json j = {{"interval_ms", interval_ms_}, {"samples", t_.size()}, {"span_s", span_s()}};

  json gpu;
  if (!gpu_available_) {
    gpu = {{"available", false}, {"reason", gpu_reason_}};
  } else {
    gpu = {{"available", true},
           {"index", gpu_info_.index},
           {"name", gpu_info_.name},
           {"uuid", gpu_info_.uuid},
           {"bus_id", gpu_info_.bus_id}};
    put_if(gpu, "sm_util_pct", stats(sm_util_));
    put_if(gpu, "mem_util_pct", stats(mem_util_));
    put_if(gpu, "mem_used_bytes", stats(mem_used_));
    if (gpu_info_.mem_total_bytes) gpu["mem_total_bytes"] = static_cast<unsigned long long>(*gpu_info_.mem_total_bytes);
    put_if(gpu, "power_w", stats(power_));
    if (gpu_info_.power_limit_w) gpu["power_limit_w"] = *gpu_info_.power_limit_w;
    put_if(gpu, "sm_clock_mhz", stats(sm_clock_));
    if (gpu_info_.max_sm_clock_mhz) gpu["max_sm_clock_mhz"] = *gpu_info_.max_sm_clock_mhz;
    put_if(gpu, "temperature_c", stats(temperature_));
    unsigned long long seen = 0;
    std::size_t with_reasons = 0, throttled = 0;
    for (const auto& r : reasons_) {
      if (!r) continue;
      ++with_reasons;
      const unsigned long long counted = *r & ~kExcludedClockEventReasons;
      seen |= counted;
      if (counted != 0) ++throttled;
    }
    if (with_reasons > 0) {
      json names = json::array();
      for (int bit = 0; bit < 64; ++bit)
        if (seen & (1ULL << bit)) names.push_back(clock_event_reason_name(1ULL << bit));
      gpu["throttle_reasons"] = names;
      gpu["throttled_fraction"] = static_cast<double>(throttled) / static_cast<double>(with_reasons);
    }
    put_if(gpu, "pcie_tx_bytes_per_s", stats(pcie_tx_));
    put_if(gpu, "pcie_rx_bytes_per_s", stats(pcie_rx_));
    put_if(gpu, "nvlink_tx_bytes_per_s", rate_stats(nvlink_tx_));
    put_if(gpu, "nvlink_rx_bytes_per_s", rate_stats(nvlink_rx_));
  }
  j["gpu"] = gpu;

  json host = json::object();
  put_if(host, "cpu_util_pct", rate_stats(cpu_));
  if (peak_rss_) host["peak_rss_bytes"] = static_cast<unsigned long long>(*peak_rss_);
  if (net_interface_.empty()) {
    host["net"] = nullptr;
  } else {
    json net = {{"interface", net_interface_}};
    net["rx_bytes_per_s"] = rate_stats(net_rx_);
    net["tx_bytes_per_s"] = rate_stats(net_tx_);
    host["net"] = net;
  }
  json ib = json::array();
  for (std::size_t k = 0; k < ib_ports_.size(); ++k)
    ib.push_back(
        {{"port", ib_ports_[k]}, {"rx_bytes_per_s", rate_stats(ib_rx_[k])}, {"tx_bytes_per_s", rate_stats(ib_tx_[k])}});
  host["infiniband"] = ib;
  j["host"] = host;

  json s;
  Series t(t_.begin(), t_.end());
  s["t_s"] = series(t);
  if (gpu_available_) {
    s["sm_util_pct"] = series(sm_util_);
    s["sm_clock_mhz"] = series(sm_clock_);
    s["temperature_c"] = series(temperature_);
    s["power_w"] = series(power_);
  }
  s["cpu_util_pct"] = series(cpu_.values);
  if (!net_interface_.empty()) {
    s["net_rx_bytes_per_s"] = series(net_rx_.values);
    s["net_tx_bytes_per_s"] = series(net_tx_.values);
  }
  j["series"] = s;
  return j;
}

namespace {

void round_numbers(nlohmann::json& j) {
  if (j.is_structured()) {
    for (auto& v : j) round_numbers(v);
  } else if (j.is_number_float()) {
    const double x = j.get<double>();
    if (x == 0 || !std::isfinite(x)) return;
    // x = m * 10^e10 with kTelemetryDigits digits in m; dividing or multiplying by an exact
    // power of ten keeps the result the double nearest to the rounded decimal.
    const int e = kTelemetryDigits - 1 - static_cast<int>(std::floor(std::log10(std::abs(x))));
    const double p = std::pow(10.0, std::abs(e));
    const double r = e >= 0 ? std::round(x * p) / p : std::round(x / p) * p;
    if (std::isfinite(r)) j = r;
  }
}

}  // namespace

nlohmann::json rounded_telemetry(nlohmann::json summary) {
  round_numbers(summary);
  return summary;
}

nlohmann::json series_over_ranks(const std::vector<const TelemetrySummary*>& sampled) {
  using json = nlohmann::json;
  std::vector<const TelemetrySeries*> series;
  for (const TelemetrySummary* s : sampled)
    if (s && s->series) series.push_back(&*s->series);
  if (series.empty()) return json::object();
  std::vector<std::string> metrics;  // in the order of their names
  size_t points = 0;
  for (const TelemetrySeries* s : series)
    for (const auto& [key, values] : *s) {
      if (std::find(metrics.begin(), metrics.end(), key) == metrics.end()) metrics.push_back(key);
      points = std::max(points, values.size());
    }
  json out = {{"ranks", series.size()}};
  for (const auto& key : metrics) {
    json lo = json::array(), mid = json::array(), hi = json::array();
    for (size_t i = 0; i < points; ++i) {
      std::vector<double> v;
      for (const TelemetrySeries* s : series)
        if (const auto it = s->find(key); it != s->end() && i < it->second.size() && !std::isnan(it->second[i]))
          v.push_back(it->second[i]);
      if (v.empty()) {
        lo.push_back(nullptr), mid.push_back(nullptr), hi.push_back(nullptr);
        continue;
      }
      lo.push_back(*std::min_element(v.begin(), v.end()));
      mid.push_back(percentile(v, 50));
      hi.push_back(*std::max_element(v.begin(), v.end()));
    }
    if (key == "t_s") out["t_s"] = mid;
    else out[key] = {{"min", lo}, {"median", mid}, {"max", hi}};
  }
  return out;
}

// ------------------------------------------------------------------ TelemetrySampler
namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

TelemetryOptions checked(TelemetryOptions o) {
  if (o.sample_ms < 1)
    throw UsageError(
        fmt::format("--sample-ms {} is not a period: give a whole number of milliseconds >= 1", o.sample_ms));
  if (o.max_series_points < 1) throw UsageError("telemetry: max_series_points must be >= 1");
  return o;
}

}  // namespace

TelemetrySampler::TelemetrySampler(TelemetryOptions options)
    : options_(checked(std::move(options))), acc_(options_.sample_ms, options_.max_series_points) {
  const GpuSelector which{options_.gpu_index, options_.gpu_uuid, options_.bus_id};
  if (which.any()) {
    gpu_ = std::make_unique<NvmlGpu>(nvml_library_path(options_.nvml_library), which);
    if (gpu_->available()) acc_.set_gpu(gpu_->info());
    else acc_.set_gpu_unavailable(gpu_->reason());
  }
  acc_.set_net_interface(options_.net_interface);
}

TelemetrySampler::~TelemetrySampler() { stop(); }

TelemetryReading TelemetrySampler::read(bool baseline) const {
  TelemetryReading r;
  if (gpu_ && gpu_->available()) r.gpu = gpu_->read(baseline);
  r.host = read_host(options_.sysfs_root, options_.net_interface);
  r.t_s = now_s();
  return r;
}

void TelemetrySampler::start() {
  stop();
  const TelemetryReading baseline = read(true);
  {
    std::lock_guard<std::mutex> lk(mu_);
    acc_.begin(baseline);
    started_ = true;
    last_sample_t_ = baseline.t_s;
    stop_requested_ = false;
  }
  running_ = true;
  thread_ = std::thread([this] { loop(); });
}

void TelemetrySampler::loop() {
  const auto period = std::chrono::milliseconds(options_.sample_ms);
  auto next = std::chrono::steady_clock::now() + period;
  std::unique_lock<std::mutex> lk(mu_);
  while (!stop_requested_) {
    if (cv_.wait_until(lk, next, [this] { return stop_requested_; })) break;
    lk.unlock();
    sample_now();
    lk.lock();
    next += period;
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now + period;  // fell behind (a slow reading): no burst of catch-up samples
  }
}

void TelemetrySampler::stop() {
  if (!running_) return;
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_requested_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  running_ = false;
  bool last = false;
  {
    std::lock_guard<std::mutex> lk(mu_);
    last = acc_.samples() == 0 || now_s() - last_sample_t_ >= options_.sample_ms / 2000.0;
  }
  if (last) sample_now();
}

void TelemetrySampler::sample_now() {
  bool baseline = false;
  {
    std::lock_guard<std::mutex> lk(mu_);
    baseline = !started_;
  }
  const TelemetryReading r = read(baseline);
  std::lock_guard<std::mutex> lk(mu_);
  if (!started_) {
    acc_.begin(r);
    started_ = true;
  } else {
    acc_.add(r);
  }
  last_sample_t_ = r.t_s;
}

std::size_t TelemetrySampler::samples() const {
  std::lock_guard<std::mutex> lk(mu_);
  return acc_.samples();
}

json TelemetrySampler::summary() const {
  std::lock_guard<std::mutex> lk(mu_);
  return acc_.summary();
}

// ------------------------------------------------------------------ flags
std::vector<RowWarning> telemetry_flags(TelemetrySummary& sampled, double min_util_pct, int rank,
                                        const std::string& host) {
  std::vector<RowWarning> out;
  std::vector<std::string> flags;
  if (const auto& gpu = sampled.gpu; gpu && gpu->available.value_or(false)) {
    const std::string who = fmt::format("rank {} ({}, GPU {})", rank, host, gpu->index.value_or(-1));
    const std::optional<double> m = gpu->sm_util_pct ? gpu->sm_util_pct->mean : std::nullopt;
    if (min_util_pct > 0 && m && *m < min_util_pct) {
      flags.push_back("low_gpu_util");
      out.push_back(
          {"low_gpu_util", fmt::format("{}: mean SM utilization {:.0f}% < --min-util {:.0f}%", who, *m, min_util_pct)});
    }
    if (const double frac = gpu->throttled_fraction.value_or(0.0); frac > 0) {
      flags.push_back("gpu_throttled");
      out.push_back(
          {"gpu_throttled", fmt::format("{}: clocks held down in {:.0f}% of samples ({})", who, 100.0 * frac,
                                        fmt::join(gpu->throttle_reasons.value_or(std::vector<std::string>{}), ", "))});
    }
  }
  sampled.flags = flags;
  return out;
}

}  // namespace ddpbench
