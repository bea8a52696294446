// colflow::verify: a sound store's report, the first damaged frame named, progress.
#include <gtest/gtest.h>

#include "colflow/colflow.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

TEST(VerifyTest, ReportsEveryColumnOfASoundStore) {
  test::temp_dir dir;
  test::write_genotype_store(dir / "g.cf", 101, 30, {codec_id::zstd, 3, false});
  const store s = store::open(dir / "g.cf");
  std::vector<verify_progress> reports;
  const verify_report r = verify(s, [&](const verify_progress& p) { reports.push_back(p); });
  EXPECT_EQ(r.columns, 30u);
  EXPECT_EQ(r.rows, 101u);
  std::uint64_t frames = 0;
  for (std::size_t j = 0; j < 30; ++j) frames += s.entry(j).frame_size;
  EXPECT_EQ(r.frame_bytes, frames);
  EXPECT_GE(r.seconds, 0.0);
  // At least the final report, whole; every report counts up to the total.
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports.back().columns_done, 30u);
  EXPECT_EQ(reports.back().columns_total, 30u);
  EXPECT_EQ(reports.back().frame_bytes, frames);
  for (std::size_t i = 1; i < reports.size(); ++i)
    EXPECT_GT(reports[i].columns_done, reports[i - 1].columns_done);
  EXPECT_EQ(verify(s).columns, 30u);  // no callback
}

TEST(VerifyTest, NamesTheFirstDamagedColumn) {
  test::temp_dir dir;
  const auto path = dir / "f.cf";
  test::write_float_store(path, value_type::float64, 50, 6, {codec_id::lz4, 1, true});
  const column_entry e = store::open(path).entry(3);
  auto data = test::read_file(path / "columns.dat");
  data[e.offset + e.frame_size / 2] ^= 0x20;
  test::write_file(path / "columns.dat", data);
  const store s = store::open(path);
  std::uint64_t done = 0;
  try {
    verify(s, [&](const verify_progress& p) { done = p.columns_done; });
    ADD_FAILURE() << "a damaged frame passed";
  } catch (const error& err) {
    EXPECT_EQ(err.kind(), errc::checksum_mismatch) << err.message();
    EXPECT_NE(err.message().find("column 3"), std::string::npos) << err.message();
  }
  EXPECT_LE(done, 3u);  // nothing reported past the damage
}

}  // namespace
}  // namespace colflow
