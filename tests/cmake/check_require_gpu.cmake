# Review F1: runs the [gpu] tests with AITUNE_REQUIRE_GPU=1 and checks that no test skipped.
# Without a usable GPU they must fail, naming the requirement; with one they must run and pass.
set(ENV{AITUNE_REQUIRE_GPU} 1)
execute_process(COMMAND "${GPU_TESTS}" "[gpu]" -s RESULT_VARIABLE result OUTPUT_VARIABLE output
                ERROR_VARIABLE output)
if(output MATCHES "skipped:")
  message(FATAL_ERROR "a [gpu] test skipped although AITUNE_REQUIRE_GPU=1:\n${output}")
endif()
if(result EQUAL 0)
  message(STATUS "a GPU is usable: the [gpu] tests ran and passed")
elseif(NOT output MATCHES "AITUNE_REQUIRE_GPU=1, but")
  message(FATAL_ERROR "the [gpu] tests failed for another reason:\n${output}")
endif()
