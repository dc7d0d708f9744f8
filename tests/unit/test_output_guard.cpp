// The one output guard (check_outputs_apart), the name checks of check_writable and
// check_result_target, and the writer that never replaces a file (Existing::kKeep).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/testutil.hpp"
#include "core/result/result.hpp"
#include "core/util/errors.hpp"

namespace ddpbench {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using testutil::slurp;
using testutil::TempDir;
using testutil::usage_error;

void put(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

TEST(OutputGuard, AnOutputNamingAnInputByAnyPathIsRefusedNamingBoth) {
  TempDir dir;
  const fs::path in = dir.path / "r.json";
  put(in, "input");
  fs::create_directory(dir.path / "sub");
  for (const fs::path& out :
       {in, dir.path / "." / "r.json", dir.path / "sub" / ".." / "r.json", fs::path(dir.path.string() + "//r.json")}) {
    const std::string msg = usage_error([&] {
      check_outputs_apart({{"result file", in.string()}}, {{"--output", out.string()}});
    });
    EXPECT_THAT(msg, AllOf(HasSubstr("--output '" + out.string() + "' is the input result file '" + in.string()),
                           HasSubstr("pass another --output path")))
        << out;
  }
  EXPECT_EQ(slurp(in), "input");
}

TEST(OutputGuard, ARelativePathIsTheSameFileAsItsAbsolutePath) {
  TempDir dir;
  put(dir.path / "r.json", "input");
  const fs::path cwd = fs::current_path();
  fs::current_path(dir.path);
  const std::string msg = usage_error([&] {
    check_outputs_apart({{"result file", "r.json"}}, {{"--html", (dir.path / "r.json").string()}});
  });
  fs::current_path(cwd);
  EXPECT_THAT(msg, HasSubstr("is the input result file 'r.json'"));
}

TEST(OutputGuard, AHardLinkIsTheSameFileByInode) {
  TempDir dir;
  const fs::path in = dir.path / "r.json", link = dir.path / "h.json";
  put(in, "input");
  fs::create_hard_link(in, link);
  EXPECT_THAT(usage_error([&] {
                check_outputs_apart({{"--comm", in.string()}}, {{"--json", link.string()}});
              }),
              AllOf(HasSubstr("--json '" + link.string() + "' is the input --comm"), HasSubstr("a hard link")));
}

TEST(OutputGuard, ALinkedDirectoryIsResolved) {
  TempDir dir;
  fs::create_directory(dir.path / "real");
  put(dir.path / "real" / "r.json", "input");
  fs::create_directory_symlink(dir.path / "real", dir.path / "alias");
  // The output does not exist under the alias name either way: the path, resolved, is the input's.
  EXPECT_THAT(usage_error([&] {
                check_outputs_apart({{"result file", (dir.path / "real" / "r.json").string()}},
                                    {{"--output", (dir.path / "alias" / "r.json").string()}});
              }),
              HasSubstr("is the input result file"));
  // A new file in the same directory is not the input.
  EXPECT_EQ(usage_error([&] {
              check_outputs_apart({{"result file", (dir.path / "real" / "r.json").string()}},
                                  {{"--output", (dir.path / "alias" / "report.txt").string()}});
            }),
            "");
}

TEST(OutputGuard, TwoOutputsThatAreOneFileAreRefused) {
  TempDir dir;
  const std::string out = (dir.path / "out").string();
  EXPECT_THAT(usage_error([&] {
                check_outputs_apart({}, {{"--output", out}, {"--html", dir.path.string() + "/./out"}});
              }),
              AllOf(HasSubstr("--output '" + out + "' and --html"), HasSubstr("are one file")));
  EXPECT_EQ(usage_error([&] { check_outputs_apart({}, {{"--output", out}, {"--html", out + ".html"}}); }), "");
}

TEST(OutputGuard, TheWriterRefusesARememberedInputAndLeavesItAsItWas) {
  TempDir dir;
  const fs::path in = dir.path / "plots.gp", other = dir.path / "other.gp";
  put(in, "input");
  check_outputs_apart({{"result file", in.string()}}, {});
  // What a command writes into a directory (report --plots) goes through these.
  EXPECT_THAT(usage_error([&] { check_writable(in.string(), "--plots"); }),
              HasSubstr("--plots '" + in.string() + "' is the input result file"));
  EXPECT_THAT(usage_error([&] { write_file_atomic(in.string(), "replaced"); }), HasSubstr("is the input result file"));
  const std::string tmp = temp_file_next_to(in.string());
  EXPECT_THAT(usage_error([&] { commit_file(tmp, in.string()); }), HasSubstr("is the input result file"));
  EXPECT_FALSE(fs::exists(tmp));
  EXPECT_EQ(slurp(in), "input");
  write_file_atomic(other.string(), "written");  // anything else is written
  EXPECT_EQ(slurp(other), "written");
}

TEST(OutputGuard, ANameTooLongForTheTemporaryFileIsRefusedBeforeWriting) {
  TempDir dir;
  const long name_max = ::pathconf(dir.path.c_str(), _PC_NAME_MAX);
  ASSERT_GT(name_max, 20);
  // Fits with ".tmp.XXXXXX" (11 bytes) and no more.
  const std::string fits = (dir.path / std::string(static_cast<size_t>(name_max) - 11, 'a')).string();
  const std::string too_long = (dir.path / std::string(static_cast<size_t>(name_max) - 10, 'a')).string();
  EXPECT_EQ(usage_error([&] { check_writable(fits, "--output"); }), "");
  EXPECT_THAT(usage_error([&] { check_writable(too_long, "--output"); }),
              AllOf(HasSubstr("--output '" + too_long + "'"), HasSubstr(".tmp.XXXXXX"), HasSubstr("(NAME_MAX)"),
                    HasSubstr("pass a shorter name")));
  EXPECT_TRUE(fs::is_empty(dir.path));
}

TEST(OutputGuard, AResultNameTooLongForItsPartialIsRefusedBeforeAnyRow) {
  TempDir dir;
  // 240 bytes fit with the writer's ".tmp.XXXXXX" (251), not with ".partial.tmp.XXXXXX" (259).
  const std::string path = (dir.path / (std::string(235, 'a') + ".json")).string();
  EXPECT_EQ(usage_error([&] { check_writable(path, "--json"); }), "");
  EXPECT_THAT(usage_error([&] { check_result_target(path, false); }),
              AllOf(HasSubstr("--json '" + path + "'"), HasSubstr(".partial.tmp.XXXXXX"), HasSubstr("NAME_MAX")));
  EXPECT_THAT(usage_error([&] { check_result_target(path, true); }), HasSubstr("NAME_MAX"));  // --overwrite too
  EXPECT_TRUE(fs::is_empty(dir.path));
}

TEST(OutputGuard, APathThatIsNotUtf8IsRefused) {
  TempDir dir;
  const std::string bad = (dir.path / "r\xff.json").string();
  EXPECT_THAT(usage_error([&] { check_writable(bad, "--json"); }),
              AllOf(HasSubstr("--json '"), HasSubstr("is not valid UTF-8"), HasSubstr("pass a UTF-8 name")));
  EXPECT_THAT(usage_error([&] { check_result_target(bad, false); }), HasSubstr("is not valid UTF-8"));
  // Cut inside a character: "é" is C3 A9.
  EXPECT_THAT(usage_error([&] { check_writable((dir.path / "r\xc3.json").string(), "--html"); }),
              HasSubstr("is not valid UTF-8"));
  EXPECT_EQ(usage_error([&] { check_writable((dir.path / "r\xc3\xa9.json").string(), "--json"); }), "");
  EXPECT_TRUE(fs::is_empty(dir.path));
}

TEST(OutputGuard, KeepNeverReplacesAFileThereBeforeOrAppearingBeforeTheRename) {
  TempDir dir;
  const fs::path path = dir.path / "race.json";
  write_file_atomic(path.string(), "new", Existing::kKeep);  // nothing there: written
  EXPECT_EQ(slurp(path), "new");
  try {
    write_file_atomic(path.string(), "newer", Existing::kKeep);
    FAIL() << "an existing file was replaced";
  } catch (const TargetExists& e) {
    EXPECT_EQ(e.path(), path.string());
  }
  EXPECT_EQ(slurp(path), "new");
  // A file that appears after the temporary file was made: the rename itself refuses it.
  fs::remove(path);
  const std::string tmp = temp_file_next_to(path.string());
  put(tmp, "the run's result");
  put(path, "{\"precious\":1}");
  EXPECT_THROW(commit_file(tmp, path.string(), Existing::kKeep), TargetExists);
  EXPECT_EQ(slurp(path), "{\"precious\":1}");
  EXPECT_FALSE(fs::exists(tmp));
  // Existing::kReplace (--overwrite) replaces it.
  const std::string tmp2 = temp_file_next_to(path.string());
  put(tmp2, "the run's result");
  commit_file(tmp2, path.string(), Existing::kReplace);
  EXPECT_EQ(slurp(path), "the run's result");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 1);
}

}  // namespace
}  // namespace ddpbench
