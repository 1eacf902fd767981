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
