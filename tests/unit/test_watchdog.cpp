// core/launch/watchdog: a blocked call past its deadline ends the process with one line; the
// phase reaches the launcher through DDPBENCH_PHASE_FILE; launcher job ids.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <system_error>
#include <thread>

#include "common/testutil.hpp"
#include "core/launch/launch_env.hpp"
#include "core/launch/watchdog.hpp"
#include "unit/process_helpers.hpp"

namespace ddpbench {
namespace {

using testutil::capture_fd;
using testutil::slurp;
using testutil::TempDir;

// Runs `fn` in a forked child; returns its exit code (-1 when a signal ended it).
template <class F>
int in_child(F fn) {
  const pid_t kid = ::fork();
  if (kid == 0) {
    fn();
    std::_Exit(0);
  }
  int status = 0;
  ::waitpid(kid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(Watchdog, ACallPastItsDeadlineEndsTheProcessWithOneLine) {
  TempDir d;
  int code = 0;
  const std::string err = capture_fd(STDERR_FILENO, d.path / "err", [&] {
    code = in_child([] {
      set_watchdog_name("rank 3");
      set_phase("warm-up of resnet18/ddp4");
      Deadline dl("the rendezvous store at 10.0.0.1:29500", std::chrono::milliseconds(100), "; check rank 0");
      std::this_thread::sleep_for(std::chrono::seconds(60));  // a recv that never returns
    });
  });
  EXPECT_EQ(code, 1);
  EXPECT_EQ(err,
            "ddpbench: error: rank 3: the rendezvous store at 10.0.0.1:29500 did not answer within --timeout 0.1 s "
            "(phase: warm-up of resnet18/ddp4); check rank 0\n");
}

TEST(Watchdog, ACallThatReturnsInTimeIsLeftAlone) {
  TempDir d;
  int code = -1;
  const std::string err = capture_fd(STDERR_FILENO, d.path / "err", [&] {
    code = in_child([] {
      for (int i = 0; i < 3; ++i) Deadline dl("the store", std::chrono::milliseconds(50));
      { Deadline outer("the store", std::chrono::milliseconds(100)); }
      // Past every deadline (each is 2 s after its timeout): nothing may fire.
      std::this_thread::sleep_for(std::chrono::milliseconds(2500));
      std::_Exit(7);
    });
  });
  EXPECT_EQ(code, 7);
  EXPECT_EQ(err, "");
}

// A library thread that throws (libtorch 1.13's TCPStore client listener throws
// std::system_error "Connection reset by peer" when rank 0 dies) would abort with
// std::terminate's two lines and a core dump; with the handler it is one line, exit 1.
TEST(Watchdog, AnExceptionNothingCatchesEndsTheProcessWithOneLine) {
  TempDir d;
  int code = 0;
  const std::string err = capture_fd(STDERR_FILENO, d.path / "err", [&] {
    code = in_child([] {
      set_watchdog_name("rank 1");
      set_phase("rendezvous");
      end_uncaught_exceptions_with_one_line();
      std::thread([] { throw std::system_error(ECONNRESET, std::generic_category(), "recv"); }).join();
    });
  });
  EXPECT_EQ(code, 1);
  EXPECT_EQ(err,
            "ddpbench: error: rank 1: recv: " + std::generic_category().message(ECONNRESET) + " (phase: rendezvous)\n");
}

TEST(Watchdog, PhaseIsWrittenToThePhaseFile) {
  TempDir d;
  const std::string file = (d.path / "rank1").string();
  const int code = in_child([&] {
    open_phase_file({{"DDPBENCH_PHASE_FILE", file}});
    set_phase("measurement of a rather long phase name");
    set_phase("rendezvous");  // shorter than the one before: no tail of it is left
    std::_Exit(read_phase_file(file) == "rendezvous" ? 0 : 1);
  });
  EXPECT_EQ(code, 0);
  EXPECT_EQ(slurp(file), "rendezvous\n");
  EXPECT_EQ(read_phase_file((d.path / "missing").string()), "");
}

TEST(LauncherJobId, EachLauncherNamesItsJob) {
  EXPECT_EQ(launcher_job_id({}, Launcher::kTorchrun), "");
  EXPECT_EQ(launcher_job_id({{"TORCHELASTIC_RUN_ID", "abc"}}, Launcher::kTorchrun), "torchrun:abc");
  EXPECT_EQ(launcher_job_id({{"SLURM_JOB_ID", "42"}, {"SLURM_STEP_ID", "3"}}, Launcher::kSlurm), "slurm:42.3");
  EXPECT_EQ(launcher_job_id({{"PMIX_NAMESPACE", "980746241"}, {"OMPI_MCA_ess_base_jobid", "1"}}, Launcher::kOpenMPI),
            "pmix:980746241");
  EXPECT_EQ(launcher_job_id({{"OMPI_MCA_ess_base_jobid", "77"}}, Launcher::kOpenMPI), "openmpi:77");
  // The user's (or the built-in launcher's) id wins over the launcher's.
  EXPECT_EQ(launcher_job_id({{"DDPBENCH_JOB_ID", "mine"}, {"SLURM_JOB_ID", "42"}}, Launcher::kSlurm), "mine");
  // A Slurm job id seen by a torchrun rank is not torchrun's id.
  EXPECT_EQ(launcher_job_id({{"SLURM_JOB_ID", "42"}}, Launcher::kTorchrun), "");
}

}  // namespace
}  // namespace ddpbench
