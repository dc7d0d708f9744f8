// A layer violation for tests/CMakeLists.txt's Layers.* tests: util may not use result.
#pragma once
#include "core/util/fine.hpp"
#include "core/result/row.hpp"
