// Error types shared by every layer. Torch-free.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddpbench {

/// True when an error message says memory ran out: libtorch's CPU allocator ("can't
/// allocate memory", "not enough memory"), CUDA's caching allocator ("CUDA out of memory"),
/// std::bad_alloc. The one vocabulary of the CLI's error line and find-max-bs.
inline bool is_out_of_memory_message(const std::string& what) {
  for (const char* words : {"can't allocate memory", "not enough memory", "out of memory", "std::bad_alloc"})
    if (what.find(words) != std::string::npos) return true;
  return false;
}

/// The allocator's own words in an out-of-memory line: from the first of
/// "DefaultCPUAllocator", "CUDA out of memory", "out of memory", "can't allocate memory" on
/// (libtorch's prefix, e.g. "[enforce fail at alloc_cpu.cpp:75] err == 0. ", is noise), at
/// most 300 characters; the whole line (cut) when none is there.
inline std::string out_of_memory_words(const std::string& line) {
  size_t from = std::string::npos;
  for (const char* m : {"DefaultCPUAllocator", "CUDA out of memory", "out of memory", "can't allocate memory"})
    from = std::min(from, line.find(m));
  return line.substr(from == std::string::npos ? 0 : from, 300);
}

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

/// Thrown to end the process with `code` without printing anything (e.g. ranks
/// other than 0 after rank 0 reported a configuration error everyone shares).
struct SilentExit {
  int code;
};

/// Lines main prints on stderr after the error line of a command that failed, each as
/// "ddpbench: note: <line>" (e.g. where the rows measured before the failure are).
inline std::vector<std::string>& error_notes() {
  static std::vector<std::string> notes;
  return notes;
}

}  // namespace ddpbench
