// The store writer and existing paths: an existing store or directory is refused without
// overwrite, an overwrite keeps the old store whole until finish, an abandoned writer leaves
// nothing, and a path that is not a store is never overwritten.
#include <gtest/gtest.h>

#include <optional>
#include <set>

#include "store_malformed_fixture.hpp"

namespace colflow::store_malformed_tests {
namespace {

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

// ==== 9. The writer and existing paths

std::vector<double> float_column(std::uint64_t rows, double base) {
  std::vector<double> v(rows);
  for (std::uint64_t i = 0; i < rows; ++i) v[i] = base + static_cast<double>(i);
  return v;
}

writer_options float_options(std::uint64_t rows, bool overwrite) {
  writer_options o;
  o.type = value_type::float64;
  o.rows = rows;
  o.overwrite = overwrite;
  o.source = "malformed test";
  return o;
}

void append_float_column(store_writer& w, std::uint64_t rows, std::uint64_t j) {
  const auto v = float_column(rows, static_cast<double>(j));
  w.append(encode_float_column(v, value_type::float64, dense_stats(v), 0, {}),
           test::numbered_column(j));
}

TEST_F(StoreMalformedTest, WriterRefusesExistingStoreWithoutOverwrite) {
  EXPECT_TRUE(fails_with(
      [&] { store_writer w(pristine_, float_options(5, false), test::numbered_samples(5)); },
      errc::already_exists, {pristine_.string()}));
  expect_reads_pristine(pristine_);
  EXPECT_EQ(listing(dir_.path()), std::set<std::string>{"pristine"});
}

TEST_F(StoreMalformedTest, WriterRefusesExistingEmptyDirectoryWithoutOverwrite) {
  const fs::path p = dir_ / "empty";
  fs::create_directory(p);
  EXPECT_TRUE(
      fails_with([&] { store_writer w(p, float_options(5, false), test::numbered_samples(5)); },
                 errc::already_exists, {p.string()}));
}

TEST_F(StoreMalformedTest, OverwriteKeepsOldStoreIntactUntilFinish) {
  const std::uint64_t rows = 5;
  std::optional<store> before;
  {
    store_writer w(pristine_, float_options(rows, true), test::numbered_samples(rows));
    for (std::uint64_t j = 0; j < 3; ++j) append_float_column(w, rows, j);
    // Appended but not finished: the old store is still there, whole.
    expect_reads_pristine(pristine_);
    before.emplace(store::open(pristine_));
    EXPECT_EQ(before->type(), value_type::genotype);
    w.finish();
  }
  const store after = store::open(pristine_, {access_mode::mmap, true});
  EXPECT_EQ(after.type(), value_type::float64);
  EXPECT_EQ(after.num_rows(), rows);
  ASSERT_EQ(after.num_columns(), 3u);
  for (std::uint64_t j = 0; j < 3; ++j)
    EXPECT_EQ(stored_values(after, j), float_column(rows, static_cast<double>(j)));
  EXPECT_NE(after.store_id(), before->store_id());
  // A store opened before the swap keeps reading the old data.
  EXPECT_TRUE(same_bits(stored_values(*before, 1), expected_dosages(codes_[1], genotype_rows)));
  // No temporary or set-aside directory is left behind.
  EXPECT_EQ(listing(dir_.path()), std::set<std::string>{"pristine"});
}

TEST_F(StoreMalformedTest, AbandonedWriterLeavesNothing) {
  const fs::path parent = dir_ / "parent";
  fs::create_directory(parent);
  {
    store_writer w(parent / "new", float_options(5, false), test::numbered_samples(5));
    append_float_column(w, 5, 0);
    append_float_column(w, 5, 1);
    EXPECT_FALSE(fs::exists(parent / "new"));  // nothing under the target name before finish
  }
  EXPECT_FALSE(fs::exists(parent / "new"));
  EXPECT_TRUE(listing(parent).empty());
}

TEST_F(StoreMalformedTest, AbandonedOverwriteLeavesOldStore) {
  {
    store_writer w(pristine_, float_options(5, true), test::numbered_samples(5));
    append_float_column(w, 5, 0);
  }
  expect_reads_pristine(pristine_);
  EXPECT_EQ(listing(dir_.path()), std::set<std::string>{"pristine"});
}

TEST_F(StoreMalformedTest, OverwriteRefusesDirectoryThatIsNotAStore) {
  const fs::path home = dir_ / "home";
  fs::create_directory(home);
  test::write_file(home / "notes.txt", {'k', 'e', 'e', 'p'});
  EXPECT_TRUE(
      fails_with([&] { store_writer w(home, float_options(5, true), test::numbered_samples(5)); },
                 errc::already_exists, {home.string(), "not a colflow store"}));
  EXPECT_EQ(listing(home), std::set<std::string>{"notes.txt"});
  EXPECT_EQ(test::read_file(home / "notes.txt"), (std::vector<char>{'k', 'e', 'e', 'p'}));
  EXPECT_EQ(listing(dir_.path()), (std::set<std::string>{"home", "pristine"}));
}

TEST_F(StoreMalformedTest, OverwriteRefusesRegularFile) {
  const fs::path file = dir_ / "file.cf";
  test::write_file(file, {'x'});
  EXPECT_TRUE(
      fails_with([&] { store_writer w(file, float_options(5, true), test::numbered_samples(5)); },
                 errc::already_exists, {file.string()}));
  EXPECT_EQ(test::read_file(file), std::vector<char>{'x'});
}

}  // namespace
}  // namespace colflow::store_malformed_tests
