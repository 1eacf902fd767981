// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// A backend of your own that wraps another one: it counts the calls its inner backend serves and
// leaves everything else to it. docs/libtorch.md ("Your own backend") shows this file; a test tunes
// it.
#include <aitune/torch/backends/any_backend.hpp>

#include <atomic>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace example {

namespace lt = aitune::lt;

class CountedBackend : public aitune::BackendLifecycle<CountedBackend> {
 public:
  using model_type = lt::Model;
  using sample_type = lt::Sample;
  using output_type = c10::IValue;

  explicit CountedBackend(lt::AnyBackend inner) : inner_(std::move(inner)) {}

  [[nodiscard]] std::string describe() const { return "Counted(" + inner_.describe() + ")"; }
  [[nodiscard]] std::string key() const { return "counted:" + inner_.key(); }
  // Optional members, forwarded so that the wrapper is checked and served as its inner backend.
  [[nodiscard]] lt::OutputPolicy output_policy() const { return inner_.output_policy(); }
  [[nodiscard]] bool thread_safe() const { return inner_.thread_safe(); }
  [[nodiscard]] std::vector<std::filesystem::path> loaded_files() const {
    return inner_.loaded_files();
  }
  // After a run of calls, what the inner backend's calls changed for the process is put back
  // (lt::TorchThreads' thread count): a wrapper passes it on.
  void after_calls() { inner_.after_calls(); }

  /// Calls served, by this backend and every copy of it (the strategy copies its candidates).
  [[nodiscard]] long calls() const { return calls_->load(); }

 private:
  friend class aitune::BackendLifecycle<CountedBackend>;

  void do_build(const lt::Model& model, std::span<const lt::Sample> samples) {
    inner_.build(model, samples);
  }
  c10::IValue do_infer(const lt::Sample& sample) {
    calls_->fetch_add(1);
    return inner_.infer(sample);
  }
  void do_activate() { inner_.activate(); }
  void do_deactivate() { inner_.deactivate(); }

  lt::AnyBackend inner_;
  std::shared_ptr<std::atomic<long>> calls_ = std::make_shared<std::atomic<long>>(0);
};

// One line that turns a broken requirement into a short message naming it.
static_assert(lt::TorchBackend<CountedBackend>);

}  // namespace example
