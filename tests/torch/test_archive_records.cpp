// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// The reader of extra/aitune.json (model/archive_records.hpp), on records written here: both
// schemas, a variant of a family it does not know, and the axes exported as a range.
#include "torch/torch_catch.hpp"

#include <set>
#include <string>
#include <vector>

namespace {

using aitune::lt::Pt2Archive;

/// An archive at a made-up path with the AOTInductor compilations `compiled`, after reading
/// `json` as its extra/aitune.json; `held` are the records the archive holds.
Pt2Archive read(const std::string& json, std::vector<std::string> compiled = {"aoti_default"},
                std::set<std::string> held = {"aitune/onnx/model.onnx", "aitune/openvino/model.xml",
                                              "aitune/openvino/model.bin"}) {
  Pt2Archive archive{"net.pt2"};
  for (auto& name : compiled)
    archive.aoti_models.push_back(aitune::lt::AotiModelInfo{std::move(name)});
  aitune::lt::detail::read_aitune_json(
      json, archive, [&](const std::string& record) { return held.contains(record); });
  return archive;
}

const std::string inputs =
    R"("inputs": [{"name": "input_ids", "shape": [1, 128]},
                  {"name": "attention_mask", "shape": [1, 128]}])";

}  // namespace

TEST_CASE("Each variant's record is read by its family, in both schemas", "[archive]") {
  const std::string schema2 = R"({"schema": 2, )" + inputs + R"(, "variants": {
      "aoti_default": {"family": "aoti", "precision": "bf16", "shapes": "range",
                       "made": {"inductor_configs": {"freezing": true}, "device": "cpu"}},
      "onnx": {"family": "onnx", "precision": "fp32", "shapes": "range",
               "records": ["aitune/onnx/model.onnx"]},
      "openvino": {"family": "openvino", "precision": "fp32", "shapes": "static",
                   "records": ["aitune/openvino/model.xml", "aitune/openvino/model.bin"]}}})";
  const std::string schema1 = "{" + inputs + R"(, "aoti": {"aoti_default":
      {"precision": "bf16", "inductor_configs": {"freezing": true}}},
      "runtimes": {"onnx": {"record": "aitune/onnx/model.onnx"},
                   "openvino": {"xml": "aitune/openvino/model.xml",
                                "bin": "aitune/openvino/model.bin"}}})";
  for (const bool schema_2 : {true, false}) {
    const std::string& json = schema_2 ? schema2 : schema1;
    const Pt2Archive archive = read(json);
    INFO(json);
    CHECK(archive.records_problem.empty());
    CHECK(archive.unusable_variants.empty());
    const auto& compiled = archive.aoti_models.at(0);
    CHECK(compiled.unusable.empty());
    CHECK(compiled.precision == aitune::Precision::bf16);
    CHECK(compiled.inductor_configs.at("freezing") == "true");
    REQUIRE(archive.runtime_variants.size() == 2);
    CHECK(archive.runtime_variants.at("onnx").family == "onnx");
    CHECK(archive.runtime_variants.at("onnx").records ==
          std::vector<std::string>{"aitune/onnx/model.onnx"});
    CHECK(archive.runtime_variants.at("openvino").records ==
          std::vector<std::string>{"aitune/openvino/model.xml", "aitune/openvino/model.bin"});
    // Schema 1 has no shapes: everything is for the example's.
    CHECK(compiled.takes_range == schema_2);
    CHECK(archive.runtime_variants.at("onnx").takes_range == schema_2);
    CHECK_FALSE(archive.runtime_variants.at("openvino").takes_range);
  }
}

TEST_CASE("A quantised AOTInductor compilation is read with its calibration digests and is never "
          "the baseline a missing native runtime needs",
          "[archive][quantized]") {
  const std::string digest(64, 'a');
  const std::string json = R"({"schema": 2, )" + inputs + R"(, "variants": {
      "aoti_bf16": {"family": "aoti", "precision": "bf16"},
      "aoti_int8": {"family": "aoti", "precision": "fp32",
                    "quantization": {"dtype": "int8", "calibration": {"digests": [")" +
                           digest + R"("]}}},
      "aoti_max_autotune": {"family": "aoti", "precision": "fp32"}}})";
  // In the archive's order: the reduced-precision ones first.
  const Pt2Archive archive = read(json, {"aoti_bf16", "aoti_int8", "aoti_max_autotune"});
  CHECK(archive.records_problem.empty());
  const auto& int8 = archive.aoti_models.at(1);
  CHECK(int8.unusable.empty());
  CHECK(int8.quantization == "int8");
  CHECK(int8.calibration_digests == std::vector<std::string>{digest});
  CHECK(archive.aoti_models.at(2).quantization.empty());
  const aitune::lt::AotiModelInfo* baseline = aitune::lt::first_full_precision_compilation(archive);
  REQUIRE(baseline != nullptr);
  CHECK(baseline->name == "aoti_max_autotune");
  // With no full-precision compilation there is none to stand in for eager PyTorch.
  CHECK(aitune::lt::first_full_precision_compilation(read(json, {"aoti_bf16", "aoti_int8"})) ==
        nullptr);

  // A quantisation record that is not an int8 one makes the compilation unusable, with why.
  const Pt2Archive wrong = read(R"({"schema": 2, "variants": {"aoti_int8": {"family": "aoti",
      "quantization": {"dtype": "int4"}}}})",
                                {"aoti_int8"});
  CHECK_THAT(wrong.aoti_models.at(0).unusable,
             Catch::Contains("variants.aoti_int8.quantization is") &&
                 Catch::Contains("not a record of an int8 quantisation"));
}

TEST_CASE("A variant of a family the reader does not know is named with its cause, not dropped",
          "[archive]") {
  // Before schema 2 the reader knew "onnx" and "openvino" by name and skipped anything else.
  const Pt2Archive archive = read(R"({"schema": 2, "variants": {
      "onnx_int8": {"family": "onnx-qdq", "precision": "fp32", "records": ["x.onnx"]},
      "broken": {"precision": "fp32"},
      "not_a_record": 3,
      "aoti_gone": {"family": "aoti"},
      "onnx": {"family": "onnx", "records": ["aitune/onnx/missing.onnx"]}}})");
  CHECK(archive.runtime_variants.empty());
  CHECK_THAT(archive.unknown_variants.at("onnx_int8"),
             Catch::Contains("of the family 'onnx-qdq', which this aitune-cpp "
                             "does not read"));
  CHECK_THAT(archive.unusable_variants.at("broken"),
             Catch::Contains("variants.broken.family is missing, not a family's name"));
  CHECK_THAT(archive.unusable_variants.at("not_a_record"),
             Catch::Contains("variants.not_a_record is 3, not an object"));
  CHECK_THAT(archive.unusable_variants.at("aoti_gone"),
             Catch::Contains("records an AOTInductor compilation the archive "
                             "does not hold"));
  CHECK_THAT(archive.unusable_variants.at("onnx"),
             Catch::Contains("names the record 'aitune/onnx/missing.onnx' for "
                             "onnx, which the archive does not hold"));
}

TEST_CASE("A converted model under a name of its own is run by its family, and what no "
          "candidate can come from is named",
          "[archive]") {
  // Before: only the names "onnx" and "openvino" made candidates; onnx_main and ov_main made
  // none and no warning, and an unusable onnx2 or a compilation aoti_ghost the archive lacks
  // were never mentioned (D12).
  const Pt2Archive archive = read(R"({"schema": 2, "variants": {
      "aoti_default": {"family": "aoti"},
      "onnx_main": {"family": "onnx", "records": ["aitune/onnx/model.onnx"]},
      "ov_main": {"family": "openvino",
                  "records": ["aitune/openvino/model.xml", "aitune/openvino/model.bin"]},
      "onnx2": {"family": "onnx", "records": ["nope"]},
      "aoti_ghost": {"family": "aoti"},
      "broken": {"precision": "fp32"},
      "trt": {"family": "tensorrt"}}})");
  using aitune::lt::converted_variants;
  CHECK(converted_variants(archive, false) ==
        std::vector<std::string>{"onnx2", "onnx_main", "ov_main"});
  CHECK(converted_variants(archive, true).empty());
  CHECK(aitune::lt::variant_family(archive, "onnx2") == "onnx");
  const auto unheld = aitune::lt::unheld_compilations(archive);
  REQUIRE(unheld.size() == 1);
  CHECK(unheld.front().name == "aoti_ghost");
  CHECK_THAT(unheld.front().unusable, Catch::Contains("does not hold"));
  const std::vector<std::string> left_out = aitune::lt::variants_left_out(archive);
  REQUIRE(left_out.size() == 2);
  CHECK_THAT(left_out[0], Catch::StartsWith("variant 'trt' left out: ") &&
                              Catch::Contains("the family 'tensorrt'"));
  CHECK_THAT(left_out[1], Catch::StartsWith("variant 'broken' left out: ") &&
                              Catch::Contains("family is missing"));
  // Records that cannot be read at all: "onnx" and "openvino" fail with why, each run by the
  // family of its name, whatever family the unread record gave it (found by fuzz_archive_records).
  const Pt2Archive unread = read(R"({"schema": 2, "dynamic": [{"/input": "x"}], "variants": {
      "openvino": {"family": "openvintttto"}}})");
  REQUIRE_FALSE(unread.records_problem.empty());
  CHECK(converted_variants(unread, false) == std::vector<std::string>{"onnx", "openvino"});
  CHECK(aitune::lt::variant_family(unread, "openvino") == "openvino");
  // The export tool's own quantised names join a budgeted tuning only, recorded or not.
  const Pt2Archive failed = read(R"({"schema": 2, "variants": {},
      "failed": {"onnx_int8": "calibration failed", "openvino": "conversion failed"}})");
  CHECK(converted_variants(failed, true) == std::vector<std::string>{"onnx_int8"});
  CHECK(converted_variants(failed, false) == std::vector<std::string>{"openvino"});
}

TEST_CASE("The axes exported as a range are read per input, and a range read wrong stops every "
          "variant",
          "[archive]") {
  const Pt2Archive archive = read(R"({"schema": 2, )" + inputs + R"(, "dynamic": [
      {"input": "input_ids", "axis": 1, "min": 8, "max": 256, "symbol": "s0"},
      {"input": "attention_mask", "axis": 1, "min": 8, "max": 256, "symbol": "s0"}],
      "variants": {"onnx": {"family": "onnx", "shapes": "range",
                            "records": ["aitune/onnx/model.onnx"]}}})");
  CHECK(archive.records_problem.empty());
  REQUIRE(archive.dynamic_axes.size() == 2);
  CHECK(archive.dynamic_axes[1].input == "attention_mask");
  CHECK(archive.dynamic_axes[1].axis == 1);
  CHECK(archive.dynamic_axes[1].min == 8);
  CHECK(archive.dynamic_axes[1].max == 256);
  CHECK(archive.dynamic_axes[0].symbol == archive.dynamic_axes[1].symbol);

  for (const std::string bad : {R"({"input": "token_ids", "axis": 1, "min": 8, "max": 256})",
                                R"({"input": "input_ids", "axis": 1, "min": 300, "max": 256})",
                                R"({"input": "input_ids", "axis": -1, "min": 8, "max": 256})"}) {
    INFO(bad);
    const Pt2Archive wrong = read(R"({"schema": 2, )" + inputs + R"(, "dynamic": [)" + bad +
                                  R"(], "variants": {"aoti_default": {"family": "aoti"},
        "onnx": {"family": "onnx", "records": ["aitune/onnx/model.onnx"]}}})");
    CHECK_THAT(wrong.records_problem, Catch::Contains("dynamic[0] is") &&
                                          Catch::Contains("not an axis of a recorded input"));
    CHECK(wrong.dynamic_axes.empty());
    CHECK(wrong.runtime_variants.empty());
    CHECK(wrong.aoti_models.at(0).unusable == wrong.records_problem);
  }
}

TEST_CASE("A range record with one axis twice, one symbol with two ranges or a max no input can "
          "have is refused, naming the conflict",
          "[archive]") {
  // Before: accepted; the bound samples a tuning made from it were inputs the program could not
  // take, the baseline failed on them, and an unchecked candidate was selected (D2); a max of
  // 2^40 or 2^63-1 ended in the allocator's or SymInt's raw text (D8).
  const auto dynamic = [&](const std::string& axes) {
    return read(R"({"schema": 2, )" + inputs + R"(, "dynamic": [)" + axes +
                R"(], "variants": {"aoti_default": {"family": "aoti"},
        "onnx": {"family": "onnx", "records": ["aitune/onnx/model.onnx"]}}})");
  };
  const std::string ids =
      R"({"input": "input_ids", "axis": 1, "min": 2, "max": 64, "symbol": "s0"})";
  SECTION("one symbol, two ranges") {
    const Pt2Archive wrong = dynamic(ids + R"(, {"input": "attention_mask", "axis": 1, "min": 2,
                                                 "max": 32, "symbol": "s0"})");
    CHECK_THAT(wrong.records_problem,
               Catch::Contains("dynamic[1] is") &&
                   Catch::Contains("its symbol 's0' has the range 2..32 there and 2..64 on axis 1 "
                                   "of 'input_ids': one exported dimension has one range"));
    CHECK(wrong.dynamic_axes.empty());
    CHECK(wrong.aoti_models.at(0).unusable == wrong.records_problem);
  }
  SECTION("one axis twice") {
    const Pt2Archive wrong =
        dynamic(ids + R"(, {"input": "input_ids", "axis": 1, "min": 2, "max": 8, "symbol": "s1"})");
    CHECK_THAT(wrong.records_problem,
               Catch::Contains("dynamic[1] is") &&
                   Catch::Contains("it records axis 1 of 'input_ids' a second time"));
    CHECK(wrong.runtime_variants.empty());
  }
  SECTION("a max past the largest dimension an input may have") {
    for (const std::string max : {"2147483649", "1099511627776", "9223372036854775807"}) {
      INFO(max);
      const Pt2Archive wrong =
          dynamic(R"({"input": "input_ids", "axis": 1, "min": 2, "max": )" + max + "}");
      CHECK_THAT(wrong.records_problem, Catch::Contains("0 <= min <= max <= 2147483648"));
    }
    // The largest a dimension may be is still read.
    CHECK(dynamic(R"({"input": "input_ids", "axis": 1, "min": 2, "max": 2147483648})")
              .records_problem.empty());
  }
  SECTION("two symbols, or one symbol with one range on two inputs, are read") {
    CHECK(dynamic(ids + R"(, {"input": "attention_mask", "axis": 1, "min": 2, "max": 32,
                              "symbol": "s1"})")
              .records_problem.empty());
    CHECK(dynamic(ids + R"(, {"input": "attention_mask", "axis": 1, "min": 2, "max": 64,
                              "symbol": "s0"})")
              .dynamic_axes.size() == 2);
  }
}

TEST_CASE("An AOTInductor compilation with no usable record of the family aoti is unusable, not "
          "raced as fp32",
          "[archive]") {
  // Before: a record of an unknown family (or none) for aoti_default was warned about, yet the
  // compilation was raced as fp32 and static and selected, its record saying bf16 and int8.
  const auto compiled = [&](const std::string& record) {
    const std::string variants = record.empty() ? "" : R"("aoti_default": )" + record;
    return read(R"({"schema": 2, "variants": {)" + variants + "}}").aoti_models.at(0).unusable;
  };
  CHECK_THAT(compiled(R"({"family": "aoti-v2", "precision": "bf16"})"),
             Catch::Contains("of the family 'aoti-v2', which this aitune-cpp does not read"));
  CHECK_THAT(compiled(R"({"precision": "bf16"})"),
             Catch::Contains("variants.aoti_default.family is missing"));
  CHECK_THAT(compiled("7"), Catch::Contains("variants.aoti_default is 7, not an object"));
  CHECK_THAT(compiled(R"({"family": "onnx", "records": ["aitune/onnx/model.onnx"]})"),
             Catch::Contains("records variants.aoti_default as of the family 'onnx'"));
  CHECK_THAT(compiled(""), Catch::Contains("records no variant 'aoti_default'"));
  CHECK(compiled(R"({"family": "aoti", "precision": "bf16"})").empty());
}

TEST_CASE("A tuned module's ranged axes take any size in their range, and nothing else",
          "[archive][tuned_module]") {
  using aitune::lt::InputRanges;
  using aitune::lt::InputSignature;
  using aitune::lt::Sample;
  using aitune::lt::ShapeCheck;
  aitune::lt::Model model;
  model.archive = read(R"({"schema": 2, )" + inputs + R"(, "dynamic": [
      {"input": "input_ids", "axis": 1, "min": 8, "max": 256, "symbol": "s0"},
      {"input": "attention_mask", "axis": 1, "min": 8, "max": 256, "symbol": "s0"}]})");
  const InputRanges ranges = InputRanges::of(model);
  REQUIRE(ranges.axes.size() == 2);
  CHECK(ranges.axes[1].position == 1);
  const auto pair = [](std::int64_t ids, std::int64_t mask, std::int64_t batch = 1) {
    return Sample{torch::zeros({batch, ids}, torch::kInt64),
                  torch::ones({batch, mask}, torch::kInt64)};
  };
  const std::vector<Sample> samples{pair(64, 64), pair(128, 128)};
  const InputSignature signature = InputSignature::of(samples, {ShapeCheck::range, ranges});
  for (const std::int64_t length : {8, 64, 200, 256}) {
    INFO(length);
    CHECK_NOTHROW(signature.check(pair(length, length), "m"));
  }
  CHECK_THROWS_WITH(signature.check(pair(257, 257), "m"),
                    "m: input 0 ('input_ids') has shape [1, 257]: its axis 1 takes 8 to 256 (the "
                    "range it was exported for), not 257");
  CHECK_THROWS_WITH(signature.check(pair(7, 7), "m"), Catch::Contains("not 7"));
  CHECK_THROWS_WITH(signature.check(pair(100, 99), "m"),
                    "m: inputs 0 ('input_ids') and 1 ('attention_mask') must have the same size on "
                    "axes 1 and 1 (one exported dimension, 8 to 256), got 100 and 99");
  // An axis outside the ranges is held to the samples' size; the shapes tuned read as one.
  CHECK_THROWS_WITH(signature.check(pair(100, 100, 2), "m"),
                    "m: input 0 is a Long tensor of shape [2, 100]; it was tuned with a Long "
                    "tensor of shape [1, 8..256] (an axis shown as MIN..MAX takes any size in it)");
  // Without the ranges (ShapeCheck::exact) only the samples' own shapes pass.
  const InputSignature exact = InputSignature::of(samples, ShapeCheck::exact);
  CHECK_NOTHROW(exact.check(pair(64, 64), "m"));
  CHECK_THROWS_WITH(exact.check(pair(200, 200), "m"), Catch::Contains("shape [1, 200]"));
}

TEST_CASE("The bounds a tuning checks at keep the batch axis at 1, though a record may range it",
          "[archive]") {
  // Before: a range on axis 0 made bound samples (and --lengths samples) of batch 8 under a
  // report headed "batch size 1". A record may still range the batch (batching builds on it).
  aitune::lt::Model model;
  model.archive = read(R"({"schema": 2, )" + inputs + R"(, "dynamic": [
      {"input": "input_ids", "axis": 0, "min": 1, "max": 8, "symbol": "s1"},
      {"input": "input_ids", "axis": 1, "min": 8, "max": 256, "symbol": "s0"},
      {"input": "attention_mask", "axis": 0, "min": 1, "max": 8, "symbol": "s1"},
      {"input": "attention_mask", "axis": 1, "min": 8, "max": 256, "symbol": "s0"}]})");
  REQUIRE(model.archive->records_problem.empty());
  const aitune::lt::InputRanges ranges = aitune::lt::InputRanges::of(model);
  REQUIRE(ranges.axes.size() == 4);
  const aitune::lt::Sample sample{torch::zeros({1, 64}, torch::kInt64),
                                  torch::ones({1, 64}, torch::kInt64)};
  const std::vector<aitune::lt::Sample> bounds = ranges.at_bounds(sample);
  REQUIRE(bounds.size() == 2);
  for (const std::int64_t i : {0, 1}) {
    CHECK(bounds[0][i].toTensor().sizes() == c10::IntArrayRef({1, 8}));
    CHECK(bounds[1][i].toTensor().sizes() == c10::IntArrayRef({1, 256}));
  }
}
