// Where a built or installed ddpbench finds its data (plans, Slurm templates, baselines), found
// from the running executable's own path, so an install can be moved to any prefix.
#pragma once

#include <string>

namespace ddpbench {

/// Absolute path of the running executable (/proc/self/exe). Throws std::runtime_error when the
/// link cannot be read.
std::string self_exe_path();

/// ddpbench's data folder for the executable at `exe_path`, the first of these that is a folder:
/// $DDPBENCH_DATA_DIR; `<exe's folder>/share/ddpbench` (the build tree: build/ddpbench and
/// build/share/ddpbench); `<exe's folder>/../share/ddpbench` (an install: `cmake --install build
/// --prefix P` puts the binary in P/bin and the data in P/share/ddpbench). Lexically
/// normalised; "" when none exists.
std::string data_dir(const std::string& exe_path);

/// `relative` (e.g. "plans/quick.yaml") under data_dir(self_exe_path()) when that file exists,
/// else "".
std::string find_data_file(const std::string& relative);

/// The plan a `validate PLAN` argument names: the path as given when it is a file; else, for a
/// relative path, the installed file of that name (`plans/quick.yaml`, or a bare `quick` or
/// `quick.yaml` for plans/quick.yaml) under the data folder; else the argument unchanged (its
/// reader then says it cannot be read).
std::string resolve_plan_path(const std::string& arg);

}  // namespace ddpbench
