// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The structure of a model's outputs, and flat outputs rebuilt into it.
///
/// A compiled model (AOTInductor; ONNX Runtime and OpenVINO likewise) returns its outputs flat:
/// a list of tensors. The program it was compiled from returns them in a structure - a dict of
/// tensors, a tuple holding a list, `None` here and there - which its exporter records as a
/// pytree "TreeSpec" (`torch.utils._pytree.treespec_dumps`, the `out_spec` of a call spec). This
/// header reads that record and rebuilds the flat outputs into the structure, so a compiled
/// candidate returns what the baseline returns and a server sees the same value whichever
/// backend won.
///
/// Known node types: leaves, `builtins.tuple`, `builtins.list`, `builtins.dict` and
/// `collections.OrderedDict` (keys and their order kept), and `builtins.NoneType` (older
/// PyTorch; newer ones make None a leaf whose flat output is an undefined tensor). Any other
/// type (a namedtuple, a Hugging Face `ModelOutput`, a dataclass) makes the spec unusable:
/// parse_output_structure says why, and the caller falls back to the flat outputs.

#include "aitune/core/error.hpp"
#include "aitune/core/text/json_parse.hpp"
#include "aitune/torch/libtorch.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// One node of an output structure.
struct OutputStructure {
  enum class Kind { leaf, none, tuple, list, dict };

  Kind kind = Kind::leaf;
  std::vector<c10::IValue> keys{};  ///< a dict's keys, in order (strings or integers)
  std::vector<OutputStructure> children{};

  /// How many flat outputs this node takes: one per leaf.
  [[nodiscard]] std::size_t leaves() const {
    if (kind == Kind::leaf) return 1;
    std::size_t count = 0;
    for (const auto& child : children)
      count += child.leaves();
    return count;
  }
};

/// A parsed structure, or why there is none.
using ParsedOutputStructure = std::variant<OutputStructure, std::string>;

namespace detail {

inline ParsedOutputStructure parse_structure_node(const nlohmann::json& node, int depth) {
  using Kind = OutputStructure::Kind;
  // Real outputs nest a few levels; a limit keeps a hostile spec from exhausting the stack.
  constexpr int max_depth = 64;
  if (depth > max_depth) return fmt::format("it nests deeper than {} levels", max_depth);
  if (!node.is_object() || !node.contains("type") || !node.contains("children_spec") ||
      !node["children_spec"].is_array()) {
    return std::string("a node is not {type, context, children_spec}");
  }
  const auto& type = node["type"];
  OutputStructure structure;
  if (type.is_null()) {
    if (!node["children_spec"].empty()) return std::string("a leaf has children");
    return structure;
  }
  if (!type.is_string()) return std::string("a node's type is not a string");
  const auto name = type.get<std::string>();
  if (name == "builtins.tuple") {
    structure.kind = Kind::tuple;
  } else if (name == "builtins.list") {
    structure.kind = Kind::list;
  } else if (name == "builtins.dict" || name == "collections.OrderedDict") {
    structure.kind = Kind::dict;
  } else if (name == "builtins.NoneType") {
    structure.kind = Kind::none;
  } else {
    return fmt::format("it holds a {}, which is not a tuple, list or dict", name);
  }
  if (structure.kind == Kind::dict) {
    // The context is the keys, as JSON text inside the JSON: "[\"logits\", \"hidden\"]".
    const auto& context = node.contains("context") ? node["context"] : nlohmann::json();
    const auto keys =
        context.is_string() ? parse_json_bounded(context.get<std::string>()) : nlohmann::json();
    if (!keys.is_array()) return fmt::format("the keys of a {} are not a list", name);
    for (const auto& key : keys) {
      if (key.is_string()) {
        structure.keys.emplace_back(key.get<std::string>());
      } else if (key.is_number_integer()) {
        structure.keys.emplace_back(key.get<std::int64_t>());
      } else {
        return fmt::format("a key of a {} is {}, not a string or an integer", name, key.dump());
      }
    }
    if (structure.keys.size() != node["children_spec"].size()) {
      return fmt::format("a {} has {} keys for {} values", name, structure.keys.size(),
                         node["children_spec"].size());
    }
  }
  for (const auto& child : node["children_spec"]) {
    auto parsed = parse_structure_node(child, depth + 1);
    if (auto* why = std::get_if<std::string>(&parsed)) return std::move(*why);
    structure.children.push_back(std::get<OutputStructure>(std::move(parsed)));
  }
  if (structure.kind == Kind::none && !structure.children.empty()) {
    return std::string("a None has children");
  }
  return structure;
}

inline c10::IValue rebuild_node(const OutputStructure& node, const std::vector<at::Tensor>& flat,
                                std::size_t& next) {
  using Kind = OutputStructure::Kind;
  switch (node.kind) {
    case Kind::leaf: {
      const at::Tensor& tensor = flat[next++];
      // A None leaf comes back from a compiled model as an undefined tensor.
      return tensor.defined() ? c10::IValue(tensor) : c10::IValue();
    }
    case Kind::none: return c10::IValue();
    case Kind::tuple: {
      std::vector<c10::IValue> elements;
      elements.reserve(node.children.size());
      for (const auto& child : node.children)
        elements.push_back(rebuild_node(child, flat, next));
      return c10::ivalue::Tuple::create(std::move(elements));
    }
    case Kind::list: {
      c10::impl::GenericList list(c10::AnyType::get());
      for (const auto& child : node.children)
        list.push_back(rebuild_node(child, flat, next));
      return list;
    }
    case Kind::dict: {
      // As LibTorch's native runtime builds them: keys and values of any type, in order.
      c10::impl::GenericDict dict(c10::AnyType::get(), c10::AnyType::get());
      for (std::size_t i = 0; i < node.children.size(); ++i) {
        dict.insert(node.keys[i], rebuild_node(node.children[i], flat, next));
      }
      return dict;
    }
  }
  return c10::IValue();
}

}  // namespace detail

/// Reads a pytree TreeSpec as treespec_dumps writes it (`[1, {"type": ..., "context": ...,
/// "children_spec": [...]}]`): the structure, or why it cannot be used.
[[nodiscard]] inline ParsedOutputStructure parse_output_structure(std::string_view text) {
  std::string why;
  const auto json = parse_json_bounded(text, &why);
  if (json.is_discarded()) return why;
  if (!json.is_array() || json.size() != 2 || !json[0].is_number_integer()) {
    return std::string("it is not [protocol, tree]");
  }
  if (json[0].get<std::int64_t>() != 1) {
    return fmt::format("its protocol is {}; this version reads protocol 1", json[0].dump());
  }
  return detail::parse_structure_node(json[1], 0);
}

/// The flat outputs of a compiled model rebuilt into `structure`; throws aitune::Error when their
/// number is not the structure's.
[[nodiscard]] inline c10::IValue rebuild_outputs(const OutputStructure& structure,
                                                 const std::vector<at::Tensor>& flat) {
  if (flat.size() != structure.leaves()) {
    throw Error(fmt::format("the model returned {} outputs, its output structure has {}",
                            flat.size(), structure.leaves()));
  }
  std::size_t next = 0;
  return detail::rebuild_node(structure, flat, next);
}

/// The flat outputs as a compiled model gives them when its structure is unknown: one tensor, or
/// a tuple of them.
[[nodiscard]] inline c10::IValue flat_outputs(std::vector<at::Tensor> flat) {
  if (flat.size() == 1) return std::move(flat.front());
  std::vector<c10::IValue> elements(flat.begin(), flat.end());
  return c10::ivalue::Tuple::create(std::move(elements));
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
