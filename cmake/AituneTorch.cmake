# Finds LibTorch for our own tests, examples and benchmarks (aitune_find_torch makes the
# aitune::torch target that consumers get from the package too).
set(AITUNE_PYTHON "/usr/bin/python3" CACHE FILEPATH
    "Python with torch and torchvision, to make the real models (Debian: python3-torchvision)")
set(AITUNE_TORCH_PYTHON "" CACHE FILEPATH
    "Python whose torch package is the LibTorch to build against (empty: find_package(Torch))")

aitune_find_torch()
if(NOT AITUNE_HAVE_TORCH)
  message(STATUS "aitune: LibTorch not found: the LibTorch layer's targets are not built")
  return()
endif()
message(STATUS "aitune: LibTorch ${Torch_VERSION} (CUDA: ${AITUNE_TORCH_HAS_CUDA}, "
               "fmt from LibTorch: ${AITUNE_TORCH_SHIPS_FMT})")
