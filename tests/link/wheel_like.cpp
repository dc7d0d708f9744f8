// Plays the part of a PyTorch pip wheel's libtorch.so: a shared library that exports its own
// copy of a libstdc++ function, std::filesystem::remove_all(const path&, error_code&). This
// copy removes nothing and answers kWheelCopyAnswer, so a program whose call it receives can
// tell (tests/link/probe.cpp).
#include <cstdint>
#include <filesystem>
#include <system_error>

namespace std::filesystem {
std::uintmax_t remove_all(const path& /*p*/, std::error_code& ec) {
  ec.clear();
  return 424242;  // kWheelCopyAnswer in probe.cpp
}
}  // namespace std::filesystem

// A function of the library's own, so a program that calls it keeps the library in its
// DT_NEEDED list under --as-needed (tests/link/audit_probe.cpp: the binding audit's stand-in).
extern "C" int ddpbench_wheel_like_marker() { return 7; }
