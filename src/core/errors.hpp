// Error types shared by every layer. Torch-free.
#pragma once

#include <stdexcept>
#include <string>

namespace ddpbench {

/// Bad input from the user (flags, environment, files). The CLI prints
/// `ddpbench: error: <what>` on one line and exits with code 2 (kExitUsage).
/// The message names the problem and the fix.
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& what) : std::runtime_error(what) {}
};

/// The in-run self-check found ranks disagreeing (e.g. gradients differ after
/// the DDP allreduce). The CLI exits with code 3 (kExitSelfCheck).
class SelfCheckError : public std::runtime_error {
 public:
  explicit SelfCheckError(const std::string& what) : std::runtime_error(what) {}
};

/// The first line of an error message: c10::Error::what() appends a C++ backtrace
/// after the message, which belongs in a debugger, not in a one-line error.
inline std::string first_line(const std::string& what) { return what.substr(0, what.find('\n')); }

/// Process exit codes of the `ddpbench` binary.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;    ///< runtime failure (a peer died, a timeout, a torch error)
constexpr int kExitUsage = 2;      ///< bad input; one line on stderr names it
constexpr int kExitSelfCheck = 3;  ///< ranks disagree: the measured numbers are not trustworthy

}  // namespace ddpbench
