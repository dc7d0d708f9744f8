// The instruments of `ddpbench run`: what it measures beside the step time, each one a switch
// (`--instruments-off NAME,...`), so that its cost can be measured (scripts/overhead-bench.sh)
// and a reader comparing with another tool knows what ran (the run header, config.instruments_off).
// docs/METHODOLOGY.md "What the harness costs" gives each one's measured cost.
#pragma once

#include <string>
#include <vector>

namespace ddpbench {

/// One instrument a run can switch off.
struct Instrument {
  const char* name;      ///< the --instruments-off name: "telemetry"
  const char* what;      ///< what it measures, for the header and --help
  const char* where;     ///< where it runs relative to the timed step
  const char* off_loses; ///< what a row lacks without it
};

/// Every instrument, in header order: telemetry, counters, timers, progress, stragglers.
const std::vector<Instrument>& instrument_catalogue();

/// The canonical list of `--instruments-off TEXT` (comma list of catalogue names, "all" for
/// every one, "none" or "" for none), in catalogue order, each once.
/// Throws UsageError naming an unknown name and the known ones.
std::vector<std::string> parse_instruments_off(const std::string& text);

/// Whether `name` (a catalogue name) is on, given the canonical off list.
/// Throws std::logic_error for a name the catalogue lacks (a programming error).
bool instrument_on(const std::vector<std::string>& off, const std::string& name);

/// The run header's line: "telemetry every 100 ms, per-step counters, ...; off: ..." naming
/// what ran and what was switched off.
std::string instruments_line(const std::vector<std::string>& off, int sample_ms);

}  // namespace ddpbench
