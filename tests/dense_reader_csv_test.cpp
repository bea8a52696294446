// The dense input reader csv_source: CSV and TSV text with or without a header and sample IDs,
// as detected or as told, missing values and number spellings, quoted fields, files R and
// pandas write, and malformed text refused by name.
#include <gtest/gtest.h>

#include <limits>

#include "dense_reader_fixture.hpp"

namespace colflow::preprocess::dense_reader_tests {
namespace {

// ---------------------------------------------------------------------------------------------
// CSV

std::vector<std::string> sample_ids(const csv_source& csv) {
  std::vector<std::string> out;
  for (const auto& s : csv.samples()) {
    EXPECT_EQ(s.fid, s.iid);
    out.push_back(s.iid);
  }
  return out;
}

std::vector<std::string> column_ids(const csv_source& csv) {
  std::vector<std::string> out;
  for (std::uint64_t j = 0; j < csv.columns(); ++j) out.push_back(csv.column(j).id);
  return out;
}

using names = std::vector<std::string>;

class CsvReaderTest : public ::testing::Test {
 protected:
  fs::path write(const std::string& text, const std::string& name = "m.csv") {
    write_text(dir_ / name, text);
    return dir_ / name;
  }
  ::testing::AssertionResult refused(const std::string& text, const std::string& fragment,
                                     const csv_options& options = {}) {
    const fs::path p = write(text);
    return fails_with([&] { csv_source csv(p, options); }, errc::bad_input, fragment, p);
  }
  test::temp_dir dir_;
};

TEST_F(CsvReaderTest, ReadsHeaderAndIds) {
  csv_source csv(write("id,height,weight\nS1,1.5,60\nS2,1.75,NA\nS3,,72.5\n"));
  EXPECT_EQ(csv.kind(), value_type::float64);
  EXPECT_TRUE(csv.has_header());
  EXPECT_TRUE(csv.has_ids());
  EXPECT_EQ(csv.delimiter(), ',');
  EXPECT_EQ(sample_ids(csv), (names{"S1", "S2", "S3"}));
  EXPECT_EQ(column_ids(csv), (names{"height", "weight"}));
  expect_columns(csv, {{1.5, 1.75, nan}, {60, nan, 72.5}});
  EXPECT_EQ(csv.description(), "CSV file " + (dir_ / "m.csv").string());
  EXPECT_EQ(csv.samples().front().father, "0");
}

TEST_F(CsvReaderTest, ReadsTabsWithoutHeaderOrIds) {
  csv_source csv(write("1\t2\t3\n4\t5\t6\n"));
  EXPECT_FALSE(csv.has_header());
  EXPECT_FALSE(csv.has_ids());
  EXPECT_EQ(csv.delimiter(), '\t');
  EXPECT_EQ(sample_ids(csv), (names{"row1", "row2"}));
  EXPECT_EQ(column_ids(csv), (names{"col1", "col2", "col3"}));
  expect_columns(csv, {{1, 4}, {2, 5}, {3, 6}});
}

TEST_F(CsvReaderTest, ReadsHeaderWithoutIds) {
  csv_source csv(write("a\tb\n1\t2\n-3\t4e2\n"));
  EXPECT_TRUE(csv.has_header());
  EXPECT_FALSE(csv.has_ids());
  EXPECT_EQ(column_ids(csv), (names{"a", "b"}));
  EXPECT_EQ(sample_ids(csv), (names{"row1", "row2"}));
  expect_columns(csv, {{1, -3}, {2, 400}});
}

TEST_F(CsvReaderTest, ReadsIdsWithoutHeader) {
  csv_source csv(write("S1,1,2\nS2,3,4\n"));
  EXPECT_FALSE(csv.has_header());
  EXPECT_TRUE(csv.has_ids());
  EXPECT_EQ(sample_ids(csv), (names{"S1", "S2"}));
  EXPECT_EQ(column_ids(csv), (names{"col1", "col2"}));
  expect_columns(csv, {{1, 3}, {2, 4}});
  // IDs that only become non-numeric further down are still IDs.
  csv_source late(write("1001,1,2\n1002,3,4\nF3,5,6\n"));
  EXPECT_TRUE(late.has_ids());
  EXPECT_EQ(sample_ids(late), (names{"1001", "1002", "F3"}));
  expect_columns(late, {{1, 3, 5}, {2, 4, 6}});
}

TEST_F(CsvReaderTest, DetectsHeaderNamingOnlyTheIdColumn) {
  // A single column with a name: the lone non-numeric first field is a header.
  csv_source single(write("bmi\n21.5\n30\n"));
  EXPECT_TRUE(single.has_header());
  EXPECT_FALSE(single.has_ids());
  EXPECT_EQ(column_ids(single), (names{"bmi"}));
  expect_columns(single, {{21.5, 30}});
}

TEST_F(CsvReaderTest, HonoursExplicitOptions) {
  // Numeric column names and numeric IDs look like data unless told otherwise.
  const auto p = write("0,1990,2000\n7,1.5,2.5\n8,3.5,4.5\n");
  csv_source detected(p);
  EXPECT_FALSE(detected.has_header());
  EXPECT_FALSE(detected.has_ids());
  EXPECT_EQ(detected.columns(), 3u);
  csv_source told(p, {'\0', csv_presence::present, csv_presence::present});
  EXPECT_TRUE(told.has_header());
  EXPECT_TRUE(told.has_ids());
  EXPECT_EQ(column_ids(told), (names{"1990", "2000"}));
  EXPECT_EQ(sample_ids(told), (names{"7", "8"}));
  expect_columns(told, {{1.5, 3.5}, {2.5, 4.5}});
  // A header the detection would take, read as data on request: 'x' is then taken for a
  // sample ID, and 'y' is not a number.
  EXPECT_TRUE(refused("x,y\n1,2\n", "line 1, column 2: 'y' is not a number",
                      {'\0', csv_presence::absent, csv_presence::detect}));
  EXPECT_TRUE(refused("x,y\n1,2\n", "line 1, column 1: 'x' is not a number",
                      {'\0', csv_presence::absent, csv_presence::absent}));
  // IDs refused: a lone non-numeric first field is then a header, and 'S2' is not a number.
  EXPECT_TRUE(refused("S1,1\nS2,2\n", "line 2, column 1: 'S2' is not a number",
                      {'\0', csv_presence::detect, csv_presence::absent}));
}

TEST_F(CsvReaderTest, HonoursExplicitDelimiter) {
  csv_source csv(write("id;a;b\nS1;1;2.5\n"), {';', csv_presence::detect, csv_presence::detect});
  EXPECT_EQ(csv.delimiter(), ';');
  EXPECT_EQ(column_ids(csv), (names{"a", "b"}));
  expect_columns(csv, {{1}, {2.5}});
  EXPECT_TRUE(refused("id;a\nS1;2,5\n", "line 2, column 2: '2,5' is not a number",
                      {';', csv_presence::detect, csv_presence::detect}));
  EXPECT_TRUE(fails_with([&] { csv_source bad(write("1\n"), {'"'}); }, errc::invalid_argument,
                         "delimiter"));
  // The option is checked before the file is opened: a missing file with a bad delimiter is
  // refused for its delimiter.
  EXPECT_TRUE(fails_with([&] { csv_source bad(dir_ / "missing.csv", {' '}); },
                         errc::invalid_argument, "delimiter"));
  // A comma override on a tab file: each line is one field, the first a header name that a
  // store cannot keep.
  EXPECT_TRUE(refused("a\tb\n1\t2\n", "line 1, column 1: column name 'a\tb' holds a tab", {','}));
  EXPECT_TRUE(refused("1\t2\n3\t4\n", "line 1, column 1: '1\t2' is not a number",
                      {',', csv_presence::absent, csv_presence::detect}));
}

TEST_F(CsvReaderTest, HandlesLineEndings) {
  const auto expected = std::vector<std::vector<double>>{{1, 3}, {2, 4}};
  for (const char* text : {"a,b\r\n1,2\r\n3,4\r\n", "a,b\r\n1,2\r\n3,4", "a,b\n1,2\n3,4",
                           "a,b\n1,2\n3,4\n\n\n", "a,b\r\n1,2\r\n3,4\r\n\r\n",
                           "\xEF\xBB\xBF"
                           "a,b\n1,2\n3,4\n"}) {
    SCOPED_TRACE(text);
    csv_source csv(write(text));
    EXPECT_EQ(column_ids(csv), (names{"a", "b"}));
    expect_columns(csv, expected);
  }
}

TEST_F(CsvReaderTest, ReadsMissingValuesAndNumberSpellings) {
  const double inf = std::numeric_limits<double>::infinity();
  csv_source csv(
      write("a,b,c,d,e\n,NA,NaN,nan,\n+1.5, 2 ,-inf,1e-400,-1e-400\n"
            "1E3,-0,.5,5.,1e-310\n"));
  EXPECT_FALSE(csv.has_ids());
  // 1e-400 underflows to zero (as strtod and numpy read it); 1e-310 stays subnormal.
  expect_columns(
      csv,
      {{nan, 1.5, 1000}, {nan, 2, -0.0}, {nan, -inf, 0.5}, {nan, 0.0, 5}, {nan, -0.0, 1e-310}});
  EXPECT_TRUE(refused("a\n0x1\n", "line 2, column 1: '0x1' is not a number"));
  EXPECT_TRUE(refused("a\n+\n", "line 2, column 1: '+' is not a number"));
  EXPECT_TRUE(refused("a\n+-1\n", "line 2, column 1: '+-1' is not a number"));
}

TEST_F(CsvReaderTest, RefusesRaggedRows) {
  EXPECT_TRUE(refused("a,b,c\n1,2,3\n4,5\n", "line 3 has 2 fields, expected 3"));
  EXPECT_TRUE(refused("a,b,c\n1,2,3\n4,5,6,7\n", "line 3 has 4 fields, expected 3"));
  EXPECT_TRUE(refused("1,2,3\n4,5,6\n\n7,8,9\n", "line 3 has 1 field, expected 3"));
  EXPECT_TRUE(refused("a,b,c,d,e,f\n1,2,3,4,5,6\n" + std::string("1,2,3,4,5,6\n") + "1,2,3,4,5\n",
                      "line 4 has 5 fields, expected 6"));
  // Tabs in a comma file are not separators.
  EXPECT_TRUE(refused("1,2\n3\t4\n", "line 2 has 1 field, expected 2"));
}

TEST_F(CsvReaderTest, RefusesNonNumericValues) {
  EXPECT_TRUE(
      refused("id,a,b,c\nS1,1,2,3\nS2,1,2,abc\n", "line 3, column 4: 'abc' is not a number"));
  EXPECT_TRUE(refused("a,b\n1,2\n3,4x\n", "line 3, column 2: '4x' is not a number"));
  EXPECT_TRUE(refused("a,b\n1,2\n3,1,5\n", "line 3 has 3 fields, expected 2"));
  EXPECT_TRUE(refused("a,b\n1,2\n3,1e400\n", "line 3, column 2: '1e400' is out of the range"));
  EXPECT_TRUE(refused("a,b\n1,2\n3,NULL\n", "line 3, column 2: 'NULL' is not a number"));
  EXPECT_TRUE(refused("a,b\n1,2\n3," + std::string(100, 'z') + "\n",
                      "'" + std::string(40, 'z') + "...' is not a number"));
}

TEST_F(CsvReaderTest, RefusesEmptyAndHeaderOnlyFiles) {
  EXPECT_TRUE(refused("", "empty file"));
  EXPECT_TRUE(refused("\n\r\n\n", "empty file"));
  EXPECT_TRUE(refused("\xEF\xBB\xBF", "empty file"));
  EXPECT_TRUE(refused("a,b,c\n", "no data rows (only a header line)"));
  EXPECT_TRUE(refused("1,2\n", "no data rows", {'\0', csv_presence::present}));
  // One field per line is never detected as an ID column: S1 is a header, S2 a bad value.
  EXPECT_TRUE(refused("S1\nS2\n", "line 2, column 1: 'S2' is not a number"));
  EXPECT_TRUE(refused("1\n2\n", "no data columns (only the sample ID column)",
                      {'\0', csv_presence::detect, csv_presence::present}));
}

TEST_F(CsvReaderTest, RefusesBadIdsAndQuotes) {
  EXPECT_TRUE(refused("id,a\nS1,1\n,2\n", "line 3: empty sample ID",
                      {'\0', csv_presence::detect, csv_presence::present}));
  EXPECT_TRUE(refused("id,a\n\"S 1\",1\n", "line 2: sample ID 'S 1' holds whitespace"));
  EXPECT_TRUE(refused("id,a\nS1,\"1\n", "line 2, column 2: unterminated quoted field"));
  EXPECT_TRUE(refused("id,a\nS1,\"1\"2\n", "line 2, column 2: text after the closing quote"));
  EXPECT_TRUE(refused("id,\"a\tb\"\nS1,1\n",
                      "line 1, column 2: column name 'a\tb' holds a tab or line break"));
}

TEST_F(CsvReaderTest, ReadsQuotedFields) {
  csv_source csv(write("\"id\",\"a, b\",\"say \"\"hi\"\"\", \"c\" \n\"S1\",\"1.5\",2, 3\n"));
  EXPECT_EQ(column_ids(csv), (names{"a, b", "say \"hi\"", "c"}));
  EXPECT_EQ(sample_ids(csv), (names{"S1"}));
  expect_columns(csv, {{1.5}, {2}, {3}});
}

TEST_F(CsvReaderTest, ReadsWhatRAndPandasWrite) {
  // write.csv(df): a "" corner cell above quoted row names.
  csv_source r_csv(dense_data / "r_write_csv.csv");
  EXPECT_TRUE(r_csv.has_header());
  EXPECT_TRUE(r_csv.has_ids());
  EXPECT_EQ(sample_ids(r_csv), (names{"1", "2", "3"}));
  EXPECT_EQ(column_ids(r_csv), (names{"V1", "V2", "V3"}));
  expect_columns(r_csv, {{0.5, 1, nan}, {nan, 2.5, 0}, {-1.25, 3, 1e-04}});
  // write.table(df, sep = "\t"): no corner cell, one name fewer than fields.
  csv_source r_table(dense_data / "r_write_table.tsv");
  EXPECT_TRUE(r_table.has_header());
  EXPECT_TRUE(r_table.has_ids());
  EXPECT_EQ(sample_ids(r_table), (names{"s1", "s2"}));
  EXPECT_EQ(column_ids(r_table), (names{"x1", "x2"}));
  expect_columns(r_table, {{0.1, nan}, {0.2, -3}});
  // df.to_csv() (with CRLF): an empty corner above the numeric index, empty fields missing.
  csv_source pandas(dense_data / "pandas_to_csv.csv");
  EXPECT_TRUE(pandas.has_ids());
  EXPECT_EQ(sample_ids(pandas), (names{"0", "1"}));
  EXPECT_EQ(column_ids(pandas), (names{"a", "b", "c"}));
  expect_columns(pandas, {{1, -2}, {nan, 4}, {3.5, nan}});
}

TEST_F(CsvReaderTest, NamesEmptyHeaderFields) {
  csv_source csv(write("a,,c\n1,2,3\n"), {'\0', csv_presence::present, csv_presence::absent});
  EXPECT_EQ(column_ids(csv), (names{"a", "col2", "c"}));
}

TEST_F(CsvReaderTest, RejectsBadReadArgumentsAndMissingFiles) {
  csv_source csv(write("1,2\n3,4\n"));
  std::vector<double> ok(2), wrong(3);
  EXPECT_TRUE(fails_with([&] { csv.read_values(2, ok); }, errc::invalid_argument,
                         "column 2 is out of range (2 columns)"));
  EXPECT_TRUE(fails_with([&] { csv.read_values(0, wrong); }, errc::invalid_argument,
                         "needs a buffer of 2 values, got 3"));
  EXPECT_TRUE(
      fails_with([&] { csv_source absent(dir_ / "absent.csv"); }, errc::not_found, "absent.csv"));
  EXPECT_TRUE(
      fails_with([&] { csv_source d(dir_.path()); }, errc::bad_input, "not a regular file"));
}

}  // namespace
}  // namespace colflow::preprocess::dense_reader_tests
