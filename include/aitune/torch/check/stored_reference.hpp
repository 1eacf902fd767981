// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The baseline's outputs kept in a tuning cache entry (aitune::reference_codec for AnyBackend),
/// so that a cache hit checks its choice without building the baseline again: the outputs as
/// LibTorch pickles them (torch.save's zip archive, tensors copied to the CPU), in base64; and a
/// digest of the samples' values, since outputs stored for other inputs must not be the
/// reference (the cache key covers the inputs' shapes and dtypes, not their values).

#include "aitune/core/cache/sha256.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/text/base64.hpp"
#include "aitune/core/text/zip_structure.hpp"
#include "aitune/torch/model/ivalue_walk.hpp"
#include "aitune/torch/model/model.hpp"

#include <torch/csrc/jit/serialization/pickle.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

namespace detail {

/// `tensor`'s values as they read, on the CPU: a conjugate or negative view's lazy bit resolved
/// into its bytes, so that equal values give equal bytes.
[[nodiscard]] inline at::Tensor values_on_cpu(const at::Tensor& tensor) {
  return tensor.detach().resolve_conj().resolve_neg().to(c10::kCPU);
}

/// Feeds `value` into `hash`, exactly: each container's kind and size, each tensor's dtype,
/// shape and bytes, each scalar's kind and exact text. False for a value it cannot digest
/// exactly (a sparse or quantized tensor, an object).
[[nodiscard]] inline bool digest_value(Sha256& hash, const c10::IValue& value) {
  if (const Container kind = container_of(value); kind != Container::none) {
    const std::vector<IValueChild> children = children_of(value);
    hash.update(fmt::format("{}:{}(", to_string(kind), children.size()));
    for (const IValueChild& child : children) {
      if (kind == Container::dict && !digest_value(hash, child.key)) return false;
      if (!digest_value(hash, child.value)) return false;
    }
    hash.update(")");
    return true;
  }
  if (value.isTensor()) {
    const at::Tensor& tensor = value.toTensor();
    if (tensor.layout() != c10::kStrided || tensor.is_quantized()) return false;
    const at::Tensor dense = values_on_cpu(tensor).contiguous();
    hash.update(fmt::format("tensor:{}:[{}]:", c10::toString(dense.scalar_type()),
                            fmt::join(dense.sizes(), ",")));
    if (dense.nbytes() > 0) {  // an empty tensor may have no data pointer at all
      hash.update(std::string_view(static_cast<const char*>(dense.data_ptr()), dense.nbytes()));
    }
    return true;
  }
  if (value.isDouble()) {
    hash.update(fmt::format("double:{};", value.toDouble()));  // the shortest exact text
  } else if (value.isInt()) {
    hash.update(fmt::format("int:{};", value.toInt()));
  } else if (value.isBool()) {
    hash.update(value.toBool() ? "bool:1;" : "bool:0;");
  } else if (value.isString()) {
    const std::string& text = value.toStringRef();
    hash.update(fmt::format("string:{}:", text.size()));
    hash.update(text);
  } else if (value.isNone()) {
    hash.update("none;");
  } else {
    return false;
  }
  return true;
}

}  // namespace detail

/// A digest of the samples' values, or none when a value cannot be digested exactly.
[[nodiscard]] inline std::optional<std::string> digest_samples(std::span<const Sample> samples) {
  Sha256 hash;
  for (const Sample& sample : samples) {
    hash.update(fmt::format("sample:{}(", sample.size()));
    for (const c10::IValue& value : sample) {
      if (!detail::digest_value(hash, value)) return std::nullopt;
    }
    hash.update(")");
  }
  return hash.hex();
}

/// The outputs as text for a JSON file: one tuple of them, its tensors copied to the CPU (a
/// compact copy: a view does not drag its whole storage along), pickled and base64-encoded.
/// Throws what LibTorch throws for a value it cannot pickle.
[[nodiscard]] inline std::string encode_outputs(const std::vector<c10::IValue>& outputs) {
  std::vector<c10::IValue> on_cpu;
  on_cpu.reserve(outputs.size());
  for (const c10::IValue& output : outputs) {
    on_cpu.push_back(map_tensors(output, [](const at::Tensor& tensor) {
      return detail::values_on_cpu(tensor).clone(at::MemoryFormat::Contiguous);
    }));
  }
  const std::vector<char> bytes =
      torch::jit::pickle_save(c10::ivalue::Tuple::create(std::move(on_cpu)));
  return base64_encode(std::string_view(bytes.data(), bytes.size()));
}

/// The outputs encode_outputs wrote (on the CPU; the comparison with a candidate's reads both
/// there). Throws aitune::Error, saying why, for any other text: the archive is checked before
/// LibTorch's reader, which trusts its offsets, sees it.
[[nodiscard]] inline std::vector<c10::IValue> decode_outputs(const std::string& text) {
  const std::optional<std::string> bytes = base64_decode(text);
  if (!bytes) throw Error("the stored outputs are not base64");
  const std::vector<char> archive(bytes->begin(), bytes->end());
  if (const auto problem = check_zip_structure(archive)) {
    throw Error(fmt::format("the stored outputs are a damaged zip archive: {}", *problem));
  }
  c10::IValue value;
  try {
    value = torch::jit::pickle_load(archive);
  } catch (const std::exception& failure) {
    throw Error(
        fmt::format("LibTorch cannot read the stored outputs: {}", summarize_error(failure)));
  }
  if (!value.isTuple()) throw Error("the stored outputs are not a tuple of outputs");
  std::vector<c10::IValue> outputs;
  for (const IValueChild& child : children_of(value))
    outputs.push_back(child.value);
  return outputs;
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
