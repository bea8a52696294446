// Stores written and read back: genotype and float columns, their values and statistics.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>
#include <tuple>

#include "colflow/io/file_io.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

struct store_case {
  column_encoding encoding;
  access_mode access;
};

std::string case_name(const ::testing::TestParamInfo<store_case>& info) {
  return test::encoding_name(info.param.encoding) +
         (info.param.access == access_mode::mmap ? "Mmap" : "Pread");
}

std::vector<store_case> all_cases() {
  std::vector<store_case> cases;
  for (const auto& e : test::all_encodings())
    for (access_mode a : {access_mode::mmap, access_mode::pread}) cases.push_back({e, a});
  return cases;
}

class GenotypeStoreTest : public ::testing::TestWithParam<store_case> {};

TEST_P(GenotypeStoreTest, DecodesStandardisedValuesAndDosages) {
  test::temp_dir dir;
  const std::uint64_t rows = 203, columns = 9;  // 203: a partial last byte
  const auto codes = test::write_genotype_store(dir / "g.cf", rows, columns, GetParam().encoding);
  const store s = store::open(dir / "g.cf", {GetParam().access, true});
  ASSERT_EQ(s.num_rows(), rows);
  ASSERT_EQ(s.num_columns(), columns);
  EXPECT_EQ(s.type(), value_type::genotype);
  std::vector<double> z(rows), dosage(rows);
  std::vector<float> zf(rows);
  for (std::size_t j = 0; j < columns; ++j) {
    const column_entry e = s.entry(j);
    EXPECT_EQ(e.codec, GetParam().encoding.codec);
    EXPECT_EQ(e.stats.observed + 0, genotype_stats(count_genotypes(codes[j], rows), rows).observed);
    s.read_column(j, z);
    s.read_column(j, zf);
    s.read_column(j, dosage, decode_as::stored);
    const column_stats st = e.stats;
    for (std::uint64_t i = 0; i < rows; ++i) {
      const int d = test::dosage_at(codes[j], i);
      // The decoded values equal those computed in double from the dosages, bit for bit.
      const double expected = (d < 0 || st.sd == 0) ? 0.0 : (d - st.mean) / st.sd;
      ASSERT_EQ(z[i], expected) << "column " << j << " row " << i;
      ASSERT_EQ(zf[i], static_cast<float>(expected));
      if (d < 0) {
        ASSERT_TRUE(std::isnan(dosage[i]));
      } else {
        ASSERT_EQ(dosage[i], d);
      }
    }
    std::vector<std::byte> payload(e.decoded_size);
    s.read_payload(j, payload);
    EXPECT_EQ(std::memcmp(payload.data(), codes[j].data(), rows / 4), 0);
    s.verify_checksum(j);
  }
  EXPECT_EQ(s.entry(0).flags & column_flag::constant, column_flag::constant);
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, GenotypeStoreTest, ::testing::ValuesIn(all_cases()), case_name);

class FloatStoreTest : public ::testing::TestWithParam<store_case> {};

TEST_P(FloatStoreTest, RoundTripsFloat64AndFloat32) {
  for (value_type type : {value_type::float64, value_type::float32}) {
    test::temp_dir dir;
    const std::uint64_t rows = 157, columns = 5;
    const auto values =
        test::write_float_store(dir / "f.cf", type, rows, columns, GetParam().encoding);
    const store s = store::open(dir / "f.cf", {GetParam().access, true});
    EXPECT_EQ(s.type(), type);
    std::vector<double> stored(rows), z(rows);
    std::vector<float> storedf(rows);
    for (std::size_t j = 0; j < columns; ++j) {
      s.read_column(j, stored, decode_as::stored);
      s.read_column(j, storedf, decode_as::stored);
      s.read_column(j, z, decode_as::standardized);
      const column_stats st = s.entry(j).stats;
      const column_stats expected_stats = dense_stats(values[j]);
      EXPECT_EQ(st.observed, expected_stats.observed);
      EXPECT_EQ(st.mean, expected_stats.mean);
      EXPECT_EQ(st.sd, expected_stats.sd);
      EXPECT_TRUE(std::isnan(st.a1_freq));
      double zz = 0;
      for (std::uint64_t i = 0; i < rows; ++i) {
        const double v = values[j][i];
        if (std::isnan(v)) {
          ASSERT_TRUE(std::isnan(stored[i]));
          ASSERT_EQ(z[i], 0.0);
        } else {
          ASSERT_EQ(stored[i], v) << "column " << j << " row " << i;
          ASSERT_EQ(storedf[i], static_cast<float>(v));
          ASSERT_EQ(z[i], st.sd > 0 ? (v - st.mean) / st.sd : 0.0);
        }
        zz += z[i] * z[i];
      }
      if (st.sd > 0) {
        EXPECT_NEAR(zz, static_cast<double>(rows - 1), 1e-9 * rows);
      }
    }
    EXPECT_EQ(s.entry(1).flags & column_flag::constant, column_flag::constant);
  }
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, FloatStoreTest, ::testing::ValuesIn(all_cases()), case_name);

TEST(StoreTest, StandardizedFloatColumnsAreReturnedAsStored) {
  test::temp_dir dir;
  writer_options o;
  o.rows = 4;
  store_writer w(dir / "s.cf", o, test::numbered_samples(4));
  const std::vector<double> z = {-1.5, 0.5, 0.5, 0.5};
  w.append(encode_float_column(z, value_type::float64, {4, 1.0, 0.5, NAN},
                               column_flag::standardized, {}),
           test::numbered_column(0));
  w.finish();
  const store s = store::open(dir / "s.cf");
  std::vector<double> out(4);
  s.read_column(0, out);
  EXPECT_EQ(out, z);
}

TEST(StoreTest, KeepsSamplesColumnsAndSummary) {
  test::temp_dir dir;
  test::write_genotype_store(dir / "g.cf", 10, 4, {codec_id::none, 0, false});
  const store s = store::open(dir / "g.cf");
  ASSERT_EQ(s.samples().size(), 10u);
  EXPECT_EQ(s.samples()[9].iid, "S10");
  EXPECT_EQ(s.samples()[9].phenotype, "-9");
  ASSERT_EQ(s.columns().size(), 4u);
  EXPECT_EQ(s.columns()[3].id, "rs3");
  EXPECT_EQ(s.columns()[3].pos, "1003");
  const store_summary sum = s.summary();
  EXPECT_EQ(sum.rows, 10u);
  EXPECT_EQ(sum.columns, 4u);
  EXPECT_EQ(sum.columns_per_codec[0], 4u);
  EXPECT_EQ(sum.decoded_bytes, 4u * 3u);
  EXPECT_EQ(sum.data_bytes, 64u + 4u * 3u);
  EXPECT_EQ(sum.index_bytes, 64u + 4u * 72u);
  EXPECT_EQ(sum.source, "test");
}

TEST(StoreTest, ConcurrentReadsGiveTheSameValues) {
  test::temp_dir dir;
  const std::uint64_t rows = 1001, columns = 40;
  test::write_genotype_store(dir / "g.cf", rows, columns, {codec_id::zstd, 3, false});
  for (access_mode a : {access_mode::mmap, access_mode::pread}) {
    const store s = store::open(dir / "g.cf", {a, true});
    std::vector<std::vector<double>> expected(columns, std::vector<double>(rows));
    for (std::size_t j = 0; j < columns; ++j) s.read_column(j, expected[j]);
    std::vector<std::thread> threads;
    std::atomic<int> mismatches{0};
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        std::vector<double> out(rows);
        for (int round = 0; round < 20; ++round)
          for (std::size_t j = 0; j < columns; ++j) {
            const std::size_t col = (j * 7 + static_cast<std::size_t>(t)) % columns;
            s.read_column(col, out);
            if (out != expected[col]) ++mismatches;
          }
      });
    for (auto& t : threads) t.join();
    EXPECT_EQ(mismatches.load(), 0);
  }
}

// Drops the file's pages from the page cache where the file system allows it; whether it did.
bool drop_from_page_cache(const std::filesystem::path& path) {
  const file_descriptor fd = open_read(path);
  ::fdatasync(fd.get());
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
  const mapped_file map(fd, access_hint::normal);
  return map.resident_pages(0, map.bytes().size()).first == 0;
}

TEST(StoreTest, OutOfOrderPassesOutOfThePageCacheArePrefetched) {
  test::temp_dir dir;
  const std::uint64_t rows = 4096 * 4, columns = 64;  // frames of 4 KiB: one page each
  test::write_genotype_store(dir / "g.cf", rows, columns, {codec_id::none, 0, false});
  std::vector<std::size_t> ascending(columns), shuffled(columns), sparse = {3, 40};
  for (std::size_t j = 0; j < columns; ++j) ascending[j] = j, shuffled[j] = (j * 37) % columns;
  std::vector<double> expected(rows), got(rows);
  store::open(dir / "g.cf", {access_mode::pread, true}).read_column(shuffled[1], expected);
  if (!drop_from_page_cache(dir / "g.cf" / "columns.dat"))
    GTEST_SKIP() << "this file system keeps the pages cached";
  const store s = store::open(dir / "g.cf");
  EXPECT_FALSE(s.prepare_pass(ascending));  // left to the system's read-ahead
  EXPECT_TRUE(s.prepare_pass(shuffled));
  EXPECT_TRUE(s.prepare_pass(sparse));
  for (const std::size_t j : shuffled) s.prefetch(j);
  s.read_column(shuffled[1], got);
  EXPECT_EQ(got, expected);  // hints only
  for (std::size_t j = 0; j < columns; ++j) s.read_column(j, got);
  EXPECT_FALSE(s.prepare_pass(shuffled));  // every frame is in the page cache again
  EXPECT_FALSE(store::open(dir / "g.cf", {access_mode::pread, true}).prepare_pass(shuffled));
}

// How many of the pages of [first, end) this process has mapped: the present bit of each in
// /proc/self/pagemap (no read of the data, so no fault and no sanitizer shadow page counts).
std::size_t mapped_pages(const std::byte* first, const std::byte* end) {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  std::size_t present = 0;
  for (auto at = reinterpret_cast<std::uintptr_t>(first) / page;
       at * page < reinterpret_cast<std::uintptr_t>(end); ++at) {
    std::uint64_t entry = 0;
    if (::pread(fd, &entry, sizeof entry, static_cast<off_t>(at * sizeof entry)) ==
            static_cast<ssize_t>(sizeof entry) &&
        (entry >> 63) != 0)
      ++present;
  }
  ::close(fd);
  return present;
}

// map_resident_pages maps what the page cache holds, so that a pass reading it faults on none
// of it, reads nothing else in, and changes no value read.
TEST(StoreTest, PagesInThePageCacheAreMappedAheadAndOthersLeftAlone) {
  test::temp_dir dir;
  const std::uint64_t rows = 4096 * 4, columns = 1024;  // frames of 4 KiB: one page each
  test::write_genotype_store(dir / "g.cf", rows, columns, {codec_id::none, 0, false});
  const store plain = store::open(dir / "g.cf", {access_mode::pread, true});
  std::vector<double> expected(rows), got(rows);
  plain.read_column(700, expected);
  const std::atomic<bool> go{false}, stop{true};
  {
    const store s = store::open(dir / "g.cf");
    for (std::size_t j = 0; j < columns; ++j) plain.read_column(j, got);  // all in the cache
    const std::byte* first = s.mapped_frame(0).data();
    const std::byte* end = s.mapped_frame(columns - 1).data() + s.mapped_frame(columns - 1).size();
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t range = (reinterpret_cast<std::uintptr_t>(end) + page - 1) / page -
                              reinterpret_cast<std::uintptr_t>(first) / page;
    const std::size_t before = mapped_pages(first, end);
    EXPECT_LT(before, range / 4);
    s.map_resident_pages(0, columns - 1, stop);  // returns at once
    EXPECT_EQ(mapped_pages(first, end), before);
    s.map_resident_pages(0, columns - 1, go);
    EXPECT_EQ(mapped_pages(first, end), range);  // every page of the frames, none read
    s.read_column(700, got);
    EXPECT_EQ(got, expected);
  }
  if (!drop_from_page_cache(dir / "g.cf" / "columns.dat"))
    GTEST_SKIP() << "this file system keeps the pages cached";
  const store s = store::open(dir / "g.cf");  // reads the file's header
  const file_descriptor fd = open_read(dir / "g.cf" / "columns.dat");
  const mapped_file map(fd, access_hint::normal);
  const std::uint64_t cached = map.resident_pages(0, map.bytes().size()).first;
  EXPECT_LT(cached, columns / 4);
  s.map_resident_pages(0, columns - 1, go);
  // The pages out of the cache are not read (the system's read-ahead may fetch a few beyond
  // those mapped, as a read of those would).
  EXPECT_LT(map.resident_pages(0, map.bytes().size()).first, cached + 64);
}

// The chromosome runs read apart from the rest of columns.tsv are those of columns(), codes
// normalised as columns() gives them (PLINK 1's 23 is X).
TEST(StoreTest, ChromosomeRunsAreThoseOfTheColumnList) {
  test::temp_dir dir;
  const std::vector<std::string> codes = {"1", "1", "2", "2", "2", "23", "X", "Y", "1"};
  writer_options o;
  o.type = value_type::genotype;
  o.rows = 8;
  store_writer w(dir / "g.cf", o, test::numbered_samples(8));
  const std::vector<std::uint8_t> calls(2);
  for (std::size_t j = 0; j < codes.size(); ++j) {
    column_info c = test::numbered_column(j);
    c.chrom = codes[j];
    w.append(encode_genotype_column(calls, 8, {}), c);
  }
  w.finish();
  const store s = store::open(dir / "g.cf");
  const std::vector<chromosome_run> runs = s.chromosome_runs();
  const std::vector<std::tuple<std::string, std::size_t, std::size_t>> expected = {
      {"1", 0, 2}, {"2", 2, 3}, {"X", 5, 2}, {"Y", 7, 1}, {"1", 8, 1}};
  ASSERT_EQ(runs.size(), expected.size());
  for (std::size_t r = 0; r < runs.size(); ++r) {
    EXPECT_EQ(
        std::tie(runs[r].chrom, runs[r].first, runs[r].count),
        std::tie(std::get<0>(expected[r]), std::get<1>(expected[r]), std::get<2>(expected[r])));
    for (std::size_t j = runs[r].first; j < runs[r].first + runs[r].count; ++j)
      EXPECT_EQ(s.columns()[j].chrom, runs[r].chrom);
  }
  EXPECT_TRUE(store::open(dir / "g.cf").chromosome_runs().size() == runs.size());
}

TEST(StoreTest, RejectsBadReadArguments) {
  test::temp_dir dir;
  test::write_genotype_store(dir / "g.cf", 10, 2, {codec_id::none, 0, false});
  const store s = store::open(dir / "g.cf");
  std::vector<double> wrong(9), right(10);
  EXPECT_THROW(s.read_column(0, wrong), error);
  EXPECT_THROW(s.read_column(2, right), error);
}

TEST(StoreTest, EmptyStoreOpens) {
  test::temp_dir dir;
  writer_options o;
  o.type = value_type::genotype;
  o.rows = 3;
  store_writer w(dir / "e.cf", o, test::numbered_samples(3));
  w.finish();
  const store s = store::open(dir / "e.cf");
  EXPECT_EQ(s.num_columns(), 0u);
  EXPECT_TRUE(s.columns().empty());
}

TEST(StoreWriterTest, RejectsColumnsThatDoNotFit) {
  test::temp_dir dir;
  writer_options o;
  o.type = value_type::genotype;
  o.rows = 8;
  store_writer w(dir / "g.cf", o, test::numbered_samples(8));
  const std::vector<std::uint8_t> codes(3);
  EXPECT_THROW(w.append(encode_genotype_column(codes, 12, {}), test::numbered_column(0)), error);
  column_info tabbed = test::numbered_column(0);
  tabbed.id = "rs\t1";
  EXPECT_THROW(w.append(encode_genotype_column(codes, 8, {}), tabbed), error);
  EXPECT_THROW(store_writer(dir / "x.cf", o, test::numbered_samples(7)), error);
}

TEST(StoreWriterTest, ReplacesAnExistingStoreOnlyOnFinish) {
  test::temp_dir dir;
  test::write_genotype_store(dir / "g.cf", 10, 2, {codec_id::none, 0, false});
  writer_options o;
  o.type = value_type::genotype;
  o.rows = 12;
  o.overwrite = true;
  {
    store_writer w(dir / "g.cf", o, test::numbered_samples(12));
    const std::vector<std::uint8_t> codes(3);
    w.append(encode_genotype_column(codes, 12, {}), test::numbered_column(0));
    EXPECT_EQ(store::open(dir / "g.cf").num_rows(), 10u);  // the old one, intact
    w.finish();
  }
  const store s = store::open(dir / "g.cf");
  EXPECT_EQ(s.num_rows(), 12u);
  EXPECT_EQ(s.num_columns(), 1u);
  // Nothing left behind: only the store in the parent directory.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1);
}

}  // namespace
}  // namespace colflow
