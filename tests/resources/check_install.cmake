# SPDX-License-Identifier: MIT
# Installs the desktop component of the build BUILD_DIR into PREFIX and checks that every file is
# where XDG looks for it (DATADIR under PREFIX), that each PNG has the size its folder names, and
# that the desktop entry and the metainfo name the program and the icon.
#   cmake -DBUILD_DIR=B -DPREFIX=P -DDATADIR=share -DID=io.github.swapscope.Swapscope -P check_install.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}"
                        --component desktop
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}):\n${out}${err}")
endif()

set(share "${PREFIX}/${DATADIR}")
set(expected "${share}/applications/${ID}.desktop" "${share}/metainfo/${ID}.metainfo.xml"
             "${share}/icons/hicolor/scalable/apps/${ID}.svg")
foreach(size 16 32 48 64 128 256)
  list(APPEND expected "${share}/icons/hicolor/${size}x${size}/apps/${ID}.png")
endforeach()
foreach(f IN LISTS expected)
  if(NOT EXISTS "${f}")
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()

# A PNG's width and height are the big-endian words at bytes 16 and 20 (the IHDR chunk).
foreach(size 16 32 48 64 128 256)
  set(png "${share}/icons/hicolor/${size}x${size}/apps/${ID}.png")
  file(READ "${png}" signature LIMIT 8 HEX)
  if(NOT signature STREQUAL "89504e470d0a1a0a")
    message(FATAL_ERROR "${png} is not a PNG (it starts with ${signature})")
  endif()
  file(READ "${png}" w LIMIT 4 OFFSET 16 HEX)
  file(READ "${png}" h LIMIT 4 OFFSET 20 HEX)
  math(EXPR w "0x${w}")
  math(EXPR h "0x${h}")
  if(NOT w EQUAL size OR NOT h EQUAL size)
    message(FATAL_ERROR "${png} is ${w} x ${h} pixels, not ${size} x ${size}")
  endif()
endforeach()

file(STRINGS "${share}/applications/${ID}.desktop" desktop)
foreach(line "Icon=${ID}" "Exec=swapscope-gui %f" "Type=Application")
  if(NOT line IN_LIST desktop)
    message(FATAL_ERROR "${ID}.desktop has no line '${line}'")
  endif()
endforeach()
file(READ "${share}/metainfo/${ID}.metainfo.xml" metainfo)
foreach(text "<id>${ID}</id>" "<launchable type=\"desktop-id\">${ID}.desktop</launchable>"
             "<binary>swapscope-gui</binary>")
  string(FIND "${metainfo}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${ID}.metainfo.xml does not contain ${text}")
  endif()
endforeach()
file(REMOVE_RECURSE "${PREFIX}")
message(STATUS "installed and checked: ${expected}")
