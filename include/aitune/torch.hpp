// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The core plus the LibTorch layer (namespace aitune::lt): TorchScript backends, the output
/// comparison, AnyBackend, TunedModule. Link LibTorch (`${TORCH_LIBRARIES}`) to use it.

#include "aitune/all.hpp"
#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/backends/aot_inductor.hpp"
#include "aitune/torch/backends/onnx_runtime.hpp"
#include "aitune/torch/backends/openvino.hpp"
#include "aitune/torch/backends/runtime_variant.hpp"
#include "aitune/torch/backends/torchscript.hpp"
#include "aitune/torch/check/compare_outputs.hpp"
#include "aitune/torch/check/stored_reference.hpp"
#include "aitune/torch/check/tolerance.hpp"
#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/libtorch_messages.hpp"
#include "aitune/torch/measure/device_memory.hpp"
#include "aitune/torch/measure/device_timer.hpp"
#include "aitune/torch/model/dtype_names.hpp"
#include "aitune/torch/model/input_spec.hpp"
#include "aitune/torch/model/ivalue_walk.hpp"
#include "aitune/torch/model/model.hpp"
#include "aitune/torch/model/sample_file.hpp"
#include "aitune/torch/serve/tuned_module.hpp"
#include "aitune/torch/tune/background_tuning.hpp"
#include "aitune/torch/tune/candidate_precision.hpp"
#include "aitune/torch/tune/tune.hpp"
#include "aitune/torch/tune/tuning_key.hpp"
#include "aitune/torch/wrappers/cuda_graph.hpp"
#include "aitune/torch/wrappers/perturbed_outputs.hpp"
#include "aitune/torch/wrappers/torch_threads.hpp"
