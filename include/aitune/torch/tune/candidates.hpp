// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The same LibTorch candidates at other intra-op thread counts (with_torch_threads). The
/// catalogue of default candidates is torch/tune/catalogue.hpp; the runtime sessions' thread
/// counts are a CandidatePlan's (torch/backends/candidate_plan.hpp).

#include "aitune/core/error.hpp"
#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/backends/candidate_plan.hpp"
#include "aitune/torch/customization.hpp"
#include "aitune/torch/model/model.hpp"
#include "aitune/torch/tune/baseline.hpp"
#include "aitune/torch/wrappers/torch_threads.hpp"

#include <ATen/Parallel.h>

#include <algorithm>
#include <iterator>
#include <thread>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// LibTorch intra-op thread counts worth measuring besides the process's own: those of
/// runtime_thread_counts(`cores`) that differ from at::get_num_threads() (on 2 cores with
/// LibTorch's default of 2, just 1).
[[nodiscard]] inline std::vector<int>
torch_thread_counts(unsigned cores = std::thread::hardware_concurrency()) {
  std::vector<int> counts = runtime_thread_counts(cores);
  std::erase(counts, at::get_num_threads());
  return counts;
}

/// `candidates`, then the baseline and each candidate that runs on LibTorch's threads at the
/// process's count (its torch_thread_use(); not an ONNX Runtime or OpenVINO session, which have
/// threads of their own: default_candidates' runtime_threads, nor a TorchThreads) again as
/// TorchThreads at each count of `counts` (1 or more; the process's own count and
/// repeats are skipped; so is a candidate with the baseline's key). Setting LibTorch's count
/// reaches past one backend (TorchThreads): the tuning sets it for those candidates' calls only
/// and puts it back after them (aitune::after_calls), and the module a tuning returns serves a
/// winner at the serving threads' count unless TuneOptions::torch_threads is
/// TunedThreads::apply. Each count adds as many candidates as the tuning had LibTorch ones, and
/// takes a share of the error level. A CUDA model gets none: the count does not change its
/// kernels.
[[nodiscard]] inline std::vector<AnyBackend>
with_torch_threads(const Model& model, std::vector<AnyBackend> candidates,
                   const std::vector<int>& counts = torch_thread_counts()) {
  if (std::any_of(counts.begin(), counts.end(), [](int n) { return n < 1; })) {
    throw ConfigError("with_torch_threads: LibTorch thread counts are 1 or more");
  }
  if (model.device.is_cuda()) return candidates;
  std::vector<const AnyBackend*> on_torch_threads;
  const AnyBackend baseline = make_baseline(model);
  on_torch_threads.push_back(&baseline);
  for (const AnyBackend& candidate : candidates) {
    if (candidate.torch_thread_use() == TorchThreadUse::process_count &&
        candidate.key() != baseline.key()) {
      on_torch_threads.push_back(&candidate);
    }
  }
  std::vector<AnyBackend> added;  // apart: on_torch_threads points into candidates
  const int process_threads = at::get_num_threads();
  std::vector<int> done{process_threads};
  for (const int count : counts) {
    if (std::find(done.begin(), done.end(), count) != done.end()) continue;
    done.push_back(count);
    for (const AnyBackend* backend : on_torch_threads)
      added.emplace_back(TorchThreads(*backend, count));
  }
  std::move(added.begin(), added.end(), std::back_inserter(candidates));
  return candidates;
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
