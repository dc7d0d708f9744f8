// A test that runs ranks over Gloo, in a build whose linked torch ships no gloo headers (PyTorch's
// pip wheels: ddpbench then has no Gloo backend, engine/dist/process_group.cpp), is skipped with
// its reason, shown as "[  SKIPPED ]" and by ctest as Skipped, never as a pass.
#pragma once

#include <gtest/gtest.h>

#include "engine/dist/process_group.hpp"

#define DDPBENCH_SKIP_WITHOUT_GLOO()                                                              \
  do {                                                                                            \
    if (!::ddpbench::backend_available(::ddpbench::BackendKind::kGloo))                           \
      GTEST_SKIP() << "this build has no Gloo backend (the linked torch ships no gloo headers)"; \
  } while (0)
