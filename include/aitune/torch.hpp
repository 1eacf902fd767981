// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The core plus the LibTorch layer (namespace aitune::lt): TorchScript backends, the output
/// comparison, AnyBackend, TunedModule. Link LibTorch (`${TORCH_LIBRARIES}`) to use it.

#include "aitune/all.hpp"
#include "aitune/torch/any_backend.hpp"
#include "aitune/torch/aot_inductor.hpp"
#include "aitune/torch/background_tuning.hpp"
#include "aitune/torch/compare_outputs.hpp"
#include "aitune/torch/config.hpp"
#include "aitune/torch/converted_model.hpp"
#include "aitune/torch/cuda_graph.hpp"
#include "aitune/torch/device_memory.hpp"
#include "aitune/torch/device_timer.hpp"
#include "aitune/torch/dtypes.hpp"
#include "aitune/torch/inputs.hpp"
#include "aitune/torch/ivalue_walk.hpp"
#include "aitune/torch/libtorch_messages.hpp"
#include "aitune/torch/model.hpp"
#include "aitune/torch/onnx_runtime.hpp"
#include "aitune/torch/openvino.hpp"
#include "aitune/torch/perturbed.hpp"
#include "aitune/torch/precision.hpp"
#include "aitune/torch/sample_file.hpp"
#include "aitune/torch/script_backend.hpp"
#include "aitune/torch/stored_outputs.hpp"
#include "aitune/torch/tolerance.hpp"
#include "aitune/torch/torch_threads.hpp"
#include "aitune/torch/tune.hpp"
#include "aitune/torch/tuned_module.hpp"
#include "aitune/torch/tuning_key.hpp"
