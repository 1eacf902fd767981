// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The reader of extra/aitune.json, what tools/export_model.py records in a `.pt2` archive
/// (tools/aitune_export/archive.py lists its fields): each variant's family, precision, files
/// and shapes, the axes exported as a range, the inputs' names and shapes, the failed variants
/// and the output structure. Schema 2 has one record per variant, read generically by family;
/// archives of schema 1 (no "schema": "aoti" and "runtimes" by family name) read as before.
/// Everything read is untrusted: a record that cannot be used says why.

#include "aitune/core/cli/option_text.hpp"
#include "aitune/core/precision.hpp"
#include "aitune/core/text/format.hpp"
#include "aitune/core/text/json_parse.hpp"
#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/model/archive_contents.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

namespace detail {

/// An input's shape as tools/export_model.py records it (`"shape": [1, 3, 224, 224]`), as
/// `1x3x224x224`; empty when it recorded none.
inline std::string recorded_shape(const nlohmann::json& input) {
  const auto shape = input.is_object() ? input.find("shape") : input.end();
  if (shape == input.end() || !shape->is_array() || shape->empty()) return {};
  std::string text;
  for (const auto& size : *shape) {
    if (!size.is_number_integer()) return {};
    text += (text.empty() ? "" : "x") + std::to_string(size.get<std::int64_t>());
  }
  return text;
}

/// `value` as JSON text for a message, cut to `limit` characters.
inline std::string json_excerpt(const nlohmann::json& value, std::size_t limit = 60) {
  return aitune::detail::printable_excerpt(value.dump(), limit);
}

/// Which shapes a variant's record says it takes ("range": every shape of the
/// archive's dynamic_axes; "static" or absent: the example's): sets `takes_range`, or returns
/// why the record cannot be used.
inline std::string read_shapes(const nlohmann::json& record, const std::string& where,
                               bool& takes_range) {
  const auto shapes = record.find("shapes");
  if (shapes == record.end()) return {};
  if (!shapes->is_string() || (*shapes != "range" && *shapes != "static")) {
    return fmt::format("{}.shapes is {}, not \"range\" or \"static\"", where,
                       json_excerpt(*shapes));
  }
  takes_range = *shapes == "range";
  return {};
}

/// A variant's "quantization" record (absent: none): its dtype ("int8") into
/// `quantization_dtype` and the digests of its calibration inputs ("calibration.digests", absent
/// where it was calibrated on none) into `calibration_digests`. Returns why it cannot be used, or
/// nothing.
inline std::string read_quantization(const nlohmann::json& record, const std::string& where,
                                     std::string& quantization_dtype,
                                     std::vector<std::string>& calibration_digests) {
  const auto quantization = record.find("quantization");
  if (quantization == record.end()) return {};
  const auto dtype = quantization->is_object() ? quantization->find("dtype") : record.end();
  if (!quantization->is_object() || dtype == quantization->end() || !dtype->is_string() ||
      *dtype != "int8") {
    return fmt::format("{}.quantization is {}, not a record of an int8 quantisation", where,
                       json_excerpt(*quantization));
  }
  quantization_dtype = dtype->get<std::string>();
  const auto calibration = quantization->find("calibration");
  if (calibration == quantization->end()) return {};
  const auto digests =
      calibration->is_object() ? calibration->find("digests") : quantization->end();
  if (!calibration->is_object() || digests == calibration->end() || !digests->is_array() ||
      !std::all_of(digests->begin(), digests->end(), [](const nlohmann::json& digest) {
        return digest.is_string() && digest.get_ref<const std::string&>().size() == 64;
      })) {
    return fmt::format("{}.quantization.calibration is {}, not its inputs' digests", where,
                       json_excerpt(*calibration));
  }
  for (const nlohmann::json& digest : *digests)
    calibration_digests.push_back(digest.get<std::string>());
  return {};
}

/// What tools/export_model.py recorded of one AOTInductor compilation (schema 2:
/// `variants.<name>`, its options under "made"; schema 1: `aoti.<name>`, beside the precision),
/// `where` naming the record in messages: the precision it computes in, its Inductor options and
/// its shapes. A record of the wrong type, or a precision that is not a precision's name, makes
/// the compilation unusable with that cause (its candidate's build fails with it), not fp32 by
/// default.
inline void read_aoti_record(const nlohmann::json& record, const std::string& where,
                             AotiModelInfo& info) {
  if (!record.is_object()) {
    info.unusable = fmt::format("{} is {}, not an object", where, json_excerpt(record));
    return;
  }
  if (const auto precision = record.find("precision"); precision != record.end()) {
    const auto parsed = precision->is_string()
                            ? parse_token<Precision>(precision->get<std::string>())
                            : std::nullopt;
    if (!parsed) {
      info.unusable = fmt::format("{}.precision is {}, not one of fp32, bf16, fp16, fp64", where,
                                  json_excerpt(*precision));
      return;
    }
    info.precision = *parsed;
  }
  const auto made = record.find("made");
  const bool schema2 = made != record.end() && made->is_object();
  const nlohmann::json& holder = schema2 ? *made : record;
  if (const auto configs = holder.find("inductor_configs"); configs != holder.end()) {
    if (!configs->is_object()) {
      info.unusable = fmt::format("{}{}.inductor_configs is {}, not an object", where,
                                  schema2 ? ".made" : "", json_excerpt(*configs));
      return;
    }
    for (const auto& [key, value] : configs->items())
      info.inductor_configs[key] = value.dump();
  }
  info.unusable = read_shapes(record, where, info.takes_range);
  if (info.unusable.empty()) {
    info.unusable = read_quantization(record, where, info.quantization, info.calibration_digests);
  }
}

/// The files a model of each runtime family is made of, by the name of the field a schema-1
/// record gives each in, in the order its backend loads them.
inline const std::map<std::string, std::vector<std::string>>& runtime_family_files() {
  static const std::map<std::string, std::vector<std::string>> files{{"onnx", {"record"}},
                                                                     {"openvino", {"xml", "bin"}}};
  return files;
}

/// Why the archive's extra/aitune.json cannot be used at all (`why`): the archive's
/// records_problem; every compilation is unusable with it and no converted model is read.
inline void fail_records(Pt2Archive& archive, const std::string& why) {
  archive.records_problem = "the archive's extra/aitune.json cannot be read: " + why;
  for (AotiModelInfo& info : archive.aoti_models)
    info.unusable = archive.records_problem;
  archive.runtime_variants.clear();
}

/// The record `value` names (`field`, for messages), when it is the name of one the archive
/// holds; else sets `problem`.
inline std::string record_named(const nlohmann::json& value, const std::string& field,
                                const std::string& variant,
                                const std::function<bool(const std::string&)>& has_record,
                                std::string& problem) {
  const std::string where = "the archive's extra/aitune.json";
  if (!value.is_string()) {
    problem = fmt::format("{}: {} is {}, not the name of a record", where, field,
                          value.is_null() ? "missing" : json_excerpt(value));
  } else if (!has_record(value.get<std::string>())) {
    problem =
        fmt::format("{} names the record '{}' for {}, which the archive does not hold", where,
                    aitune::detail::printable_excerpt(value.get<std::string>(), 200), variant);
  }
  return problem.empty() ? value.get<std::string>() : std::string();
}

/// The archive's AOTInductor compilation named `name`, or null.
inline AotiModelInfo* compilation_named(Pt2Archive& archive, const std::string& name) {
  const auto info = std::find_if(archive.aoti_models.begin(), archive.aoti_models.end(),
                                 [&](const AotiModelInfo& m) { return m.name == name; });
  return info == archive.aoti_models.end() ? nullptr : &*info;
}

/// After schema 2's variants are read: an AOTInductor compilation whose variant record is not a
/// usable record of the family "aoti" (of another family, of one this library does not read, not
/// an object, or missing) is unusable with that cause, never raced as fp32 by default: its record
/// may say bf16 or int8.
inline void refuse_unrecorded_compilations(Pt2Archive& archive,
                                           const std::vector<std::string>& read_as_aoti) {
  for (AotiModelInfo& info : archive.aoti_models) {
    if (std::find(read_as_aoti.begin(), read_as_aoti.end(), info.name) != read_as_aoti.end() ||
        !info.unusable.empty()) {
      continue;
    }
    const auto problem = [&](const std::map<std::string, std::string>& variants) {
      const auto found = variants.find(info.name);
      return found == variants.end() ? std::string() : found->second;
    };
    std::string why = problem(archive.unusable_variants);
    if (why.empty()) why = problem(archive.unknown_variants);
    if (why.empty() && archive.runtime_variants.contains(info.name)) {
      why = fmt::format("the archive's extra/aitune.json records variants.{} as of the family "
                        "'{}', not as the AOTInductor compilation the archive holds under that "
                        "name",
                        info.name, archive.runtime_variants.at(info.name).family);
    }
    if (why.empty()) {
      why = fmt::format("the archive's extra/aitune.json records no variant '{}' for this "
                        "AOTInductor compilation, so what it computes in is unknown",
                        info.name);
    }
    info.unusable = std::move(why);
  }
}

/// Schema 2's variants (aitune.json's "variants"), read by family: "aoti" completes the
/// compilation of that name; a runtime family (runtime_family_files) is a converted model
/// whose "records" must name its files, in order. A record that cannot be used is an unusable
/// variant with its cause; a family this library does not read is an unknown variant, named in
/// the same way (never dropped in silence); a compilation with no usable "aoti" record is
/// unusable (refuse_unrecorded_compilations).
inline void read_variants(const nlohmann::json& variants, Pt2Archive& archive,
                          const std::function<bool(const std::string&)>& has_record) {
  if (!variants.is_object()) {
    fail_records(archive, "variants is " + json_excerpt(variants) + ", not an object");
    return;
  }
  std::vector<std::string> read_as_aoti;
  for (const auto& [name, record] : variants.items()) {
    const std::string shown =
        aitune::detail::printable_excerpt(name, 100);  // a name is untrusted too
    const std::string where = fmt::format("the archive's extra/aitune.json: variants.{}", shown);
    if (!record.is_object()) {
      archive.unusable_variants[name] =
          fmt::format("{} is {}, not an object", where, json_excerpt(record));
      continue;
    }
    const auto family = record.find("family");
    if (family == record.end() || !family->is_string()) {
      archive.unusable_variants[name] =
          fmt::format("{}.family is {}, not a family's name", where,
                      family == record.end() ? "missing" : json_excerpt(*family));
      continue;
    }
    const std::string& family_name = family->get_ref<const std::string&>();
    archive.recorded_families[name] = family_name;
    if (family_name == "aoti") {
      AotiModelInfo* info = compilation_named(archive, name);
      if (info == nullptr) {
        archive.unusable_variants[name] =
            fmt::format("{} records an AOTInductor compilation the archive does not hold", where);
      } else {
        read_aoti_record(record, where, *info);
        read_as_aoti.push_back(name);
      }
      continue;
    }
    const auto files = runtime_family_files().find(family_name);
    if (files == runtime_family_files().end()) {
      archive.unknown_variants[name] =
          fmt::format("{} is of the family '{}', which this aitune-cpp does not read (made by "
                      "a newer tools/export_model.py?)",
                      where, aitune::detail::printable_excerpt(family_name, 60));
      continue;
    }
    RuntimeVariantInfo info{name, {}, family_name};
    std::string problem = read_shapes(record, where, info.takes_range);
    if (problem.empty()) {
      problem = read_quantization(record, where, info.quantization, info.calibration_digests);
    }
    const auto records = record.find("records");
    if (problem.empty() && (records == record.end() || !records->is_array() ||
                            records->size() != files->second.size())) {
      problem = fmt::format("{}.records is {}, not the names of its {} file(s)", where,
                            records == record.end() ? "missing" : json_excerpt(*records),
                            files->second.size());
    }
    for (std::size_t i = 0; problem.empty() && i < files->second.size(); ++i) {
      info.records.push_back(record_named((*records)[i],
                                          fmt::format("variants.{}.records[{}]", shown, i), shown,
                                          has_record, problem));
    }
    if (problem.empty()) {
      archive.runtime_variants.emplace(name, std::move(info));
    } else {
      archive.unusable_variants[name] = std::move(problem);
    }
  }
  refuse_unrecorded_compilations(archive, read_as_aoti);
}

/// Schema 1's converted models (aitune.json's "runtimes", by family name), as schema 2 reads
/// them: a record of the wrong type or missing from the archive is an unusable variant.
inline void read_schema1_runtimes(const nlohmann::json& runtimes, Pt2Archive& archive,
                                  const std::function<bool(const std::string&)>& has_record) {
  if (!runtimes.is_object()) return;
  for (const auto& [name, fields] : runtime_family_files()) {
    const auto found = runtimes.find(name);
    if (found == runtimes.end()) continue;
    std::string problem;
    RuntimeVariantInfo info{name, {}, name};
    archive.recorded_families[name] = name;  // schema 1 names each by its family
    if (!found->is_object()) {
      problem = fmt::format("the archive's extra/aitune.json: runtimes.{} is {}, not an object",
                            name, json_excerpt(*found));
    }
    for (std::size_t i = 0; i < fields.size() && problem.empty(); ++i) {
      const auto record = found->find(fields[i]);
      info.records.push_back(record_named(record == found->end() ? nlohmann::json() : *record,
                                          fmt::format("runtimes.{}.{}", name, fields[i]), name,
                                          has_record, problem));
    }
    if (problem.empty()) {
      archive.runtime_variants.emplace(name, std::move(info));
    } else {
      archive.unusable_variants[name] = std::move(problem);
    }
  }
}

/// What every schema records beside the variants: the variants that failed ("failed") and the
/// output structure ("out_spec", "none_leaves"); fields of the wrong type make
/// output_spec_problem.
inline void read_outputs_and_failures(const nlohmann::json& recorded, Pt2Archive& archive) {
  const std::string where = "the archive's extra/aitune.json";
  if (const auto spec = recorded.find("out_spec"); spec != recorded.end()) {
    if (spec->is_string()) {
      archive.output_spec = spec->get<std::string>();
    } else {
      archive.output_spec_problem =
          fmt::format("{}: out_spec is {}, not a string", where, json_excerpt(*spec));
    }
  }
  if (const auto nones = recorded.find("none_leaves"); nones != recorded.end()) {
    const bool leaves = nones->is_array() &&
                        std::all_of(nones->begin(), nones->end(), [](const nlohmann::json& leaf) {
                          return leaf.is_number_unsigned();
                        });
    if (leaves) {
      for (const auto& leaf : *nones)
        archive.output_none_leaves.push_back(leaf.get<std::size_t>());
    } else if (archive.output_spec_problem.empty()) {
      archive.output_spec_problem = fmt::format("{}: none_leaves is {}, not a list of leaf numbers",
                                                where, json_excerpt(*nones));
    }
  }
  if (const auto failed = recorded.find("failed");
      failed != recorded.end() && failed->is_object()) {
    for (const auto& [name, cause] : failed->items()) {
      // A cause is one line of a report: the export tool writes a few hundred characters at most.
      archive.failed_variants[name] =
          cause.is_string()
              ? aitune::detail::printable_excerpt(cause.get_ref<const std::string&>(), 500)
              : json_excerpt(cause, 500);
    }
  }
}

/// Why `axis` cannot stand beside the axes read before it (empty when it can): the same axis of
/// the same input twice, or one exported dimension (a symbol) with two ranges. Either would make
/// the bounds a tuning checks at inputs the program cannot take.
inline std::string conflicting_axis(const DynamicAxis& axis, const std::vector<DynamicAxis>& read) {
  for (const DynamicAxis& earlier : read) {
    if (earlier.input == axis.input && earlier.axis == axis.axis) {
      return fmt::format("it records axis {} of '{}' a second time", axis.axis,
                         aitune::detail::printable_excerpt(axis.input, 60));
    }
    if (!axis.symbol.empty() && earlier.symbol == axis.symbol &&
        (earlier.min != axis.min || earlier.max != axis.max)) {
      return fmt::format("its symbol '{}' has the range {}..{} there and {}..{} on axis {} of "
                         "'{}': one exported dimension has one range",
                         aitune::detail::printable_excerpt(axis.symbol, 60), axis.min, axis.max,
                         earlier.min, earlier.max, earlier.axis,
                         aitune::detail::printable_excerpt(earlier.input, 60));
    }
  }
  return {};
}

/// The axes exported as a range (aitune.json's "dynamic"), each of a recorded input, with
/// 0 <= min <= max <= max_input_dimension, no axis twice and one range per symbol; anything else
/// makes the records unusable (fail_records): a range read wrong would let a compilation be
/// called outside the shapes it takes, and a tuning check it at sizes no input can have.
inline void read_dynamic_axes(const nlohmann::json& recorded, Pt2Archive& archive) {
  const auto dynamic = recorded.find("dynamic");
  if (dynamic == recorded.end()) return;
  if (!dynamic->is_array()) {
    fail_records(archive, "dynamic is " + json_excerpt(*dynamic) + ", not a list");
    return;
  }
  for (std::size_t i = 0; i < dynamic->size(); ++i) {
    const nlohmann::json& axis = (*dynamic)[i];
    const auto field = [&](const char* key) {
      return axis.is_object() && axis.contains(key) ? axis[key] : nlohmann::json();
    };
    const bool valid = field("input").is_string() && field("axis").is_number_unsigned() &&
                       field("min").is_number_integer() && field("max").is_number_integer() &&
                       std::find(archive.input_names.begin(), archive.input_names.end(),
                                 field("input")) != archive.input_names.end() &&
                       0 <= field("min").get<std::int64_t>() &&
                       field("min").get<std::int64_t>() <= field("max").get<std::int64_t>() &&
                       field("max").get<std::int64_t>() <= max_input_dimension &&
                       (field("symbol").is_null() || field("symbol").is_string());
    if (!valid) {
      fail_records(archive,
                   fmt::format("dynamic[{}] is {}, not an axis of a recorded input with 0 <= min "
                               "<= max <= {}",
                               i, json_excerpt(axis), max_input_dimension));
      archive.dynamic_axes.clear();
      return;
    }
    DynamicAxis read{field("input").get<std::string>(), field("axis").get<std::size_t>(),
                     field("min").get<std::int64_t>(), field("max").get<std::int64_t>(),
                     field("symbol").is_string() ? field("symbol").get<std::string>() : ""};
    if (const std::string conflict = conflicting_axis(read, archive.dynamic_axes);
        !conflict.empty()) {
      fail_records(archive, fmt::format("dynamic[{}] is {}: {}", i, json_excerpt(axis), conflict));
      archive.dynamic_axes.clear();
      return;
    }
    archive.dynamic_axes.push_back(std::move(read));
  }
}

/// The values each recorded input may hold (aitune.json's `inputs[i].domain`: `{"min", "max",
/// "source"}`), for the inputs that record one; anything else makes the records unusable
/// (fail_records): a domain read wrong would refuse good requests or pass bad ones.
inline void read_index_domains(const nlohmann::json& inputs, Pt2Archive& archive) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const nlohmann::json& input = inputs[i];
    const auto domain = input.is_object() ? input.find("domain") : input.end();
    if (domain == input.end()) continue;
    const auto field = [&](const char* key) {
      return domain->is_object() && domain->contains(key) ? (*domain)[key] : nlohmann::json();
    };
    const bool valid = !archive.input_names[i].empty() && field("min").is_number_integer() &&
                       field("max").is_number_integer() &&
                       field("min").get<std::int64_t>() <= field("max").get<std::int64_t>() &&
                       (field("source").is_null() || field("source").is_string());
    if (!valid) {
      fail_records(archive, fmt::format("inputs[{}].domain is {}, not the values of a named input "
                                        "with min <= max",
                                        i, json_excerpt(*domain)));
      archive.index_domains.clear();
      return;
    }
    archive.index_domains.push_back(IndexDomain{
        archive.input_names[i], field("min").get<std::int64_t>(), field("max").get<std::int64_t>(),
        field("source").is_string()
            ? aitune::detail::printable_excerpt(field("source").get<std::string>(), 20)
            : std::string()});
  }
}

/// What tools/export_model.py recorded in the archive's extra/aitune.json, whose text is `text`
/// (`has_record` says whether the archive holds a record): the variants (schema 2's "variants",
/// or schema 1's "aoti" and "runtimes"), the inputs' names and shapes, the axes exported as a
/// range, the failed variants and the output structure. A text that cannot be read at all is the
/// archive's records_problem, and every compilation is unusable with it.
inline void read_aitune_json(std::string_view text, Pt2Archive& archive,
                             const std::function<bool(const std::string&)>& has_record) {
  std::string why;
  const nlohmann::json recorded = parse_json_bounded(text, &why);
  if (!recorded.is_object()) {
    if (!recorded.is_discarded()) why = "it is " + json_excerpt(recorded) + ", not an object";
    fail_records(archive, why);
    return;
  }
  if (const auto inputs = recorded.find("inputs"); inputs != recorded.end() && inputs->is_array()) {
    for (const auto& input : *inputs) {
      const bool named = input.is_object() && input.contains("name") && input["name"].is_string();
      archive.input_names.push_back(named ? input["name"].get<std::string>() : std::string());
      archive.input_shapes.push_back(recorded_shape(input));
    }
  }
  read_outputs_and_failures(recorded, archive);
  if (const auto variants = recorded.find("variants"); variants != recorded.end()) {
    read_variants(*variants, archive, has_record);
  } else {
    if (const auto aoti = recorded.find("aoti"); aoti != recorded.end() && aoti->is_object()) {
      for (auto& info : archive.aoti_models) {
        if (const auto found = aoti->find(info.name); found != aoti->end()) {
          read_aoti_record(*found, "the archive's extra/aitune.json: aoti." + info.name, info);
        }
      }
    }
    if (const auto runtimes = recorded.find("runtimes"); runtimes != recorded.end()) {
      read_schema1_runtimes(*runtimes, archive, has_record);
    }
  }
  if (archive.records_problem.empty()) read_dynamic_axes(recorded, archive);
  if (const auto inputs = recorded.find("inputs");
      archive.records_problem.empty() && inputs != recorded.end() && inputs->is_array()) {
    read_index_domains(*inputs, archive);
  }
}

}  // namespace detail

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
