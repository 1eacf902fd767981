# Builds and runs tests/consumer against aitune in each way a user can get it.
set(consumer_src "${CMAKE_CURRENT_SOURCE_DIR}/consumer")
set(consumer_bin "${CMAKE_CURRENT_BINARY_DIR}/consumer")
set(install_prefix "${CMAKE_CURRENT_BINARY_DIR}/consumer/install-prefix")

# Forward the build's compiler, the test programs' optimisation (packaging is what is checked)
# and where the dependencies were found.
set(consumer_common_options
    "-DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}"
    "-DCMAKE_BUILD_TYPE=Release"
    "-Dfmt_DIR=${fmt_DIR}"
    "-Dnlohmann_json_DIR=${nlohmann_json_DIR}"
    "-DAITUNE_VENDORED_INCLUDE_DIR=${AITUNE_VENDORED_INCLUDE_DIR}")
if(AITUNE_TEST_OPTIMIZATION)
  list(APPEND consumer_common_options "-DCMAKE_CXX_FLAGS_RELEASE=${AITUNE_TEST_OPTIMIZATION} -DNDEBUG")
endif()
# GCC's garbage collections too (cmake/AituneCompileTime.cmake): the LibTorch consumer's one
# file is most of its test's minute and a half.
if(AITUNE_GCC_COLLECTION_OPTIONS)
  list(JOIN AITUNE_GCC_COLLECTION_OPTIONS " " collection_flags)
  list(APPEND consumer_common_options "-DCMAKE_CXX_FLAGS=${collection_flags}")
endif()

# DIR names the consumer's build folder apart from the test's name: LibTorch's CUDA probe (and
# other try_compile steps under Unix Makefiles) cannot compile in a path with spaces or brackets.
function(aitune_add_consumer_test name)
  cmake_parse_arguments(arg "" "PROGRAM;DIR" "OPTIONS;FIXTURES" ${ARGN})
  if(NOT arg_PROGRAM)
    set(arg_PROGRAM consumer)
  endif()
  if(NOT arg_DIR MATCHES "^[A-Za-z0-9_.-]+$")
    message(FATAL_ERROR "aitune_add_consumer_test(${name}): DIR '${arg_DIR}' must be a plain folder name")
  endif()
  add_test(NAME "packaging: consumer via ${name}"
           COMMAND "${CMAKE_CTEST_COMMAND}" --build-and-test "${consumer_src}"
                   "${consumer_bin}/${arg_DIR}" --build-generator "${CMAKE_GENERATOR}"
                   --build-options ${consumer_common_options} ${arg_OPTIONS}
                   --test-command "${consumer_bin}/${arg_DIR}/${arg_PROGRAM}")
  set_tests_properties("packaging: consumer via ${name}" PROPERTIES LABELS packaging)
  if(arg_FIXTURES)
    set_tests_properties("packaging: consumer via ${name}" PROPERTIES FIXTURES_REQUIRED
                                                                      "${arg_FIXTURES}")
  endif()
endfunction()

add_test(NAME "packaging: install tree"
         COMMAND "${CMAKE_COMMAND}" --install "${PROJECT_BINARY_DIR}" --prefix "${install_prefix}")
set_tests_properties("packaging: install tree" PROPERTIES FIXTURES_SETUP aitune_install_tree
                                                          LABELS packaging)

# The torch-free consumers: the primary preset's (see AITUNE_TEST_LIBTORCH_ONLY).
if(NOT AITUNE_TEST_LIBTORCH_ONLY)
  aitune_add_consumer_test("find_package (build tree)" DIR find-package-build-tree
                           OPTIONS "-DAITUNE_CONSUME=find_package"
                                   "-Daitune_DIR=${PROJECT_BINARY_DIR}")
  # The examples an integrator starts from come with the package.
  add_test(NAME "packaging: the install tree holds the README's server and the other examples"
           COMMAND "${CMAKE_COMMAND}" -E cat
                   "${install_prefix}/share/aitune/examples/minimal_server.cpp"
                   "${install_prefix}/share/aitune/examples/inference_server.cpp"
                   "${install_prefix}/share/aitune/examples/counted_backend.hpp")
  set_tests_properties("packaging: the install tree holds the README's server and the other examples"
                       PROPERTIES LABELS packaging FIXTURES_REQUIRED aitune_install_tree
                                  PASS_REGULAR_EXPRESSION "lt::tune\\(model, samples.*class CountedBackend")
  aitune_add_consumer_test("find_package (install tree)" DIR find-package-install-tree
                           OPTIONS "-DAITUNE_CONSUME=find_package"
                                   "-DCMAKE_PREFIX_PATH=${install_prefix}"
                           FIXTURES aitune_install_tree)

  if(TARGET aitune::redis)
    aitune_add_consumer_test("find_package with COMPONENTS redis (install tree)"
                             DIR find-package-redis-install-tree PROGRAM consumer_redis
                             OPTIONS "-DAITUNE_CONSUME=find_package" "-DAITUNE_CONSUME_REDIS=ON"
                                     "-DCMAKE_PREFIX_PATH=${install_prefix}"
                             FIXTURES aitune_install_tree)
  endif()

  aitune_add_consumer_test("add_subdirectory" DIR add-subdirectory
                           OPTIONS "-DAITUNE_CONSUME=add_subdirectory"
                                   "-DAITUNE_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
  aitune_add_consumer_test("FetchContent" DIR fetchcontent
                           OPTIONS "-DAITUNE_CONSUME=fetchcontent"
                                   "-DAITUNE_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endif()

# A consumer of the LibTorch layer, against the install tree and the LibTorch this build found
# (in the primary build, the wheel's, with CUDA and its own fmt headers).
if(AITUNE_HAVE_TORCH)
  # LibTorch's CMake prefix (Torch_DIR is <prefix>/Torch): its Caffe2 package must come from the
  # same prefix, not from another LibTorch on the system.
  get_filename_component(torch_prefix "${Torch_DIR}/.." ABSOLUTE)
  aitune_add_consumer_test("find_package with COMPONENTS torch (install tree, LibTorch's fmt not shadowing ours)"
                           DIR find-package-torch-install-tree PROGRAM consumer_torch
                           OPTIONS "-DAITUNE_CONSUME=find_package" "-DAITUNE_CONSUME_TORCH=ON"
                                   "-DCMAKE_PREFIX_PATH=${install_prefix}$<SEMICOLON>${torch_prefix}"
                                   "-DAITUNE_EXPECT_CUDA=$<BOOL:${AITUNE_TORCH_HAS_CUDA}>"
                                   # The runtimes this build found, handed over as a user would;
                                   # ONNX Runtime's header comes with the package.
                                   "-DOpenVINO_DIR=${OpenVINO_DIR}"
                                   "-DAITUNE_ONNXRUNTIME_LIBRARY=${AITUNE_ONNXRUNTIME_LIBRARY}"
                                   "-DAITUNE_EXPECT_OPENVINO=$<BOOL:${AITUNE_HAVE_OPENVINO}>"
                                   "-DAITUNE_EXPECT_ONNXRUNTIME=$<BOOL:${AITUNE_HAVE_ONNXRUNTIME}>"
                           FIXTURES aitune_install_tree)

  # What configuring a consumer says: the LibTorch it found, or, with none, what to do.
  string(JOIN "|" consumer_configure_options ${consumer_common_options})
  foreach(expect found not_found)
    if(expect STREQUAL "found")
      set(name "packaging: find_package with COMPONENTS torch says which LibTorch it found")
      set(options "")
    else()
      set(name "packaging: find_package with COMPONENTS torch and no LibTorch fails saying why")
      set(options "-DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON")
    endif()
    add_test(NAME "${name}"
             COMMAND "${CMAKE_COMMAND}" "-DSOURCE=${consumer_src}"
                     "-DBINARY=${consumer_bin}/configure-torch-${expect}"
                     "-DGENERATOR=${CMAKE_GENERATOR}" "-DPREFIX_PATH=${install_prefix}|${torch_prefix}"
                     "-DOPTIONS=${options}|${consumer_configure_options}"
                     "-DEXPECT=${expect}"
                     -P "${CMAKE_CURRENT_SOURCE_DIR}/cmake/check_consumer_configure.cmake")
    set_tests_properties("${name}" PROPERTIES LABELS packaging FIXTURES_REQUIRED
                                                               aitune_install_tree)
  endforeach()
endif()
