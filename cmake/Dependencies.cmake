# The libraries ddpbench builds with besides libtorch and zlib: nlohmann/json, CLI11, fmt,
# yaml-cpp (validate's plan files) and GoogleTest. Each is taken, in this order, from
#   1. the linked torch, for the header-only ones a PyTorch wheel ships next to its own headers
#      (nlohmann/json, fmt): torch's headers include them, so every target must compile against
#      that one copy, or one binary would hold two versions of the library;
#   2. the system (find_package in CONFIG mode: Debian's -dev packages, a conda or spack prefix);
#   3. its release archive, pinned by URL and SHA-256 (CMake FetchContent, as nvbench and
#      google-benchmark pin theirs). Without the internet: DDPBENCH_DEPS_DIR (below), or CMake's own
#      FETCHCONTENT_SOURCE_DIR_<NAME> naming an unpacked source tree.
# Configure prints one line per library saying which it used; ${CMAKE_BINARY_DIR}/dependencies.txt
# keeps them (name, version, origin, include folder) for tests and bug reports.
include(FetchContent)
if(POLICY CMP0135)  # an archive's files get the time they are extracted (CMake 3.24+)
  cmake_policy(SET CMP0135 NEW)
endif()

set(DDPBENCH_DEPS_DIR "" CACHE PATH
    "Offline sources: a folder holding, per library, its pinned archive (the file name of its URL, \
checked against its SHA-256) or its unpacked source tree in a folder of the library's name \
(nlohmann_json, cli11, fmt, yaml_cpp, googletest); scripts/fetch-deps.sh DIR fills it on a machine with the internet")

# The pinned releases: <name> <version> <archive URL> <SHA-256 of the archive>. The SHA-256 are
# those the same URLs give in other projects' pins (bazel, Homebrew, conan) and, for
# nlohmann_json and googletest, of Debian's upstream source archives, which are the same bytes.
# scripts/fetch-deps.sh reads this table.
set(DDPBENCH_PINNED
  "nlohmann_json|3.11.3|https://github.com/nlohmann/json/archive/refs/tags/v3.11.3.tar.gz|0d8ef5af7f9794e3263480193c491549b2ba6cc74bb018906202ada498a79406"
  "cli11|2.4.1|https://github.com/CLIUtils/CLI11/archive/refs/tags/v2.4.1.tar.gz|73b7ec52261ce8fe980a29df6b4ceb66243bb0b779451dbd3d014cfec9fdbb58"
  "fmt|10.1.1|https://github.com/fmtlib/fmt/archive/refs/tags/10.1.1.tar.gz|78b8c0a72b1c35e4443a7e308df52498252d1cefc2b08c9a97bc9ee6cfe61f8b"
  "yaml_cpp|0.8.0|https://github.com/jbeder/yaml-cpp/archive/refs/tags/0.8.0.tar.gz|fbe74bbdcee21d656715688706da3c8becfd946d92cd44705cc6098bb23b3a16"
  "googletest|1.12.1|https://github.com/google/googletest/archive/refs/tags/release-1.12.1.tar.gz|81964fe578e9bd7c94dfdb09c8e4d6e6759e19967e397dbea48d1c10e45d0df2")

set(_ddpbench_deps_report "")

# ddpbench_dep_note(<name> <version> <origin> <include folder>): the configure line and the
# dependencies.txt entry.
function(ddpbench_dep_note name version origin include_dir)
  message(STATUS "ddpbench: ${name} ${version} from ${origin}")
  set(_ddpbench_deps_report "${_ddpbench_deps_report}${name}|${version}|${origin}|${include_dir}\n" PARENT_SCOPE)
endfunction()

# The archive's file name in DDPBENCH_DEPS_DIR: the last part of its URL, prefixed with the
# library's name where the URL's own name says only the version ("v3.11.3.tar.gz").
function(ddpbench_pinned_archive_name name url out)
  get_filename_component(file "${url}" NAME)
  set(${out} "${name}-${file}" PARENT_SCOPE)
endfunction()

# ddpbench_fetch_pinned(<name> [OPTIONS <VAR=VALUE>...] [TARGETS <target>...]): FetchContent_Declare
# + MakeAvailable of the pinned release, its own build options (VAR=VALUE) set first, the include
# folders of its TARGETS made system ones,
# from DDPBENCH_DEPS_DIR/<name>/ (a source tree), FETCHCONTENT_SOURCE_DIR_<NAME> (CMake's own
# override), DDPBENCH_DEPS_DIR/<archive> (hash-checked) or the URL. Sets <name>_ORIGIN.
function(ddpbench_fetch_pinned name)
  cmake_parse_arguments(F "" "" "OPTIONS;TARGETS" ${ARGN})
  foreach(opt IN LISTS F_OPTIONS)
    string(REGEX MATCH "^([^=]+)=(.*)$" _ "${opt}")
    set(${CMAKE_MATCH_1} "${CMAKE_MATCH_2}" CACHE INTERNAL "")
  endforeach()
  foreach(entry IN LISTS DDPBENCH_PINNED)
    string(REPLACE "|" ";" parts "${entry}")
    list(GET parts 0 n)
    if(n STREQUAL name)
      list(GET parts 1 version)
      list(GET parts 2 url)
      list(GET parts 3 sha)
    endif()
  endforeach()
  if(NOT url)
    message(FATAL_ERROR "ddpbench_fetch_pinned: ${name} is not in DDPBENCH_PINNED")
  endif()
  string(TOUPPER "${name}" upper)
  ddpbench_pinned_archive_name(${name} "${url}" archive)
  set(origin "${url}")
  if(DDPBENCH_DEPS_DIR AND IS_DIRECTORY "${DDPBENCH_DEPS_DIR}/${name}")
    set(FETCHCONTENT_SOURCE_DIR_${upper} "${DDPBENCH_DEPS_DIR}/${name}")
    set(origin "DDPBENCH_DEPS_DIR/${name} (a source tree)")
  elseif(FETCHCONTENT_SOURCE_DIR_${upper})
    set(origin "FETCHCONTENT_SOURCE_DIR_${upper} (${FETCHCONTENT_SOURCE_DIR_${upper}})")
  elseif(DDPBENCH_DEPS_DIR AND EXISTS "${DDPBENCH_DEPS_DIR}/${archive}")
    set(url "${DDPBENCH_DEPS_DIR}/${archive}")
    set(origin "DDPBENCH_DEPS_DIR/${archive} (SHA-256 checked)")
  elseif(DDPBENCH_DEPS_DIR)
    message(FATAL_ERROR
      "${name} is not in DDPBENCH_DEPS_DIR (${DDPBENCH_DEPS_DIR}): put ${archive} or the unpacked source "
      "folder ${name}/ there (scripts/fetch-deps.sh DIR downloads the pinned archives), or install it")
  endif()
  set(FETCHCONTENT_QUIET ON)
  FetchContent_Declare(${name} URL "${url}" URL_HASH SHA256=${sha})
  FetchContent_MakeAvailable(${name})
  # Its headers are not ours to warn about: its targets' include folders become system ones
  # (what FetchContent_Declare's SYSTEM does in newer CMake, by hand for every version).
  foreach(t IN LISTS F_TARGETS)
    if(TARGET ${t})
      get_target_property(inc ${t} INTERFACE_INCLUDE_DIRECTORIES)
      if(inc)
        set_property(TARGET ${t} APPEND PROPERTY INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${inc})
      endif()
    endif()
  endforeach()
  set(${name}_ORIGIN "${origin}" PARENT_SCOPE)
  set(${name}_PINNED_VERSION "${version}" PARENT_SCOPE)
  set(${name}_SOURCE_DIR "${${name}_SOURCE_DIR}" PARENT_SCOPE)
endfunction()

# The version of nlohmann/json in <dir>/nlohmann/json.hpp ("" when absent).
function(ddpbench_nlohmann_version dir out)
  set(v "")
  if(EXISTS "${dir}/nlohmann/json.hpp")
    file(STRINGS "${dir}/nlohmann/json.hpp" lines REGEX "#define NLOHMANN_JSON_VERSION_(MAJOR|MINOR|PATCH) +[0-9]+")
    foreach(part MAJOR MINOR PATCH)
      foreach(line IN LISTS lines)
        if(line MATCHES "NLOHMANN_JSON_VERSION_${part} +([0-9]+)")
          list(APPEND v "${CMAKE_MATCH_1}")
        endif()
      endforeach()
    endforeach()
    list(JOIN v "." v)
    if(v STREQUAL "")
      set(v "unknown")
    endif()
  endif()
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

# A folder of torch's include folders that ships <lib>/<header> itself (a pip wheel: fmt,
# nlohmann), or "". The compiler's own folders (/usr/include: Debian's libtorch) do not count:
# what is there belongs to the system.
function(ddpbench_torch_ships lib header out)
  set(found "")
  if(DDPBENCH_WITH_TORCH)
    foreach(dir IN LISTS TORCH_INCLUDE_DIRS)
      if(NOT found AND EXISTS "${dir}/${lib}/${header}" AND NOT dir IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
        set(found "${dir}")
      endif()
    endforeach()
  endif()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# An INTERFACE target <alias> whose only include folder is a folder of the build tree holding a
# link to <dir>/<lib>: torch's copy of one library, without torch's other headers.
function(ddpbench_torch_copy target alias lib dir)
  set(shim "${CMAKE_BINARY_DIR}/torch-bundled/${lib}")
  file(MAKE_DIRECTORY "${shim}")
  file(REMOVE "${shim}/${lib}")
  file(CREATE_LINK "${dir}/${lib}" "${shim}/${lib}" SYMBOLIC)
  add_library(${target} INTERFACE)
  target_include_directories(${target} SYSTEM INTERFACE "${shim}")
  add_library(${alias} ALIAS ${target})
endfunction()

# ---------------------------------------------------------------- nlohmann/json
ddpbench_torch_ships(nlohmann json.hpp _torch_nlohmann)
if(_torch_nlohmann)
  # One version per binary: torch's headers include this copy, so every target uses it.
  if(FETCHCONTENT_SOURCE_DIR_NLOHMANN_JSON OR nlohmann_json_DIR)
    ddpbench_nlohmann_version("${_torch_nlohmann}" _v)
    message(FATAL_ERROR
      "nlohmann/json: the linked torch ships its own (${_v} in ${_torch_nlohmann}), which its headers "
      "include, so every target must use it; unset nlohmann_json_DIR and FETCHCONTENT_SOURCE_DIR_NLOHMANN_JSON")
  endif()
  ddpbench_torch_copy(ddpbench_nlohmann nlohmann_json::nlohmann_json nlohmann "${_torch_nlohmann}")
  ddpbench_nlohmann_version("${_torch_nlohmann}" _v)
  ddpbench_dep_note(nlohmann_json "${_v}" "the linked torch" "${CMAKE_BINARY_DIR}/torch-bundled/nlohmann")
else()
  find_package(nlohmann_json 3.9 CONFIG QUIET)
  if(nlohmann_json_FOUND)
    get_target_property(_inc nlohmann_json::nlohmann_json INTERFACE_INCLUDE_DIRECTORIES)
    ddpbench_dep_note(nlohmann_json "${nlohmann_json_VERSION}" "the system (${nlohmann_json_DIR})" "${_inc}")
  else()
    ddpbench_fetch_pinned(nlohmann_json OPTIONS JSON_Install=OFF JSON_BuildTests=OFF TARGETS nlohmann_json)
    ddpbench_dep_note(nlohmann_json "${nlohmann_json_PINNED_VERSION}" "${nlohmann_json_ORIGIN}"
                      "${nlohmann_json_SOURCE_DIR}/include")
  endif()
endif()

# ---------------------------------------------------------------- CLI11
find_package(CLI11 2.1 CONFIG QUIET)
if(CLI11_FOUND)
  ddpbench_dep_note(CLI11 "${CLI11_VERSION}" "the system (${CLI11_DIR})" "")
else()
  ddpbench_fetch_pinned(cli11 OPTIONS CLI11_PRECOMPILED=OFF CLI11_BUILD_TESTS=OFF CLI11_BUILD_EXAMPLES=OFF
                        CLI11_BUILD_DOCS=OFF CLI11_INSTALL=OFF CLI11_SINGLE_FILE=OFF TARGETS CLI11)
  ddpbench_dep_note(CLI11 "${cli11_PINNED_VERSION}" "${cli11_ORIGIN}" "${cli11_SOURCE_DIR}/include")
endif()

# ---------------------------------------------------------------- fmt
ddpbench_torch_ships(fmt format.h _torch_fmt)
if(_torch_fmt)
  # torch's headers use these; header-only, so one fmt version is compiled in.
  ddpbench_torch_copy(ddpbench_fmt fmt::fmt fmt "${_torch_fmt}")
  target_compile_definitions(ddpbench_fmt INTERFACE FMT_HEADER_ONLY=1)
  set(_v "unknown")
  foreach(h base.h core.h)
    if(EXISTS "${_torch_fmt}/fmt/${h}")
      file(STRINGS "${_torch_fmt}/fmt/${h}" _line REGEX "#define FMT_VERSION [0-9]+")
      if(_line MATCHES "FMT_VERSION ([0-9]+)")  # 100101 = 10.1.1
        math(EXPR _maj "${CMAKE_MATCH_1} / 10000")
        math(EXPR _min "(${CMAKE_MATCH_1} / 100) % 100")
        math(EXPR _pat "${CMAKE_MATCH_1} % 100")
        set(_v "${_maj}.${_min}.${_pat}")
      endif()
    endif()
  endforeach()
  ddpbench_dep_note(fmt "${_v}" "the linked torch" "${CMAKE_BINARY_DIR}/torch-bundled/fmt")
else()
  find_package(fmt CONFIG QUIET)
  if(fmt_FOUND)
    ddpbench_dep_note(fmt "${fmt_VERSION}" "the system (${fmt_DIR})" "")
  else()
    ddpbench_fetch_pinned(fmt OPTIONS FMT_INSTALL=OFF FMT_TEST=OFF FMT_DOC=OFF TARGETS fmt)
    ddpbench_dep_note(fmt "${fmt_PINNED_VERSION}" "${fmt_ORIGIN}" "${fmt_SOURCE_DIR}/include")
  endif()
endif()

# ---------------------------------------------------------------- yaml-cpp
# `ddpbench validate` reads its plan file with it. Debian 12 ships 0.7 (target yaml-cpp),
# Debian 13 and the pinned release 0.8 (yaml-cpp::yaml-cpp); ddpbench_yaml names either.
find_package(yaml-cpp 0.6 CONFIG QUIET)
add_library(ddpbench_yaml INTERFACE)
if(yaml-cpp_FOUND AND (TARGET yaml-cpp::yaml-cpp OR TARGET yaml-cpp))
  if(TARGET yaml-cpp::yaml-cpp)
    target_link_libraries(ddpbench_yaml INTERFACE yaml-cpp::yaml-cpp)
  else()
    target_link_libraries(ddpbench_yaml INTERFACE yaml-cpp)
  endif()
  ddpbench_dep_note(yaml_cpp "${yaml-cpp_VERSION}" "the system (${yaml-cpp_DIR})" "")
else()
  ddpbench_fetch_pinned(yaml_cpp OPTIONS YAML_CPP_BUILD_TESTS=OFF YAML_CPP_BUILD_TOOLS=OFF YAML_CPP_BUILD_CONTRIB=OFF
                        YAML_CPP_INSTALL=OFF YAML_BUILD_SHARED_LIBS=OFF YAML_CPP_FORMAT_SOURCE=OFF TARGETS yaml-cpp)
  target_link_libraries(ddpbench_yaml INTERFACE yaml-cpp)
  ddpbench_dep_note(yaml_cpp "${yaml_cpp_PINNED_VERSION}" "${yaml_cpp_ORIGIN}" "${yaml_cpp_SOURCE_DIR}/include")
endif()

# ---------------------------------------------------------------- GoogleTest (tests only)
if(DDPBENCH_BUILD_TESTS)
  find_package(GTest CONFIG QUIET)
  if(NOT GTest_FOUND)
    find_package(GTest QUIET)  # CMake's FindGTest: distributions without the CONFIG files
  endif()
  if(GTest_FOUND AND TARGET GTest::gtest_main AND TARGET GTest::gmock)
    ddpbench_dep_note(GoogleTest "${GTest_VERSION}" "the system" "")
  else()
    ddpbench_fetch_pinned(googletest OPTIONS INSTALL_GTEST=OFF BUILD_GMOCK=ON gtest_force_shared_crt=ON
                          TARGETS gtest gtest_main gmock gmock_main)
    foreach(t gtest gtest_main gmock gmock_main)
      if(NOT TARGET GTest::${t} AND TARGET ${t})
        add_library(GTest::${t} ALIAS ${t})
      endif()
    endforeach()
    set(GTest_FOUND TRUE)
    ddpbench_dep_note(GoogleTest "${googletest_PINNED_VERSION}" "${googletest_ORIGIN}" "")
  endif()
endif()

file(WRITE "${CMAKE_BINARY_DIR}/dependencies.txt" "${_ddpbench_deps_report}")
