// The built-in local launcher: rank environment, output forwarding, failure handling.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <signal.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/testutil.hpp"
#include "core/launch/spawn.hpp"
#include "core/util/remove_tree.hpp"
#include "unit/process_helpers.hpp"

namespace fs = std::filesystem;

namespace ddpbench {
namespace {

using ::testing::HasSubstr;

using testutil::capture_fd;
using testutil::ends_soon;
using testutil::read_pid;
using testutil::slurp;
using testutil::TempDir;

std::string host() {
  char buf[256] = {0};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

SpawnOptions shell(int n, const std::string& script) {
  SpawnOptions o;
  o.nproc = n;
  o.argv = {"/bin/sh", "-c", script};
  o.term_grace_s = 5;
  return o;
}

TEST(Spawn, EveryRankGetsTorchrunStyleEnvironment) {
  TempDir d;
  auto o = shell(3, "echo \"$RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $MASTER_ADDR $DDPBENCH_LOCAL_SPAWNER\" > " +
                        d.path.string() + "/rank$RANK; echo $MASTER_PORT > " + d.path.string() + "/port$RANK");
  ASSERT_EQ(spawn_local_ranks(o), 0);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(slurp(d.path / ("rank" + std::to_string(r))),
              std::to_string(r) + " 3 " + std::to_string(r) + " 3 127.0.0.1 " + std::to_string(::getpid()) + "\n");
  }
  const std::string port = slurp(d.path / "port0");
  EXPECT_EQ(port, slurp(d.path / "port2"));  // all ranks agree on the rendezvous port
  EXPECT_GT(std::stoi(port), 0);
}

TEST(Spawn, ThePhaseFolderIsRemovedAfterTheRanksEnd) {
  TempDir tmp;
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  ::setenv("TMPDIR", tmp.path.c_str(), 1);
  const int rc = spawn_local_ranks(shell(2, "test -n \"$DDPBENCH_PHASE_FILE\" && echo x > \"$DDPBENCH_PHASE_FILE\""));
  if (old) ::setenv("TMPDIR", saved.c_str(), 1); else ::unsetenv("TMPDIR");
  EXPECT_EQ(rc, 0);
  EXPECT_TRUE(fs::is_empty(tmp.path)) << "the launcher left its phase folder behind";
}

TEST(RemoveTree, RemovesNestedFoldersAndFilesWithoutFollowingLinks) {
  TempDir outside, d;
  std::ofstream(outside.path / "keep") << "x";
  fs::create_directories(d.path / "a" / "b");
  std::ofstream(d.path / "a" / "b" / "f") << "x";
  std::ofstream(d.path / "g") << "x";
  fs::create_directory_symlink(outside.path, d.path / "a" / "link");
  remove_tree(d.path.string());
  EXPECT_FALSE(fs::exists(d.path));
  EXPECT_TRUE(fs::exists(outside.path / "keep")) << "remove_tree followed a symbolic link";
  remove_tree("");                        // nothing
  remove_tree((d.path / "gone").string());  // absent: nothing, no throw
}

TEST(Spawn, OneFailureStopsTheOthersAndIsReturned) {
  TempDir d;
  auto o = shell(3, "if [ \"$RANK\" = 1 ]; then exit 7; fi; sleep 30 && touch " + d.path.string() + "/survived$RANK");
  EXPECT_EQ(spawn_local_ranks(o), 7);
  EXPECT_FALSE(fs::exists(d.path / "survived0"));
  EXPECT_FALSE(fs::exists(d.path / "survived2"));
}

TEST(Spawn, DeathBySignalIsReportedAs128PlusSignal) {
  auto o = shell(2, "if [ \"$RANK\" = 0 ]; then kill -9 $$; fi; exit 0");
  EXPECT_EQ(spawn_local_ranks(o), 128 + 9);
}

// The launcher names a rank that a signal killed, with its pid and the phase it wrote
// to DDPBENCH_PHASE_FILE, in one line; the phase directory is gone afterwards.
TEST(Spawn, RankKilledBySignalIsNamedWithItsPhase) {
  TempDir d;
  int rc = -1;
  const std::string err = capture_fd(STDERR_FILENO, d.path / "err", [&] {
    rc = spawn_local_ranks(shell(2, "echo \"$DDPBENCH_PHASE_FILE\" > " + d.path.string() +
                                        "/phasefile$RANK; if [ \"$RANK\" = 1 ]; then echo 'warm-up of resnet18/ddp2' "
                                        "> \"$DDPBENCH_PHASE_FILE\"; echo $$ > " +
                                        d.path.string() + "/pid1; kill -9 $$; fi; sleep 30"));
  });
  EXPECT_EQ(rc, 128 + 9);
  const std::string pid = slurp(d.path / "pid1");
  EXPECT_EQ(err, "ddpbench: error: rank 1 (pid " + pid.substr(0, pid.size() - 1) + " on " + host() +
                     ") was killed by signal 9 (SIGKILL) during warm-up of resnet18/ddp2; the other ranks were "
                     "stopped\n");
  std::string phase_file = slurp(d.path / "phasefile1");  // written before rank 1 killed itself
  phase_file.pop_back();
  EXPECT_FALSE(phase_file.empty());
  EXPECT_FALSE(fs::exists(fs::path(phase_file).parent_path())) << phase_file;
}

// A rank stopped (SIGSTOP) in its teardown, after another rank finished: the launcher waits
// finish_timeout_s, not for ever, names the stopped rank with its phase, ends it and fails.
// Without the bound this test hangs (the rank never continues).
TEST(Spawn, RankStoppedAfterAnotherFinishedIsNamedAndEndedAfterTheTimeout) {
  TempDir d;
  auto o = shell(2, "if [ \"$RANK\" = 1 ]; then echo 'the end of the process (teardown)' > \"$DDPBENCH_PHASE_FILE\"; "
                    "echo $$ > " + d.path.string() + "/pid1; kill -STOP $$; touch " + d.path.string() +
                    "/continued; fi; exit 0");
  o.finish_timeout_s = 1;
  int rc = -1;
  const std::string err = capture_fd(STDERR_FILENO, d.path / "err", [&] { rc = spawn_local_ranks(o); });
  EXPECT_EQ(rc, 1);
  const std::string pid = slurp(d.path / "pid1");
  EXPECT_EQ(err, "ddpbench: error: rank 1 (pid " + pid.substr(0, pid.size() - 1) + " on " + host() +
                     ") did not exit within --timeout 1 s of rank 0's exit (phase: the end of the process "
                     "(teardown); it is stopped (SIGSTOP or a debugger)); it was ended\n");
  EXPECT_FALSE(fs::exists(d.path / "continued")) << "the stopped rank went on after SIGTERM + SIGCONT";
}

// A rank that runs on past --timeout after another exited (rank 0 still writing its result)
// is not ended: a running rank bounds its own waits and gets 4 x --timeout + 60 s.
TEST(Spawn, ARunningRankPastTheTimeoutOfAnotherExitIsNotEnded) {
  auto o = shell(2, "if [ \"$RANK\" = 1 ]; then sleep 2; fi; exit 0");
  o.finish_timeout_s = 1;
  EXPECT_EQ(spawn_local_ranks(o), 0);
}

// Without a phase written (killed before it could say anything) the phase is start-up.
TEST(Spawn, RankKilledBeforeItsFirstPhaseIsInStartUp) {
  TempDir d;
  const std::string err = capture_fd(STDERR_FILENO, d.path / "err",
                                     [&] { EXPECT_EQ(spawn_local_ranks(shell(1, "kill -15 $$")), 128 + 15); });
  EXPECT_THAT(err, HasSubstr("rank 0 (pid "));
  EXPECT_THAT(err, HasSubstr("was killed by signal 15 (SIGTERM) during start-up;"));
}

// Each launch gets its own job token unless the user set DDPBENCH_JOB_ID.
TEST(Spawn, RanksShareAPerLaunchJobToken) {
  TempDir d;
  ASSERT_EQ(spawn_local_ranks(shell(2, "echo $DDPBENCH_JOB_ID > " + d.path.string() + "/id$RANK")), 0);
  const std::string first = slurp(d.path / "id0");
  EXPECT_EQ(first, slurp(d.path / "id1"));
  EXPECT_EQ(first.rfind("local-", 0), 0u) << first;
  ASSERT_EQ(spawn_local_ranks(shell(1, "echo $DDPBENCH_JOB_ID > " + d.path.string() + "/id0")), 0);
  EXPECT_NE(slurp(d.path / "id0"), first);
}

TEST(Spawn, OutputIsForwardedWithRankPrefixExceptRankZero) {
  TempDir d;
  std::string out;
  int rc = -1;
  out = capture_fd(STDOUT_FILENO, d.path / "out",
                   [&] { rc = spawn_local_ranks(shell(2, "printf 'hello from %s\\nsecond line' \"$RANK\"")); });
  EXPECT_EQ(rc, 0);
  EXPECT_THAT(out, HasSubstr("hello from 0\n"));
  EXPECT_THAT(out, HasSubstr("[rank 1] hello from 1\n"));
  EXPECT_THAT(out, HasSubstr("[rank 1] second line\n"));  // unterminated last line flushed
  EXPECT_EQ(out.find("[rank 0]"), std::string::npos);
}

// A grandchild holds the rank's stderr open after the rank exits: the rank's last
// words, without a newline, still come out.
TEST(Spawn, LastUnterminatedLineIsForwardedWhileAChildHoldsThePipe) {
  TempDir d;
  int rc = -1;
  const std::string err = capture_fd(STDERR_FILENO, d.path / "err", [&] {
    rc = spawn_local_ranks(shell(2, "sleep 300 & printf 'fatal: rank %s gave up' \"$RANK\" >&2"));
  });
  EXPECT_EQ(rc, 0);
  EXPECT_THAT(err, HasSubstr("fatal: rank 0 gave up\n"));
  EXPECT_THAT(err, HasSubstr("[rank 1] fatal: rank 1 gave up\n"));
  EXPECT_EQ(err.find("[rank 0]"), std::string::npos);
}

// Rank 1 fails once rank 0 has started a child of its own: that child ends too.
TEST(Spawn, ChildOfAStoppedRankIsKilledWithIt) {
  TempDir d;
  const auto child0 = d.path / "child0";
  auto o = shell(2, "if [ \"$RANK\" = 1 ]; then i=0; while [ ! -s '" + child0.string() +
                        "' ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; exit 7; fi; "
                        "sleep 300 & echo $! > '" +
                        child0.string() + "'; wait");
  EXPECT_EQ(spawn_local_ranks(o), 7);
  const pid_t child = read_pid(child0);
  ASSERT_GT(child, 0);
  EXPECT_TRUE(ends_soon(child, "sleep"));
}

// A rank that exits 0 leaving a background child: the launcher does not leave it behind.
TEST(Spawn, ChildLeftBehindByAFinishedRankIsKilled) {
  TempDir d;
  const auto file = d.path / "child";
  EXPECT_EQ(spawn_local_ranks(shell(1, "sleep 300 >/dev/null 2>&1 & echo $! > '" + file.string() + "'")), 0);
  const pid_t child = read_pid(file);
  ASSERT_GT(child, 0);
  EXPECT_TRUE(ends_soon(child, "sleep"));
}

// SIGINT to the launcher reaches every rank's group (a non-interactive shell's
// background job ignores SIGINT, so its child ends as what is left of the group).
TEST(Spawn, InterruptIsForwardedToEveryRankGroup) {
  TempDir d;
  const std::string dir = d.path.string();
  auto o = shell(2, "sleep 300 & echo $! > '" + dir + "'/child$RANK; wait");
  std::thread interrupter([&] {
    // Once both ranks have their child (or after 10 s: then the test fails below).
    read_pid(d.path / "child0");
    read_pid(d.path / "child1");
    ::kill(::getpid(), SIGINT);
  });
  const int rc = spawn_local_ranks(o);
  interrupter.join();
  EXPECT_EQ(rc, 128 + SIGINT);
  for (const char* f : {"child0", "child1"}) {
    const pid_t child = read_pid(d.path / f);
    ASSERT_GT(child, 0) << f;
    EXPECT_TRUE(ends_soon(child, "sleep")) << f;
  }
}

TEST(Spawn, UnstartableProgramThrows) {
  SpawnOptions o;
  o.nproc = 2;
  o.argv = {"/nonexistent/ddpbench"};
  EXPECT_THROW(spawn_local_ranks(o), std::runtime_error);
}

TEST(Spawn, FreePortIsUsable) {
  const int p = find_free_port();
  ASSERT_GT(p, 0);
  ASSERT_LT(p, 65536);
  // The port can be bound and listened on right away.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(p));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0) << std::strerror(errno);
  EXPECT_EQ(::listen(fd, 1), 0);
  ::close(fd);
}

// Runs exit_with_parent in a forked child whose parent is this process; returns the
// child's exit status (0 when it returned true, 1 when false).
int exit_with_parent_status(const std::string& spawner_pid) {
  const std::string me = std::to_string(::getpid());
  const pid_t kid = ::fork();
  if (kid == 0)
    std::_Exit(exit_with_parent({{"DDPBENCH_LOCAL_SPAWNER", spawner_pid == "self" ? me : spawner_pid}}) ? 0 : 1);
  int status = 0;
  ::waitpid(kid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(Spawn, RankExitsWhenItsParentIsNotItsLauncher) {
  EXPECT_EQ(exit_with_parent_status("self"), 0);       // the launcher is its parent
  EXPECT_EQ(exit_with_parent_status("999999999"), 1);  // re-parented (the launcher died) or stale
}

}  // namespace
}  // namespace ddpbench
