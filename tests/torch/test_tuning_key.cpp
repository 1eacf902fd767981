// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// The tuning cache's key for LibTorch tunings, and the one-call tune() through a cache.
#include "torch/test_models.hpp"
#include "torch/torch_catch.hpp"

#include <ATen/Parallel.h>

#include <unistd.h>

#include <filesystem>
#include <string>
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
}

TEST_CASE("A model loaded from a file is keyed by the file's content", "[cache][key]") {
  const auto file = temporary("net.pt");
  make_conv_net().save(file.string());
  const Model loaded = load_model(file);
  CHECK(loaded.source == file);
  CHECK(model_digest(loaded) == sha256_file(file));
  std::filesystem::remove(file);
}

TEST_CASE("tune() with a cache tunes once, then rebuilds the same choice without measuring",
          "[cache][tune]") {
  const auto file = temporary("cache.json");
  std::filesystem::remove(file);
  const TuningCache cache(file, null_sink());
  const Model model = conv_model();
  const auto samples = one_image(16);

  const TunedModule first = tune(model, samples, cache, two_candidates(), quick(), "net");
  CHECK_FALSE(first.report().cache_hit);
  const TunedModule second = tune(model, samples, cache, two_candidates(), quick(), "net");
  REQUIRE(second.report().cache_hit);
  CHECK(second.selected() == first.selected());
  CHECK(second.report().measurement.calls == first.report().measurement.calls);
  const at::Tensor expected = make_conv_net().forward(samples[0]).toTensor();
  CHECK(torch::allclose(second.forward(samples[0]).toTensor(), expected, 1e-4, 1e-4));

  // Another candidate set is another key: a tuning.
  const TunedModule third =
      tune(model, samples, cache, {AnyBackend(TorchScriptFrozen())}, quick(), "net");
  CHECK_FALSE(third.report().cache_hit);
  std::filesystem::remove(file);
  std::filesystem::remove(file.string() + ".lock");
}
