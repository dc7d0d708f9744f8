// Helpers shared by the test suites: temporary directories, files, child processes.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/util/errors.hpp"

#include "core/util/remove_tree.hpp"

namespace ddpbench::testutil {

/// The model, image and batch of the end-to-end tests' smallest runs: squeezenet1_0 (1.25 M
/// parameters) on 2 images of 32x32. On the 2-core CI machine a 2-rank `run` of it costs about
/// 5 s of CPU where resnet18's (11.7 M parameters, whose optimizer step and allreduce dominate
/// at this size) cost about 23 s. Tests that need a ResNet's structure name resnet18 themselves.
inline constexpr const char* kTinyModel = "squeezenet1_0";
inline const std::string kTinyArgs = std::string("--model ") + kTinyModel + " --image-size 32 --batch-size 2";

/// The message of the UsageError `fn` throws, or "" when it throws none.
template <typename F>
std::string usage_error(F fn) {
  try {
    fn();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

/// A fresh directory under /tmp, removed with everything in it at scope exit.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char tmpl[] = "/tmp/ddpbench-test-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { remove_tree(path.string()); }  // not remove_all: see core/util/remove_tree.hpp
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

/// Whole content of a file ("" when it does not exist).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Exit code and output of a finished command.
struct Outcome {
  int code = -1;
  std::string out, err;
};

/// Runs `cmd` through /bin/sh with OMP_NUM_THREADS=1 (ranks on a 2-core machine);
/// returns its exit code (128 + signal when killed), stdout and stderr.
inline Outcome run(const std::string& cmd) {
  TempDir d;
  const std::string full =
      "OMP_NUM_THREADS=1 " + cmd + " >" + (d.path / "out").string() + " 2>" + (d.path / "err").string();
  const int st = std::system(full.c_str());
  Outcome o;
  o.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  o.out = slurp(d.path / "out");
  o.err = slurp(d.path / "err");
  return o;
}

/// True when `prog` is on PATH (for skipping tests whose tool is not installed).
inline bool have(const std::string& prog) {
  return std::system(("command -v " + prog + " >/dev/null 2>&1").c_str()) == 0;
}

/// GoogleTest name generator for INSTANTIATE_TEST_SUITE_P over parameters that carry a
/// `name` member (letters, digits and '_' only, unique): cases read Suite/Test.Case/<name>
/// instead of an index, and ctest lists them by that name.
struct ParamName {
  template <typename Info>
  std::string operator()(const Info& info) const {
    return info.param.name;
  }
};

/// Number of newline characters in `s`.
inline size_t count_lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

/// What is wrong with `o` as the project's answer to bad input (exit code 2, exactly one
/// line on stderr, starting "ddpbench: error: " and containing `expect`), or "" when nothing.
/// Use as EXPECT_EQ(bad_input_problem(o, "..."), "").
inline std::string bad_input_problem(const Outcome& o, const std::string& expect) {
  std::string p;
  if (o.code != 2) p += "exit code " + std::to_string(o.code) + " instead of 2; ";
  if (count_lines(o.err) != 1) p += std::to_string(count_lines(o.err)) + " lines on stderr instead of 1; ";
  if (o.err.rfind("ddpbench: error: ", 0) != 0) p += "stderr does not start with 'ddpbench: error: '; ";
  if (o.err.find(expect) == std::string::npos) p += "stderr lacks '" + expect + "'; ";
  return p.empty() ? p : p + "stderr: " + o.err;
}

}  // namespace ddpbench::testutil
