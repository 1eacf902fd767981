# Builds TARGET in BINARY_DIR and expects the build to fail with a first compiler error that
# matches EXPECT (so the cause is on the first error line, not 40 lines down).
#   -DBINARY_DIR=dir -DTARGET=name -DEXPECT=regex
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BINARY_DIR}" --target "${TARGET}"
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(result EQUAL 0)
  message(FATAL_ERROR "${TARGET} compiled, but it must be rejected")
endif()
string(REGEX MATCH "[^\n]*error:[^\n]*" first_error "${output}")
message(STATUS "first error: ${first_error}")
if(NOT first_error MATCHES "${EXPECT}")
  message(FATAL_ERROR "the first error does not say '${EXPECT}':\n${output}")
endif()
