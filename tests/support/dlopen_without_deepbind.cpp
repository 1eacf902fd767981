// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// Linked into the runtime tests under ThreadSanitizer only. OpenVINO's TBB opens libtbbbind with
// RTLD_DEEPBIND, which the sanitizers' runtime refuses, ending the process
// (google/sanitizers#611). The executable's own dlopen comes first in symbol lookup: it drops
// that flag and hands the call on to the next dlopen (the sanitizer's, then libc's).
#include <dlfcn.h>

extern "C" void* dlopen(const char* file, int flags) {
  using Open = void* (*)(const char*, int);
  static const auto next = reinterpret_cast<Open>(dlsym(RTLD_NEXT, "dlopen"));
  return next(file, flags & ~RTLD_DEEPBIND);
}
