# SPDX-License-Identifier: MIT
# swapscope_target_defaults(<target>): the warnings shared by every project target.
# C++ sources get the full set. CUDA sources (nvcc) get -Wall -Wextra from the host compiler:
# nvcc hands it generated code (GCC-style line directives, C casts in the launch stubs) that
# -Wpedantic and -Wold-style-cast reject. SWAPSCOPE_WERROR makes the warnings of both errors,
# nvcc's own (all-warnings) included.
function(swapscope_target_defaults target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                              -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wconversion
                              -Wno-sign-conversion>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
  if(SWAPSCOPE_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>
                                             $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
  endif()
endfunction()
