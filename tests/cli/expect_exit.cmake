# SPDX-License-Identifier: MIT
# Runs PROGRAM with ARGS and fails unless it exits with EXPECTED.
execute_process(COMMAND ${PROGRAM} ${ARGS} RESULT_VARIABLE code OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT code EQUAL EXPECTED)
  message(FATAL_ERROR "expected exit code ${EXPECTED}, got ${code}: ${err}")
endif()
