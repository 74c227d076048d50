# SPDX-License-Identifier: MIT
# swapscope_target_defaults(<target>): warnings and include root shared by every project target.
function(swapscope_target_defaults target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                              -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wconversion
                              -Wno-sign-conversion>)
  if(SWAPSCOPE_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
endfunction()
