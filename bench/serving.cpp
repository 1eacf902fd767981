// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// A server's view of a tuned `.pt2` model: requests from several threads at once through one
// TunedModule, as an integrator serves it.
//
// The model is tuned once (the default candidates and budget), then for each LibTorch intra-op
// thread count (1, and LibTorch's default) and each number of client threads, every client sends
// its share of the requests back to back; each request's latency is kept. The table gives the
// requests' p50 and p99, the throughput, and the single-thread latency beside them; each row is
// run twice in the same process, in alternation: as the TunedModule serves (calls run at once)
// and serialised by one mutex (how every .pt2 backend was served before calls could run at once).
//
// usage: aitune-bench-serving MODEL.pt2 --input SHAPE [--input ...] [--threads 1,2,4]
//                             [--requests 200] [--repeats 3] [--budget-s 30] [--json FILE]
#include "bench_common.hpp"
#include <aitune/torch.hpp>

#include <ATen/Parallel.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Run {
  std::vector<double> latencies_ms;  ///< every request's, all clients together
  double wall_s = 0.0;
};

/// `clients` threads send `requests` requests in all, back to back; with `serialise`, each
/// request holds one mutex for its call, as a server that serialises a backend does.
Run serve(const aitune::lt::TunedModule& tuned, const aitune::lt::Sample& sample, int clients,
          int requests, bool serialise) {
  std::mutex one_at_a_time;
  std::vector<std::vector<double>> per_client(static_cast<std::size_t>(clients));
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      const int share = requests / clients + (c < requests % clients ? 1 : 0);
      auto& mine = per_client[static_cast<std::size_t>(c)];
      for (int r = 0; r < share; ++r) {
        const auto begin = std::chrono::steady_clock::now();
        if (serialise) {
          const std::lock_guard lock(one_at_a_time);
          (void)tuned.forward(sample);
        } else {
          (void)tuned.forward(sample);
        }
        mine.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin)
                .count());
      }
    });
  }
  for (auto& thread : threads)
    thread.join();
  Run run;
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (auto& latencies : per_client)
    run.latencies_ms.insert(run.latencies_ms.end(), latencies.begin(), latencies.end());
  std::sort(run.latencies_ms.begin(), run.latencies_ms.end());
  return run;
}

std::vector<int> parse_counts(const std::string& text) {
  std::vector<int> counts;
  for (const std::string_view item : aitune::comma_separated(text)) {
    const int count = std::stoi(std::string(item));
    if (count < 1) throw aitune::ConfigError("thread counts must be at least 1");
    counts.push_back(count);
  }
  return counts;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace aitune;
  std::filesystem::path model_path;
  std::vector<lt::InputSpec> inputs;
  std::vector<int> client_counts{1, 2, 4};
  int requests = 200;
  int repeats = 3;
  double budget_s = 30.0;
  std::filesystem::path json_path = "serving.json";
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const bool has_value = i + 1 < argc;
      if (arg == "--input" && has_value) {
        inputs.push_back(lt::parse_input_spec(argv[++i]));
      } else if (arg == "--threads" && has_value) {
        client_counts = parse_counts(argv[++i]);
      } else if (arg == "--requests" && has_value) {
        requests = std::max(1, std::stoi(argv[++i]));
      } else if (arg == "--repeats" && has_value) {
        repeats = std::max(1, std::stoi(argv[++i]));
      } else if (arg == "--budget-s" && has_value) {
        budget_s = std::stod(argv[++i]);
      } else if (arg == "--json" && has_value) {
        json_path = argv[++i];
      } else if (!arg.starts_with("-") && model_path.empty()) {
        model_path = arg;
      } else {
        throw ConfigError("unknown argument " + arg);
      }
    }
    if (model_path.empty() || inputs.empty()) throw ConfigError("give MODEL.pt2 and --input");
  } catch (const std::exception& error) {
    fmt::print(stderr,
               "aitune-bench-serving: {}\nusage: {} MODEL.pt2 --input SHAPE [--input ...] "
               "[--threads 1,2,4] [--requests N] [--repeats N] [--budget-s S] [--json FILE]\n",
               error.what(), argv[0]);
    return 2;
  }

  try {
    const int default_intra_op = at::get_num_threads();
    const lt::Model model = lt::load_model(model_path);
    const std::vector<lt::Sample> samples{lt::make_random_sample(inputs, model.device, 0)};
    const lt::TunedModule tuned = lt::tune(
        model, samples,
        {.config = StrategyConfig{}
                       .set_sink(null_sink())
                       .set_profiling(ProfilingConfig{}.set_time_budget_ms(budget_s * 1000.0))
                       .set_module_name(model_path.stem().string())});
    const lt::Sample& sample = samples.front();
    const bool concurrent = tuned.backend().thread_safe();
    fmt::print(stderr, "serving {} ({})\n", tuned.selected(),
               concurrent ? "calls run at once" : "calls serialised by the tuned module");

    std::vector<int> intra_ops{1};
    if (default_intra_op != 1) intra_ops.push_back(default_intra_op);
    nlohmann::json rows = nlohmann::json::array();
    std::string table =
        fmt::format("{:>9} {:>8} {:<11} {:>10} {:>10} {:>10} {:>14}\n", "intra-op", "clients",
                    "calls", "p50 ms", "p99 ms", "req/s", "1-client p50");
    for (const int intra_op : intra_ops) {
      at::set_num_threads(intra_op);
      for (int warm = 0; warm < 20; ++warm)
        (void)tuned.forward(sample);
      double single_p50 = 0.0;
      for (const int clients : client_counts) {
        // Concurrent and serialised in alternation, `repeats` times: drift lands on both.
        std::vector<double> together[2];
        double wall[2] = {0.0, 0.0};
        for (int repeat = 0; repeat < repeats; ++repeat) {
          for (const bool serialise : {false, true}) {
            const Run run = serve(tuned, sample, clients, requests, serialise);
            auto& all = together[serialise ? 1 : 0];
            all.insert(all.end(), run.latencies_ms.begin(), run.latencies_ms.end());
            wall[serialise ? 1 : 0] += run.wall_s;
          }
        }
        for (const bool serialise : {false, true}) {
          auto& all = together[serialise ? 1 : 0];
          std::sort(all.begin(), all.end());
          const double p50 = quantile_of_sorted(all, 0.5);
          const double p99 = quantile_of_sorted(all, 0.99);
          const double throughput = static_cast<double>(all.size()) / wall[serialise ? 1 : 0];
          if (clients == 1 && !serialise) single_p50 = p50;
          const std::string calls = serialise ? "serialised" : "at once";
          table += fmt::format("{:>9} {:>8} {:<11} {:>10.2f} {:>10.2f} {:>10.1f} {:>14}\n",
                               intra_op, clients, calls, p50, p99, throughput,
                               single_p50 > 0.0 ? fmt::format("{:.2f}", single_p50) : "-");
          rows.push_back({{"intra_op_threads", intra_op},
                          {"clients", clients},
                          {"calls", calls},
                          {"requests", all.size()},
                          {"p50_ms", p50},
                          {"p99_ms", p99},
                          {"requests_per_s", throughput},
                          {"single_client_p50_ms", single_p50}});
        }
      }
    }
    const auto machine = bench::machine_json();
    fmt::print("aitune-bench-serving: {} served by {} on {} ({} hardware threads, LibTorch {}); "
               "{} requests per row, {} repeats\n{}",
               model_path.filename().string(), tuned.selected(), machine["cpu"].get<std::string>(),
               std::thread::hardware_concurrency(), lt::libtorch_version(), requests, repeats,
               table);
    bench::write_json(json_path, {{"benchmark", "serving"},
                                  {"machine", machine},
                                  {"libtorch", lt::libtorch_version()},
                                  {"model", model_path.string()},
                                  {"selected", tuned.selected()},
                                  {"concurrent_calls", concurrent},
                                  {"report", to_json(tuned.report())},
                                  {"rows", rows}});
    fmt::print("\nJSON written to {}\n", json_path.string());
  } catch (const std::exception& error) {
    fmt::print(stderr, "aitune-bench-serving: {}\n", lt::summarize_error(error));
    return 1;
  }
  return 0;
}
