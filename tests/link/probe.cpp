// Which library answers a program's std::filesystem::remove_all when a library linked before
// libstdc++ exports a copy of it (wheel_like.cpp, as PyTorch's pip wheels do).
//
//   link_order_probe             exit 0: libstdc++ answered (the folder and its file are gone,
//                                        2 entries removed); exit 1: the wheel's copy answered
//                                        (it returns 424242 and removes nothing); 2: set-up error.
// CMake links it twice: once with ddpbench_libstdcxx_first (must exit 0), once without it
// (must exit 1: the lookup order this guards against is real on this machine).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace fs = std::filesystem;

int main() {
  constexpr std::uintmax_t kWheelCopyAnswer = 424242;
  const fs::path dir = fs::temp_directory_path() / ("ddpbench-link-probe-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "probe: cannot create %s: %s\n", dir.c_str(), ec.message().c_str());
    return 2;
  }
  std::ofstream(dir / "file") << "x";
  const std::uintmax_t removed = fs::remove_all(dir, ec);
  if (removed == kWheelCopyAnswer) {
    std::printf("probe: the wheel-like library's remove_all answered (libstdc++ is looked up after it)\n");
    ::unlink((dir / "file").c_str());
    ::rmdir(dir.c_str());
    return 1;
  }
  const bool gone = !fs::exists(dir);
  std::printf("probe: libstdc++'s remove_all answered: %ju entries removed, folder %s\n", removed,
              gone ? "gone" : "still there");
  return removed == 2 && gone && !ec ? 0 : 2;
}
