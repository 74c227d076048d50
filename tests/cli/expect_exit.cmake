# SPDX-License-Identifier: MIT
# Runs PROGRAM with ARGS and fails unless it exits with EXPECTED and, when STDERR_MATCHES is
# given, unless its stderr matches that regular expression.
execute_process(COMMAND ${PROGRAM} ${ARGS} RESULT_VARIABLE code OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT code EQUAL EXPECTED)
  message(FATAL_ERROR "expected exit code ${EXPECTED}, got ${code}: ${err}")
endif()
if(DEFINED STDERR_MATCHES AND NOT err MATCHES "${STDERR_MATCHES}")
  message(FATAL_ERROR "stderr does not match '${STDERR_MATCHES}': ${err}")
endif()
