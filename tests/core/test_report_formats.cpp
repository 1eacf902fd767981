// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// The report as markdown and as an SVG chart; the chart is rendered by rsvg-convert (a real
// renderer: it refuses malformed XML and SVG).
#include "support/fake_backend.hpp"
#include <aitune/core/report/markdown.hpp>
#include <aitune/core/report/svg.hpp>

#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

using namespace aitune;
using namespace aitune::testing;

namespace {

std::size_t count_of(const std::string& text, std::string_view needle) {
  std::size_t count = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++count;
  return count;
}

/// A tuning with a winner, a loser, a failure and a name full of XML's special characters.
TuneReport sample_report() {
  FakeModel model;
  auto strategy =
      make_strategy(model, {FakeBackend("Fast<&>\"'|", 4.0), FakeBackend("Slow", 14.0),
                            FakeBackend(FakeBehaviour{.name = "Broken", .fail_build = true})});
  return strategy.tune(model, one_sample(), "net").report;
}

/// Width and height of a PNG file, from its IHDR chunk; {0, 0} when it is no PNG.
std::pair<std::uint32_t, std::uint32_t> png_size(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (bytes.size() < 24 || bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return {0, 0};
  const auto word = [&](std::size_t at) {
    std::uint32_t value = 0;
    for (std::size_t i = 0; i < 4; ++i)
      value = (value << 8) | static_cast<unsigned char>(bytes[at + i]);
    return value;
  };
  return {word(16), word(20)};
}

}  // namespace

TEST_CASE("The markdown report leads with the decision and has one table row per backend",
          "[report][markdown]") {
  const TuneReport report = sample_report();
  const std::string md =
      render_markdown(report, nlohmann::json{{"device", "cpu"}, {"libtorch", "2.11.0"}});
  CHECK(md.starts_with("### Min Latency Strategy: module `net` (batch size 1)"));
  CHECK(md.find("**Selected `Fast<&>\"'\\|()`: ") != std::string::npos);  // the | escaped
  CHECK(md.find("faster than the baseline `TorchEager()`") != std::string::npos);
  // Four rows, each naming its backend in code: the baseline and three candidates.
  CHECK(count_of(md, "\n|  | `") + count_of(md, "\n| **&#9733;** | `") == 4);
  CHECK(md.find("- `Broken()`: build failed: ") != std::string::npos);
  CHECK(md.find("| libtorch | 2.11.0 |") != std::string::npos);
  CHECK(count_of(md, "&#9733;") == 1);
}

TEST_CASE("The markdown and the table show the same ratio cell, the medians' ratio when the "
          "backends were measured apart",
          "[report][markdown]") {
  FakeModel model;
  auto strategy = make_strategy(
      model, {FakeBackend("Fast", 4.0)},
      StrategyConfig{}.set_profiling(ProfilingConfig{}.set_schedule(Schedule::sequential)));
  const TuneReport report = strategy.tune(model, one_sample(), "net").report;
  REQUIRE_FALSE(report.candidates[0].vs_baseline);  // no paired rounds
  const std::string md = render_markdown(report);
  const std::string table = render_table(report);
  // The ratio to the selected backend: the baseline's 10 ms against its 4 ms, itself 1.
  CHECK(md.find("| 2.500 |") != std::string::npos);
  CHECK(table.find(" 2.500 ") != std::string::npos);
  CHECK(md.find("| 1.000 |") != std::string::npos);
  CHECK(table.find(" 1.000 ") != std::string::npos);
  CHECK(table.find(" 2.50x ") != std::string::npos);  // its speedup over the baseline
}

TEST_CASE("The SVG chart draws every backend, marks the baseline and the winner, and renders",
          "[report][svg]") {
  TuneReport report = sample_report();
  const std::string svg = render_svg(report, "cpu, LibTorch 2.11.0");
  CHECK(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  CHECK(svg.ends_with("</svg>\n"));
  CHECK(svg.find("Fast&lt;&amp;&gt;&quot;&apos;|()") != std::string::npos);
  CHECK(svg.find("Fast<&>") == std::string::npos);
  CHECK(count_of(svg, "baseline median") == 1);
  CHECK(count_of(svg, "&#9733;") == 1);
  CHECK(svg.find("build failed") != std::string::npos);
  CHECK(count_of(svg, "<rect x=") == 1 + 3);  // the winner's band, three boxes
  CHECK(svg.find("dots: timed calls") != std::string::npos);

  // Read back from JSON without the timed calls (as from a cache): drawn from the statistics.
  const TuneReport summary = report_from_json(to_json(report));
  const std::string from_stats = render_svg(summary);
  CHECK(from_stats.find("whiskers: min to p99") != std::string::npos);
  CHECK(count_of(from_stats, "<circle") == 0);

  const char* renderer = std::getenv("AITUNE_RSVG_CONVERT");
  if (renderer == nullptr || *renderer == '\0') {
    FAIL("AITUNE_RSVG_CONVERT is not set: configure with rsvg-convert installed (Debian "
         "librsvg2-bin), or with -DAITUNE_SVG_CHECK=OFF to leave this check out");
  }
  const auto dir =
      std::filesystem::temp_directory_path() / fmt::format("aitune_svg_test_{}", ::getpid());
  std::filesystem::create_directories(dir);
  for (const auto& [name, text] : {std::pair{"samples", svg}, std::pair{"stats", from_stats}}) {
    const auto svg_path = dir / fmt::format("{}.svg", name);
    const auto png_path = dir / fmt::format("{}.png", name);
    std::ofstream(svg_path) << text;
    const int status = std::system(
        fmt::format("'{}' '{}' -o '{}'", renderer, svg_path.string(), png_path.string()).c_str());
    CHECK(status == 0);
    const auto [width, height] = png_size(png_path);
    CHECK(width == 1020);
    CHECK(height > 150);
  }
  // A broken document is refused: the check can fail.
  std::ofstream(dir / "broken.svg") << svg.substr(0, svg.size() / 2);
  CHECK(std::system(fmt::format("'{}' '{}' -o '{}' 2>/dev/null", renderer,
                                (dir / "broken.svg").string(), (dir / "broken.png").string())
                        .c_str()) != 0);
  std::filesystem::remove_all(dir);
}
