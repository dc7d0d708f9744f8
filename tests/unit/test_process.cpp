// The process layer: argv without a shell, process groups, output, timeouts, exit status.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/testutil.hpp"
#include "core/launch/process.hpp"
#include "unit/process_helpers.hpp"

namespace fs = std::filesystem;

namespace ddpbench {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using testutil::capture_fd;
using testutil::ends_soon;
using testutil::read_pid;
using testutil::running;
using testutil::starts_soon;
using testutil::TempDir;

TEST(Process, ArgumentsReachTheProgramVerbatim) {
  // Each would mean something to a shell: spaces, quotes, ;, &&, $, globs, backquotes.
  const auto r = run_capture({"printf", "%s|", "two words", "it's \"quoted\"", "a;b && c", "$HOME", "*", "`id`"});
  ASSERT_TRUE(r.ok()) << r.status.describe() << r.err;
  EXPECT_EQ(r.out, "two words|it's \"quoted\"|a;b && c|$HOME|*|`id`|");
}

TEST(Process, UnterminatedLastLinesAreCaptured) {
  const auto r = run_capture({"sh", "-c", "printf 'first\\nlast'; printf 'no newline' >&2"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.out, "first\nlast");
  EXPECT_EQ(r.err, "no newline");
}

TEST(Process, ExitCodeIsReported) {
  const auto r = run_capture({"sh", "-c", "exit 7"});
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.status.code, 7);
  EXPECT_EQ(r.status.signal, 0);
  EXPECT_EQ(r.status.shell_code(), 7);
  EXPECT_EQ(r.status.describe(), "exit code 7");
}

TEST(Process, DeathBySignalIsReported) {
  const auto r = run_capture({"sh", "-c", "kill -9 $$"});
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.status.code, -1);
  EXPECT_EQ(r.status.signal, SIGKILL);
  EXPECT_EQ(r.status.shell_code(), 128 + SIGKILL);
  EXPECT_THAT(r.status.describe(), StartsWith("killed by signal 9"));
}

// The program and its background child: both get SIGTERM when the timeout passes.
TEST(Process, TimeoutEndsTheWholeProcessGroup) {
  const auto r = run_capture({"sh", "-c", "sleep 300 & echo $!; wait"}, {}, /*timeout_s=*/2, /*grace_s=*/5);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status.signal, SIGTERM);
  ASSERT_THAT(r.out, EndsWith("\n"));
  EXPECT_TRUE(ends_soon(std::stoi(r.out), "sleep"));
}

// SIGTERM ignored by the program and its child: SIGKILL to the group after the grace.
TEST(Process, IgnoredSigtermIsFollowedBySigkill) {
  const auto r = run_capture({"sh", "-c", "trap '' TERM; sleep 300 & echo $!; wait"}, {}, /*timeout_s=*/2,
                             /*grace_s=*/0.5);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.status.signal, SIGKILL);
  ASSERT_THAT(r.out, EndsWith("\n"));
  EXPECT_TRUE(ends_soon(std::stoi(r.out), "sleep"));
}

// The program exits at once; its background child holds stdout open and would run on.
TEST(Process, ChildLeftBehindIsEndedWithTheProgram) {
  const auto r = run_capture({"sh", "-c", "sleep 300 & echo $!"}, {}, /*timeout_s=*/60);
  EXPECT_TRUE(r.ok()) << r.status.describe();
  EXPECT_FALSE(r.timed_out);
  ASSERT_THAT(r.out, EndsWith("\n"));
  EXPECT_TRUE(ends_soon(std::stoi(r.out), "sleep"));
}

TEST(Process, StdinIsDevNullByDefault) {
  const auto r = run_capture({"cat"}, {}, /*timeout_s=*/60);
  EXPECT_TRUE(r.ok());
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.out, "");
}

TEST(Process, StdinFromAStringLargerThanAPipe) {
  std::string data;
  for (int i = 0; data.size() < (1u << 20); ++i) data += std::to_string(i) + "\n";
  ProcessOptions o;
  o.stdin_data = data;
  o.max_capture = 2u << 20;
  const auto r = run_capture({"cat"}, o, /*timeout_s=*/60);
  ASSERT_TRUE(r.ok()) << r.status.describe();
  EXPECT_EQ(r.out.size(), data.size());
  EXPECT_TRUE(r.out == data);
}

// Writing to a child that never reads its stdin must not raise SIGPIPE here.
TEST(Process, StdinNotReadByTheChildIsDropped) {
  ProcessOptions o;
  o.stdin_data = std::string(1u << 20, 'x');
  const auto r = run_capture({"true"}, o, /*timeout_s=*/60);
  EXPECT_TRUE(r.ok()) << r.status.describe();
}

TEST(Process, CaptureIsBoundedAndTheChildIsNotBlocked) {
  ProcessOptions o;
  o.max_capture = 1000;
  const auto r = run_capture({"head", "-c", "1000000", "/dev/zero"}, o, /*timeout_s=*/60);
  EXPECT_TRUE(r.ok()) << r.status.describe();
  EXPECT_EQ(r.out.size(), 1000u);
}

TEST(Process, WorkingDirectoryAndEnvironment) {
  TempDir d;
  ProcessOptions o;
  o.cwd = d.path.string();
  o.env = {{"DDPBENCH_TEST_VALUE", "a b;c 'd'"}};
  const auto r = run_capture({"sh", "-c", "pwd -P; printf %s \"$DDPBENCH_TEST_VALUE\"; printf %s \"$PATH\" >&2"}, o);
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_EQ(r.out, fs::canonical(d.path).string() + "\na b;c 'd'");
  EXPECT_FALSE(r.err.empty());  // the rest of this process's environment is there too
}

TEST(Process, ForwardedLinesGetThePrefix) {
  TempDir d;
  ProcessOptions o;
  o.stdout_mode = OutputMode::kForward;
  o.prefix = "[x] ";
  CaptureResult r;
  const std::string out = capture_fd(1, d.path / "out", [&] { r = run_capture({"printf", "one\ntwo"}, o); });
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(out, "[x] one\n[x] two\n");  // the unterminated last line too, with a newline
  EXPECT_EQ(r.out, "");
}

TEST(Process, UnstartableProgramsThrowNamingThem) {
  try {
    run_capture({"ddpbench-no-such-program"});
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot start 'ddpbench-no-such-program': not found on PATH");
  }
  try {
    run_capture({"/nonexistent/prog"});
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot start '/nonexistent/prog'"));
  }
  try {
    ProcessOptions o;
    o.cwd = "/nonexistent-dir";
    run_capture({"true"}, o);
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot start 'true' in '/nonexistent-dir'"));
  }
  EXPECT_THROW(run_capture({}), std::invalid_argument);
}

TEST(Process, FindProgramSearchesPath) {
  const std::string sh = find_program("sh");
  EXPECT_THAT(sh, StartsWith("/"));
  EXPECT_THAT(sh, EndsWith("/sh"));
  EXPECT_EQ(find_program("ddpbench-no-such-program"), "");
  EXPECT_EQ(find_program("/bin/sh"), "/bin/sh");
  EXPECT_EQ(find_program("/etc/passwd"), "");  // not executable
  EXPECT_EQ(find_program("/tmp"), "");         // a directory
}

// An exception between start() and the end (spawn_local_ranks's start-up) must not leave
// a child or its own children running.
TEST(Process, SupervisorEndsItsGroupsWhenDestroyed) {
  TempDir d;
  const auto file = d.path / "child";
  pid_t leader = -1, child = -1;
  {
    Supervisor s(5);
    s.start({"sh", "-c", "sleep 300 & echo $! > '" + file.string() + "'; wait"});
    leader = s.pid(0);
    child = read_pid(file);
    ASSERT_GT(child, 0);
    EXPECT_TRUE(starts_soon(child, "sleep"));
  }
  EXPECT_TRUE(ends_soon(child, "sleep"));
  EXPECT_FALSE(running(leader, "sh"));
}

TEST(Process, SupervisorReportsEachExitOnce) {
  Supervisor s(5);
  s.start({"sh", "-c", "exit 3"});
  s.start({"true"});
  std::vector<std::size_t> seen;
  for (int i = 0; s.running() && i < 1200; ++i)  // 60 s at most
    for (std::size_t k : s.step(0.05)) seen.push_back(k);
  ASSERT_FALSE(s.running());
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_NE(seen[0], seen[1]);
  EXPECT_EQ(s.status(0).code, 3);
  EXPECT_TRUE(s.status(1).success());
}

}  // namespace
}  // namespace ddpbench
