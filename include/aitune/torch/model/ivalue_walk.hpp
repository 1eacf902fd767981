// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The one walker over the nested values LibTorch models return: tuples, lists and dicts, to any
/// depth, of tensors and scalars. Everything that traverses an output goes through here - the
/// comparison with the baseline and the NaN check (walk_leaves, walk_together), the copy a CUDA
/// graph hands out and the canary's perturbation (map_tensors) - so a container kind added here
/// is added everywhere.

#include "aitune/core/customization.hpp"
#include "aitune/torch/libtorch.hpp"

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// The kind of container a value is: a leaf is none.
enum class Container { none, tuple, list, dict };

[[nodiscard]] inline Container container_of(const c10::IValue& value) {
  if (value.isTuple()) return Container::tuple;
  if (value.isList()) return Container::list;
  if (value.isGenericDict()) return Container::dict;
  return Container::none;
}

[[nodiscard]] constexpr std::string_view to_string(Container kind) noexcept {
  switch (kind) {
    case Container::none: return "leaf";
    case Container::tuple: return "tuple";
    case Container::list: return "list";
    case Container::dict: return "dict";
  }
  return "unknown";
}

/// One element of a container: its label in a path (`[0]`, `['logits']`), its dict key (none
/// for tuples and lists) and its value.
struct IValueChild {
  std::string label;
  c10::IValue key;
  c10::IValue value;
};

/// The elements of a container, in order (a dict's in insertion order); none for a leaf.
[[nodiscard]] inline std::vector<IValueChild> children_of(const c10::IValue& value) {
  std::vector<IValueChild> children;
  const auto add = [&](std::size_t index, const c10::IValue& element) {
    children.push_back(IValueChild{fmt::format("[{}]", index), c10::IValue(), element});
  };
  if (value.isTuple()) {
    const auto& elements = value.toTupleRef().elements();
    for (std::size_t i = 0; i < elements.size(); ++i)
      add(i, elements[i]);
  } else if (value.isList()) {
    const auto list = value.toList();
    for (std::size_t i = 0; i < list.size(); ++i)
      add(i, list.get(i));
  } else if (value.isGenericDict()) {
    for (const auto& entry : value.toGenericDict()) {
      const std::string key = entry.key().isString()
                                  ? fmt::format("'{}'", entry.key().toStringRef())
                                  : c10::str(entry.key());
      children.push_back(IValueChild{fmt::format("[{}]", key), entry.key(), entry.value()});
    }
  }
  return children;
}

/// A container of the same kind (and element types) as `like`, holding `elements` - the
/// values of children_of(like), transformed.
[[nodiscard]] inline c10::IValue with_elements(const c10::IValue& like,
                                               const std::vector<IValueChild>& children,
                                               std::vector<c10::IValue> elements) {
  if (like.isTuple()) return c10::ivalue::Tuple::create(std::move(elements));
  if (like.isList()) {
    c10::impl::GenericList list(like.toList().elementType());
    for (auto& element : elements)
      list.push_back(std::move(element));
    return list;
  }
  if (like.isGenericDict()) {
    const auto dict = like.toGenericDict();
    c10::impl::GenericDict copy(dict.keyType(), dict.valueType());
    for (std::size_t i = 0; i < elements.size(); ++i)
      copy.insert(children[i].key, std::move(elements[i]));
    return copy;
  }
  return like;
}

/// The same structure with every tensor replaced by `transform(tensor)`; other leaves stay.
template <class Transform>
[[nodiscard]] c10::IValue map_tensors(const c10::IValue& value, Transform&& transform) {
  if (value.isTensor()) return c10::IValue(transform(value.toTensor()));
  const std::vector<IValueChild> children = children_of(value);
  if (children.empty()) return value;
  std::vector<c10::IValue> elements;
  elements.reserve(children.size());
  for (const auto& child : children)
    elements.push_back(map_tensors(child.value, transform));
  return with_elements(value, children, std::move(elements));
}

/// Whether two dict keys are equal (keys are strings or integers; other kinds by their text).
[[nodiscard]] inline bool same_key(const c10::IValue& a, const c10::IValue& b) {
  if (a.isString() && b.isString()) return a.toStringRef() == b.toStringRef();
  if (a.isInt() && b.isInt()) return a.toInt() == b.toInt();
  return a.tagKind() == b.tagKind() && c10::str(a) == c10::str(b);
}

/// Walks `expected` and `actual` together, depth first, and returns the first failure: a
/// container of another kind or size, a missing dict key, or what `leaf(path, expected_leaf,
/// actual_leaf)` says of a pair of leaves. A dict's keys must come in the baseline's order. Paths
/// read like `output[0]['logits']`.
template <class Leaf>
[[nodiscard]] OutputCheck walk_together(const std::string& path, const c10::IValue& expected,
                                        const c10::IValue& actual, Leaf&& leaf) {
  const Container kind = container_of(expected);
  if (kind == Container::none) return leaf(path, expected, actual);
  if (container_of(actual) != kind) {
    return OutputCheck::failed(
        fmt::format("{}: the baseline returned a {} here, the candidate a {}", path,
                    to_string(kind), actual.tagKind()));
  }
  const std::vector<IValueChild> e = children_of(expected);
  std::vector<IValueChild> a = children_of(actual);
  if (e.size() != a.size()) {
    return OutputCheck::failed(fmt::format("{}: {} of {} elements, the baseline's has {}", path,
                                           to_string(kind), a.size(), e.size()));
  }
  for (std::size_t i = 0; i < e.size(); ++i) {
    // Dicts pair by key and in order: a server that iterates a dict sees its order, and the
    // order the baseline returns is the one the model promises.
    if (kind == Container::dict && !same_key(e[i].key, a[i].key)) {
      const auto dict = actual.toGenericDict();
      const std::string key = e[i].label.substr(1, e[i].label.size() - 2);
      if (dict.find(e[i].key) == dict.end()) {
        return OutputCheck::failed(fmt::format("{}: key {} is missing", path, key));
      }
      return OutputCheck::failed(
          fmt::format("{}: the keys come in another order: the baseline has {} at position {}, "
                      "the candidate {}",
                      path, key, i, a[i].label.substr(1, a[i].label.size() - 2)));
    }
    if (OutputCheck check = walk_together(path + e[i].label, e[i].value, a[i].value, leaf);
        !check.passed) {
      return check;
    }
  }
  return OutputCheck::ok();
}

/// Walks the leaves of `value`, depth first, and returns the first failure `leaf(path, leaf)`
/// reports.
template <class Leaf>
[[nodiscard]] OutputCheck walk_leaves(const std::string& path, const c10::IValue& value,
                                      Leaf&& leaf) {
  if (container_of(value) == Container::none) return leaf(path, value);
  for (const IValueChild& child : children_of(value)) {
    if (OutputCheck check = walk_leaves(path + child.label, child.value, leaf); !check.passed) {
      return check;
    }
  }
  return OutputCheck::ok();
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
