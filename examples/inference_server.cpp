// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// inference-server: what an inference engine does at start-up with aitune. It loads a model,
// takes the backend from the tuning cache (or tunes on a miss, and stores the decision), then
// serves requests from several threads through the TunedModule and prints latency percentiles.
// A restart, or another machine of the same kind sharing the cache (a file, or a Redis:
// --cache redis://ADDRESS:PORT/DB, its password in the file AITUNE_REDIS_PASSWORD_FILE names,
// with --cache-local FILE in front of it), skips the tuning.
// With --background it serves the baseline at once and switches to the tuned backend when a
// tuning on a thread of its own ends (lt::BackgroundTunedModule).
//
// As a load test: --family aoti|onnx|openvino serves that family's fastest candidate (the
// default candidates of that family, performance validation off); --check-every N compares
// every Nth request's outputs with the baseline's; every thread first sends --warm-up requests,
// and the resident memory after that warm-up and at the end is printed. A request that fails or
// differs is counted, and the exit code is then 1.
//
//   inference-server MODEL.pt|MODEL.pt2 --input SHAPE [--input SHAPE ...]
//                    --cache FILE|redis://ADDRESS:PORT/DB [--cache-local FILE] [--threads N]
//                    [--requests N] [--time-budget S] [--background]
//                    [--family aoti|onnx|openvino] [--check-every N] [--warm-up N]
//
// Exit codes: 0 served, 2 usage error, 1 any other failure.
#include <aitune/torch.hpp>
#if AITUNE_TUNE_WITH_REDIS
#include <aitune/redis.hpp>  // link aitune::redis
#endif

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace {

struct Options {
  std::filesystem::path model;
  std::vector<aitune::lt::InputSpec> inputs;
  std::string cache;                  ///< a file, or redis://ADDRESS:PORT/DB
  std::filesystem::path cache_local;  ///< a file in front of a Redis cache (none: empty)
  int threads = 4;
  int requests = 50;  ///< per thread
  double time_budget_s = aitune::default_time_budget_ms / 1000.0;
  bool background = false;
  std::string family;   ///< empty: every default candidate
  int check_every = 0;  ///< 0: no output checked
  int warm_up = 0;      ///< requests per thread before the timed ones
};

/// The names --family takes: the archive's families ("aoti", "onnx", "openvino").
const std::vector<std::string> families = aitune::lt::family_names(aitune::lt::ArchiveFamilies{});

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
    } else if (arg == "--cache-local") {
      options.cache_local = value();
    } else if (arg == "--threads") {
      options.threads = positive_int(arg, value());
    } else if (arg == "--requests") {
      options.requests = positive_int(arg, value());
    } else if (arg == "--time-budget") {
      options.time_budget_s = positive_int(arg, value());
    } else if (arg == "--background") {
      options.background = true;
    } else if (arg == "--family") {
      options.family = value();
      if (std::find(families.begin(), families.end(), options.family) == families.end()) {
        throw UsageError{fmt::format("--family is one of {}, got '{}'", fmt::join(families, ", "),
                                     options.family)};
      }
    } else if (arg == "--check-every") {
      options.check_every = positive_int(arg, value());
    } else if (arg == "--warm-up") {
      options.warm_up = positive_int(arg, value());
    } else if (arg.starts_with("-") || !options.model.empty()) {
      throw UsageError{fmt::format("unexpected argument '{}'", arg)};
    } else {
      options.model = arg;
    }
  }
  if (options.model.empty() || options.inputs.empty() || options.cache.empty()) {
    throw UsageError{"give MODEL, at least one --input SHAPE and --cache FILE|redis://..."};
  }
  if (!options.cache_local.empty() && !options.cache.starts_with("redis://")) {
    throw UsageError{"--cache-local goes in front of a Redis cache: give --cache redis://..."};
  }
  if (!options.family.empty() && options.background) {
    throw UsageError{"--family serves one family's winner: it takes no --background"};
  }
  return options;
}

/// The default candidates of `family` (a --family name; empty: all of them).
std::vector<aitune::lt::AnyBackend> candidates_of(const aitune::lt::Model& model,
                                                  std::string_view family) {
  std::vector<aitune::lt::AnyBackend> candidates = aitune::lt::default_candidates(model);
  if (family.empty()) return candidates;
  std::erase_if(candidates, [&](const aitune::lt::AnyBackend& candidate) {
    return aitune::identity_text(candidate.identity(), "family") != family;
  });
  if (candidates.empty()) {
    throw aitune::Error(fmt::format("the model has no {} candidate", family));
  }
  return candidates;
}

/// Request `r` of thread `t`: random inputs of its own, the same in every run.
aitune::lt::Sample request_of(const Options& options, const aitune::lt::Model& model, int t,
                              int r) {
  return aitune::lt::make_random_sample(options.inputs, model.device,
                                        static_cast<unsigned>(100000 * t + r + 1));
}

/// The process's resident memory in MiB; 0 where it cannot be read.
double resident_mib() noexcept {
  try {
    const auto bytes = aitune::HostMemory::resident_bytes();
    return bytes ? static_cast<double>(*bytes) / (1024.0 * 1024.0) : 0.0;
  } catch (...) {
    return 0.0;
  }
}

/// The store --cache names: a file, or a Redis (the password from the environment), with
/// --cache-local in front of it. A Redis that is down at start is a warning, and a tuning here.
std::unique_ptr<aitune::CacheStore> cache_store(const Options& options) {
#if AITUNE_TUNE_WITH_REDIS
  return aitune::redis::open_cache_store(options.cache, options.cache_local);
#else
  if (options.cache.starts_with("redis://")) {
    throw UsageError{"this inference-server was built without hiredis (libhiredis-dev)"};
  }
  return std::make_unique<aitune::FileStore>(options.cache);
#endif
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
    const TuningCache cache(cache_store(options));
    const auto config =
        StrategyConfig{}
            .set_profiling(ProfilingConfig{}.set_time_budget_ms(options.time_budget_s * 1000.0))
            .enable_performance_validation(options.family.empty())
            .set_module_name("server");
    std::optional<lt::TunedModule> tuned;
    std::optional<lt::BackgroundTunedModule> background;
    if (options.background) {
      background.emplace(model, samples, lt::TuneOptions{.config = config, .cache = &cache});
      fmt::print("start-up: {} in {:.2f} s (serving it while the tuning runs)\n",
                 background->current()->selected(), seconds_since(start));
    } else {
      tuned.emplace(lt::tune(
          model, samples,
          {.candidates = candidates_of(model, options.family), .config = config, .cache = &cache}));
      fmt::print("start-up: {} in {:.2f} s ({})\n", tuned->selected(), seconds_since(start),
                 tuned->report().cache_hit ? "from the tuning cache" : "tuned now, and stored");
    }
    const auto forward = [&](const lt::Sample& request) {
      return background ? background->forward(request) : tuned->forward(request);
    };

    // The baseline's outputs for the requests to be checked, computed before serving.
    std::vector<std::vector<c10::IValue>> expected(static_cast<std::size_t>(options.threads));
    if (options.check_every > 0) {
      lt::AnyBackend baseline = lt::make_baseline(model);
      baseline.build(model, samples);
      for (int t = 0; t < options.threads; ++t) {
        for (int r = 0; r < options.requests; r += options.check_every)
          expected[static_cast<std::size_t>(t)].push_back(
              baseline.infer(request_of(options, model, t, r)));
      }
    }

    // Serving: every thread sends its requests through the one TunedModule, after a warm-up in
    // which every thread calls (what a backend makes for callers at once is made then).
    std::mutex mutex;
    std::vector<double> latencies_ms;
    int failed = 0;
    int differed = 0;
    int checked = 0;
    std::string first_problem;
    // One request of thread `t`: a failure or a checked output that differs is counted.
    const auto send = [&](int t, int r, bool timed, std::vector<double>& mine, int& my_failed,
                          int& my_differed, int& my_checked, std::string& problem) {
      const lt::Sample request = request_of(options, model, t, r);
      const auto sent = std::chrono::steady_clock::now();
      try {
        const c10::IValue out = forward(request);
        if (!timed) return;
        mine.push_back(seconds_since(sent) * 1000.0);
        if (options.check_every == 0 || r % options.check_every != 0) return;
        ++my_checked;
        const auto& reference = expected[static_cast<std::size_t>(t)]
                                        [static_cast<std::size_t>(r / options.check_every)];
        const auto check = lt::compare_outputs(
            &reference, out,
            (background ? background->current()->backend() : tuned->backend()).output_policy());
        if (!check.passed) {
          ++my_differed;
          if (problem.empty()) problem = "differs from the baseline: " + check.reason;
        }
      } catch (const std::exception& error) {
        ++my_failed;
        if (problem.empty()) problem = lt::summarize_error(error);
      }
    };
    // The same threads warm up and then serve, as a server's pool does: a runtime may keep
    // memory per calling thread. The last to finish its warm-up reads the memory and starts
    // the clock.
    double warm_mib = 0.0;
    auto serving = std::chrono::steady_clock::now();
    std::barrier warmed(options.threads, [&]() noexcept {
      warm_mib = resident_mib();
      serving = std::chrono::steady_clock::now();
    });
    std::vector<std::thread> workers;
    for (int t = 0; t < options.threads; ++t) {
      workers.emplace_back([&, t] {
        std::vector<double> mine;
        int my_failed = 0, my_differed = 0, my_checked = 0;
        std::string problem;
        for (int r = 0; r < options.warm_up; ++r)
          send(t, options.requests + r, false, mine, my_failed, my_differed, my_checked, problem);
        warmed.arrive_and_wait();
        for (int r = 0; r < options.requests; ++r)
          send(t, r, true, mine, my_failed, my_differed, my_checked, problem);
        const std::lock_guard lock(mutex);
        latencies_ms.insert(latencies_ms.end(), mine.begin(), mine.end());
        failed += my_failed;
        differed += my_differed;
        checked += my_checked;
        if (first_problem.empty()) first_problem = problem;
      });
    }
    for (auto& worker : workers)
      worker.join();
    const double elapsed_s = seconds_since(serving);
    const double end_mib = resident_mib();
    std::sort(latencies_ms.begin(), latencies_ms.end());
    fmt::print("served {} requests from {} threads in {:.2f} s ({:.1f} requests/s)\n",
               latencies_ms.size(), options.threads, elapsed_s,
               static_cast<double>(latencies_ms.size()) / elapsed_s);
    if (!latencies_ms.empty()) {
      fmt::print("latency: p50 {:.3f} ms, p90 {:.3f} ms, p99 {:.3f} ms, max {:.3f} ms\n",
                 quantile_of_sorted(latencies_ms, 0.50), quantile_of_sorted(latencies_ms, 0.90),
                 quantile_of_sorted(latencies_ms, 0.99), latencies_ms.back());
    }
    if (warm_mib > 0.0) {
      fmt::print("memory: resident {:.1f} MiB after the warm-up, {:.1f} MiB at the end ({:+.1f} "
                 "%)\n",
                 warm_mib, end_mib, 100.0 * (end_mib / warm_mib - 1.0));
    }
    if (options.check_every > 0) {
      fmt::print("checked: {} requests against the baseline, {} differed\n", checked, differed);
    }
    fmt::print("errors: {}{}\n", failed,
               first_problem.empty() ? "" : " (first: " + first_problem + ")");
    if (failed > 0 || differed > 0) return 1;
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
               "[--input SHAPE ...] --cache FILE|redis://ADDRESS:PORT/DB [--cache-local FILE] "
               "[--threads N] [--requests N] "
               "[--time-budget S] [--background] [--family {}] "
               "[--check-every N] [--warm-up N]\n",
               error.message, fmt::join(families, "|"));
    return 2;
  } catch (const std::exception& error) {
    fmt::print(stderr, "inference-server: error: {}\n", aitune::lt::summarize_error(error));
    return 1;
  }
}
