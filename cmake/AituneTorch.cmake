# Finds LibTorch for our own tests, examples and benchmarks, and makes `aitune_torch`: the
# aitune target plus LibTorch, with AITUNE_WITH_CUDA set from LibTorch's own CUDA support.
# Consumers of the package do the same in their project: link ${TORCH_LIBRARIES} and, with a
# CUDA LibTorch, define AITUNE_WITH_CUDA=1.
set(AITUNE_PYTHON "/usr/bin/python3" CACHE FILEPATH
    "Python with torch and torchvision, to trace the real models (Debian: python3-torchvision)")

find_package(Torch QUIET)
if(NOT Torch_FOUND AND NOT TORCH_FOUND)
  message(STATUS "aitune: LibTorch not found: the LibTorch layer's targets are not built")
  set(AITUNE_HAVE_TORCH OFF)
  return()
endif()
set(AITUNE_HAVE_TORCH ON)

add_library(aitune_torch INTERFACE)
target_link_libraries(aitune_torch INTERFACE aitune::aitune ${TORCH_LIBRARIES})
if(TARGET torch_cuda OR TORCH_CUDA_LIBRARIES)
  set(AITUNE_TORCH_HAS_CUDA ON)
  target_compile_definitions(aitune_torch INTERFACE AITUNE_WITH_CUDA=1)
else()
  set(AITUNE_TORCH_HAS_CUDA OFF)
  target_compile_definitions(aitune_torch INTERFACE AITUNE_WITH_CUDA=0)
endif()
message(STATUS "aitune: LibTorch ${Torch_VERSION} (CUDA: ${AITUNE_TORCH_HAS_CUDA})")
