# cmake -DREADELF=<readelf> -DBINARY=<program> -P CheckNeededOrder.cmake
# Passes ("needed order: ...") when libstdc++ comes before every libtorch*/libc10* in the
# program's DT_NEEDED list (readelf -d), so that the dynamic linker's breadth-first lookup
# binds its std:: symbols to libstdc++ rather than to the copies a pip wheel's libraries
# export (CMakeLists.txt, ddpbench_libstdcxx_first); else FATAL_ERROR naming the order, or
# with -DWARN_ONLY=ON a warning (the build's check after each link of ddpbench).
execute_process(COMMAND "${READELF}" -d "${BINARY}" OUTPUT_VARIABLE dyn RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "needed order: readelf -d ${BINARY} failed (${rc})")
endif()
string(REGEX MATCHALL "Shared library: \\[[^]]+\\]" entries "${dyn}")
set(order "")
foreach(e IN LISTS entries)
  string(REGEX REPLACE "Shared library: \\[([^]]+)\\]" "\\1" lib "${e}")
  list(APPEND order "${lib}")
endforeach()
set(stdcxx -1)
set(torch -1)
list(LENGTH order n)
math(EXPR last "${n} - 1")
foreach(i RANGE ${last})
  list(GET order ${i} lib)
  if(stdcxx EQUAL -1 AND lib MATCHES "^libstdc\\+\\+\\.so")
    set(stdcxx ${i})
  endif()
  if(torch EQUAL -1 AND lib MATCHES "^lib(torch|c10)")
    set(torch ${i})
  endif()
endforeach()
string(REPLACE ";" ", " shown "${order}")
if(stdcxx EQUAL -1 OR torch EQUAL -1 OR NOT stdcxx LESS torch)
  if(WARN_ONLY AND torch EQUAL -1)
    return()  # no libtorch: nothing to bind to
  elseif(WARN_ONLY)
    # One warning the build shows: the order is checked after every link of ddpbench.
    message(WARNING "ddpbench: needed order: libtorch/libc10 come before libstdc++ in ${BINARY} (${shown}); "
                    "its std:: calls may reach the copies a pip wheel's libraries export (see CMakeLists.txt, "
                    "ddpbench_libstdcxx_first)")
    return()
  endif()
  message(FATAL_ERROR "needed order violated: libstdc++ must come before libtorch/libc10 in ${BINARY}: ${shown}")
endif()
if(NOT WARN_ONLY)
  message(STATUS "needed order: libstdc++ first (${shown})")
endif()
