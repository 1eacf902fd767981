// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// inference-server: what an inference engine does at start-up with aitune. It loads a model,
// takes the backend from the tuning cache (or tunes on a miss, and stores the decision), then
// serves requests from several threads through the TunedModule and prints latency percentiles.
// A restart, or another machine of the same kind sharing the cache file, skips the tuning.
// With --background it serves the baseline at once and switches to the tuned backend when a
// tuning on a thread of its own ends (lt::BackgroundTunedModule).
//
//   inference-server MODEL.pt|MODEL.pt2 --input SHAPE [--input SHAPE ...] --cache FILE
//                    [--threads N] [--requests N] [--time-budget S] [--background]
//
// Exit codes: 0 served, 2 usage error, 1 any other failure.
#include <aitune/torch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

struct Options {
  std::filesystem::path model;
  std::vector<aitune::lt::InputSpec> inputs;
  std::filesystem::path cache;
  int threads = 4;
  int requests = 50;  ///< per thread
  double time_budget_s = aitune::default_time_budget_ms / 1000.0;
  bool background = false;
};

struct UsageError {
  std::string message;
};

int positive_int(std::string_view option, const std::string& text) {
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < 1 || value > 100000) {
    throw UsageError{fmt::format("{} must be a count from 1 to 100000, got '{}'", option, text)};
  }
  return static_cast<int>(value);
}

Options parse_arguments(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError{fmt::format("{} needs a value", arg)};
      return argv[++i];
    };
    if (arg == "--input") {
      try {
        options.inputs.push_back(aitune::lt::parse_input_spec(value()));
      } catch (const aitune::ConfigError& error) {
        throw UsageError{error.what()};
      }
    } else if (arg == "--cache") {
      options.cache = value();
    } else if (arg == "--threads") {
      options.threads = positive_int(arg, value());
    } else if (arg == "--requests") {
      options.requests = positive_int(arg, value());
    } else if (arg == "--time-budget") {
      options.time_budget_s = positive_int(arg, value());
    } else if (arg == "--background") {
      options.background = true;
    } else if (arg.starts_with("-") || !options.model.empty()) {
      throw UsageError{fmt::format("unexpected argument '{}'", arg)};
    } else {
      options.model = arg;
    }
  }
  if (options.model.empty() || options.inputs.empty() || options.cache.empty()) {
    throw UsageError{"give MODEL, at least one --input SHAPE and --cache FILE"};
  }
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace aitune;
  try {
    const Options options = parse_arguments(argc, argv);
    const auto start = std::chrono::steady_clock::now();
    const auto seconds_since = [](std::chrono::steady_clock::time_point since) {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
    };

    // Start-up: the model, a sample of the traffic, and the decision (cached, or tuned now).
    const lt::Model model = lt::load_model(options.model);
    const std::vector<lt::Sample> samples{lt::make_random_sample(options.inputs, model.device)};
    const TuningCache cache(options.cache);
    const auto config =
        StrategyConfig{}
            .set_profiling(ProfilingConfig{}.set_time_budget_ms(options.time_budget_s * 1000.0))
            .set_module_name("server");
    std::optional<lt::TunedModule> tuned;
    std::optional<lt::BackgroundTunedModule> background;
    if (options.background) {
      background.emplace(model, samples, lt::TuneOptions{.config = config, .cache = &cache});
      fmt::print("start-up: {} in {:.2f} s (serving it while the tuning runs)\n",
                 background->current()->selected(), seconds_since(start));
    } else {
      tuned.emplace(lt::tune(model, samples, {.config = config, .cache = &cache}));
      fmt::print("start-up: {} in {:.2f} s ({})\n", tuned->selected(), seconds_since(start),
                 tuned->report().cache_hit ? "from the tuning cache" : "tuned now, and stored");
    }
    const auto forward = [&](const lt::Sample& request) {
      return background ? background->forward(request) : tuned->forward(request);
    };

    // Serving: every thread sends its requests through the one TunedModule.
    std::mutex mutex;
    std::vector<double> latencies_ms;
    std::vector<std::thread> workers;
    const auto serving = std::chrono::steady_clock::now();
    for (int t = 0; t < options.threads; ++t) {
      workers.emplace_back([&, t] {
        std::vector<double> mine;
        for (int r = 0; r < options.requests; ++r) {
          const lt::Sample request = lt::make_random_sample(
              options.inputs, model.device, static_cast<unsigned>(1000 * t + r + 1));
          const auto sent = std::chrono::steady_clock::now();
          (void)forward(request);
          mine.push_back(seconds_since(sent) * 1000.0);
        }
        const std::lock_guard lock(mutex);
        latencies_ms.insert(latencies_ms.end(), mine.begin(), mine.end());
      });
    }
    for (auto& worker : workers)
      worker.join();
    const double elapsed_s = seconds_since(serving);
    std::sort(latencies_ms.begin(), latencies_ms.end());
    fmt::print("served {} requests from {} threads in {:.2f} s ({:.1f} requests/s)\n",
               latencies_ms.size(), options.threads, elapsed_s,
               static_cast<double>(latencies_ms.size()) / elapsed_s);
    fmt::print("latency: p50 {:.3f} ms, p90 {:.3f} ms, p99 {:.3f} ms, max {:.3f} ms\n",
               quantile_of_sorted(latencies_ms, 0.50), quantile_of_sorted(latencies_ms, 0.90),
               quantile_of_sorted(latencies_ms, 0.99), latencies_ms.back());
    if (background) {
      using State = lt::BackgroundTunedModule::State;
      if (background->wait() != State::tuned) {
        fmt::print("tuning: did not finish ({}); the baseline serves on\n", background->failure());
        return 1;
      }
      const TuneReport& report = background->current()->report();
      fmt::print("tuning: {} {} ({})\n",
                 report.baseline_selected ? "kept the baseline" : "switched to", report.selected,
                 report.cache_hit ? fmt::format("from the tuning cache, checked in {:.2f} s",
                                                report.cache_hit->check_time_ms / 1000.0)
                                  : fmt::format("tuned in {:.2f} s while serving, and stored",
                                                report.tuning_time_ms / 1000.0));
    }
    return 0;
  } catch (const UsageError& error) {
    fmt::print(stderr,
               "inference-server: {}\nusage: inference-server MODEL --input SHAPE "
               "[--input SHAPE ...] --cache FILE [--threads N] [--requests N] "
               "[--time-budget S] [--background]\n",
               error.message);
    return 2;
  } catch (const std::exception& error) {
    fmt::print(stderr, "inference-server: error: {}\n", aitune::lt::summarize_error(error));
    return 1;
  }
}
