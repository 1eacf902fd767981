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

# Finds hiredis (Debian's libhiredis-dev 0.14 has a pkg-config file, no CMake package) as the
# imported target PkgConfig::HIREDIS, which aitune::redis links. Sets AITUNE_HAVE_HIREDIS.
macro(aitune_find_hiredis)
  if(NOT TARGET PkgConfig::HIREDIS)
    find_package(PkgConfig QUIET)
    if(PKG_CONFIG_FOUND)
      pkg_check_modules(HIREDIS QUIET IMPORTED_TARGET hiredis>=0.14)
    endif()
    # Its pkg-config file adds -D_FILE_OFFSET_BITS=64, a no-op on 64-bit Linux that a
    # precompiled header refuses (built without it): dropped there.
    if(TARGET PkgConfig::HIREDIS AND CMAKE_SIZEOF_VOID_P EQUAL 8)
      get_target_property(_aitune_hiredis_options PkgConfig::HIREDIS INTERFACE_COMPILE_OPTIONS)
      if(_aitune_hiredis_options)
        list(REMOVE_ITEM _aitune_hiredis_options "-D_FILE_OFFSET_BITS=64")
        set_target_properties(PkgConfig::HIREDIS PROPERTIES
                              INTERFACE_COMPILE_OPTIONS "${_aitune_hiredis_options}")
      endif()
    endif()
  endif()
  if(TARGET PkgConfig::HIREDIS)
    set(AITUNE_HAVE_HIREDIS TRUE)
  else()
    set(AITUNE_HAVE_HIREDIS FALSE)
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
# Says which LibTorch it found (version, CUDA or CPU, where), and warns when that one is too old
# for torch.export archives. Sets AITUNE_HAVE_TORCH, AITUNE_TORCH_HAS_CUDA,
# AITUNE_TORCH_SHIPS_FMT, and AITUNE_TORCH_NOT_FOUND_MESSAGE (what to do) where none is found.
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
    # A PyPI wheel's CUDA libraries (cuDNN, NCCL, the CUDA runtime) come in nvidia/*/lib beside
    # it, found at run time through libtorch_cuda's RPATH. They go first on the program's run
    # path too, so that the linker resolves libtorch_cuda's needs with the libraries that will
    # run (a wheel built for CUDA 13.2 needs newer NCCL symbols than the 13.0 toolkit's), and the
    # program loads the same CUDA runtime as LibTorch.
    if(AITUNE_TORCH_HAS_CUDA)
      get_filename_component(_aitune_site "${Torch_DIR}/../../../.." ABSOLUTE)
      file(GLOB _aitune_wheel_cuda_dirs LIST_DIRECTORIES true "${_aitune_site}/nvidia/*/lib")
      if(_aitune_wheel_cuda_dirs)
        list(SORT _aitune_wheel_cuda_dirs)
        string(JOIN ":" _aitune_wheel_cuda_path ${_aitune_wheel_cuda_dirs})
        set_property(TARGET aitune::torch APPEND PROPERTY INTERFACE_LINK_OPTIONS
                                                          "LINKER:-rpath,${_aitune_wheel_cuda_path}")
      endif()
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
    if(AITUNE_TORCH_HAS_CUDA)
      message(STATUS "aitune: LibTorch ${Torch_VERSION} (CUDA) at ${Torch_DIR}")
    else()
      message(STATUS "aitune: LibTorch ${Torch_VERSION} (CPU) at ${Torch_DIR}")
    endif()
    aitune_find_runtimes()
    if(Torch_VERSION VERSION_LESS 2.9)
      message(WARNING "aitune: LibTorch ${Torch_VERSION} is older than 2.9: it runs TorchScript "
                      "models only, not torch.export (.pt2) archives. For those, put a newer "
                      "LibTorch first on CMAKE_PREFIX_PATH or set AITUNE_TORCH_PYTHON (see "
                      "README.md, \"Add aitune to your CMake project\").")
    endif()
  else()
    set(AITUNE_HAVE_TORCH OFF)
    if(Torch_DIR AND NOT Torch_DIR MATCHES "NOTFOUND$")
      set(_aitune_torch_why "LibTorch's TorchConfig.cmake at ${Torch_DIR} did not load (call "
                            "find_package(Torch) without QUIET to see LibTorch's reason)")
    else()
      set(_aitune_torch_why "no TorchConfig.cmake was found")
    endif()
    string(CONCAT AITUNE_TORCH_NOT_FOUND_MESSAGE
           "aitune's torch component needs LibTorch, and ${_aitune_torch_why}. Put LibTorch's "
           "CMake prefix on CMAKE_PREFIX_PATH (for a PyPI wheel, what python -c \"import torch; "
           "print(torch.utils.cmake_prefix_path)\" prints; for a LibTorch archive, its folder), "
           "or set AITUNE_TORCH_PYTHON to the Python whose torch package to use. A CUDA LibTorch "
           "also needs the CUDA toolkit (nvcc) at configure time.")
  endif()
endmacro()

# Finds the other runtimes whose converted models (tools/export_model.py --variants onnx,openvino)
# join the candidates, and adds them to `aitune::torch` where found; without them the backends
# are still there and their builds fail with the reason. Called by aitune_find_torch, so the
# project and a consumer's find_package(aitune COMPONENTS torch) find them alike.
#   OpenVINO      its CMake package (the openvino wheel ships one, found beside the torch wheel
#                 LibTorch came from; or OpenVINO_DIR), 2024.0 or newer: links openvino::runtime
#                 and defines AITUNE_WITH_OPENVINO=1.
#   ONNX Runtime  loaded at run time (dlopen) through its versioned C API: needs only the header
#                 onnxruntime_c_api.h, in ONNXRUNTIME_INCLUDE_DIR (tools/fetch-onnxruntime-
#                 headers.sh puts Debian's in .deps/onnxruntime/include), for
#                 AITUNE_WITH_ONNXRUNTIME=1; the library, AITUNE_ONNXRUNTIME_LIBRARY, defaults to
#                 the onnxruntime wheel's beside the torch wheel, and the environment variable of
#                 that name overrides it at run time.
# AITUNE_FIND_RUNTIMES=OFF leaves both out. Sets AITUNE_HAVE_OPENVINO and AITUNE_HAVE_ONNXRUNTIME.
macro(aitune_find_runtimes)
  set(AITUNE_HAVE_OPENVINO OFF)
  set(AITUNE_HAVE_ONNXRUNTIME OFF)
  if(NOT DEFINED AITUNE_FIND_RUNTIMES OR AITUNE_FIND_RUNTIMES)
    # The site-packages the wheels live in: the torch wheel's (Torch_DIR is
    # <site>/torch/share/cmake/Torch), where the runtimes' wheels are installed beside it.
    set(_aitune_site "")
    get_filename_component(_aitune_torch_site "${Torch_DIR}/../../../.." ABSOLUTE)
    if(Torch_DIR AND EXISTS "${_aitune_torch_site}/torch/__init__.py")
      set(_aitune_site "${_aitune_torch_site}")
    endif()
    # OpenVINO: the wheel's package asks for no version here (its version file refuses a
    # request for an older major, e.g. find_package(OpenVINO 2024) rejects 2026.4); checked below.
    if(NOT TARGET openvino::runtime)
      if(_aitune_site AND EXISTS "${_aitune_site}/openvino/cmake/OpenVINOConfig.cmake"
         AND NOT OpenVINO_DIR)
        set(OpenVINO_DIR "${_aitune_site}/openvino/cmake")
      endif()
      find_package(OpenVINO QUIET COMPONENTS Runtime)
    endif()
    if(TARGET openvino::runtime AND OpenVINO_VERSION VERSION_GREATER_EQUAL 2024.0)
      set(AITUNE_HAVE_OPENVINO ON)
      set_property(TARGET aitune::torch APPEND PROPERTY INTERFACE_LINK_LIBRARIES openvino::runtime)
      set_property(TARGET aitune::torch APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS
                                                        AITUNE_WITH_OPENVINO=1)
      message(STATUS "aitune: OpenVINO ${OpenVINO_VERSION} at ${OpenVINO_DIR}")
    elseif(TARGET openvino::runtime)
      message(STATUS "aitune: OpenVINO ${OpenVINO_VERSION} is older than 2024.0: left out")
    else()
      message(STATUS "aitune: no OpenVINO (install the openvino wheel, or set OpenVINO_DIR): "
                     "its candidates fail to build")
    endif()
    # ONNX Runtime: the C API header, and the library to load.
    find_path(ONNXRUNTIME_INCLUDE_DIR onnxruntime_c_api.h
              HINTS ${AITUNE_ONNXRUNTIME_HEADER_HINTS} PATH_SUFFIXES onnxruntime
              DOC "Folder of ONNX Runtime's onnxruntime_c_api.h (tools/fetch-onnxruntime-headers.sh)")
    # Looked for again when the one found before is gone (a wheel upgrade renames it).
    if((NOT AITUNE_ONNXRUNTIME_LIBRARY OR NOT EXISTS "${AITUNE_ONNXRUNTIME_LIBRARY}")
       AND _aitune_site)
      file(GLOB _aitune_ort_libraries "${_aitune_site}/onnxruntime/capi/libonnxruntime.so*")
      if(_aitune_ort_libraries)
        list(GET _aitune_ort_libraries 0 _aitune_ort_library)
        set(AITUNE_ONNXRUNTIME_LIBRARY "${_aitune_ort_library}" CACHE FILEPATH
            "The ONNX Runtime library the OnnxRuntime backend loads (the environment variable of this name overrides it at run time)"
            FORCE)
      endif()
    endif()
    if(ONNXRUNTIME_INCLUDE_DIR)
      set(AITUNE_HAVE_ONNXRUNTIME ON)
      set_property(TARGET aitune::torch APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES
                                                        "${ONNXRUNTIME_INCLUDE_DIR}")
      set_property(TARGET aitune::torch APPEND PROPERTY INTERFACE_LINK_LIBRARIES ${CMAKE_DL_LIBS})
      set_property(TARGET aitune::torch APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS
                                                        AITUNE_WITH_ONNXRUNTIME=1)
      if(AITUNE_ONNXRUNTIME_LIBRARY)
        # The path as a C string literal.
        string(REPLACE "\\" "\\\\" _aitune_ort_literal "${AITUNE_ONNXRUNTIME_LIBRARY}")
        string(REPLACE "\"" "\\\"" _aitune_ort_literal "${_aitune_ort_literal}")
        set_property(TARGET aitune::torch APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS
                     "AITUNE_ONNXRUNTIME_LIBRARY_PATH=\"${_aitune_ort_literal}\"")
        message(STATUS "aitune: ONNX Runtime headers at ${ONNXRUNTIME_INCLUDE_DIR}, library "
                       "${AITUNE_ONNXRUNTIME_LIBRARY}")
      else()
        message(STATUS "aitune: ONNX Runtime headers at ${ONNXRUNTIME_INCLUDE_DIR}, no library "
                       "found: set AITUNE_ONNXRUNTIME_LIBRARY (CMake or environment), or its "
                       "candidates fail to build")
      endif()
    else()
      message(STATUS "aitune: no ONNX Runtime headers (run tools/fetch-onnxruntime-headers.sh, "
                     "or set ONNXRUNTIME_INCLUDE_DIR): its candidates fail to build")
    endif()
  endif()
endmacro()
