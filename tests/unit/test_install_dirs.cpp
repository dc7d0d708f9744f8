// Where ddpbench finds its data (core/util/install_dirs): the install and build-tree layouts,
// $DDPBENCH_DATA_DIR, and validate's plan names, on folders made here.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/testutil.hpp"
#include "core/util/install_dirs.hpp"

namespace ddpbench {
namespace {

namespace fs = std::filesystem;

TEST(InstallDirs, DataFolderOfAnInstallAndOfTheBuildTree) {
  testutil::TempDir d;
  ::unsetenv("DDPBENCH_DATA_DIR");
  fs::create_directories(d.path / "prefix" / "bin");
  fs::create_directories(d.path / "prefix" / "share" / "ddpbench");
  EXPECT_EQ(data_dir((d.path / "prefix" / "bin" / "ddpbench").string()),
            (d.path / "prefix" / "share" / "ddpbench").string());
  fs::create_directories(d.path / "build" / "share" / "ddpbench");
  EXPECT_EQ(data_dir((d.path / "build" / "ddpbench").string()), (d.path / "build" / "share" / "ddpbench").string());
  EXPECT_EQ(data_dir((d.path / "elsewhere" / "ddpbench").string()), "");
  EXPECT_EQ(data_dir(""), "");
  ::setenv("DDPBENCH_DATA_DIR", (d.path / "build" / "share" / "ddpbench").c_str(), 1);
  EXPECT_EQ(data_dir((d.path / "prefix" / "bin" / "ddpbench").string()), (d.path / "build" / "share" / "ddpbench").string());
  ::setenv("DDPBENCH_DATA_DIR", (d.path / "no-such-folder").c_str(), 1);  // not a folder: ignored
  EXPECT_EQ(data_dir((d.path / "prefix" / "bin" / "ddpbench").string()), (d.path / "prefix" / "share" / "ddpbench").string());
  ::unsetenv("DDPBENCH_DATA_DIR");
}

TEST(InstallDirs, PlanNamesResolveToTheInstalledPlansAndALocalFileWins) {
  testutil::TempDir d;
  fs::create_directories(d.path / "data" / "plans");
  std::ofstream(d.path / "data" / "plans" / "quick.yaml") << "x";
  fs::create_directories(d.path / "cwd" / "plans");
  ::setenv("DDPBENCH_DATA_DIR", (d.path / "data").c_str(), 1);
  const fs::path old = fs::current_path();
  fs::current_path(d.path / "cwd");
  const std::string installed = (d.path / "data" / "plans" / "quick.yaml").string();
  EXPECT_EQ(resolve_plan_path("quick"), installed);
  EXPECT_EQ(resolve_plan_path("quick.yaml"), installed);
  EXPECT_EQ(resolve_plan_path("plans/quick.yaml"), installed);
  EXPECT_EQ(resolve_plan_path("nope"), "nope");                         // left to the reader's error
  EXPECT_EQ(resolve_plan_path("other/quick.yaml"), "other/quick.yaml");  // a folder of its own: not a name
  EXPECT_EQ(resolve_plan_path("/abs/quick.yaml"), "/abs/quick.yaml");
  std::ofstream("plans/quick.yaml") << "local";
  EXPECT_EQ(resolve_plan_path("plans/quick.yaml"), "plans/quick.yaml");  // a file here is taken as given
  fs::current_path(old);
  ::unsetenv("DDPBENCH_DATA_DIR");
}

}  // namespace
}  // namespace ddpbench
