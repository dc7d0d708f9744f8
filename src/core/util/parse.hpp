// Whole numbers from text (flags, environment variables, file fields): decimal only, 64-bit,
// a range check with a message that names the fix. Torch-free.
#pragma once

#include <string>

namespace ddpbench {

/// Parses a whole decimal integer ([+-]digits, 64-bit); throws UsageError naming `what` otherwise.
long long parse_int(const std::string& value, const std::string& what);

/// True for a decimal integer's text: an optional sign, then one or more digits (any width).
bool is_decimal(const std::string& text);

/// parse_int, within [lo, hi]: otherwise UsageError "WHAT=VALUE is out of range; set it to LO..HI"
/// (also for whole numbers beyond 64 bits).
long long parse_bounded(const std::string& value, const std::string& what, long long lo, long long hi);

}  // namespace ddpbench
