# SPDX-License-Identifier: MIT
# Tri-state options (AUTO / ON / OFF). AUTO builds a part where its dependencies are found, ON
# fails the configure step when they are missing, OFF never builds it.
function(swapscope_tristate name default doc)
  set(${name} ${default} CACHE STRING "${doc}")
  set_property(CACHE ${name} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${${name}}" _value)
  if(_value STREQUAL "TRUE" OR _value STREQUAL "YES" OR _value STREQUAL "1")
    set(_value ON)
  elseif(_value STREQUAL "FALSE" OR _value STREQUAL "NO" OR _value STREQUAL "0")
    set(_value OFF)
  endif()
  if(NOT _value MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "${name} must be AUTO, ON or OFF, got '${${name}}'")
  endif()
  set(${name} ${_value} PARENT_SCOPE)
endfunction()
