// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// The command line's value syntax (core/cli/option_text.hpp): what it reads and what it refuses.
#include <aitune/core/cli/option_text.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

using namespace aitune;

TEST_CASE("An input is dimensions, an optional dtype and an optional value range", "[options]") {
  const InputText plain = parse_input_text("1x3x224x224");
  CHECK(plain.shape == std::vector<std::int64_t>{1, 3, 224, 224});
  CHECK(plain.dtype.empty());
  CHECK_FALSE(plain.range.has_value());

  const InputText tokens = parse_input_text("1x64:int64[0,30522)");
  CHECK(tokens.shape == std::vector<std::int64_t>{1, 64});
  CHECK(tokens.dtype == "int64");
  REQUIRE(tokens.range.has_value());
  CHECK(tokens.range->low == 0.0);
  CHECK(tokens.range->high == 30522.0);

  const InputText unit = parse_input_text("1x3x8x8[-0.5,1e0)");
  CHECK(unit.dtype.empty());
  REQUIRE(unit.range.has_value());
  CHECK(unit.range->low == -0.5);
  CHECK(unit.range->high == 1.0);
}

TEST_CASE("A malformed input is refused with the reason", "[options]") {
  const auto refused = [](std::string_view text, std::string_view why) {
    INFO(text);
    CHECK_THROWS_AS(parse_input_text(text), ConfigError);
    CHECK_THROWS_WITH(parse_input_text(text), Catch::Contains(std::string(why)));
  };
  refused("", "no dimensions");
  refused(":int64", "no dimensions");
  refused("1x", "'' is not a dimension");
  refused("1xx3", "'' is not a dimension");
  refused("1x3xfoo", "'foo' is not a dimension");
  refused("1x+3", "'+3' is not a dimension");
  refused("1x0", "dimension 0 is not positive");
  refused("1x-2", "dimension -2 is not positive");
  refused("1x3000000000", "dimension 3000000000 is too large");
  refused("1x99999999999999999999", "is not a dimension");
  refused("1x65536x65536x65536", "more than 2147483648 elements");
  refused("1x4:", "no dtype after ':'");
  refused("7:b7:bf16", "'b7:bf16' is not a dtype name");
  refused("1x4:Int64", "'Int64' is not a dtype name");
  refused("1x4:int64[0,10]", "a range is written [LOW,HIGH)");
  refused("1x4:int64[0,10", "a range is written [LOW,HIGH)");
  refused("1x4:int64[10)", "two finite numbers");
  refused("1x4[0,inf)", "two finite numbers");
  refused("1x4[nan,1)", "two finite numbers");
  refused("1x4[a,b)", "two finite numbers");
  refused("1x4:int64[5,5)", "the range [LOW,HIGH) is empty");
  refused("1x4:int64[9,3)", "the range [LOW,HIGH) is empty");
}

TEST_CASE("A tolerance is [PRECISION:]RTOL[,SCALE_ATOL]", "[options]") {
  const ToleranceText both = parse_tolerance_text("1e-3");
  CHECK_FALSE(both.precision);
  CHECK(both.rtol == 1e-3);
  CHECK(both.scale_atol == 1e-3);
  const ToleranceText bf16 = parse_tolerance_text("bfloat16:0.05,1e-4");
  CHECK(bf16.precision == Precision::bf16);
  CHECK(bf16.rtol == 0.05);
  CHECK(bf16.scale_atol == 1e-4);
  for (const std::string_view bad : {"", "-1", "1e7", "nan", "0.1,", "0.1,x", "fp8:0.1", ":0.1"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_tolerance_text(bad), ConfigError);
  }
}

TEST_CASE("Precision names and comma-separated lists", "[options]") {
  CHECK(parse_precision("float16") == Precision::fp16);
  CHECK_THROWS_WITH(parse_precision("fp8"),
                    "unknown precision 'fp8': expected one of fp32, bf16, fp16, fp64");
  CHECK(comma_separated("a,b,c") == std::vector<std::string_view>{"a", "b", "c"});
  CHECK(comma_separated("a,,b,") == std::vector<std::string_view>{"a", "", "b"});
  CHECK(comma_separated("").empty());
}

TEST_CASE("A precision reads back from its one name table, and its aliases",
          "[options][precision]") {
  for (const Precision precision :
       {Precision::fp64, Precision::fp32, Precision::fp16, Precision::bf16}) {
    INFO(to_string(precision));
    CHECK(parse_precision(to_string(precision)) == precision);
    CHECK(parse_token<Precision>(to_string(precision)) == precision);
  }
  CHECK(parse_precision("float32") == Precision::fp32);
  CHECK(parse_precision("bfloat16") == Precision::bf16);
  CHECK(parse_precision("double") == Precision::fp64);
  CHECK_FALSE(parse_token<Precision>("f32"));  // an alias is for people, not for records
  for (const std::string_view unknown : {"", "f8", "int8", "FP32", "fp32 "}) {
    INFO(unknown);
    CHECK_THROWS_AS(parse_precision(unknown), ConfigError);
  }
  CHECK(is_lower(Precision::bf16, Precision::fp32));
  CHECK(is_lower(Precision::fp32, Precision::fp64));
  CHECK_FALSE(is_lower(Precision::fp32, Precision::fp32));
}

TEST_CASE("An accuracy budget as typed: measures, the class-score output and the sample count",
          "[options][accuracy]") {
  const AccuracyBudget budget = parse_accuracy_text("cosine=0.999,top1=98%,scores=logits");
  CHECK(budget.min_cosine() == 0.999);
  CHECK_FALSE(budget.max_relative_error());
  REQUIRE(budget.top_k());
  CHECK(budget.top_k()->output == "logits");
  CHECK(budget.top_k()->k == 1);
  CHECK(budget.top_k()->min_share == Catch::Detail::Approx(0.98));
  CHECK(budget.min_samples() == 100);

  const AccuracyBudget other = parse_accuracy_text("relative=0.05,top5=0.9,samples=300");
  CHECK(other.max_relative_error() == 0.05);
  CHECK(other.top_k()->k == 5);
  CHECK(other.top_k()->output.empty());
  CHECK(other.top_k()->min_share == 0.9);
  CHECK(other.min_samples() == 300);

  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {"", "it needs a measure"},
           {"samples=100", "it needs a measure"},
           {"cosine", "'cosine' is not KEY=VALUE"},
           {"cosine=high", "cosine takes a number, got 'high'"},
           {"cosine=2", "in [-1, 1], got 2"},
           {"cosine=0.9,cosine=0.99", "cosine is given twice"},
           {"top1=98%,top5=99%", "top5 is given twice"},
           {"top0=90%", "'top0' is not topK"},
           {"topx=90%", "'topx' is not topK"},
           {"top1=0", "a share in (0, 1]"},
           {"top1=120%", "a share in (0, 1]"},
           {"scores=logits,cosine=0.9", "scores names the output of a topK agreement"},
           {"relative=-1", "in [0, 1e6]"},
           {"samples=0", "at least one sample"},
           {"samples=many,cosine=0.9", "samples takes a whole number"},
           {"exact=1", "unknown key 'exact'"}}) {
    INFO(text);
    CHECK_THROWS_WITH(parse_accuracy_text(text),
                      Catch::StartsWith("bad accuracy budget '" + text + "'") &&
                          Catch::Contains(why));
  }
}
