// Identity of this build (generated at build time by cmake/GitVersion.cmake).
#pragma once

namespace ddpbench {

/// Tool version "MAJOR.MINOR.PATCH" (the project version in CMakeLists.txt).
const char* tool_version();
/// Short git commit of the source tree, or "unknown" outside a git checkout.
const char* git_sha();
/// True when tracked files differed from the commit at build time.
bool git_dirty();

}  // namespace ddpbench
