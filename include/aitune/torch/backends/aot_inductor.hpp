// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// AOTInductor: runs a model compiled ahead of time in Python (`tools/export_model.py`, or
/// `torch._inductor.aoti_compile_and_package`, with the same torch version as this LibTorch)
/// through `torch::inductor::AOTIModelPackageLoader`, which LibTorch has from 2.6 on. The model
/// is one name inside a `.pt2` archive: a package of its own, or one of the compilations that
/// `tools/export_model.py` puts beside the ExportedProgram. With an older LibTorch the backend
/// is still there but its build fails with that reason, so a tuning goes on without it.
///
/// A compiled model trusts its inputs: another device or shape than it was compiled for reads
/// out of bounds. So the build refuses a package made for another device type than the model's,
/// the loader is made on the model's device, the package's own input checks are switched on
/// (`AOTI_RUNTIME_CHECK_INPUTS=1`, unless the process set that variable itself), and every call
/// is checked against the shapes the package was built with: another shape is an aitune::Error.
///
/// A compiled model returns its outputs flat; they are rebuilt into the structure the package
/// records (its call spec's output TreeSpec: dicts, nested tuples and lists, None), so it returns
/// what the program it was compiled from returns. A package that records no usable structure
/// returns them flat, and a failed correctness check says so. Calls from several threads run at
/// once, each on one of the package's runners (set_runners), and a model that writes to its
/// inputs gets copies of them (backends/input_mutation.hpp).

#include "aitune/core/backend.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/report/backend_identity.hpp"
#include "aitune/core/text/format.hpp"
#include "aitune/torch/backends/candidate_plan.hpp"
#include "aitune/torch/backends/family.hpp"
#include "aitune/torch/backends/input_mutation.hpp"
#include "aitune/torch/backends/native_runtime.hpp"
#include "aitune/torch/captured_stderr.hpp"
#include "aitune/torch/check/calibration_inputs.hpp"
#include "aitune/torch/check/tolerance.hpp"
#include "aitune/torch/customization.hpp"
#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/model/archive_variants.hpp"
#include "aitune/torch/model/dtype_names.hpp"
#include "aitune/torch/model/input_gate.hpp"
#include "aitune/torch/model/input_ranges.hpp"
#include "aitune/torch/model/input_spec.hpp"
#include "aitune/torch/model/model.hpp"
#include "aitune/torch/model/output_structure.hpp"

#include <ATen/Parallel.h>
#include <c10/core/DeviceGuard.h>

#include <dirent.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <ftw.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#if AITUNE_TORCH_AT_LEAST(2, 6) &&                                                                 \
    __has_include(<torch/csrc/inductor/aoti_package/model_package_loader.h>)
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#define AITUNE_HAS_AOTI 1
#else
#define AITUNE_HAS_AOTI 0
#endif

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// The family's names (AOTInductor::family), here so that what precedes the class can say them.
inline constexpr RuntimeFamily aot_inductor_family{"aoti", "AOTInductor", "", "aoti"};

namespace detail {

/// When `sample`'s tensors differ in shape from the inputs the archive `package` (the model's
/// own) was exported for: a sentence saying so, to follow a failed first run. AOTInductor
/// checks shapes only in a line of its own on standard error; the error it throws names none.
/// Empty when the shapes match or the archive recorded none (tools/export_model.py records them).
inline std::string export_shapes_hint(const Model& model, const std::filesystem::path& package,
                                      const Sample& sample) {
  if (!model.archive || model.archive->path != package) return {};
  const std::vector<std::string>& shapes = model.archive->input_shapes;
  if (shapes.size() != sample.size()) return {};
  bool differs = false;
  for (std::size_t i = 0; i < shapes.size() && !differs; ++i) {
    if (shapes[i].empty() || !sample[i].isTensor()) return {};
    differs = shapes[i] != fmt::format("{}", fmt::join(sample[i].toTensor().sizes(), "x"));
  }
  if (!differs) return {};
  return fmt::format(" (the archive was exported for inputs {}: an {} model runs only at the "
                     "shapes it was compiled for, unless exported with dynamic shapes)",
                     fmt::join(shapes, " "), aot_inductor_family.runtime);
}

/// LibTorch's package loader extracts a package into a new folder `/tmp/XXXXXX` (a fixed path: it
/// does not read TMPDIR), as `/tmp/XXXXXX/<the archive's folder>/data/aotinductor/<model>/...`,
/// and removes it when the loader goes; a loader whose construction throws (a damaged package)
/// never goes, and its folder would stay, megabytes each time. These find and remove it: a folder
/// made during the failed load that holds that archive's model. (Another process loading the same
/// model of the same archive at that moment could lose its folder: a failed load and a
/// concurrent load of the same package are the case left.) POSIX calls, not std::filesystem:
/// the PyTorch wheel's libtorch.so exports an older std::filesystem whose remove_all crashes
/// when called from code built by a newer GCC.
class ExtractionFolders {
 public:
  /// The folders in the temporary folder before a load.
  ExtractionFolders() : root_(temporary_root()), before_(folders_in(root_)) {}

  /// After a load of the model `model_name` of the package at `package` that failed: removes
  /// each folder that appeared since and holds that model (another process's stay).
  void remove_left_by(const std::string& package, const std::string& model_name) const noexcept {
    try {
      const std::string archive_folder = first_record_folder(package);
      if (archive_folder.empty()) return;
      for (const std::string& name : folders_in(root_)) {
        if (std::find(before_.begin(), before_.end(), name) != before_.end()) continue;
        const std::string folder = root_ + "/" + name;
        struct stat info {};
        const std::string model = folder + "/" + archive_folder + "/data/aotinductor/" + model_name;
        if (::lstat(model.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) remove_tree(folder);
      }
    } catch (...) {  // NOLINT(bugprone-empty-catch): the load's own error is the one reported
    }
  }

 private:
  static std::string temporary_root() { return "/tmp"; }

  /// The folder every record of the zip at `package` lies in, from its first local header (name
  /// length at byte 26, the name from byte 30); empty when it cannot be read.
  static std::string first_record_folder(const std::string& package) {
    std::ifstream file(package, std::ios::binary);
    std::array<unsigned char, 30> header{};
    if (!file.read(reinterpret_cast<char*>(header.data()), header.size()) || header[0] != 'P' ||
        header[1] != 'K' || header[2] != 3 || header[3] != 4) {
      return {};
    }
    std::string name(static_cast<std::size_t>(header[26] | (header[27] << 8)), '\0');
    if (!file.read(name.data(), static_cast<std::streamsize>(name.size()))) return {};
    const auto slash = name.find('/');
    return slash == std::string::npos || slash == 0 ? std::string() : name.substr(0, slash);
  }

  static std::vector<std::string> folders_in(const std::string& root) {
    std::vector<std::string> names;
    DIR* listing = ::opendir(root.c_str());
    if (listing == nullptr) return names;
    while (const dirent* entry = ::readdir(listing)) {
      const std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      struct stat info {};
      if (::lstat((root + "/" + name).c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
        names.push_back(name);
      }
    }
    ::closedir(listing);
    return names;
  }

  static void remove_tree(const std::string& folder) {
    ::nftw(
        folder.c_str(),
        [](const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }, 16,
        FTW_DEPTH | FTW_PHYS);
  }

  std::string root_;
  std::vector<std::string> before_;
};

}  // namespace detail

/// The first AOTInductor compilation of `archive` that computes in full precision (fp32, not
/// quantised): the only kind that may stand in for eager PyTorch. Null where it has none.
[[nodiscard]] inline const AotiModelInfo*
first_full_precision_compilation(const Pt2Archive& archive) {
  const auto& compiled = archive.aoti_models;
  const auto found = std::find_if(compiled.begin(), compiled.end(), [](const AotiModelInfo& info) {
    return info.precision == Precision::fp32 && info.quantization.empty();
  });
  return found == compiled.end() ? nullptr : &*found;
}

class AOTInductor : public BackendLifecycle<AOTInductor> {
 public:
  using model_type = Model;
  using sample_type = Sample;
  using output_type = c10::IValue;

  static constexpr RuntimeFamily family = aot_inductor_family;

  /// The compilation `model_name` in the archive `package`, computing in `precision` (it sets
  /// the tolerance of the correctness check).
  explicit AOTInductor(std::filesystem::path package, std::string model_name = "model",
                       Precision precision = Precision::fp32)
      : package_(std::move(package)), model_name_(std::move(model_name)), precision_(precision) {}

  /// A compilation listed in a model's own `.pt2` archive. When the archive's record of it
  /// cannot be read (AotiModelInfo::unusable), its build fails with that cause.
  [[nodiscard]] static AOTInductor from_archive(const Pt2Archive& archive,
                                                const AotiModelInfo& info) {
    AOTInductor compiled(archive.path, info.name, info.precision);
    compiled.unusable_ = info.unusable;
    compiled.takes_range_ = info.takes_range;
    compiled.quantization_ = info.quantization;
    compiled.calibration_digests_ = info.calibration_digests;
    return compiled;
  }

  /// Whether this build can run AOTInductor packages at all.
  [[nodiscard]] static constexpr bool available() noexcept { return AITUNE_HAS_AOTI != 0; }

  /// The compilation of `model`'s archive that is its baseline: the first full-precision one
  /// (first_full_precision_compilation: a bf16 or int8 compilation never is, since the
  /// candidates' accuracy is judged against the baseline's outputs), where LibTorch has no native
  /// runtime to run the ExportedProgram (AITUNE_TORCH_HAS_NATIVE_RUNTIME: the wheels from 2.12
  /// on). Null for a TorchScript model, an archive without one, where the native runtime is the
  /// baseline, or where LibTorch runs no AOTInductor model either (before 2.6).
  [[nodiscard]] static const AotiModelInfo* baseline_of(const Model& model) {
    if (NativeRuntime::available() || !available() || !model.is_exported()) return nullptr;
    return first_full_precision_compilation(*model.archive);
  }

  /// The compilations of `archive` a name may stand for: those it holds, then those it records
  /// but does not hold (unheld_compilations: their builds fail with why).
  [[nodiscard]] static std::vector<AotiModelInfo> compilations(const Pt2Archive& archive) {
    std::vector<AotiModelInfo> compiled = archive.aoti_models;
    for (AotiModelInfo& info : unheld_compilations(archive))
      compiled.push_back(std::move(info));
    return compiled;
  }

  /// The family's default candidates of `model`'s archive: without `quantized`, each
  /// full-precision or reduced-precision compilation but the baseline's (baseline_of), and those
  /// the archive records but does not hold (their builds fail with why); with it, its quantised
  /// compilations (aoti_int8), and the one the export tool could not make, named with its cause.
  [[nodiscard]] static std::vector<AOTInductor>
  default_sessions(const Model& model, const CandidatePlan&, bool quantized) {
    std::vector<AOTInductor> sessions;
    if (!model.is_exported()) return sessions;
    const Pt2Archive& archive = *model.archive;
    const AotiModelInfo* baseline = baseline_of(model);
    for (const auto& info : archive.aoti_models) {
      if (&info != baseline && info.quantization.empty() != quantized)
        sessions.push_back(from_archive(archive, info));
    }
    if (!quantized) {
      for (const AotiModelInfo& info : unheld_compilations(archive))
        sessions.push_back(from_archive(archive, info));
      return sessions;
    }
    const std::string int8 = fmt::format("{}_int8", family.name);  // the export tool's name
    if (const auto failed = archive.failed_variants.find(int8);
        failed != archive.failed_variants.end()) {
      AotiModelInfo info{failed->first};
      info.quantization = "int8";
      info.unusable = fmt::format("the {} quantisation failed when '{}' was exported: {}", int8,
                                  archive.path.filename().string(), failed->second);
      sessions.push_back(from_archive(archive, info));
    }
    return sessions;
  }

  /// The names the family answers to in `archive`: its compilations' (compilations), the
  /// quantised ones' where `quantized`, the others' where not.
  [[nodiscard]] static std::vector<std::string> names(const Pt2Archive& archive, bool quantized) {
    std::vector<std::string> all;
    for (const AotiModelInfo& info : compilations(archive)) {
      if (info.quantization.empty() != quantized) all.push_back(info.name);
    }
    return all;
  }

  /// The compilation `name` stands for in `archive`; none where it has no such compilation.
  /// Throws ConfigError for a quantised one unless `quantized` (a tuning under an accuracy
  /// budget).
  [[nodiscard]] static std::optional<AOTInductor> named(const Pt2Archive& archive,
                                                        const std::string& name, bool quantized) {
    for (const AotiModelInfo& info : compilations(archive)) {
      if (info.name != name) continue;
      if (!info.quantization.empty()) refuse_unbudgeted(name, info.quantization, quantized);
      return from_archive(archive, info);
    }
    return std::nullopt;
  }

  [[nodiscard]] std::string describe() const {
    const std::string file = package_.filename().string();
    // The name is the archive's (an entry's folder, a record's key): cleaned and cut.
    return model_name_ == "model"
               ? fmt::format("AOTInductor({})", file)
               : fmt::format("AOTInductor({}:{})", file,
                             aitune::detail::printable_excerpt(model_name_, 100));
  }
  [[nodiscard]] std::string key() const {
    return fmt::format("{}:{}:{}", family.key, package_.string(), model_name_);
  }
  /// What the key says, by field: the family, the compilation (its name in the archive), the
  /// archive, the precision it computes in and its quantisation.
  [[nodiscard]] BackendIdentity identity() const {
    return {{"family", std::string(family.name)},
            {"variant", model_name_},
            {"package", package_.string()},
            {"precision", std::string(to_string(precision_))},
            {"quantization", quantization_}};
  }
  /// The package it loads: the tuning cache's key covers its content.
  [[nodiscard]] std::vector<std::filesystem::path> loaded_files() const { return {package_}; }
  /// Inductor fuses and reorders work like the other compiled variants; a reduced-precision
  /// compilation gets that precision's tolerance, and a quantised one (aoti_int8) is judged by
  /// an accuracy budget.
  [[nodiscard]] OutputPolicy output_policy() const {
    OutputPolicy policy{Tolerance::for_compute(to_scalar_type(precision_), device_)};
    if (precision_ != Precision::fp32) policy.reduced_precision = precision_;
    policy.quantization = quantization_;
    policy.unknown_structure = unknown_structure_;
    return policy;
  }
  /// Calls from several threads run at the same time, up to runners() of them (the package's
  /// model container holds that many instances, sharing the weights); more wait for a free one.
  /// Before LibTorch 2.9 the loader makes one runner, so calls are serialised.
  [[nodiscard]] static constexpr bool thread_safe() noexcept { return AITUNE_TORCH_AT_LEAST(2, 9); }
  /// Compiled for the example inputs' shapes, or, where its archive's record says so, for the
  /// archive's input ranges (tools/export_model.py --dynamic; takes_range).
  [[nodiscard]] static constexpr bool shape_specialised() noexcept { return true; }
  [[nodiscard]] bool takes_range() const noexcept { return takes_range_; }

  /// How many calls may run at once: the instances of the compiled model the loader makes
  /// (AOTIModelPackageLoader's num_runners, LibTorch 2.9+). They share the weights; each has its
  /// own intermediate buffers. Set it before build; at least 1.
  AOTInductor& set_runners(std::size_t runners) {
    if (runners < 1) {
      throw ConfigError(fmt::format("an {} model needs at least 1 runner", family.runtime));
    }
    runners_ = runners;
    return *this;
  }
  [[nodiscard]] std::size_t runners() const noexcept { return runners_; }

  /// The default: one runner per hardware thread, at least 2 and at most 16.
  [[nodiscard]] static std::size_t default_runners() noexcept {
    return std::clamp<std::size_t>(std::thread::hardware_concurrency(), 2, 16);
  }

 private:
  friend class BackendLifecycle<AOTInductor>;

  void do_build(const Model& model, std::span<const Sample> samples) {
    if (!unusable_.empty()) throw Error(unusable_);
    refuse_calibration_inputs(calibration_digests_, model_name_, samples);
#if AITUNE_HAS_AOTI
    std::error_code error;
    if (!std::filesystem::is_regular_file(package_, error)) {
      throw Error(fmt::format("{} package '{}' {}", family.runtime, package_.string(),
                              std::filesystem::exists(package_, error)
                                  ? "is not a file (a .pt2 archive)"
                                  : "does not exist"));
    }
    if (model.archive && model.archive->path == package_) {
      for (const auto& other : model.archive->aoti_models) {
        if (other.name != model_name_ && other.name.starts_with(model_name_)) {
          throw Error(fmt::format(
              "'{}' holds {} models '{}' and '{}': LibTorch's package loader finds a model's "
              "files by prefix, so '{}' would run the code of '{}'; give the models names that "
              "are not prefixes of each other (tools/export_model.py does)",
              package_.string(), family.runtime, model_name_, other.name, model_name_, other.name));
        }
      }
    }
    device_ = model.device;
    // Before the package's code first runs: it reads the variable once. (setenv is not
    // thread-safe against getenv elsewhere: the first AOTInductor build sets it, once.)
    static const bool input_checks = [] {
      return ::setenv("AOTI_RUNTIME_CHECK_INPUTS", "1", /*overwrite=*/0) == 0;
    }();
    (void)input_checks;
    // The device the package was compiled for, read before any of its code is loaded.
#if AITUNE_TORCH_AT_LEAST(2, 11)
    std::unordered_map<std::string, std::string> metadata;
    try {
      metadata = torch::inductor::AOTIModelPackageLoader::load_metadata_from_package(
          package_.string(), model_name_);
    } catch (const std::exception& cause) {
      throw Error(fmt::format("'{}' has no {} model '{}' this LibTorch can read: {}",
                              package_.string(), family.runtime, model_name_,
                              detail::summarize_error(cause)));
    }
#else
    load();
    const auto metadata = loader_->get_metadata();
#endif
    const auto found = metadata.find("AOTI_DEVICE_KEY");
    const std::string package_device = found == metadata.end() ? "" : found->second;
    if (package_device != c10::DeviceTypeName(device_.type(), /*lower_case=*/true)) {
      loader_.reset();
      throw Error(fmt::format("'{}' ({}) was compiled for {}, but the model is tuned on {}: "
                              "compile it on the device it is to run on",
                              package_.string(), model_name_,
                              package_device.empty() ? "an unknown device" : package_device,
                              device_.str()));
    }
    if (!loader_) load();
    gate_ = InputGate::of(model, samples, takes_range_, fmt::format("{} packages", family.runtime));
    if (!samples.empty()) {
      // Its code prints why it refuses an input (a dtype, a rank, a size past what it was
      // compiled for) to standard error and returns a bare failure: caught here, that cause is
      // the reason, and standard error stays clean (the calls later are not captured).
      std::string captured;
      try {
        detail::with_stderr_captured(captured, [&] {
          // On copies: a model that writes to its inputs gets copies on every later call.
          (void)input_writes_.detect([this](const Sample& s) { return run(s); }, samples.front());
        });
      } catch (const std::exception& cause) {
        loader_.reset();
        throw Error(fmt::format("running the first sample failed: {}{}", refusal(cause, captured),
                                detail::export_shapes_hint(model, package_, samples.front())));
      }
      echo(captured);
      if (takes_range_) run_at_bounds(model, samples.front());
    }
#else
    (void)model;
    (void)samples;
    throw Error(fmt::format(
        "{} needs LibTorch 2.6 or newer (torch::inductor::AOTIModelPackageLoader); this build "
        "has LibTorch {}.{}",
        family.runtime, TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR));
#endif
  }

  /// An input as a tensor: compiled models take tensors only.
  static const at::Tensor& tensor_input(const c10::IValue& value) {
    if (!value.isTensor()) {
      throw Error(fmt::format("{} packages take tensors only; an input is a {}", family.runtime,
                              value.tagKind()));
    }
    return value.toTensor();
  }

  c10::IValue do_infer(const Sample& sample) {
    // A compiled model has fixed shapes, but on the axes of its input ranges: refuse others, and
    // an index outside its embedding (the kernel would abort the process), before they reach it.
    gate_.check(sample, [this] { return describe(); });
    return run(sample);
  }

  /// Why a call failed: the cause its code printed (captured), else the exception's.
  [[nodiscard]] static std::string refusal(const std::exception& cause,
                                           const std::string& captured) {
    const std::string printed = detail::captured_cause(captured);
    return printed.empty() ? detail::summarize_error(cause) : printed;
  }

  /// What was captured from a call that succeeded: not ours to judge, so back to standard error.
  static void echo(const std::string& captured) {
    if (!captured.empty()) std::fwrite(captured.data(), 1, captured.size(), stderr);
  }

  /// One call at each bound of the range the archive records for `model` (from `first`, on
  /// copies), caught as the first sample's is: a record wider than the compilation (a damaged or
  /// forged archive) fails the build with the compilation's own words, not a check later with
  /// `run_func_(...) API call failed` and the cause on standard error.
  void run_at_bounds(const Model& model, const Sample& first) {
    for (Sample bound : InputRanges::of(model).at_bounds(first)) {
      for (c10::IValue& value : bound) {
        if (value.isTensor()) value = value.toTensor().clone();
      }
      std::string captured;
      try {
        detail::with_stderr_captured(captured, [&] { (void)run(bound); });
      } catch (const std::exception& cause) {
        loader_.reset();
        throw Error(fmt::format("it refuses inputs of {}, in the range the archive records for "
                                "it (the archive's record is wider than the compilation?): {}",
                                sample_shape_text(bound), refusal(cause, captured)));
      }
      echo(captured);
    }
  }

  c10::IValue run(const Sample& sample) {
#if AITUNE_HAS_AOTI
    // The compiled kernels open OpenMP regions themselves, without going through ATen, which
    // applies LibTorch's intra-op thread count (at::set_num_threads) to each thread the first
    // time it runs a parallel op. A server's request thread that never ran one would use
    // OpenMP's default instead, every core per call: apply it here, once per thread.
    at::internal::lazy_init_num_threads();
    c10::InferenceMode inference_mode;
    const c10::DeviceGuard device_guard(device_);
    std::vector<at::Tensor> inputs;
    for (const auto& value : sample) {
      const at::Tensor& input = tensor_input(value);
      // The package was compiled for the example inputs' strides, which export makes contiguous:
      // a channels-last or sliced input is copied into that layout (its values are the same).
      inputs.push_back(input_writes_.protect(input.to(device_).contiguous(), input));
    }
    std::vector<at::Tensor> outputs = loader_->run(inputs);
    if (structure_) return rebuild_outputs(*structure_, outputs);
    return flat_outputs(std::move(outputs));
#else
    (void)sample;
    throw Error(fmt::format("{} is not available in this build", family.runtime));
#endif
  }

  void do_deactivate() {
#if AITUNE_HAS_AOTI
    loader_.reset();
#endif
  }

  void do_activate() {
    load();
  }

  /// Makes the loader on the model's device (without a guard and an index it would take the
  /// caller's current device, and put the weights there).
  void load() {
#if AITUNE_HAS_AOTI
    const c10::DeviceGuard device_guard(device_);
    const detail::ExtractionFolders extraction;
    try {
#if AITUNE_TORCH_AT_LEAST(2, 9)  // the device index argument (checked: 2.11)
      const c10::DeviceIndex index = device_.is_cuda() ? device_.index() : -1;
      loader_ = std::make_shared<torch::inductor::AOTIModelPackageLoader>(
          package_.string(), model_name_, /*run_single_threaded=*/false, runners_, index);
#else
      loader_ =
          std::make_shared<torch::inductor::AOTIModelPackageLoader>(package_.string(), model_name_);
#endif
    } catch (const std::exception& cause) {
      extraction.remove_left_by(package_.string(), model_name_);
      throw Error(fmt::format("'{}' has no {} model '{}' this LibTorch can load: {}",
                              package_.string(), family.runtime, model_name_,
                              detail::summarize_error(cause)));
    }
    read_output_structure();
#endif
  }

#if AITUNE_HAS_AOTI
  /// The structure the outputs are rebuilt into: the output TreeSpec of the package's call spec
  /// ({in_spec, out_spec}), or why there is none.
  void read_output_structure() {
    structure_.reset();
    std::vector<std::string> call_spec;
    try {
      call_spec = loader_->get_call_spec();
    } catch (const std::exception& cause) {
      unknown_structure_ =
          fmt::format("its call spec cannot be read ({})", detail::summarize_error(cause));
      return;
    }
    if (call_spec.size() < 2 || call_spec[1].empty()) {
      unknown_structure_ = "its package records no output structure";
      return;
    }
    auto parsed = parse_output_structure(call_spec[1]);
    if (auto* why = std::get_if<std::string>(&parsed)) {
      unknown_structure_ = fmt::format("its output structure cannot be used: {}", *why);
      return;
    }
    structure_ = std::get<OutputStructure>(std::move(parsed));
    unknown_structure_.clear();
  }
#endif

  std::filesystem::path package_;
  std::string model_name_;
  Precision precision_;
  std::string unusable_{};      ///< why the archive's record of it cannot be used
  std::string quantization_{};  ///< how its graph was quantised ("int8"); empty: not
  std::vector<std::string> calibration_digests_{};  ///< of the inputs it was calibrated on
  c10::Device device_ = c10::Device(c10::kCPU);
  bool takes_range_ = false;  ///< compiled for the archive's input ranges
  InputGate gate_{};          ///< what it takes, from build
  std::size_t runners_ = default_runners();
  std::optional<OutputStructure> structure_{};  ///< what the flat outputs are rebuilt into
  std::string unknown_structure_{};             ///< why there is no structure_, once loaded
  InputWrites input_writes_{};  ///< the model writes to its inputs: each call gets copies
#if AITUNE_HAS_AOTI
  std::shared_ptr<torch::inductor::AOTIModelPackageLoader> loader_;
#endif
};

static_assert(Backend<AOTInductor>);

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
