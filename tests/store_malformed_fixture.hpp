// Shared by the malformed-store tests (store_malformed*_test.cpp): the on-disk layout as
// docs/FORMAT.md documents it, error matchers, the editing of a store's files (fields rewritten
// with their checksums fixed), and StoreMalformedTest's pristine store to copy and damage.
//
// The byte offsets below are written out from the format description (format_internal.hpp,
// docs/FORMAT.md) rather than taken from the engine, so that a change of layout fails here.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "test_support.hpp"

namespace colflow::store_malformed_tests {

namespace fs = std::filesystem;

// ---- The on-disk layout, as documented.

constexpr std::size_t header_size = 64;
constexpr std::size_t entry_size = 72;
constexpr std::size_t checksum_pos = 56;  // header checksum / Index_Checksum

// Header fields (both files).
constexpr std::size_t version_major_pos = 8;
constexpr std::size_t version_minor_pos = 10;
constexpr std::size_t header_flags_pos = 12;
constexpr std::size_t num_rows_pos = 32;
constexpr std::size_t value_type_pos = 48;
constexpr std::size_t entry_size_pos = 50;  // index only

// Index entry fields.
constexpr std::size_t frame_offset_field = 0;
constexpr std::size_t frame_size_field = 8;
constexpr std::size_t decoded_size_field = 16;
constexpr std::size_t observed_count_field = 32;
constexpr std::size_t sd_field = 48;
constexpr std::size_t codec_id_field = 64;
constexpr std::size_t column_flags_field = 66;
constexpr std::size_t entry_reserved_field = 68;

constexpr std::uint64_t genotype_rows = 37;  // not a multiple of 4: the last byte has padding
constexpr std::uint64_t float_rows = 13;
constexpr std::uint64_t store_columns = 4;

// ---- Catching errors.

struct caught_error {
  errc kind;
  std::string message;
};

// Runs `f`; returns the kind and message of the colflow::error it throws, or nothing. Any
// other exception escapes and fails the test: the library throws only colflow::error.
template <typename F>
std::optional<caught_error> capture(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const error& e) {
    return caught_error{e.kind(), e.message()};
  }
  return std::nullopt;
}

// Success when `f` throws colflow::error of `kind` whose message holds every one of `words`.
template <typename F>
testing::AssertionResult fails_with(F&& f, errc kind,
                                    std::initializer_list<std::string_view> words = {}) {
  const auto e = capture(std::forward<F>(f));
  if (!e)
    return testing::AssertionFailure()
           << "no colflow::error thrown (expected " << errc_name(kind) << ")";
  if (e->kind != kind)
    return testing::AssertionFailure() << "threw " << errc_name(e->kind) << " instead of "
                                       << errc_name(kind) << ": " << e->message;
  for (const std::string_view w : words)
    if (e->message.find(w) == std::string::npos)
      return testing::AssertionFailure()
             << errc_name(kind) << " message lacks \"" << w << "\": " << e->message;
  return testing::AssertionSuccess();
}

// Success when `f` throws colflow::error of any of `kinds`.
template <typename F>
testing::AssertionResult fails_with_any(F&& f, std::initializer_list<errc> kinds) {
  const auto e = capture(std::forward<F>(f));
  if (!e) return testing::AssertionFailure() << "no colflow::error thrown";
  if (std::find(kinds.begin(), kinds.end(), e->kind) == kinds.end())
    return testing::AssertionFailure() << "unexpected " << errc_name(e->kind) << ": " << e->message;
  return testing::AssertionSuccess();
}

inline auto opening(const fs::path& path, open_options options = {}) {
  return [path, options] { (void)store::open(path, options); };
}

// ---- Editing files.

inline fs::path idx_of(const fs::path& store_dir) { return store_dir / "columns.idx"; }
inline fs::path dat_of(const fs::path& store_dir) { return store_dir / "columns.dat"; }

inline void put_le(std::vector<char>& bytes, std::size_t pos, std::uint64_t value,
                   std::size_t width) {
  ASSERT_LE(pos + width, bytes.size());
  for (std::size_t i = 0; i < width; ++i) bytes[pos + i] = static_cast<char>(value >> (8 * i));
}

inline std::uint64_t get_le(const std::vector<char>& bytes, std::size_t pos, std::size_t width) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < width; ++i)
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[pos + i])) << (8 * i);
  return v;
}

inline std::uint64_t hash_of(const std::vector<char>& bytes) {
  return checksum64(std::as_bytes(std::span<const char>(bytes)));
}

// Index_Checksum: XXH3-64 of header bytes 0..55 followed by all entries, at byte 56.
inline void fix_index_checksum(std::vector<char>& idx) {
  std::vector<char> covered(idx.begin(), idx.begin() + checksum_pos);
  covered.insert(covered.end(), idx.begin() + header_size, idx.end());
  put_le(idx, checksum_pos, hash_of(covered), 8);
}

// Header_Checksum of the data file: XXH3-64 of bytes 0..55, at byte 56.
inline void fix_data_header_checksum(std::vector<char>& dat) {
  const std::vector<char> covered(dat.begin(), dat.begin() + checksum_pos);
  put_le(dat, checksum_pos, hash_of(covered), 8);
}

inline void rewrite_index_header(const fs::path& store_dir, std::size_t pos, std::uint64_t value,
                                 std::size_t width, bool fix_checksum = true) {
  auto idx = test::read_file(idx_of(store_dir));
  put_le(idx, pos, value, width);
  if (fix_checksum) fix_index_checksum(idx);
  test::write_file(idx_of(store_dir), idx);
}

inline void rewrite_data_header(const fs::path& store_dir, std::size_t pos, std::uint64_t value,
                                std::size_t width, bool fix_checksum = true) {
  auto dat = test::read_file(dat_of(store_dir));
  put_le(dat, pos, value, width);
  if (fix_checksum) fix_data_header_checksum(dat);
  test::write_file(dat_of(store_dir), dat);
}

inline void copy_store(const fs::path& from, const fs::path& to) {
  fs::copy(from, to, fs::copy_options::recursive);
}

inline nlohmann::ordered_json read_manifest_json(const fs::path& store_dir) {
  const auto bytes = test::read_file(store_dir / "manifest.json");
  return nlohmann::ordered_json::parse(bytes.begin(), bytes.end());
}

inline void write_manifest_json(const fs::path& store_dir, const nlohmann::ordered_json& j) {
  const std::string text = j.dump(2) + "\n";
  test::write_file(store_dir / "manifest.json", std::vector<char>(text.begin(), text.end()));
}

// Makes a store as writers before format 1.3 made it: Version_Minor 0 in both headers (with
// their checksums), no list checksums in the manifest.

inline void make_version_1_0(const fs::path& store_dir) {
  rewrite_index_header(store_dir, version_minor_pos, 0, 2);
  rewrite_data_header(store_dir, version_minor_pos, 0, 2);
  auto j = read_manifest_json(store_dir);
  j.erase("checksums");
  j["format_version"] = "1.0";
  write_manifest_json(store_dir, j);
}

// Column j as stored (dosages with NaN, or the stored floats).
inline std::vector<double> stored_values(const store& s, std::size_t j) {
  std::vector<double> v(s.num_rows());
  s.read_column(j, v, decode_as::stored);
  return v;
}

inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// A genotype column's expected dosages.
inline std::vector<double> expected_dosages(const std::vector<std::uint8_t>& codes,
                                            std::uint64_t rows) {
  std::vector<double> v(rows);
  for (std::uint64_t i = 0; i < rows; ++i) {
    const int d = test::dosage_at(codes, i);
    v[i] = d < 0 ? std::numeric_limits<double>::quiet_NaN() : d;
  }
  return v;
}

// Flips bytes of a file in place (the store is reopened after each flip).
class byte_flipper {
 public:
  explicit byte_flipper(const fs::path& p) : fd_(::open(p.c_str(), O_RDWR | O_CLOEXEC)) {}
  ~byte_flipper() {
    if (fd_ >= 0) ::close(fd_);
  }
  byte_flipper(const byte_flipper&) = delete;
  byte_flipper& operator=(const byte_flipper&) = delete;
  bool ok() const { return fd_ >= 0; }
  bool flip(std::uint64_t pos, unsigned char mask) {
    unsigned char b = 0;
    if (::pread(fd_, &b, 1, static_cast<off_t>(pos)) != 1) return false;
    b = static_cast<unsigned char>(b ^ mask);
    return ::pwrite(fd_, &b, 1, static_cast<off_t>(pos)) == 1;
  }

 private:
  int fd_;
};

// ==== Fixture for the single-damage tests: a zstd genotype store and its pristine copy.

class StoreMalformedTest : public testing::Test {
 protected:
  void SetUp() override {
    pristine_ = dir_ / "pristine";
    codes_ = test::write_genotype_store(pristine_, genotype_rows, store_columns,
                                        {codec_id::zstd, 3, false});
  }

  // A fresh copy of the pristine store, to damage.
  fs::path fresh(const std::string& name) {
    const fs::path p = dir_ / name;
    copy_store(pristine_, p);
    return p;
  }

  // A fresh codec-none float64 store.
  fs::path fresh_uncompressed(const std::string& name) {
    const fs::path p = dir_ / name;
    test::write_float_store(p, value_type::float64, float_rows, store_columns,
                            {codec_id::none, 0, false});
    return p;
  }

  void expect_reads_pristine(const fs::path& p) {
    const store s = store::open(p, {access_mode::mmap, true});
    ASSERT_EQ(s.num_columns(), store_columns);
    for (std::size_t j = 0; j < store_columns; ++j)
      EXPECT_TRUE(same_bits(stored_values(s, j), expected_dosages(codes_[j], genotype_rows)))
          << "column " << j;
  }

  test::temp_dir dir_;
  fs::path pristine_;
  std::vector<std::vector<std::uint8_t>> codes_;
};

}  // namespace colflow::store_malformed_tests
