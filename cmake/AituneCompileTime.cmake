# Compile time of our own tests, examples and benchmarks (never a consumer's targets: this is
# included only for them, and applies to the directories that hold them).
#
# GCC collects its garbage each time its heap has doubled, from 128 MB on (its defaults on a
# machine with 1 GB or more), and one of our LibTorch translation units grows it to 1.5-2.3 GB,
# nearly all of it still in use: each collection walks it for little. With these options the
# first collection waits until the heap passes 4 GB and then 400 % more (20 GB): in effect none,
# for files of ours. A LibTorch test file took 54 s, and 45 s without collections; its peak
# memory grew by 13 % (to 2.3 GB), a header check's (18-20 s rather than 20-22 s) not at all.
# -DAITUNE_GCC_FEWER_COLLECTIONS=OFF keeps GCC's defaults (on a machine short of memory).
option(AITUNE_GCC_FEWER_COLLECTIONS
       "GCC: no garbage collections below a 20 GB heap, for our own targets (faster, more memory)"
       ON)
set(AITUNE_GCC_COLLECTION_OPTIONS "")
if(AITUNE_GCC_FEWER_COLLECTIONS AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # The = form: add_compile_options drops a repeated option word, the second "--param".
  set(AITUNE_GCC_COLLECTION_OPTIONS --param=ggc-min-expand=400 --param=ggc-min-heapsize=4194304)
endif()
add_compile_options(${AITUNE_GCC_COLLECTION_OPTIONS})
