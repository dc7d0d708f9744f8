// The binding audit's stand-in for a program linked to a PyTorch wheel (scripts/binding-audit.py):
// it imports std::filesystem::remove_all, which libstdc++ and the wheel-like library
// (wheel_like.cpp) both define, and a function of the wheel-like library's own, so the library
// is loaded whatever the link order. Linked with libstdc++ first the audit must pass; without,
// it must name remove_all as bound to the wheel-like library.
#include <cstdio>
#include <filesystem>
#include <system_error>

extern "C" int ddpbench_wheel_like_marker();

int main(int argc, char**) {
  std::error_code ec;
  if (argc > 1) std::filesystem::remove_all("/nonexistent-ddpbench-audit-probe", ec);  // never run: imported only
  std::printf("audit probe: marker %d\n", ddpbench_wheel_like_marker());
  return 0;
}
