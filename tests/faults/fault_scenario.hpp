// The fault-and-bad-input suite's scenario (tests/faults): what a case starts (Proc), when a
// fault is injected (When, Fault), and what must follow (Expect, ResultState); the table itself
// is fault_scenarios.cpp's scenarios(), run by test_faults.cpp.
#pragma once

#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/testutil.hpp"
#include "core/launch/spawn.hpp"

extern char** environ;

namespace ddpbench::fault_tests {

namespace fs = std::filesystem;
using testutil::slurp;
using testutil::TempDir;

// ----------------------------------------------------------------------------- the table

/// When something happens: a start or a fault.
struct When {
  enum Kind {
    kAt,         ///< `delay_s` after the case started
    kAppears,    ///< `delay_s` after process `role` exists (a launcher's rank: once seen in /proc)
    kListening,  ///< `delay_s` after the port in `role`'s MASTER_PORT listens (TCP LISTEN)
    kOutput,     ///< `delay_s` after `role`'s stdout contains `text` (a launcher's rank: its launcher's)
  } kind = kAt;
  std::string role, text;
  double delay_s = 0;
};
inline When at(double d) { return {When::kAt, "", "", d}; }

/// What must become of one process.
struct Expect {
  std::vector<int> codes;               ///< allowed exit codes (128 + signal when killed)
  std::vector<std::string> line_has;    ///< one stderr error line contains all of these
  double per_timeout = 0, plus_s = 10;  ///< exits within per_timeout * --timeout + plus_s ...
  bool since_start = false;             ///< ... of its own start (default: of the first fault, if any)
  int min_errors = 1, max_errors = 1;   ///< "ddpbench: error: " lines on stderr
  int max_notes = 1;                    ///< "ddpbench: note: " lines
  std::vector<std::string> note_has;    ///< one note line contains all of these
  bool stdout_empty = false;
};

/// One process the case starts.
struct Proc {
  std::string role;
  std::string env;   ///< "K=V K=V"; @PORT is the case's port
  std::string args;  ///< ddpbench's arguments; @T: --timeout, @JSON: --json <file>, @PORT, @DIR, @SRC
  When start = at(0);
  Expect expect;
  bool listener = false;  ///< a foreign (non-ddpbench) listener on @PORT ...
  std::string listener_sends;  ///< ... that writes these bytes on each connection ("" = never answers)
  bool victim = false;    ///< not checked; ended by the harness once the checked ones exited
};

/// One signal, sent when `when` happens to `target`: a role, or "<role>/rankN" for rank N
/// of a built-in launcher started as <role>.
struct Fault {
  When when;
  std::string target;
  int sig;
};

enum class ResultFile {
  kNone,     ///< no --json
  kFresh,    ///< --json to a path that does not exist yet
  kEarlier,  ///< --json to a file holding an earlier result (and --overwrite, where the binary has it)
};
enum class ResultState {
  kAny,
  kUntouched,  ///< PATH absent (kFresh) or unchanged (kEarlier)
  kPartial,    ///< kUntouched, and PATH.partial holds the rows so far, "complete": false
  kComplete,   ///< PATH holds the sweep's rows and the rendezvous port the case chose
};

struct Scenario {
  std::string name;
  double timeout_s;
  std::vector<Proc> procs;
  std::vector<Fault> faults;
  ResultFile json = ResultFile::kNone;
  ResultState result = ResultState::kAny;
  /// Shell commands run before the processes start and after the case (always), with @DIR
  /// (the case's directory) and @SRC (the source tree) replaced: a fifo, a link, a read-only
  /// file, a full file system (a small tmpfs, so `needs_root`).
  std::string setup = "", teardown = "";
  std::string after = "";  ///< a shell test that must succeed once the processes ended (e.g. a path is absent)
  bool needs_root = false;
};

/// Failure messages name the case, not the struct's bytes.
inline void PrintTo(const Scenario& sc, std::ostream* os) { *os << sc.name; }
  // --- Bad launcher environments and flags: one process, exit 2, one line, before any rank.
  // --- Input files: one reader (regular files only, opened without blocking, a size cap).
  // IDX files whose header declares more than the data they hold: 2^39 bytes, 2 GiB in 34
  // bytes (both above the 1 GiB cap), and 512 MiB over a few bytes (truncated).
  // run --resume: the file must be a stopped run's PATH.partial (a complete result, or any
  // other name, is refused before a rank starts).
  // --- Output paths: the one writer (links, fifos, devices, read-only files refused; every
  // write and the close checked, so a full disk is an error and not a short file).
  // A full file system: a 64 KiB tmpfs, filled.
    // One line: rank 0's (rank 1, told through the group's gate, leaves it to rank 0).
  // --- Child processes end with the process that started them: find-max-bs's trial child
  // (in a process group of its own) when the search is killed or interrupted at the terminal;
  // a trial of 100 steps of resnet50 outlasts the 5 s the suite waits for stray processes.
  // --- Rendezvous of hand-launched ranks (torchrun-style environment), --timeout 5.
  // Job B's two ranks, started 3 s after job A's on the same address and port: B's rank 0
  // cannot have the port, B's rank 1 claims A's taken rank 1. Once A runs, a rank of a
  // 3-rank job comes to A's port too. Neither may join A, and A runs to its end.
  // --- Hand-launched ranks during measurement: a peer stopped past --timeout, or killed.
  // --- The built-in launcher: a rank stopped or killed in each phase.
  // A stopped rank cannot say a word and its peers only see a timeout: the launcher names it.
  // The launcher names the killed rank once (rank 0, which lost its peer, is ended before it
  // says anything) and says where the rows so far are.
  // --- Signals to the built-in launcher itself, in each phase: it ends, with its ranks.
    // A signal the launcher forwards ends it with 128 + that signal; SIGHUP and SIGKILL
    // kill it outright. What it prints is not pinned down, only that it is ddpbench's lines.
  // --- The built-in launcher's rendezvous port: MASTER_PORT is honoured, and a taken one said so.
std::vector<Scenario> scenarios();

}  // namespace ddpbench::fault_tests
