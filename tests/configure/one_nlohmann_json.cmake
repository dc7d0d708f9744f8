# Two nlohmann/json versions must never reach one binary: when the linked torch ships its own
# (a pip wheel's include/nlohmann), every target compiles against that copy, and a build told to
# use another one stops at configure with one line. Checked on a stand-in torch whose
# nlohmann/json.hpp says version 3.99.7 (no real torch ships it, so it cannot be confused with
# the system's or the pinned 3.11.3):
#  1. configure: dependencies.txt names torch's copy, and for every compile command of
#     ddpbench's own files (its sources and unity batches) in compile_commands.json, the first include folder holding nlohmann/json.hpp (its -I/-isystem
#     folders in order, then the compiler's own) is torch's copy;
#  2. configure with -Dnlohmann_json_DIR pointing elsewhere: it fails, saying why in one line.
#
#   cmake -DSRC=<repository> -DWORK=<scratch folder> [-DDEPS_DIR=<DDPBENCH_DEPS_DIR>] -P one_nlohmann_json.cmake
cmake_minimum_required(VERSION 3.19)
foreach(v SRC WORK)
  if(NOT ${v})
    message(FATAL_ERROR "one_nlohmann_json.cmake: set -D${v}=...")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}")
set(torch "${WORK}/fake-torch")
file(WRITE "${torch}/share/cmake/Torch/TorchConfig.cmake" [[
# A stand-in libtorch: include folders only (configure-only test).
get_filename_component(_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(TORCH_INCLUDE_DIRS "${_prefix}/include")
set(TORCH_LIBRARIES "")
set(Torch_FOUND TRUE)
]])
file(WRITE "${torch}/include/nlohmann/json.hpp" [[
#pragma once
#define NLOHMANN_JSON_VERSION_MAJOR 3
#define NLOHMANN_JSON_VERSION_MINOR 99
#define NLOHMANN_JSON_VERSION_PATCH 7
]])
set(args -S "${SRC}" -G Ninja -DCMAKE_PREFIX_PATH=${torch} -DDDPBENCH_BUILD_TESTS=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
         -DDDPBENCH_UNITY=OFF)  # one compile command per source file
if(DEPS_DIR)
  list(APPEND args -DDDPBENCH_DEPS_DIR=${DEPS_DIR})
endif()

# 1. torch's copy, for every target.
execute_process(COMMAND "${CMAKE_COMMAND}" ${args} -B "${WORK}/build" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configure against the stand-in torch failed:\n${out}\n${err}")
endif()
file(STRINGS "${WORK}/build/dependencies.txt" line REGEX "^nlohmann_json[|]")
if(NOT line MATCHES "^nlohmann_json[|]3[.]99[.]7[|]the linked torch[|]")
  message(FATAL_ERROR "nlohmann_json did not come from the linked torch: '${line}'")
endif()
file(REAL_PATH "${torch}/include/nlohmann/json.hpp" want)
file(READ "${WORK}/build/compile_commands.json" cc)
string(JSON n LENGTH "${cc}")
math(EXPR last "${n} - 1")
set(checked 0)
foreach(i RANGE ${last})
  string(JSON cmd GET "${cc}" ${i} command)
  string(JSON file GET "${cc}" ${i} file)
  if(NOT file MATCHES "^${SRC}/(src|tests)/" AND NOT file MATCHES "/CMakeFiles/ddpbench[a-z_]*[.]dir/")
    continue()  # a fetched library's own sources (fmt's format.cc): not ddpbench's files
  endif()
  separate_arguments(tokens UNIX_COMMAND "${cmd}")
  set(dirs "")
  set(next "")
  foreach(t IN LISTS tokens)
    if(next)
      list(APPEND dirs "${t}")
      set(next "")
    elseif(t STREQUAL "-I" OR t STREQUAL "-isystem")
      set(next 1)
    elseif(t MATCHES "^-I(.+)")
      list(APPEND dirs "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  list(APPEND dirs /usr/local/include /usr/include)  # the compiler's own, last
  set(seen "")
  foreach(d IN LISTS dirs)
    if(NOT seen AND EXISTS "${d}/nlohmann/json.hpp")
      file(REAL_PATH "${d}/nlohmann/json.hpp" seen)
    endif()
  endforeach()
  if(NOT seen STREQUAL want)
    message(FATAL_ERROR "${file} would include nlohmann/json.hpp from '${seen}', not the linked torch's ${want}")
  endif()
  math(EXPR checked "${checked} + 1")
endforeach()
if(checked LESS 20)
  message(FATAL_ERROR "only ${checked} compile commands: the stand-in configure built too little to tell")
endif()

# 2. Another copy asked for: configure stops, with the reason.
execute_process(COMMAND "${CMAKE_COMMAND}" ${args} -B "${WORK}/build-other" -Dnlohmann_json_DIR=${WORK}/elsewhere
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "configure accepted a second nlohmann/json beside the linked torch's")
endif()
if(NOT err MATCHES "the linked torch ships its own [(]3[.]99[.]7")
  message(FATAL_ERROR "configure failed, but not for the second nlohmann/json:\n${err}")
endif()
message(STATUS "one nlohmann/json: all ${checked} compile commands see the linked torch's copy; a second one is refused")
