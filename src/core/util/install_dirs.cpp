#include "core/util/install_dirs.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace ddpbench {

namespace fs = std::filesystem;

std::string self_exe_path() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("cannot find this program's path (/proc/self/exe)");
  return std::string(buf, static_cast<size_t>(n));
}

std::string data_dir(const std::string& exe_path) {
  std::error_code ec;
  if (const char* e = std::getenv("DDPBENCH_DATA_DIR"); e && *e && fs::is_directory(e, ec))
    return fs::path(e).lexically_normal().string();
  if (exe_path.empty()) return "";
  const fs::path bin = fs::path(exe_path).parent_path();
  for (const fs::path& p : {bin / "share" / "ddpbench", bin / ".." / "share" / "ddpbench"})
    if (fs::is_directory(p, ec)) return p.lexically_normal().string();
  return "";
}

std::string find_data_file(const std::string& relative) {
  std::string exe;
  try {
    exe = self_exe_path();
  } catch (const std::runtime_error&) {
  }
  const std::string dir = data_dir(exe);
  if (dir.empty()) return "";
  std::error_code ec;
  const fs::path p = fs::path(dir) / relative;
  return fs::is_regular_file(p, ec) ? p.lexically_normal().string() : "";
}

std::string resolve_plan_path(const std::string& arg) {
  std::error_code ec;
  const fs::path p(arg);
  if (arg.empty() || fs::exists(p, ec) || p.is_absolute()) return arg;
  std::string found = find_data_file(arg);
  if (found.empty() && !p.has_parent_path()) {
    found = find_data_file("plans/" + arg);
    if (found.empty() && p.extension().empty()) found = find_data_file("plans/" + arg + ".yaml");
  }
  return found.empty() ? arg : found;
}

}  // namespace ddpbench
