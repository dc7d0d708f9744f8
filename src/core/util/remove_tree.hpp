#pragma once
// Removal of a temporary directory tree.
#include <ftw.h>
#include <sys/stat.h>

#include <cstdio>
#include <string>

namespace ddpbench {

/// Removes the directory tree at `path` (a temporary directory this process made), not following
/// symbolic links (nftw(3) with FTW_DEPTH | FTW_PHYS, then remove(3) on each entry); best effort,
/// never throws. Not std::filesystem::remove_all: a pip wheel's libtorch.so exports its own copy
/// of it, a binary can bind to that copy, and on torch 2.11 that copy jumps to address 0.
inline void remove_tree(const std::string& path) noexcept {
  if (path.empty()) return;
  (void)::nftw(
      path.c_str(),
      [](const char* p, const struct stat*, int, struct FTW*) {
        (void)::remove(p);
        return 0;
      },
      16, FTW_DEPTH | FTW_PHYS);
}

}  // namespace ddpbench
