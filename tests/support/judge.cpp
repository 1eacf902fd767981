// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// The tuner's own judge, run on outputs and timings written to a file: what the benchmarks'
// figures are held to. tools/aitune_judge.py computes the same figures in the Python harness,
// and tests/support/check_judges_agree.py runs both on the same fixtures and fails where they
// differ.
//
// usage: aitune-judge FIXTURE.json [FIXTURE.json ...]
// A fixture: {"budget": "cosine=0.999,top1=98%" (aitune-tune's --accuracy text),
//             "samples": [{"reference": OUT, "candidate": OUT}, ...],
//             "timings": [ms, ...] (optional)}
// OUT: a tensor {"dtype": "float32", "shape": [2, 5], "values": [...] (flat; "nan", "inf" and
//      "-inf" as strings)}, a list of OUTs (a tuple), or {"dict": {"name": OUT, ...}}.
// Prints one JSON line per fixture: the parsed budget (or its "error"), "problem" (why a sample
// could not be judged) or each output's measures merged over the samples, the verdict
// ("within", "text"), and the timings' median with its sign-test interval and p90. Non-finite
// numbers are written as the strings "nan", "inf" and "-inf".
#include <aitune/core/stats/median_interval.hpp>
#include <aitune/core/strategy/detail/reference_pass.hpp>
#include <aitune/torch.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace {

using Json = nlohmann::ordered_json;

double number_of(const Json& value) {
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    if (text == "nan") return std::nan("");
    if (text == "inf") return INFINITY;
    if (text == "-inf") return -INFINITY;
    throw aitune::ConfigError(
        "a fixture's number is a number, \"nan\", \"inf\" or \"-inf\", got '" + text + "'");
  }
  return value.get<double>();
}

Json json_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

Json json_optional(const std::optional<double>& value) {
  return value ? json_number(*value) : Json(nullptr);
}

c10::IValue output_of(const Json& out) {
  if (out.is_array()) {
    std::vector<c10::IValue> items;
    for (const Json& item : out)
      items.push_back(output_of(item));
    return c10::ivalue::Tuple::create(std::move(items));
  }
  if (out.contains("dict")) {
    c10::impl::GenericDict dict(c10::StringType::get(), c10::TensorType::get());
    for (const auto& [name, item] : out["dict"].items())
      dict.insert(name, output_of(item));
    return dict;
  }
  std::vector<double> values;
  for (const Json& value : out["values"])
    values.push_back(number_of(value));
  const auto shape = out["shape"].get<std::vector<std::int64_t>>();
  const std::string dtype = out["dtype"].get<std::string>();
  const auto type = dtype == "float32"   ? at::kFloat
                    : dtype == "float64" ? at::kDouble
                    : dtype == "int64"   ? at::kLong
                                         : throw aitune::ConfigError("unknown dtype " + dtype);
  return at::tensor(values, at::kDouble).reshape(shape).to(type);
}

Json budget_json(const aitune::AccuracyBudget& budget) {
  Json top_k = nullptr;
  if (const auto& agreement = budget.top_k()) {
    top_k = {
        {"output", agreement->output}, {"k", agreement->k}, {"min_share", agreement->min_share}};
  }
  return {{"relative", json_optional(budget.max_relative_error())},
          {"cosine", json_optional(budget.min_cosine())},
          {"top_k", top_k},
          {"samples", budget.min_samples()}};
}

/// The candidate's outputs checked sample by sample as the tuner's check runs them: the first
/// sample that cannot be judged ends it; otherwise each output's worst over the samples.
void judge_samples(const Json& samples, const aitune::AccuracyBudget& budget, Json& result) {
  aitune::OutputCheck merged;
  for (const Json& sample : samples) {
    const c10::IValue reference = output_of(sample["reference"]);
    const c10::IValue candidate = output_of(sample["candidate"]);
    aitune::OutputCheck check =
        aitune::lt::compare_outputs(&reference, candidate, aitune::lt::OutputPolicy{}, &budget);
    if (!check.passed && !check.outside_tolerance_only) {
      result["problem"] = check.reason;
      result["within"] = false;
      return;
    }
    aitune::detail::merge_accuracy(merged, std::move(check));
  }
  Json outputs = Json::array();
  for (const aitune::OutputAccuracy& output : merged.accuracy) {
    outputs.push_back({{"output", output.output},
                       {"relative_error", json_optional(output.relative_error)},
                       {"cosine", json_optional(output.cosine)},
                       {"top_k_agreed", output.top_k_agreed},
                       {"top_k_rows", output.top_k_rows},
                       {"top_k_classes", output.top_k_classes}});
  }
  const aitune::AccuracyVerdict verdict = budget.judge(merged.accuracy);
  result["outputs"] = outputs;
  result["within"] = verdict.within;
  result["text"] = verdict.text;
}

Json judge_fixture(const Json& fixture) {
  Json result;
  if (fixture.contains("timings")) {
    std::vector<double> timings;
    for (const Json& value : fixture["timings"])
      timings.push_back(number_of(value));
    const aitune::MedianInterval interval = aitune::median_interval(timings, 0.025);
    result["median"] = {{"n", interval.n},
                        {"median", json_number(interval.median)},
                        {"low", json_number(interval.low)},
                        {"high", json_number(interval.high)}};
    std::erase_if(timings, [](double value) { return std::isnan(value); });
    std::sort(timings.begin(), timings.end());
    result["p90"] =
        timings.empty() ? Json(nullptr) : json_number(aitune::quantile_of_sorted(timings, 0.9));
  }
  if (!fixture.contains("budget")) return result;
  std::optional<aitune::AccuracyBudget> budget;
  try {
    budget = aitune::parse_accuracy_text(fixture["budget"].get<std::string>());
  } catch (const aitune::ConfigError& error) {
    result["budget"] = {{"error", error.what()}};
    return result;
  }
  result["budget"] = budget_json(*budget);
  judge_samples(fixture.value("samples", Json::array()), *budget, result);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: aitune-judge FIXTURE.json [FIXTURE.json ...]\n");
    return 2;
  }
  try {
    for (int i = 1; i < argc; ++i) {
      std::ifstream file(argv[i]);
      if (!file) throw aitune::ConfigError(std::string("cannot read ") + argv[i]);
      Json result = judge_fixture(Json::parse(file));
      result["fixture"] = argv[i];
      std::printf("%s\n", result.dump().c_str());
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "aitune-judge: %s\n", error.what());
    return 1;
  }
  return 0;
}
