// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// The tuning cache's key for LibTorch tunings, and the one-call tune() through a cache.
#include "support/cache_files.hpp"
#include "torch/test_models.hpp"
#include "torch/torch_catch.hpp"

#include <ATen/Parallel.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

using namespace aitune;
using namespace aitune::lt;
using namespace aitune::testing;

namespace {

Model conv_model(std::uint64_t seed = 7) {
  return Model{make_conv_net(seed)};
}

std::vector<AnyBackend> two_candidates() {
  return {AnyBackend(TorchScriptFrozen()), AnyBackend(TorchScriptOptimized())};
}

/// A path in the temporary folder unique to this process. (No folders here: the PyTorch wheel's
/// libtorch.so exports its own, older std::filesystem, and its remove_all crashes when called
/// from code built by a newer GCC.)
std::filesystem::path temporary(std::string_view name) {
  return std::filesystem::temp_directory_path() / fmt::format("aitune_{}_{}", ::getpid(), name);
}

StrategyConfig quick() {
  return StrategyConfig{}
      .set_profiling(ProfilingConfig{}.set_time_budget_ms(500.0))
      .set_sink(null_sink());
}

}  // namespace

TEST_CASE("The tuning key is stable and changes with the model, inputs, candidates and settings",
          "[cache][key]") {
  const Model model = conv_model();
  const auto samples = one_image(16);
  const nlohmann::json key = tuning_key(model, samples, two_candidates(), quick());
  CHECK(key == tuning_key(model, samples, two_candidates(), quick()));
  CHECK(key == tuning_key(conv_model(), one_image(16), two_candidates(), quick()));  // same content
  CHECK(key["inputs"] == nlohmann::json::parse(R"([["1x3x16x16"]])"));
  CHECK(key["intra_op_threads"] == at::get_num_threads());
  CHECK(key["libtorch"] == libtorch_version());
  CHECK(key["machine"]["device"] == "cpu");
  CHECK(key["machine"].contains("cpu"));
  // Two CPUs of one model name may differ in what decides reduced precision (AVX-512, AMX).
  CHECK(key["machine"]["cpu_features"] == nlohmann::json(aitune::cpu_features()));
  CHECK(key["candidates"].size() == 2);

  const auto differs = [&](const nlohmann::json& other, std::string_view field) {
    CHECK(other != key);
    CHECK(other[std::string(field)] != key[std::string(field)]);
  };
  differs(tuning_key(conv_model(8), samples, two_candidates(), quick()), "model_sha256");
  differs(tuning_key(model, one_image(20), two_candidates(), quick()), "inputs");
  differs(tuning_key(model, samples, {AnyBackend(TorchScriptFrozen())}, quick()), "candidates");
  std::vector<AnyBackend> looser = two_candidates();
  looser[0].set_tolerance(Tolerance{1e-2, 1e-2});
  differs(tuning_key(model, samples, looser, quick()), "candidates");
  differs(tuning_key(model, samples, two_candidates(),
                     quick().set_decision(DecisionConfig{}.set_min_gain(0.1))),
          "settings");
  differs(
      tuning_key(model, samples, two_candidates(), quick().enable_performance_validation(false)),
      "settings");
  // Settings the old describe() text left out: a changed warm-up or seed must not hit an entry
  // measured with other ones.
  const auto with_profiling = [&](auto change) {
    StrategyConfig config = quick();
    ProfilingConfig profiling = config.profiling();
    change(profiling);
    return tuning_key(model, samples, two_candidates(), config.set_profiling(profiling));
  };
  differs(with_profiling([](ProfilingConfig& p) { p.set_warmup(WarmupConfig{}.set_min_calls(7)); }),
          "settings");
  differs(with_profiling([](ProfilingConfig& p) {
            RaceConfig race = p.race();
            p.set_race(race.set_seed(race.seed() + 1));
          }),
          "settings");
}

TEST_CASE("A model loaded from a file is keyed by the file's content", "[cache][key]") {
  const auto file = temporary("net.pt");
  make_conv_net().save(file.string());
  const Model loaded = load_model(file);
  CHECK(loaded.source == file);
  CHECK(model_digest(loaded) == sha256_file(file));
  std::filesystem::remove(file);
}

#if AITUNE_WITH_CUDA
TEST_CASE("A wrapper's key covers the files its inner backend loads: CudaGraph(AOTInductor)",
          "[cache][key]") {
  // A rebuilt package at the same path must miss: every wrapper forwards loaded_files
  // (WrapperBackend), so the key digests the package whichever wrapper holds it.
  const auto package = temporary("package.pt2");
  const auto write = [&](std::string_view content) {
    std::ofstream(package, std::ios::binary) << content;
  };
  const auto key = [&] {
    return tuning_key(conv_model(), one_image(16),
                      {AnyBackend(CudaGraph(AOTInductor(package, "model")))}, quick());
  };
  write("the first compilation");
  const nlohmann::json first = key();
  REQUIRE(first["candidates"][0]["files_sha256"].size() == 1);
  CHECK(first["candidates"][0]["files_sha256"][0] == sha256_file(package));
  write("the package compiled again");
  CHECK(key()["candidates"] != first["candidates"]);
  std::filesystem::remove(package);
}
#endif

TEST_CASE("tune() with a cache tunes once, then rebuilds the same choice without measuring",
          "[cache][tune]") {
  const auto file = temporary("cache.json");
  std::filesystem::remove(file);
  TuningCache cache(file);
  cache.set_key("a key for the tests, 16 bytes at least");  // signed: the outputs are kept
  const Model model = conv_model();
  const auto samples = one_image(16);

  const TunedModule first =
      tune(model, samples, {.candidates = two_candidates(), .config = quick(), .cache = &cache});
  CHECK_FALSE(first.report().cache_hit);
  const nlohmann::json key = tuning_key(model, samples, two_candidates(), quick(), cache);
  REQUIRE(cache.find(key));
  CHECK(cache.find(key)->reference.is_object());  // the baseline's outputs, stored
  const TunedModule second =
      tune(model, samples, {.candidates = two_candidates(), .config = quick(), .cache = &cache});
  REQUIRE(second.report().cache_hit);
  CHECK(second.selected() == first.selected());
  // A candidate was checked against the stored outputs; the baseline needs no check.
  CHECK(second.report().cache_hit->stored_reference != second.report().baseline_selected);
  CHECK(second.report().measurement.calls == first.report().measurement.calls);
  const at::Tensor expected = make_conv_net().forward(samples[0]).toTensor();
  CHECK(torch::allclose(second.forward(samples[0]).toTensor(), expected, 1e-4, 1e-4));

  CHECK(second.report().module == "model");  // StrategyConfig's default name
  // A key the caller made is used as it is.
  const TunedModule named = tune(model, samples,
                                 {.candidates = two_candidates(),
                                  .config = quick().set_module_name("net"),
                                  .cache = &cache,
                                  .key = key});
  REQUIRE(named.report().cache_hit);
  CHECK(named.report().module == "net");
  // A key without a cache is a mistake, said at once.
  CHECK_THROWS_WITH(tune(model, samples, {.config = quick(), .key = key}),
                    Catch::Contains("set TuneOptions::cache too"));

  // Another candidate set is another key: a tuning.
  const TunedModule third = tune(model, samples,
                                 {.candidates = std::vector<AnyBackend>{TorchScriptFrozen()},
                                  .config = quick(),
                                  .cache = &cache});
  CHECK_FALSE(third.report().cache_hit);
  testing::remove_cache_files(file);
}

TEST_CASE("Stored outputs come back as they were, nested, in any dtype", "[cache][outputs]") {
  c10::impl::GenericDict dict(c10::StringType::get(), c10::TensorType::get());
  dict.insert("logits", torch::randn({1, 10}));
  const at::Tensor large = torch::arange(100000, torch::kFloat);
  const std::vector<c10::IValue> outputs{
      c10::ivalue::Tuple::create({torch::randn({1, 3}).to(torch::kBFloat16), dict}),
      c10::List<at::Tensor>({torch::arange(6, torch::kLong).view({2, 3}), large.slice(0, 0, 4)}),
      c10::IValue(2.5)};
  const std::string text = encode_outputs(outputs);
  CHECK(text.size() < 4096);  // the slice of 4 floats, not its 400 kB storage
  const std::vector<c10::IValue> back = decode_outputs(text);
  REQUIRE(back.size() == outputs.size());
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    CAPTURE(i);
    const OutputCheck same = compare_outputs(&outputs[i], back[i]);
    CHECK(same.passed);
    CHECK(same.reason == "");
  }
  CHECK(back[0].toTupleRef().elements()[0].toTensor().scalar_type() == torch::kBFloat16);
  CHECK(torch::equal(back[1].toList().get(1).toTensor(), large.slice(0, 0, 4)));
  CHECK(back[2].toDouble() == 2.5);
}

TEST_CASE("Stored outputs that are damaged are an error, not a crash", "[cache][outputs]") {
  const std::string text = encode_outputs({torch::randn({1, 8})});
  const std::string bytes = *base64_decode(text);
  CHECK_THROWS_WITH(decode_outputs("not base64!"), Catch::Contains("not base64"));
  CHECK_THROWS_WITH(decode_outputs(base64_encode("PK\x03\x04 and nothing")),
                    Catch::Contains("damaged zip archive"));
  CHECK_THROWS_WITH(decode_outputs(base64_encode(bytes.substr(0, bytes.size() / 2))),
                    Catch::Contains("damaged zip archive"));
  const std::vector<char> plain = torch::jit::pickle_save(c10::IValue(torch::ones({2})));
  CHECK_THROWS_WITH(decode_outputs(base64_encode(std::string(plain.begin(), plain.end()))),
                    Catch::Contains("not a tuple"));
}

TEST_CASE("The samples' digest follows their values, dtypes and shapes", "[cache][outputs]") {
  const at::Tensor values = torch::randn({1, 4});
  const auto digest = [](std::vector<Sample> samples) {
    return digest_samples(std::span<const Sample>(samples));
  };
  const std::optional<std::string> first = digest({Sample{values}});
  REQUIRE(first);
  CHECK(digest({Sample{values.clone()}}) == first);
  at::Tensor changed = values.clone();
  changed[0][3] += 1e-6F;
  CHECK(digest({Sample{changed}}) != first);
  CHECK(digest({Sample{values.view({4, 1})}}) != first);
  CHECK(digest({Sample{values.to(torch::kDouble)}}) != first);
  CHECK(digest({Sample{values.t().contiguous().t()}}) == first);  // the values, not the layout
  CHECK(digest({Sample{values}, Sample{values}}) != first);
  CHECK(digest({Sample{values, c10::IValue(1.0)}}) != digest({Sample{values, c10::IValue(1)}}));
  CHECK_FALSE(digest({Sample{values.to_sparse()}}));
  CHECK(digest({Sample{torch::empty({0, 4})}}) != digest({Sample{torch::empty({4, 0})}}));
  const at::Tensor complex = torch::randn({1, 4}, torch::kComplexFloat);
  CHECK(digest({Sample{complex.conj()}}) != digest({Sample{complex}}));
  CHECK(digest({Sample{complex.conj()}}) == digest({Sample{complex.conj().resolve_conj()}}));
}

TEST_CASE("A hit on other sample values checks its choice against the baseline built again",
          "[cache][tune]") {
  const auto file = temporary("cache_values.json");
  std::filesystem::remove(file);
  TuningCache cache(file);
  cache.set_key("a key for the tests, 16 bytes at least");
  const Model model = conv_model();
  const std::vector<AnyBackend> candidates{AnyBackend(TorchScriptFrozen())};
  // Without performance validation the baseline is not in the race: the candidate is chosen.
  StrategyConfig config = quick();
  config.enable_performance_validation(false);
  (void)tune(model, one_image(16), {.candidates = candidates, .config = config, .cache = &cache});
  const TunedModule hit =
      tune(model, one_image(16), {.candidates = candidates, .config = config, .cache = &cache});
  REQUIRE(hit.report().cache_hit);
  CHECK_FALSE(hit.report().baseline_selected);
  CHECK_FALSE(hit.report().cache_hit->stored_reference);  // new random values
  const std::vector<Sample> same = one_image(16);
  std::filesystem::remove(file);
  (void)tune(model, same, {.candidates = candidates, .config = config, .cache = &cache});
  const TunedModule stored =
      tune(model, same, {.candidates = candidates, .config = config, .cache = &cache});
  REQUIRE(stored.report().cache_hit);
  CHECK(stored.report().cache_hit->stored_reference);
  testing::remove_cache_files(file);
}

TEST_CASE("A LibTorch user finds the core's names under lt::", "[tune]") {
  // The same entities, not copies: an lt::Error catches what aitune throws.
  static_assert(std::is_same_v<lt::StrategyConfig, aitune::StrategyConfig>);
  static_assert(std::is_same_v<lt::TuningCache, aitune::TuningCache>);
  static_assert(std::is_same_v<lt::Error, aitune::Error>);
  static_assert(std::is_same_v<lt::TuneReport, aitune::TuneReport>);
  const Model model = conv_model();
  const std::vector<Sample> samples = one_image(16);
  CHECK_THROWS_AS(lt::tune(model, samples,
                           {.config = lt::StrategyConfig{}.set_sink(lt::null_sink()),
                            .key = nlohmann::json{{"k", 1}}}),
                  lt::ConfigError);
  lt::TuneReport report;
  report.strategy = "Min Latency Strategy";
  CHECK_THAT(lt::render_table(report), Catch::EndsWith("selected: none\n"));
  CHECK(lt::to_json(report)["schema_version"] == aitune::report_schema_version);
  CHECK(lt::to_label(lt::CandidateStatus::build_failed) == "build failed");
}
