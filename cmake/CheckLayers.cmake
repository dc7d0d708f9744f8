# Enforces the folder layering of src/ (run by the build, before any library compiles).
#
#   cmake -DSRC=<repository>/src -DRULES=<file> -P cmake/CheckLayers.cmake
#
# RULES has one line per layer, written by ddpbench_layer() in CMakeLists.txt:
#   <folder>|<allowed folder>,<allowed folder>,...|<torch-free: 1 or 0>
# Every `#include "a/b/c.hpp"` in src/<folder>/*.{hpp,cpp} must name a header of an allowed
# folder (the folder itself and, transitively, the layers it depends on); a torch-free layer may
# not include <torch/...>, <c10/...>, <ATen/...> or <caffe2/...>. Any violation stops the build
# with one line per offending include naming the file, the header and what the layer may use.
# A call to std::filesystem::remove_all is refused the same way (use remove_tree).
cmake_minimum_required(VERSION 3.18)
if(NOT SRC OR NOT RULES)
  message(FATAL_ERROR "CheckLayers.cmake: set -DSRC=<src folder> -DRULES=<rules file>")
endif()
file(STRINGS "${RULES}" rules)
set(errors "")
set(checked 0)
foreach(rule IN LISTS rules)
  string(REPLACE "|" ";" parts "${rule}")
  list(LENGTH parts n)
  if(NOT n EQUAL 3)
    message(FATAL_ERROR "CheckLayers.cmake: malformed rule '${rule}' in ${RULES}")
  endif()
  list(GET parts 0 folder)
  list(GET parts 1 allowed)
  list(GET parts 2 torch_free)
  string(REPLACE "," ";" allowed "${allowed}")
  file(GLOB files "${SRC}/${folder}/*.hpp" "${SRC}/${folder}/*.cpp")
  foreach(f IN LISTS files)
    math(EXPR checked "${checked} + 1")
    # A call the wheel's libtorch.so answers with its own copy, which jumps to address 0.
    file(STRINGS "${f}" banned REGEX "std::filesystem::remove_all[ \t]*\\(")
    if(banned)
      get_filename_component(name "${f}" NAME)
      list(APPEND errors "src/${folder}/${name} calls std::filesystem::remove_all: use remove_tree from core/util/remove_tree.hpp (a pip wheel's libtorch.so exports a copy of remove_all that crashes)")
    endif()
    file(STRINGS "${f}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
    foreach(line IN LISTS includes)
      if(line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)/[^/\"]+\"")
        set(dir "${CMAKE_MATCH_1}")
        if(NOT dir IN_LIST allowed)
          string(REPLACE ";" ", " may "${allowed}")
          string(REGEX REPLACE ".*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" header "${line}")
          get_filename_component(name "${f}" NAME)
          list(APPEND errors "src/${folder}/${name} includes ${header}: ${folder} may use only ${may} (move the code, or change its layer's DEPS in CMakeLists.txt)")
        endif()
      elseif(torch_free AND line MATCHES "#[ \t]*include[ \t]*<(torch|c10|ATen|caffe2)/")
        get_filename_component(name "${f}" NAME)
        list(APPEND errors "src/${folder}/${name} includes a libtorch header: ${folder} must stay torch-free (move the code to engine/)")
      endif()
    endforeach()
  endforeach()
endforeach()
if(errors)
  foreach(e IN LISTS errors)
    message(NOTICE "layering: ${e}")  # one unwrapped line each
  endforeach()
  list(LENGTH errors n)
  message(FATAL_ERROR "layering violated by ${n} include(s), listed above")
endif()
message(STATUS "layering: ${checked} files follow the rules")
