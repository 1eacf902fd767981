# Configures tests/consumer with the torch component against an install tree, and checks what
# configuring says (a configure only: nothing is built).
#   -DSOURCE=dir -DBINARY=dir -DGENERATOR=name -DPREFIX_PATH="a|b" (| for ;)
#   -DOPTIONS="-Dx=y|..." -DEXPECT=found|not_found
string(REPLACE "|" ";" prefix_path "${PREFIX_PATH}")
string(REPLACE "|" ";" options "${OPTIONS}")
file(REMOVE_RECURSE "${BINARY}")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${SOURCE}" -B "${BINARY}" -G "${GENERATOR}"
          -DAITUNE_CONSUME=find_package -DAITUNE_CONSUME_TORCH=ON -DAITUNE_EXPECT_CUDA=0
          "-DCMAKE_PREFIX_PATH=${prefix_path}" ${options}
  RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
if(EXPECT STREQUAL "found")
  if(NOT exit_code EQUAL 0)
    message(FATAL_ERROR "configuring failed (exit ${exit_code})")
  endif()
  # The one line that says which LibTorch the consumer got.
  if(NOT out MATCHES "aitune: LibTorch [0-9]+\\.[0-9]+\\.[0-9]+[^ ]* \\((CUDA|CPU)\\) at [^\n]+")
    message(FATAL_ERROR "configuring did not say which LibTorch it found")
  endif()
elseif(EXPECT STREQUAL "not_found")
  if(exit_code EQUAL 0)
    message(FATAL_ERROR "configuring succeeded without LibTorch")
  endif()
  # CMake's own words, then ours: what is missing and the two ways to point at it.
  foreach(expected "aitune's torch component needs LibTorch" "CMAKE_PREFIX_PATH"
                   "torch.utils.cmake_prefix_path" "AITUNE_TORCH_PYTHON")
    string(FIND "${out}" "${expected}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "the not-found message lacks '${expected}'")
    endif()
  endforeach()
else()
  message(FATAL_ERROR "EXPECT must be found or not_found")
endif()
