# SPDX-License-Identifier: MIT
# swapscope_precompile_headers(<target> <header>...): precompiles the given library headers for
# <target> (target_precompile_headers), where SWAPSCOPE_PCH is ON. The GUI targets and the CLI
# library parse the same large headers (Qt, QCustomPlot, nlohmann/json) in most sources; a
# precompiled header parses them once per target. Each target precompiles its own: the targets'
# flags differ (Qt's -fPIC, definitions), and GCC does not load a header precompiled with others.
# The test targets have none: GCC 12 reports -Warray-bounds false positives from inlined
# libstdc++ code (std::string's operator+) when libstdc++ comes from a precompiled header, where
# it does not in a system header, and the build treats warnings as errors.
# ccache caches a compile that loads a precompiled header only with the sloppiness
# pch_defines,time_macros; where ccache is the target's compiler launcher, its compiles run with
# CCACHE_SLOPPINESS set so.
option(SWAPSCOPE_PCH "Precompile the headers the GUI targets and the CLI library share" ON)

function(swapscope_precompile_headers target)
  if(NOT SWAPSCOPE_PCH)
    return()
  endif()
  set(headers)
  foreach(h IN LISTS ARGN)
    list(APPEND headers "<${h}>")
  endforeach()
  target_precompile_headers(${target} PRIVATE ${headers})
  get_target_property(launcher ${target} CXX_COMPILER_LAUNCHER)
  if(launcher MATCHES "ccache" AND NOT launcher MATCHES "CCACHE_SLOPPINESS")
    set_property(TARGET ${target} PROPERTY CXX_COMPILER_LAUNCHER
                 ${CMAKE_COMMAND} -E env CCACHE_SLOPPINESS=pch_defines,time_macros ${launcher})
  endif()
endfunction()
