# SPDX-License-Identifier: MIT
# Checks the RUNPATH (or RPATH) of PROGRAM: no empty entry, which the loader reads as the current
# directory, and no relative one; $ORIGIN-based entries are allowed. A program without either
# passes. Without readelf the check says it was skipped.
#   cmake -DPROGRAM=<file> -P cuda_runpath.cmake
find_program(READELF readelf)
if(NOT READELF)
  message("skipped: readelf is not installed (binutils)")
  return()
endif()
execute_process(COMMAND ${READELF} -d ${PROGRAM} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf -d ${PROGRAM} failed (exit ${rc}): ${err}")
endif()
string(REGEX MATCHALL "\\((RUNPATH|RPATH)\\)[^\n]*\\[[^]\n]*\\]" entries "${out}")
if(NOT entries)
  message("${PROGRAM}: no RUNPATH or RPATH")
  return()
endif()
foreach(entry IN LISTS entries)
  string(REGEX REPLACE "^.*\\[([^]]*)\\]$" "\\1" path "${entry}")
  # An empty entry: at the start, at the end, or two colons in a row.
  if(path STREQUAL "" OR path MATCHES "^:" OR path MATCHES ":$" OR path MATCHES "::")
    message(FATAL_ERROR "${PROGRAM}: '${path}' has an empty entry (the current directory)")
  endif()
  string(REPLACE ":" ";" dirs "${path}")
  foreach(dir IN LISTS dirs)
    if(NOT dir MATCHES "^/" AND NOT dir MATCHES "^\\$ORIGIN" AND NOT dir MATCHES "^\\$\\{ORIGIN\\}")
      message(FATAL_ERROR "${PROGRAM}: '${path}' has the relative entry '${dir}'")
    endif()
  endforeach()
  message("${PROGRAM}: ${entry}")
endforeach()
