# Our own tests, examples and benchmarks on LibTorch: reports what CMakeLists.txt found
# (aitune_find_torch made aitune::torch, the target consumers get from the package too).
if(NOT AITUNE_HAVE_TORCH)
  message(STATUS "aitune: the LibTorch layer's targets are not built: "
                 "${AITUNE_TORCH_NOT_FOUND_MESSAGE}")
  return()
endif()
message(STATUS "aitune: fmt from LibTorch's headers: ${AITUNE_TORCH_SHIPS_FMT}")

# Build time: each of our translation units that includes LibTorch parses the same headers again,
# about a third of its compile time (a LibTorch test file here: 67 s, 44 s with them precompiled).
# They are parsed once per build instead: the third-party headers of the LibTorch layer
# (aitune_torch_pch.hpp, which says why not ours), precompiled once and reused by our LibTorch
# targets through aitune_use_torch_pch(). Only our own targets; consumers of aitune::torch decide
# for themselves. -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON turns it off.
file(CONFIGURE OUTPUT "${PROJECT_BINARY_DIR}/aitune_torch_pch.cpp"
     CONTENT "// The translation unit that builds the precompiled aitune_torch_pch.hpp.\n")
add_library(aitune_torch_pch OBJECT "${PROJECT_BINARY_DIR}/aitune_torch_pch.cpp")
target_link_libraries(aitune_torch_pch PRIVATE aitune::torch aitune_warnings)
target_precompile_headers(aitune_torch_pch PRIVATE "${CMAKE_CURRENT_LIST_DIR}/aitune_torch_pch.hpp")

# aitune_use_torch_pch(TARGET...): compile TARGET's sources with the precompiled headers (each
# must link aitune::torch and aitune_warnings, so that it is compiled with the same flags).
function(aitune_use_torch_pch)
  foreach(target IN LISTS ARGN)
    target_precompile_headers(${target} REUSE_FROM aitune_torch_pch)
  endforeach()
endfunction()
