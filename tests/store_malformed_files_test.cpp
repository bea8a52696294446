// Malformed stores, one damage at a time, in the store's files as a whole: files of another
// store, format versions (major, minor, list checksums by version), missing and misplaced files.
#include <gtest/gtest.h>

#include "store_malformed_fixture.hpp"

namespace colflow::store_malformed_tests {
namespace {

// ==== 4. Files from different stores

TEST_F(StoreMalformedTest, RejectsIndexOfAnotherStore) {
  // Same parameters and seed: identical frames and entries, only the Store_Id differs.
  const fs::path other = dir_ / "twin";
  test::write_genotype_store(other, genotype_rows, store_columns, {codec_id::zstd, 3, false});
  const fs::path p = fresh("mixed-index");
  fs::copy_file(idx_of(other), idx_of(p), fs::copy_options::overwrite_existing);
  EXPECT_TRUE(fails_with(opening(p), errc::mismatched_store,
                         {"different stores", "columns.dat", "columns.idx"}));
}

TEST_F(StoreMalformedTest, RejectsDataOfAnotherStore) {
  const fs::path other = dir_ / "twin";
  test::write_genotype_store(other, genotype_rows, store_columns, {codec_id::zstd, 3, false});
  const fs::path p = fresh("mixed-data");
  fs::copy_file(dat_of(other), dat_of(p), fs::copy_options::overwrite_existing);
  EXPECT_TRUE(fails_with(opening(p), errc::mismatched_store, {"different stores"}));
}

TEST_F(StoreMalformedTest, RejectsManifestOfAnotherStore) {
  const fs::path other = dir_ / "twin";
  test::write_genotype_store(other, genotype_rows, store_columns, {codec_id::zstd, 3, false});
  const fs::path p = fresh("mixed-manifest");
  fs::copy_file(other / "manifest.json", p / "manifest.json", fs::copy_options::overwrite_existing);
  EXPECT_TRUE(fails_with(opening(p), errc::mismatched_store, {"manifest.json"}));
}

TEST_F(StoreMalformedTest, RejectsDataHeaderDisagreeingOnShape) {
  const fs::path p = fresh("shape");
  rewrite_data_header(p, num_rows_pos, genotype_rows + 1, 8);
  EXPECT_TRUE(fails_with(opening(p), errc::mismatched_store, {"rows"}));
}

// ==== 5. Versions

TEST_F(StoreMalformedTest, RejectsIndexMajorVersion2) {
  const fs::path p = fresh("idx-v2");
  rewrite_index_header(p, version_major_pos, 2, 2);
  EXPECT_TRUE(fails_with(opening(p), errc::unsupported_version, {"version 2", "columns.idx"}));
}

TEST_F(StoreMalformedTest, RejectsDataMajorVersion2) {
  const fs::path p = fresh("dat-v2");
  rewrite_data_header(p, version_major_pos, 2, 2);
  EXPECT_TRUE(fails_with(opening(p), errc::unsupported_version, {"version 2", "columns.dat"}));
}

TEST_F(StoreMalformedTest, RejectsMajorVersionZero) {
  const fs::path p = fresh("v0");
  rewrite_index_header(p, version_major_pos, 0, 2);
  EXPECT_TRUE(fails_with(opening(p), errc::unsupported_version, {"version 0", "columns.idx"}));
}

TEST_F(StoreMalformedTest, OpensUnknownMinorVersion) {
  const fs::path p = fresh("v1.7");
  rewrite_index_header(p, version_minor_pos, 7, 2);
  rewrite_data_header(p, version_minor_pos, 7, 2);
  expect_reads_pristine(p);
}

// From 1.3 on, the list checksums are part of the store: a later minor version keeps them, and
// a store without them lost them.
TEST_F(StoreMalformedTest, RejectsAStoreOfVersion1Point3OrLaterWithoutListChecksums) {
  for (const std::uint64_t minor : {3, 7}) {
    for (const char* name : {"samples.tsv", "columns.tsv"}) {
      const fs::path p = fresh("no-sums-1." + std::to_string(minor) + "-" + name);
      rewrite_index_header(p, version_minor_pos, minor, 2);
      rewrite_data_header(p, version_minor_pos, minor, 2);
      auto j = read_manifest_json(p);
      j["checksums"].erase(name);
      write_manifest_json(p, j);
      EXPECT_TRUE(fails_with(
          opening(p), errc::corrupt_header,
          {"manifest.json", "no checksum of", name, "format version 1." + std::to_string(minor)}));
    }
  }
}

TEST_F(StoreMalformedTest, RejectsMalformedListChecksums) {
  for (const char* bad : {R"("checksums": 7)", R"("checksums": {"samples.tsv": 12})",
                          R"("checksums": {"samples.tsv": "0123456789ABCDEF"})",
                          R"("checksums": {"columns.tsv": "0123456789abcde"})"}) {
    const fs::path p = fresh("bad-sums");
    auto j = read_manifest_json(p);
    j.erase("checksums");
    std::string text = j.dump();
    text.insert(1, std::string(bad) + ",");
    test::write_file(p / "manifest.json", std::vector<char>(text.begin(), text.end()));
    EXPECT_TRUE(fails_with(opening(p), errc::corrupt_header, {"manifest", "checksum"})) << bad;
    fs::remove_all(p);
  }
}

TEST_F(StoreMalformedTest, RejectsDataAndIndexOfDifferentMinorVersions) {
  const fs::path p = fresh("v1.7-v1.0");
  rewrite_index_header(p, version_minor_pos, 7, 2);
  EXPECT_TRUE(fails_with(opening(p), errc::mismatched_store, {"version"}));
}

// ==== 7. Missing and misplaced files

TEST_F(StoreMalformedTest, RejectsEmptyDirectory) {
  const fs::path p = dir_ / "empty";
  fs::create_directory(p);
  EXPECT_TRUE(fails_with(opening(p), errc::not_found, {"columns.idx", p.string()}));
}

TEST_F(StoreMalformedTest, RejectsMissingPath) {
  const fs::path p = dir_ / "nowhere";
  EXPECT_TRUE(fails_with(opening(p), errc::not_found, {p.string()}));
}

TEST_F(StoreMalformedTest, RejectsRegularFile) {
  const fs::path p = dir_ / "file.cf";
  test::write_file(p, {'h', 'e', 'l', 'l', 'o'});
  EXPECT_TRUE(fails_with(opening(p), errc::bad_magic, {p.string(), "not a directory"}));
  // Even a copy of a real index is not a store.
  fs::copy_file(idx_of(pristine_), p, fs::copy_options::overwrite_existing);
  EXPECT_TRUE(fails_with(opening(p), errc::bad_magic, {"not a directory"}));
}

TEST_F(StoreMalformedTest, RejectsMissingDataFile) {
  const fs::path p = fresh("no-data");
  fs::remove(dat_of(p));
  for (access_mode access : {access_mode::mmap, access_mode::pread})
    EXPECT_TRUE(fails_with(opening(p, {access, false}), errc::not_found, {"columns.dat"}));
}

TEST_F(StoreMalformedTest, RejectsMissingManifest) {
  const fs::path p = fresh("no-manifest");
  fs::remove(p / "manifest.json");
  EXPECT_TRUE(fails_with(opening(p), errc::not_found, {"manifest.json"}));
}

TEST_F(StoreMalformedTest, RejectsManifestThatIsNotJson) {
  const fs::path p = fresh("bad-manifest");
  test::write_file(p / "manifest.json", {'{', '"', 's'});
  EXPECT_TRUE(fails_with(opening(p), errc::corrupt_header, {"manifest.json"}));
}

TEST_F(StoreMalformedTest, RejectsBadMagic) {
  const fs::path p = fresh("idx-magic");
  rewrite_index_header(p, 0, 0x88, 1, false);
  EXPECT_TRUE(fails_with(opening(p), errc::bad_magic, {"columns.idx"}));
  const fs::path q = fresh("dat-magic");
  rewrite_data_header(q, 0, 0x88, 1, false);
  EXPECT_TRUE(fails_with(opening(q), errc::bad_magic, {"columns.dat"}));
}

TEST_F(StoreMalformedTest, RejectsIndexAndDataSwapped) {
  const fs::path p = fresh("swapped-files");
  fs::rename(idx_of(p), p / "tmp");
  fs::rename(dat_of(p), idx_of(p));
  fs::rename(p / "tmp", dat_of(p));
  EXPECT_TRUE(fails_with(opening(p), errc::bad_magic, {"columns.idx"}));
}

TEST_F(StoreMalformedTest, RejectsIndexThatIsADirectory) {
  const fs::path p = fresh("idx-dir");
  fs::remove(idx_of(p));
  fs::create_directory(idx_of(p));
  for (access_mode access : {access_mode::mmap, access_mode::pread})
    EXPECT_TRUE(fails_with_any(opening(p, {access, false}),
                               {errc::io_error, errc::corrupt_header, errc::bad_magic}));
}

}  // namespace
}  // namespace colflow::store_malformed_tests
