// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a tuning cache entry's report, as a file or a store others can write hands it
// back (core/report/json.hpp's report_from_json, core/cache/cached_tuning.hpp's contradiction),
// then the report's renderers. The same bytes as a whole entry a store (Redis) hands back, through
// entry_from_text and TuningCache::find: a miss or a hit whose key is the key asked for. Any input
// is a report or an Error (or nlohmann's own exception): never a crash, and what was read is a
// report whose every count came from a count and whose texts hold no control character, so none
// reaches a terminal.
#include <aitune/core/cache/cache_store.hpp>
#include <aitune/core/cache/cached_tuning.hpp>
#include <aitune/core/report/json.hpp>
#include <aitune/core/report/report.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace {

/// A store holding one entry, as text a server sent: what RedisStore::get does with it.
class TextStore final : public aitune::CacheStore {
 public:
  explicit TextStore(std::string_view text) : text_(text) {}
  [[nodiscard]] std::string name() const override { return "fuzz"; }
  [[nodiscard]] std::optional<nlohmann::json> get(const std::string&,
                                                  const aitune::Logger&) const override {
    std::string why;
    return aitune::entry_from_text(text_, &why);
  }
  bool put(const std::string&, const nlohmann::json&, std::size_t,
           const aitune::Logger&) const override {
    return false;
  }
  [[nodiscard]] std::optional<aitune::CacheLease>
  try_lease(const std::string&, std::chrono::milliseconds, const aitune::Logger&) const override {
    return std::nullopt;
  }
  bool renew(const aitune::CacheLease&, std::chrono::milliseconds,
             const aitune::Logger&) const override {
    return false;
  }
  void release(const aitune::CacheLease&, const aitune::Logger&) const override {}
  [[nodiscard]] std::unique_ptr<aitune::CacheStore> clone() const override {
    return std::make_unique<TextStore>(text_);
  }

 private:
  std::string_view text_;
};

/// Any text as a stored entry: a miss, or a hit for exactly the key it was asked for.
void check_stored_entry(std::string_view text) {
  std::string why;
  const std::optional<nlohmann::json> entry = aitune::entry_from_text(text, &why);
  const nlohmann::json key = entry && entry->contains("key") ? entry->at("key") : nlohmann::json();
  const aitune::TuningCache cache(std::make_unique<TextStore>(text));
  const aitune::Logger quiet(aitune::null_sink());
  const std::optional<aitune::CachedTuning> hit = cache.find(key, quiet);
  // Never an exception; a hit is for the key asked, with a report object, and unsigned (no key
  // is set here: nothing a store sends is trusted as signed).
  if (hit && (hit->key != key || !hit->report.is_object() || hit->authenticated)) std::abort();
}

bool printable(std::string_view text) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_stored_entry(text);
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  aitune::TuneReport report;
  try {
    report = aitune::report_from_json(json);
  } catch (const aitune::Error&) {
    return 0;
  } catch (const nlohmann::json::exception&) {
    return 0;
  }
  (void)aitune::detail::contradiction(report, true);
  if (!printable(report.decision) || !printable(report.selected) ||
      !printable(report.measurement.stop_detail)) {
    std::abort();
  }
  for (const aitune::CandidateReport& row : report.candidates) {
    if (!printable(row.backend) || !printable(row.reason) || !printable(row.note)) std::abort();
  }
  for (const aitune::ShapeShare& share : report.measurement.shapes) {
    if (!printable(share.shape) || !(share.weight >= 0.0 && share.weight <= 1.0)) std::abort();
  }
  // The renderers take whatever was read.
  (void)aitune::render_table(report);
  (void)aitune::to_json(report).dump();
  return 0;
}
