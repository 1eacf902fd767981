# Compile time of our own tests, examples and benchmarks (never a consumer's targets: this is
# included only for them, and applies to the directories that hold them).
#
# GCC collects its garbage each time its heap has doubled, from 128 MB on (its defaults on a
# machine with 1 GB or more), and one of our LibTorch translation units grows it to 1.5-2.3 GB,
# nearly all of it still in use: each collection walks it for little. A LibTorch test file took
# 54 s, and 45 s with collections from 4 GB on; its peak memory grew by 13 %, a header check's
# (18-20 s rather than 20-22 s) not at all.
# -DAITUNE_GCC_FEWER_COLLECTIONS=OFF keeps GCC's defaults (on a machine short of memory).
option(AITUNE_GCC_FEWER_COLLECTIONS
       "GCC: collect garbage from a 4 GB heap on, for our own targets (faster, a little more memory)"
       ON)
set(AITUNE_GCC_COLLECTION_OPTIONS "")
if(AITUNE_GCC_FEWER_COLLECTIONS AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # The = form: add_compile_options would merge two separate "--param" words into one.
  set(AITUNE_GCC_COLLECTION_OPTIONS --param=ggc-min-expand=400 --param=ggc-min-heapsize=4194304)
endif()
add_compile_options(${AITUNE_GCC_COLLECTION_OPTIONS})
