# Finds what the aitune core needs: fmt and nlohmann_json. Shared by the project and by the
# installed package config, so a consumer's find_package(aitune) finds them the same way.
#
# fmt: the compiled fmt::fmt when present; fmt::fmt-header-only if AITUNE_FMT_HEADER_ONLY is on.
# Where no CMake package exists (e.g. a machine that only has the headers), point
# AITUNE_VENDORED_INCLUDE_DIR at a folder holding fmt/ and nlohmann/: header-only targets are made.

macro(aitune_find_core_dependencies)
  if(NOT TARGET nlohmann_json::nlohmann_json)
    if(AITUNE_VENDORED_INCLUDE_DIR)
      add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
      set_target_properties(nlohmann_json::nlohmann_json PROPERTIES
                            INTERFACE_INCLUDE_DIRECTORIES "${AITUNE_VENDORED_INCLUDE_DIR}")
    else()
      find_package(nlohmann_json 3.10 CONFIG REQUIRED)
    endif()
  endif()
  if(AITUNE_VENDORED_INCLUDE_DIR)
    if(NOT TARGET aitune_vendored_fmt)
      add_library(aitune_vendored_fmt INTERFACE IMPORTED)
      set_target_properties(aitune_vendored_fmt PROPERTIES
                            INTERFACE_INCLUDE_DIRECTORIES "${AITUNE_VENDORED_INCLUDE_DIR}"
                            INTERFACE_COMPILE_DEFINITIONS "FMT_HEADER_ONLY=1")
    endif()
    set(AITUNE_FMT_TARGET aitune_vendored_fmt)
  else()
    if(NOT TARGET fmt::fmt)
      find_package(fmt 9 CONFIG REQUIRED)
    endif()
    if(AITUNE_FMT_HEADER_ONLY)
      set(AITUNE_FMT_TARGET fmt::fmt-header-only)
    else()
      set(AITUNE_FMT_TARGET fmt::fmt)
    endif()
  endif()
endmacro()

# Finds LibTorch and makes `aitune::torch`: aitune::aitune plus LibTorch, with the settings the
# LibTorch layer needs taken from the LibTorch found, so that a consumer never sets them:
#   AITUNE_WITH_CUDA  1 when LibTorch was built with CUDA (its `torch_cuda` target exists), so
#                     CUDA models are timed with CUDA events and CUDA graphs are candidates;
#   FMT_HEADER_ONLY   when LibTorch ships its own fmt headers (PyPI wheels from 2.10 on ship
#                     fmt 12 in torch/include): they come first on the include path of every
#                     LibTorch translation unit and would be linked against the system's fmt 9
#                     library (undefined fmt::v12 symbols); header-only, they need no library.
# The target exists only where LibTorch is found. AITUNE_TORCH_PYTHON, when set, names a Python
# whose `torch` package is the LibTorch to use (a PyPI wheel in a virtual environment).
# Sets AITUNE_HAVE_TORCH, AITUNE_TORCH_HAS_CUDA and AITUNE_TORCH_SHIPS_FMT.
macro(aitune_find_torch)
  if(NOT TARGET aitune::torch)
    if(AITUNE_TORCH_PYTHON)
      execute_process(
        COMMAND "${AITUNE_TORCH_PYTHON}" -c "import torch; print(torch.utils.cmake_prefix_path)"
        OUTPUT_VARIABLE _aitune_torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
        RESULT_VARIABLE _aitune_torch_status ERROR_QUIET)
      if(NOT _aitune_torch_status EQUAL 0)
        message(FATAL_ERROR "aitune: AITUNE_TORCH_PYTHON=${AITUNE_TORCH_PYTHON} cannot import "
                            "torch: run tools/setup-venv.sh first")
      endif()
      list(PREPEND CMAKE_PREFIX_PATH "${_aitune_torch_prefix}")
    endif()
    find_package(Torch QUIET)
  endif()
  if(TARGET aitune::torch)
    set(AITUNE_HAVE_TORCH ON)
  elseif(Torch_FOUND OR TORCH_FOUND)
    set(AITUNE_HAVE_TORCH ON)
    add_library(aitune::torch INTERFACE IMPORTED GLOBAL)
    set_property(TARGET aitune::torch PROPERTY INTERFACE_LINK_LIBRARIES aitune::aitune
                                                                        ${TORCH_LIBRARIES})
    if(TARGET torch_cuda OR TORCH_CUDA_LIBRARIES)
      set(AITUNE_TORCH_HAS_CUDA ON)
      set_property(TARGET aitune::torch APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS
                                                        AITUNE_WITH_CUDA=1)
    else()
      set(AITUNE_TORCH_HAS_CUDA OFF)
      set_property(TARGET aitune::torch APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS
                                                        AITUNE_WITH_CUDA=0)
    endif()
    set(AITUNE_TORCH_SHIPS_FMT OFF)
    foreach(_aitune_dir IN LISTS TORCH_INCLUDE_DIRS)
      if(EXISTS "${_aitune_dir}/fmt/format.h")
        set(AITUNE_TORCH_SHIPS_FMT ON)
      endif()
    endforeach()
    if(AITUNE_TORCH_SHIPS_FMT)
      set_property(TARGET aitune::torch APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS
                                                        FMT_HEADER_ONLY=1)
    endif()
  else()
    set(AITUNE_HAVE_TORCH OFF)
  endif()
endmacro()
