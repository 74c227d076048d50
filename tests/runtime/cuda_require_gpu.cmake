# SPDX-License-Identifier: MIT
# Runs the CUDA tests of PROGRAM (runtime_tests) without and with SWAPSCOPE_REQUIRE_GPU=1. Without
# a GPU they must pass by skipping with the reason, and fail under SWAPSCOPE_REQUIRE_GPU=1 naming
# it. With a GPU this check does not apply and says so (the ctest entry counts it as skipped).
set(filter "--gtest_filter=*Gpu.*")
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=SWAPSCOPE_REQUIRE_GPU ${PROGRAM} ${filter}
                RESULT_VARIABLE plain_rc OUTPUT_VARIABLE plain_out ERROR_VARIABLE plain_out)
if(NOT plain_out MATCHES "SKIPPED")
  message("a GPU is present: the tests ran instead of skipping")
  return()
endif()
if(NOT plain_rc EQUAL 0)
  message(FATAL_ERROR "without SWAPSCOPE_REQUIRE_GPU the skipped GPU tests failed (exit ${plain_rc}):\n${plain_out}")
endif()
if(NOT plain_out MATCHES "no CUDA backend here")
  message(FATAL_ERROR "the GPU tests skipped without saying why:\n${plain_out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env SWAPSCOPE_REQUIRE_GPU=1 ${PROGRAM} ${filter}
                RESULT_VARIABLE req_rc OUTPUT_VARIABLE req_out ERROR_VARIABLE req_out)
if(req_rc EQUAL 0)
  message(FATAL_ERROR "SWAPSCOPE_REQUIRE_GPU=1 without a GPU, yet the GPU tests passed:\n${req_out}")
endif()
if(NOT req_out MATCHES "SWAPSCOPE_REQUIRE_GPU=1, but no CUDA backend here")
  message(FATAL_ERROR "the failures under SWAPSCOPE_REQUIRE_GPU=1 do not name the reason:\n${req_out}")
endif()
if(req_out MATCHES "SKIPPED \\]")
  message(FATAL_ERROR "a GPU test still skipped under SWAPSCOPE_REQUIRE_GPU=1:\n${req_out}")
endif()
message("without a GPU: skipped with the reason, and failed under SWAPSCOPE_REQUIRE_GPU=1")
