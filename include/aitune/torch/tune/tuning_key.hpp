// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// What a LibTorch tuning's decision depends on, as JSON: the key of the tuning cache, and the
/// environment of the report. The key covers the model's content, the inputs' shapes and dtypes,
/// the machine (CPU model, the instruction sets that decide reduced precision, and threads; GPU,
/// compute capability, CUDA runtime, driver and cuDNN versions), LibTorch's intra-op threads, the
/// LibTorch and aitune versions, every candidate (its key, description, tolerance and the content
/// of any file it loads) and every setting that can change the decision, by value (settings_key).
/// Anything else (the time of day, the path of the model file) is left out, so identical machines
/// share entries.

#include "aitune/core/cache/settings_key.hpp"
#include "aitune/core/cache/sha256.hpp"
#include "aitune/core/cache/tuning_cache.hpp"
#include "aitune/core/io/cpu_info.hpp"
#include "aitune/core/strategy/strategy_config.hpp"
#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/model/input_spec.hpp"
#include "aitune/torch/model/model.hpp"
#include "aitune/version.hpp"

#include <ATen/Parallel.h>

#if AITUNE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/detail/CUDAHooksInterface.h>

#include <cuda_runtime_api.h>
#endif

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// The machine `device` is on: the CPU's model, the instruction sets that decide reduced
/// precision (core/io/cpu_info.hpp) and hardware threads and, for a CUDA device, the GPU's name,
/// compute capability, and the CUDA runtime, driver and cuDNN versions.
[[nodiscard]] inline nlohmann::json describe_machine(c10::Device device) {
  nlohmann::json machine{{"device", device.str()},
                         {"cpu", cpu_model_name()},
                         {"cpu_features", cpu_features()},
                         {"hardware_threads", std::thread::hardware_concurrency()}};
#if AITUNE_WITH_CUDA
  if (device.is_cuda()) {
    const cudaDeviceProp* properties = at::cuda::getDeviceProperties(device.index());
    machine["gpu"] = properties->name;
    machine["compute_capability"] = fmt::format("{}.{}", properties->major, properties->minor);
    int runtime = 0;
    int driver = 0;
    (void)cudaRuntimeGetVersion(&runtime);
    (void)cudaDriverGetVersion(&driver);
    machine["cuda_runtime"] = runtime;
    machine["cuda_driver"] = driver;
    machine["cudnn"] = at::detail::getCUDAHooks().versionCuDNN();
  }
#endif
  return machine;
}

/// How a file's content is named in the key: sha256_file, or TuningCache::digest_of (which
/// remembers the digests of files that did not change).
using FileDigest = std::function<std::string(const std::filesystem::path&)>;

/// A SHA-256 of the model's content: its file's, or a module made in memory's serialized form.
[[nodiscard]] inline std::string model_digest(const Model& model,
                                              const FileDigest& digest_of = sha256_file) {
  if (!model.source.empty()) return digest_of(model.source);
  if (model.archive) return digest_of(model.archive->path);
  std::ostringstream serialized;
  model.module.save(serialized);
  return sha256_hex(serialized.str());
}

/// The key of a tuning of `model` on `samples` over `candidates` with `config`: see the file's
/// comment for what it covers. Equal keys, equal decisions to expect.
[[nodiscard]] inline nlohmann::json tuning_key(const Model& model, std::span<const Sample> samples,
                                               const std::vector<AnyBackend>& candidates,
                                               const StrategyConfig& config,
                                               const FileDigest& digest_of = sha256_file) {
  nlohmann::json inputs = nlohmann::json::array();
  for (const Sample& sample : samples)
    inputs.push_back(describe_sample(sample));
  const std::string model_sha256 = model_digest(model, digest_of);
  nlohmann::json listed = nlohmann::json::array();
  for (const AnyBackend& candidate : candidates) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& file : candidate.loaded_files()) {
      const bool is_model = model.archive && file == model.archive->path;
      files.push_back(is_model ? model_sha256 : digest_of(file));
    }
    listed.push_back({{"key", candidate.key()},
                      {"backend", candidate.describe()},
                      {"tolerance", candidate.output_policy().tolerance.describe()},
                      {"files_sha256", files}});
  }
  return {{"model_sha256", model_sha256},
          {"model_format", model.is_exported() ? "torch.export" : "torchscript"},
          {"inputs", inputs},
          {"machine", describe_machine(model.device)},
          {"intra_op_threads", at::get_num_threads()},
          {"libtorch", libtorch_version()},
          {"aitune", aitune::version},
          {"candidates", listed},
          {"settings", settings_key(config)}};
}

/// As above, with the file digests from `cache`'s memo: a restart does not read the model
/// file again while it is unchanged.
[[nodiscard]] inline nlohmann::json tuning_key(const Model& model, std::span<const Sample> samples,
                                               const std::vector<AnyBackend>& candidates,
                                               const StrategyConfig& config,
                                               const TuningCache& cache) {
  const Logger log = config.logger();
  return tuning_key(
      model, samples, candidates, config,
      [&cache, &log](const std::filesystem::path& file) { return cache.digest_of(file, log); });
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
