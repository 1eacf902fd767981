// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Inputs given by position or by name, as a command line's `--input` takes them
/// (`1x3x224x224`, `input_ids=1x128:int64[0,30522)`), put in the order the model takes them.
/// aitune-tune and aitune-bench-alone share it, so a model tuned with named inputs is timed
/// with the same arguments.

#include "aitune/core/error.hpp"
#include "aitune/torch/model/input_spec.hpp"
#include "aitune/torch/model/model.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// One `--input` as given: the name before `=` (empty: by position) and its specification.
struct NamedInputSpec {
  std::string name{};
  InputSpec spec{};
};

/// Parses `[NAME=]SPEC`: NAME an identifier (letters, digits, `_`, not starting with a digit),
/// SPEC as parse_input_spec takes it. Throws ConfigError naming the text.
[[nodiscard]] inline NamedInputSpec parse_named_input_spec(std::string_view text) {
  // A shape never holds '=', so the first one ends the name.
  const auto equals = text.find('=');
  if (equals == std::string_view::npos) return {{}, parse_input_spec(text)};
  const std::string_view name = text.substr(0, equals);
  const bool valid_name = !name.empty() &&
                          std::isdigit(static_cast<unsigned char>(name.front())) == 0 &&
                          std::all_of(name.begin(), name.end(), [](char c) {
                            return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
                          });
  if (!valid_name) {
    throw ConfigError(fmt::format("bad input '{}': '{}' is not an input name", text, name));
  }
  return {std::string(name), parse_input_spec(text.substr(equals + 1))};
}

/// The `inputs` in the order `model` takes them: those without a name take the first places, in
/// the order given; each NAME= takes the place of that name among the names the model (or its
/// archive) records (input_names_of). No place may be left empty before the last one given, and
/// an archive's program takes all of them. Throws ConfigError naming `model_label` (the model's
/// file, as the user gave it) for a name the model lacks, a place given twice or left empty, or
/// names given for a model that records none.
[[nodiscard]] inline std::vector<InputSpec>
inputs_in_model_order(std::span<const NamedInputSpec> inputs, const Model& model,
                      std::string_view model_label) {
  const bool named = std::any_of(inputs.begin(), inputs.end(),
                                 [](const NamedInputSpec& input) { return !input.name.empty(); });
  std::vector<InputSpec> ordered;
  if (!named) {
    for (const NamedInputSpec& input : inputs)
      ordered.push_back(input.spec);
    return ordered;
  }
  const std::vector<std::string> names = input_names_of(model);
  if (names.empty()) {
    throw ConfigError(fmt::format("--input NAME=SHAPE: '{}' records no input names; give the "
                                  "inputs by position, in the order forward() takes them",
                                  model_label));
  }
  std::vector<std::optional<InputSpec>> placed(names.size());
  std::size_t next_unnamed = 0;
  for (const NamedInputSpec& input : inputs) {
    std::size_t place = next_unnamed;
    if (input.name.empty()) {
      ++next_unnamed;
    } else {
      const auto found = std::find(names.begin(), names.end(), input.name);
      if (found == names.end()) {
        throw ConfigError(fmt::format("--input {}=...: '{}' has no input '{}' (its inputs: {})",
                                      input.name, model_label, input.name, fmt::join(names, ", ")));
      }
      place = static_cast<std::size_t>(found - names.begin());
    }
    if (place >= names.size()) {
      throw ConfigError(fmt::format("--input: '{}' takes {} inputs ({}), more were given",
                                    model_label, names.size(), fmt::join(names, ", ")));
    }
    if (placed[place]) {
      throw ConfigError(
          fmt::format("--input: input '{}' is given twice, by position and by name", names[place]));
    }
    placed[place] = input.spec;
  }
  const auto last =
      static_cast<std::size_t>(std::find_if(placed.rbegin(), placed.rend(),
                                            [](const auto& spec) { return spec.has_value(); })
                                   .base() -
                               placed.begin());
  for (std::size_t i = 0; i < placed.size(); ++i) {
    if (!placed[i] && (i < last || model.is_exported())) {
      throw ConfigError(fmt::format("--input: no value for input '{}' (the inputs of '{}': {})",
                                    names[i], model_label, fmt::join(names, ", ")));
    }
    if (placed[i]) ordered.push_back(*placed[i]);
  }
  return ordered;
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
