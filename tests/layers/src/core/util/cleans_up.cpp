// Fixture for Layers.RemoveAllIsRefused: a call the build refuses.
#include <filesystem>
#include <system_error>

void clean_up(const std::filesystem::path& p) {
  std::error_code ec;
  std::filesystem::remove_all(p, ec);
}
