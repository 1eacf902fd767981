# Fails when a C++ file of the project is not formatted by the project's .clang-format.
file(GLOB_RECURSE sources "${SOURCE_DIR}/include/*.hpp" "${SOURCE_DIR}/tests/*.cpp"
     "${SOURCE_DIR}/tests/*.hpp" "${SOURCE_DIR}/examples/*.cpp" "${SOURCE_DIR}/examples/*.hpp"
     "${SOURCE_DIR}/bench/*.cpp" "${SOURCE_DIR}/bench/*.hpp" "${SOURCE_DIR}/fuzz/*.cpp")
execute_process(COMMAND "${CLANG_FORMAT}" --dry-run --Werror ${sources}
                WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE result ERROR_VARIABLE errors)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "unformatted files (run clang-format -i on them):\n${errors}")
endif()
list(LENGTH sources count)
message(STATUS "${count} files formatted")
