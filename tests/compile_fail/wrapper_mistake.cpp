// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// Must not compile: a wrapper backend whose do_infer returns at::Tensor where output_type is
// c10::IValue, the mistake a newcomer made. ctest builds it and expects the first error to name
// the broken requirement (tests/cmake/check_build_fails.cmake), not an overload deep in the
// standard library.
#include <aitune/torch.hpp>

#include <span>
#include <string>
#include <utility>
#include <vector>

namespace lt = aitune::lt;

class Mistaken : public aitune::BackendLifecycle<Mistaken> {
 public:
  using model_type = lt::Model;
  using sample_type = lt::Sample;
  using output_type = c10::IValue;

  explicit Mistaken(lt::AnyBackend inner) : inner_(std::move(inner)) {}
  [[nodiscard]] std::string describe() const { return "Mistaken(" + inner_.describe() + ")"; }
  [[nodiscard]] std::string key() const { return "mistaken:" + inner_.key(); }

 private:
  friend class aitune::BackendLifecycle<Mistaken>;
  void do_build(const lt::Model& model, std::span<const lt::Sample> samples) {
    inner_.build(model, samples);
  }
  at::Tensor do_infer(const lt::Sample& sample) { return inner_.infer(sample).toTensor(); }

  lt::AnyBackend inner_;
};

int main() {
  std::vector<lt::AnyBackend> candidates;
  candidates.emplace_back(Mistaken(lt::TorchScriptFrozen()));
  return static_cast<int>(candidates.size());
}
