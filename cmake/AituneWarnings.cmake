# Warnings are errors in our own tests, examples and benchmarks; never on the INTERFACE target.
add_library(aitune_warnings INTERFACE)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(aitune_warnings INTERFACE -Wall -Wextra -Wpedantic -Werror)
endif()
