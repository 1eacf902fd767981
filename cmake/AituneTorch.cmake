# Our own tests, examples and benchmarks on LibTorch: reports what CMakeLists.txt found
# (aitune_find_torch made aitune::torch, the target consumers get from the package too).
if(NOT AITUNE_HAVE_TORCH)
  message(STATUS "aitune: LibTorch not found: the LibTorch layer's targets are not built")
  return()
endif()
message(STATUS "aitune: LibTorch ${Torch_VERSION} (CUDA: ${AITUNE_TORCH_HAS_CUDA}, "
               "fmt from LibTorch: ${AITUNE_TORCH_SHIPS_FMT})")
