// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// A server's view of a tuned `.pt2` model: requests from several threads at once through one
// TunedModule, as an integrator serves it.
//
// The model is tuned with the default candidates (the selection a user gets), then once per
// backend family among them (AOTInductor, ONNX Runtime, OpenVINO: that family's fastest, forced
// with performance validation off where the tuner picks another; and OpenVINO's 1-thread
// sessions, the pick on small models before). Each winner serves every number
// of client threads: after a warm-up in which every client calls, each client sends its share of
// the requests back to back; each request's latency is kept. The table gives the requests' p50
// and p99, the throughput, and the throughput over one client's.
//
// usage: aitune-bench-serving MODEL.pt2 --input SHAPE [--input ...] [--clients 1,2,4]
//                             [--requests 2000] [--budget-s 30] [--json FILE]
//                             [--only LABEL,...]   (the families' labels in the table)
//        aitune-bench-serving MODEL.pt2 --input SHAPE --compare-callers N [--rounds 15]
//                             [--requests R]: the pick tuned at N callers against the pick
//                             tuned at 1, both served at N callers (mean per-call latency)
#include "bench_common.hpp"
#include <aitune/torch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Run {
  std::vector<double> latencies_ms;  ///< every request's, all clients together
  double wall_s = 0.0;
};

/// `clients` threads send `requests` requests in all, back to back.
Run serve(const aitune::lt::TunedModule& tuned, const aitune::lt::Sample& sample, int clients,
          int requests) {
  std::vector<std::vector<double>> per_client(static_cast<std::size_t>(clients));
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      const int share = requests / clients + (c < requests % clients ? 1 : 0);
      auto& mine = per_client[static_cast<std::size_t>(c)];
      for (int r = 0; r < share; ++r) {
        const auto begin = std::chrono::steady_clock::now();
        (void)tuned.forward(sample);
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

/// A row group: the default candidates whose description starts with `prefix` and contains
/// `also` (both empty: the selection among all of them).
struct Family {
  std::string label;
  std::string prefix;
  std::string also{};
};

/// The winner of `family`, tuned at `callers` at once (with their default candidates).
aitune::lt::TunedModule tune_family(const aitune::lt::Model& model,
                                    const std::vector<aitune::lt::Sample>& samples,
                                    const Family& family, double budget_s, const std::string& name,
                                    int callers = 1) {
  using namespace aitune;
  std::vector<lt::AnyBackend> candidates = lt::default_candidates_for_callers(model, callers);
  const bool all = family.prefix.empty();
  std::erase_if(candidates, [&](const lt::AnyBackend& candidate) {
    const std::string text = candidate.describe();
    return !text.starts_with(family.prefix) || text.find(family.also) == std::string::npos;
  });
  if (candidates.empty()) throw Error("the archive has no " + family.label + " candidate");
  return lt::tune(
      model, samples,
      {.candidates = std::move(candidates),
       .config =
           StrategyConfig{}
               .set_sink(null_sink())
               .set_profiling(
                   ProfilingConfig{}.set_time_budget_ms(budget_s * 1000.0).set_callers(callers))
               .enable_performance_validation(all)
               .set_module_name(name)});
}

/// The mean per-call latency of `clients` callers on `tuned`: `requests` in all after a warm-up
/// of 5 each.
double mean_latency_ms(const aitune::lt::TunedModule& tuned, const aitune::lt::Sample& sample,
                       int clients, int requests) {
  (void)serve(tuned, sample, clients, 5 * clients);
  const Run run = serve(tuned, sample, clients, requests);
  double sum = 0.0;
  for (const double ms : run.latencies_ms)
    sum += ms;
  return sum / static_cast<double>(run.latencies_ms.size());
}

/// --compare-callers N: the pick tuned at N callers against the pick tuned at one, both served at
/// N callers in shuffled rounds; the ratio of their mean per-call latencies per round, its median
/// and 95 % interval.
nlohmann::json compare_callers(const aitune::lt::Model& model,
                               const std::vector<aitune::lt::Sample>& samples, int callers,
                               double budget_s, const std::string& name, int rounds, int requests) {
  using namespace aitune;
  const lt::TunedModule alone = tune_family(model, samples, {"selected", ""}, budget_s, name, 1);
  const lt::TunedModule loaded =
      tune_family(model, samples, {"selected", ""}, budget_s, name, callers);
  fmt::print(stderr, "{}: at 1 caller {}; at {} callers {}\n", name, alone.selected(), callers,
             loaded.selected());
  std::vector<double> ratios;
  std::vector<double> alone_ms;
  std::vector<double> loaded_ms;
  const bool same = alone.report().selected_key == loaded.report().selected_key;
  std::mt19937 random(1);
  for (int round = 0; round < rounds && !same; ++round) {
    double ms[2] = {0.0, 0.0};
    int order[2] = {0, 1};
    std::shuffle(std::begin(order), std::end(order), random);
    for (const int which : order) {
      ms[which] = mean_latency_ms(which == 0 ? alone : loaded, samples.front(), callers, requests);
    }
    alone_ms.push_back(ms[0]);
    loaded_ms.push_back(ms[1]);
    ratios.push_back(ms[1] / ms[0]);
  }
  nlohmann::json row = {{"model", name},
                        {"callers", callers},
                        {"pick_at_1", alone.selected()},
                        {"pick_at_n", loaded.selected()},
                        {"same_pick", same}};
  if (same) {
    fmt::print("{}: the same pick at 1 and {} callers: {}\n", name, callers, loaded.selected());
    return row;
  }
  const auto ratio = bench::median_with_interval(ratios);
  const auto a = bench::median_with_interval(alone_ms);
  const auto b = bench::median_with_interval(loaded_ms);
  fmt::print("{}: at {} callers, mean per-call latency of the pick tuned at {} ({:.3f} ms) over "
             "the pick tuned at 1 ({:.3f} ms): {:.3f} [{:.3f}, {:.3f}] over {} rounds\n",
             name, callers, callers, b.median, a.median, ratio.median, ratio.low, ratio.high,
             rounds);
  row["pick_at_1_ms"] = a.median;
  row["pick_at_n_ms"] = b.median;
  row["ratio"] = {{"median", ratio.median}, {"low", ratio.low}, {"high", ratio.high}};
  row["rounds"] = rounds;
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace aitune;
  std::filesystem::path model_path;
  std::vector<lt::InputSpec> inputs;
  std::vector<int> client_counts{1, 2, 4};
  int requests = 2000;
  double budget_s = 30.0;
  std::filesystem::path json_path = "serving.json";
  std::vector<std::string> only;  ///< the families to run, by label (empty: all)
  int compare_at = 0;             ///< --compare-callers N (0: the table)
  int rounds = 15;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const bool has_value = i + 1 < argc;
      if (arg == "--input" && has_value) {
        inputs.push_back(lt::parse_input_spec(argv[++i]));
      } else if (arg == "--clients" && has_value) {
        client_counts = parse_counts(argv[++i]);
      } else if (arg == "--requests" && has_value) {
        requests = std::max(1, std::stoi(argv[++i]));
      } else if (arg == "--budget-s" && has_value) {
        budget_s = std::stod(argv[++i]);
      } else if (arg == "--json" && has_value) {
        json_path = argv[++i];
      } else if (arg == "--compare-callers" && has_value) {
        compare_at = std::stoi(argv[++i]);
        if (compare_at < 2) throw ConfigError("--compare-callers takes 2 callers or more");
      } else if (arg == "--rounds" && has_value) {
        rounds = std::max(3, std::stoi(argv[++i]));
      } else if (arg == "--only" && has_value) {
        for (const std::string_view label : aitune::comma_separated(argv[++i]))
          only.emplace_back(label);
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
               "[--clients 1,2,4] [--requests N] [--budget-s S] [--json FILE] "
               "[--only selected,AOTInductor,OnnxRuntime,OpenVino,OpenVino 1t]\n",
               error.what(), argv[0]);
    return 2;
  }

  try {
    const lt::Model model = lt::load_model(model_path);
    const std::vector<lt::Sample> samples{lt::make_random_sample(inputs, model.device, 0)};
    const lt::Sample& sample = samples.front();
    const std::string name = model_path.stem().string();
    if (compare_at > 0) {
      const nlohmann::json row =
          compare_callers(model, samples, compare_at, budget_s, name, rounds, requests);
      bench::write_json(json_path, {{"benchmark", "serving --compare-callers"},
                                    {"machine", bench::machine_json()},
                                    {"libtorch", lt::libtorch_version()},
                                    {"model", model_path.string()},
                                    {"comparison", row}});
      fmt::print("JSON written to {}\n", json_path.string());
      return 0;
    }
    nlohmann::json rows = nlohmann::json::array();
    std::string table = fmt::format("{:<14} {:<84} {:>7} {:>9} {:>9} {:>9} {:>10}\n", "family",
                                    "served", "clients", "p50 ms", "p99 ms", "req/s", "x 1 client");
    const Family families[] = {{"selected", ""},
                               {"AOTInductor", "AOTInductor("},
                               {"OnnxRuntime", "OnnxRuntime("},
                               {"OpenVino", "OpenVino("},
                               {"OpenVino 1t", "OpenVino(", ", 1 thread"}};
    for (const Family& family : families) {
      const std::string& label = family.label;
      if (!only.empty() && std::find(only.begin(), only.end(), label) == only.end()) continue;
      std::optional<lt::TunedModule> tuned;
      try {
        tuned.emplace(tune_family(model, samples, family, budget_s, name));
      } catch (const std::exception& error) {
        fmt::print(stderr, "{}: {}\n", label, lt::summarize_error(error));
        continue;
      }
      fmt::print(stderr, "{}: serving {}\n", label, tuned->selected());
      double one_client = 0.0;
      for (const int clients : client_counts) {
        // Every client calls before the timing: what a runtime makes for callers at once
        // (requests, copies) is made then.
        (void)serve(*tuned, sample, clients, 20 * clients);
        const Run run = serve(*tuned, sample, clients, requests);
        const double p50 = quantile_of_sorted(run.latencies_ms, 0.5);
        const double p99 = quantile_of_sorted(run.latencies_ms, 0.99);
        const double throughput = static_cast<double>(run.latencies_ms.size()) / run.wall_s;
        if (clients == 1) one_client = throughput;
        const double scaling = one_client > 0.0 ? throughput / one_client : 0.0;
        table += fmt::format("{:<14} {:<84} {:>7} {:>9.2f} {:>9.2f} {:>9.1f} {:>10}\n", label,
                             tuned->selected(), clients, p50, p99, throughput,
                             scaling > 0.0 ? fmt::format("{:.2f}", scaling) : "-");
        rows.push_back({{"family", label},
                        {"served", tuned->selected()},
                        {"calls_at_once", tuned->backend().thread_safe()},
                        {"clients", clients},
                        {"requests", run.latencies_ms.size()},
                        {"p50_ms", p50},
                        {"p99_ms", p99},
                        {"requests_per_s", throughput},
                        {"over_one_client", scaling}});
      }
    }
    const auto machine = bench::machine_json();
    fmt::print("aitune-bench-serving: {} on {} ({} hardware threads, LibTorch {}); {} requests "
               "per row\n{}",
               model_path.filename().string(), aitune::describe_cpu(),
               std::thread::hardware_concurrency(), lt::libtorch_version(), requests, table);
    bench::write_json(json_path, {{"benchmark", "serving"},
                                  {"machine", machine},
                                  {"libtorch", lt::libtorch_version()},
                                  {"model", model_path.string()},
                                  {"rows", rows}});
    fmt::print("\nJSON written to {}\n", json_path.string());
  } catch (const std::exception& error) {
    fmt::print(stderr, "aitune-bench-serving: {}\n", lt::summarize_error(error));
    return 1;
  }
  return 0;
}
