# Compiles <aitune/all.hpp> (every core header) alone and fails if any LibTorch or CUDA header is among its
# dependencies. Run with: cmake -DCXX=... -DINCLUDE_DIR=... -DWORK_DIR=... -P this file.
file(MAKE_DIRECTORY "${WORK_DIR}")
file(WRITE "${WORK_DIR}/only_core.cpp" "#include <aitune/all.hpp>\nint main() { return 0; }\n")
execute_process(
  COMMAND "${CXX}" -std=c++20 -I "${INCLUDE_DIR}" -M "${WORK_DIR}/only_core.cpp"
  RESULT_VARIABLE result OUTPUT_VARIABLE deps ERROR_VARIABLE errors)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "<aitune/all.hpp> does not compile on its own:\n${errors}")
endif()
string(REGEX MATCHALL "[^ \\\\\n]*/(torch|ATen|c10|caffe2)/[^ \\\\\n]*|[^ \\\\\n]*cuda[^ \\\\\n]*\\.h"
       offenders "${deps}")
if(offenders)
  list(REMOVE_DUPLICATES offenders)
  message(FATAL_ERROR "<aitune/all.hpp> pulls in LibTorch or CUDA headers: ${offenders}")
endif()
string(REGEX MATCHALL "[^ \\\\\n]*aitune/core/[^ \\\\\n]*" core_headers "${deps}")
list(LENGTH core_headers count)
if(count LESS 5)
  message(FATAL_ERROR "the dependency scan looks wrong: only ${count} core headers found")
endif()
message(STATUS "all.hpp uses ${count} core headers and no LibTorch or CUDA header")
