// Helpers the end-to-end tests of the ddpbench binary (tests/e2e/test_cli*.cpp) share.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <set>
#include <stdexcept>

#include "common/testutil.hpp"
#include "core/launch/spawn.hpp"
#include "core/result/result.hpp"

namespace ddpbench::cli_tests {

using ::testing::HasSubstr;
using ::testing::Not;

using testutil::bad_input_problem;
using testutil::count_lines;
using testutil::Outcome;
using testutil::run;
using testutil::slurp;
using testutil::TempDir;

inline const std::string kBin = DDPBENCH_BINARY;
// The smallest sweep worth running: 2 ranks, the tiny model (testutil kTinyArgs).
inline const std::string kTiny = " run " + testutil::kTinyArgs + " --warmup 1 --iters 3";

}  // namespace ddpbench::cli_tests
