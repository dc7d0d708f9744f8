#include "core/config/instruments.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

#include "core/config/run_config.hpp"
#include "core/util/errors.hpp"

namespace ddpbench {

const std::vector<Instrument>& instrument_catalogue() {
  static const std::vector<Instrument> k = {
      {"telemetry", "telemetry sampler",
       "a thread of its own, every --sample-ms during the measured iterations (NVML, /proc, network counters)",
       "the row's telemetry (utilization, power, clocks, throttle reasons, CPU, RSS, network) and its "
       "low_gpu_util / gpu_throttled warnings"},
      {"counters", "per-step counters",
       "getrusage(2) involuntary context switches and CLOCK_PROCESS_CPUTIME_ID before and after each step, "
       "outside the timed span",
       "the preempt and CPU cores columns"},
      {"timers", "breakdown timers",
       "three clock marks inside the step (CUDA events on a GPU) and the Reducer's runtime stats on every "
       "iteration (PyTorch's default samples the first 10, then every 100th), read after the step",
       "the breakdown and exposed communication (its target is then not evaluated)"},
      {"progress", "progress", "rank 0's progress line, updated after each step", "the progress output"},
      {"stragglers", "straggler series",
       "a series of every rank training its own copy at once, before the no-DDP baseline: in no row's timed "
       "span",
       "the straggler scores"},
  };
  return k;
}

std::vector<std::string> parse_instruments_off(const std::string& text) {
  const auto& cat = instrument_catalogue();
  std::vector<std::string> names;
  for (const auto& item : split_list(text)) {
    if (item == "none") continue;
    if (item == "all") {
      for (const auto& i : cat) names.push_back(i.name);
      continue;
    }
    const auto it = std::find_if(cat.begin(), cat.end(), [&](const Instrument& i) { return item == i.name; });
    if (it == cat.end()) {
      std::vector<std::string> known;
      for (const auto& i : cat) known.push_back(i.name);
      throw UsageError(fmt::format("--instruments-off has '{}', which is no instrument; use a comma list of {} "
                                   "(or all, none)",
                                   item, fmt::join(known, ", ")));
    }
    names.push_back(item);
  }
  std::vector<std::string> out;
  for (const auto& i : cat)
    if (std::find(names.begin(), names.end(), i.name) != names.end()) out.push_back(i.name);
  return out;
}

bool instrument_on(const std::vector<std::string>& off, const std::string& name) {
  const auto& cat = instrument_catalogue();
  if (std::none_of(cat.begin(), cat.end(), [&](const Instrument& i) { return name == i.name; }))
    throw std::logic_error("instrument_on: '" + name + "' is not in the instrument catalogue");
  return std::find(off.begin(), off.end(), name) == off.end();
}

std::string instruments_line(const std::vector<std::string>& off, int sample_ms) {
  std::vector<std::string> on, dropped;
  for (const auto& i : instrument_catalogue()) {
    std::string what = i.what;
    if (std::string(i.name) == "telemetry") what += fmt::format(" every {} ms", sample_ms);
    (instrument_on(off, i.name) ? on : dropped).push_back(what);
  }
  std::string line = on.empty() ? "none" : fmt::format("{}", fmt::join(on, ", "));
  if (!dropped.empty()) line += fmt::format("; off (--instruments-off): {}", fmt::join(dropped, ", "));
  return line;
}

}  // namespace ddpbench
