// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// A structural check of a zip archive from outside, before a loader trusts it: every record the
/// archive points to lies inside the bytes, and there are not absurdly many of them. Sample files
/// (torch.save writes a zip archive, with ZIP64 records) pass through it before LibTorch's loader,
/// whose zip reader crashed on damaged archives when fuzzed. Torch-free, so it is fuzzed alone.

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace aitune {

/// What an archive may hold.
struct ZipLimits {
  std::uint64_t max_entries = 100'000;
};

namespace detail {

/// Little-endian reads that say whether the bytes were there.
class ZipBytes {
 public:
  explicit ZipBytes(std::span<const char> bytes) : bytes_(bytes) {}

  [[nodiscard]] std::size_t size() const noexcept { return bytes_.size(); }

  /// The `width`-byte unsigned value at `at`; none when it runs past the end.
  [[nodiscard]] std::optional<std::uint64_t> read(std::uint64_t at, int width) const {
    if (at > bytes_.size() || static_cast<std::uint64_t>(width) > bytes_.size() - at) {
      return std::nullopt;
    }
    std::uint64_t value = 0;
    for (int i = width - 1; i >= 0; --i) {
      value = (value << 8) | static_cast<unsigned char>(bytes_[static_cast<std::size_t>(at) + i]);
    }
    return value;
  }

  [[nodiscard]] bool has_signature(std::uint64_t at, std::uint32_t signature) const {
    const auto value = read(at, 4);
    return value && *value == signature;
  }

 private:
  std::span<const char> bytes_;
};

inline constexpr std::uint32_t zip_local_header = 0x04034b50;
inline constexpr std::uint32_t zip_central_header = 0x02014b50;
inline constexpr std::uint32_t zip_end_record = 0x06054b50;
inline constexpr std::uint32_t zip64_end_record = 0x06064b50;
inline constexpr std::uint32_t zip64_end_locator = 0x07064b50;

}  // namespace detail

/// Checks that `bytes` are a zip archive whose records all lie inside it: the end record, the
/// ZIP64 records it points to, the central directory, and each entry's local header and data.
/// Returns what is wrong, or none.
[[nodiscard]] inline std::optional<std::string> check_zip_structure(std::span<const char> bytes,
                                                                    const ZipLimits& limits = {}) {
  const detail::ZipBytes zip(bytes);
  constexpr std::uint64_t end_record_size = 22;
  if (zip.size() < end_record_size) return "too short for a zip archive";
  // The end record sits at the end, followed only by its comment (at most 65535 bytes). Readers
  // (miniz, in LibTorch) take the last end-record signature in the file, so this check does too -
  // a fake record hidden in a comment would otherwise be what the reader follows, unchecked - and
  // its comment must reach exactly to the end.
  std::optional<std::uint64_t> end;
  const std::uint64_t last = zip.size() - end_record_size;
  for (std::uint64_t at = last + 1; at-- > 0 && last - at <= 0xFFFF;) {
    if (zip.has_signature(at, detail::zip_end_record)) {
      end = at;
      break;
    }
  }
  if (!end) return "no end-of-archive record";
  if (*end + end_record_size + *zip.read(*end + 20, 2) != zip.size()) {
    return "the end-of-archive record's comment does not reach the end of the file";
  }
  std::uint64_t entries = *zip.read(*end + 10, 2);
  std::uint64_t directory_size = *zip.read(*end + 12, 4);
  std::uint64_t directory_offset = *zip.read(*end + 16, 4);
  std::uint64_t directory_limit = *end;  // the directory ends before the record after it
  // A ZIP64 locator before the end record makes the ZIP64 record the one readers follow (torch.save
  // always writes one), whatever the end record says.
  const bool zip64 = *end >= 20 && zip.has_signature(*end - 20, detail::zip64_end_locator);
  if (!zip64 &&
      (entries == 0xFFFF || directory_size == 0xFFFFFFFF || directory_offset == 0xFFFFFFFF)) {
    return "no ZIP64 locator before the end record";
  }
  if (zip64) {
    const std::uint64_t record = *zip.read(*end - 20 + 8, 8);
    if (record >= *end - 20 || 56 > *end - 20 - record ||
        !zip.has_signature(record, detail::zip64_end_record)) {
      return "the ZIP64 end record lies outside the archive";
    }
    entries = *zip.read(record + 32, 8);
    directory_size = *zip.read(record + 40, 8);
    directory_offset = *zip.read(record + 48, 8);
    directory_limit = record;
  }
  if (entries > limits.max_entries) {
    return fmt::format("{} entries, more than the limit of {}", entries, limits.max_entries);
  }
  if (directory_offset > directory_limit || directory_size > directory_limit - directory_offset) {
    return "the central directory lies outside the archive";
  }
  const std::uint64_t directory_end = directory_offset + directory_size;
  std::uint64_t at = directory_offset;
  for (std::uint64_t entry = 0; entry < entries; ++entry) {
    constexpr std::uint64_t header_size = 46;
    if (at > directory_end || header_size > directory_end - at ||
        !zip.has_signature(at, detail::zip_central_header)) {
      return fmt::format("entry {} of the central directory is damaged", entry);
    }
    const std::uint64_t name_size = *zip.read(at + 28, 2);
    const std::uint64_t extra_size = *zip.read(at + 30, 2);
    const std::uint64_t comment_size = *zip.read(at + 32, 2);
    const std::uint64_t record_size = header_size + name_size + extra_size + comment_size;
    if (record_size > directory_end - at) {
      return fmt::format("entry {} runs past the central directory", entry);
    }
    std::uint64_t compressed = *zip.read(at + 20, 4);
    std::uint64_t uncompressed = *zip.read(at + 24, 4);
    std::uint64_t local = *zip.read(at + 42, 4);
    // ZIP64 sizes and offset, in this order, for the fields that say 0xFFFFFFFF.
    for (std::uint64_t field = at + header_size + name_size, fields_end = field + extra_size;
         field + 4 <= fields_end;) {
      const std::uint64_t id = *zip.read(field, 2);
      const std::uint64_t size = *zip.read(field + 2, 2);
      if (size > fields_end - field - 4)
        return fmt::format("entry {}: a damaged extra field", entry);
      if (id == 0x0001) {
        std::uint64_t next = field + 4;
        for (std::uint64_t* value : {&uncompressed, &compressed, &local}) {
          if (*value != 0xFFFFFFFF) continue;
          if (next + 8 > field + 4 + size) {
            return fmt::format("entry {}: a damaged ZIP64 field", entry);
          }
          *value = *zip.read(next, 8);
          next += 8;
        }
      }
      field += 4 + size;
    }
    if (*zip.read(at + 10, 2) != 0 || compressed != uncompressed) {
      return fmt::format("entry {} is compressed (torch.save stores its entries)", entry);
    }
    constexpr std::uint64_t local_size = 30;
    if (local > directory_offset || local_size > directory_offset - local ||
        !zip.has_signature(local, detail::zip_local_header)) {
      return fmt::format("entry {}: its local header lies outside the archive", entry);
    }
    const std::uint64_t data =
        local + local_size + *zip.read(local + 26, 2) + *zip.read(local + 28, 2);
    if (data > directory_offset || compressed > directory_offset - data) {
      return fmt::format("entry {}: its data lies outside the archive", entry);
    }
    at += record_size;
  }
  return std::nullopt;
}

}  // namespace aitune
