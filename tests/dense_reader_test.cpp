// The dense input readers: npy_source (.npy, memory-mapped), matrix_source (a matrix in
// memory) and csv_source (CSV / TSV text).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "colflow/preprocess/csv_source.hpp"
#include "colflow/preprocess/matrix_source.hpp"
#include "colflow/preprocess/npy_source.hpp"
#include "test_support.hpp"

namespace colflow::preprocess {
namespace {

namespace fs = std::filesystem;
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

const fs::path dense_data = fs::path(COLFLOW_TEST_SOURCE_DIR) / "data" / "dense";

// ---------------------------------------------------------------------------------------------
// Helpers

// Runs `f`, which must throw colflow::error with `code` and a message containing `fragment`.
// When `file` is given, the message must also start with "FILE: ".
template <typename F>
::testing::AssertionResult fails_with(F&& f, errc code, const std::string& fragment,
                                      const fs::path& file = {}) {
  try {
    f();
  } catch (const colflow::error& e) {
    if (e.kind() != code)
      return ::testing::AssertionFailure()
             << "error code " << static_cast<int>(e.kind()) << ", expected "
             << static_cast<int>(code) << ": " << e.message();
    if (!file.empty() && !e.message().starts_with(file.string() + ": "))
      return ::testing::AssertionFailure()
             << "message \"" << e.message() << "\" does not start with the file name";
    if (e.message().find(fragment) == std::string::npos)
      return ::testing::AssertionFailure()
             << "message \"" << e.message() << "\" lacks \"" << fragment << "\"";
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no error; expected one with \"" << fragment << "\"";
}

// Bitwise equality, so that NaN == NaN and -0.0 != 0.0.
bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

// Every column of `source` must equal `expected` (expected[j][i] = row i of column j).
void expect_columns(column_source& source, const std::vector<std::vector<double>>& expected) {
  ASSERT_EQ(source.columns(), expected.size());
  for (std::size_t j = 0; j < expected.size(); ++j) {
    ASSERT_EQ(source.rows(), expected[j].size());
    std::vector<double> got(expected[j].size(), -12345.0);
    source.read_values(j, got);
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(same_bits(got[i], expected[j][i])) << "column " << j << " row " << i << ": got "
                                                     << got[i] << ", expected " << expected[j][i];
  }
}

void write_text(const fs::path& p, const std::string& text) {
  test::write_file(p, std::vector<char>(text.begin(), text.end()));
}

// The value at (i, j) of the made-up test matrices: exact in float32, with a NaN at (1, 0).
double cell(std::size_t i, std::size_t j) {
  if (i == 1 && j == 0) return nan;
  return static_cast<double>(i) * 10.0 + static_cast<double>(j) - 2.25;
}

std::vector<std::vector<double>> made_up_columns(std::size_t rows, std::size_t columns,
                                                 bool as_float) {
  std::vector<std::vector<double>> out(columns, std::vector<double>(rows));
  for (std::size_t j = 0; j < columns; ++j)
    for (std::size_t i = 0; i < rows; ++i)
      out[j][i] = as_float ? static_cast<double>(static_cast<float>(cell(i, j))) : cell(i, j);
  return out;
}

// The header dict as numpy writes it.
std::string npy_dict(const std::string& descr, bool fortran, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

// A .npy file byte by byte: magic, version, header length (u16 for 1.0, u32 for 2.0 / 3.0),
// the header padded with spaces and a '\n' to a multiple of 64 bytes (unless `pad` is false),
// then `data`.
std::vector<char> npy_file(int major, std::string header, const std::vector<char>& data,
                           bool pad = true) {
  const std::size_t preamble = major == 1 ? 10 : 12;
  if (pad) {
    header += '\n';
    while ((preamble + header.size()) % 64 != 0) header.insert(header.size() - 1, " ");
  }
  std::vector<char> out = {'\x93', 'N', 'U', 'M', 'P', 'Y', static_cast<char>(major), 0};
  const std::size_t length_bytes = preamble - 8;
  for (std::size_t b = 0; b < length_bytes; ++b)
    out.push_back(static_cast<char>((header.size() >> (8 * b)) & 0xff));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// The made-up matrix as little-endian float32 or float64 bytes, in C or Fortran order.
std::vector<char> matrix_bytes(std::size_t rows, std::size_t columns, std::size_t item_size,
                               bool fortran) {
  std::vector<char> out;
  auto put = [&](double v) {
    char b[8];
    if (item_size == 8) {
      std::memcpy(b, &v, 8);
    } else {
      const auto f = static_cast<float>(v);
      std::memcpy(b, &f, 4);
    }
    out.insert(out.end(), b, b + item_size);
  };
  if (fortran) {
    for (std::size_t j = 0; j < columns; ++j)
      for (std::size_t i = 0; i < rows; ++i) put(cell(i, j));
  } else {
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < columns; ++j) put(cell(i, j));
  }
  return out;
}

std::string shape_of(std::size_t rows, std::size_t columns) {
  return "(" + std::to_string(rows) + ", " + std::to_string(columns) + ")";
}

// A numeric CSV (no header, no IDs) as columns, read with csv_source.
std::vector<std::vector<double>> csv_columns(const fs::path& p) {
  csv_source csv(p, {',', csv_presence::absent, csv_presence::absent});
  std::vector<std::vector<double>> out(csv.columns(), std::vector<double>(csv.rows()));
  for (std::size_t j = 0; j < out.size(); ++j) csv.read_values(j, out[j]);
  return out;
}

// ---------------------------------------------------------------------------------------------
// npy: every layout

// (format version, item size, Fortran order)
using npy_layout = std::tuple<int, std::size_t, bool>;

class NpyLayoutTest : public ::testing::TestWithParam<npy_layout> {};

TEST_P(NpyLayoutTest, ReadsEveryValue) {
  const auto [version, item_size, fortran] = GetParam();
  test::temp_dir dir;
  const std::size_t rows = 11, columns = 7;
  const fs::path p = dir / "m.npy";
  test::write_file(
      p,
      npy_file(version, npy_dict(item_size == 8 ? "<f8" : "<f4", fortran, shape_of(rows, columns)),
               matrix_bytes(rows, columns, item_size, fortran)));
  npy_source npy(p);
  EXPECT_EQ(npy.kind(), value_type::float64);
  EXPECT_EQ(npy.rows(), rows);
  EXPECT_EQ(npy.columns(), columns);
  EXPECT_EQ(npy.item_size(), item_size);
  EXPECT_EQ(npy.fortran_order(), fortran);
  EXPECT_EQ(npy.format_version(), version);
  EXPECT_EQ(npy.description(), "npy file " + p.string() + " (" +
                                   (item_size == 8 ? "float64" : "float32") + ", " +
                                   (fortran ? "Fortran order" : "C order") + ")");
  expect_columns(npy, made_up_columns(rows, columns, item_size == 4));
  // Again, backwards: a C-order source must reload its block.
  std::vector<double> got(rows);
  for (std::size_t j = columns; j-- > 0;) {
    npy.read_values(j, got);
    for (std::size_t i = 0; i < rows; ++i)
      ASSERT_TRUE(same_bits(got[i], made_up_columns(rows, columns, item_size == 4)[j][i]));
  }
  const auto samples = npy.samples();
  ASSERT_EQ(samples.size(), rows);
  EXPECT_EQ(samples.front().fid, "row1");
  EXPECT_EQ(samples.front().iid, "row1");
  EXPECT_EQ(samples.back().iid, "row11");
  EXPECT_EQ(npy.column(0).id, "col1");
  EXPECT_EQ(npy.column(6).id, "col7");
}

std::string layout_name(const ::testing::TestParamInfo<npy_layout>& info) {
  const auto [version, item_size, fortran] = info.param;
  return "V" + std::to_string(version) + (item_size == 8 ? "F8" : "F4") +
         (fortran ? "Fortran" : "C");
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, NpyLayoutTest,
                         ::testing::Combine(::testing::Values(1, 2, 3),
                                            ::testing::Values(std::size_t{4}, std::size_t{8}),
                                            ::testing::Bool()),
                         layout_name);

// ---------------------------------------------------------------------------------------------
// npy: other well-formed files

TEST(NpyReaderTest, ReadsOneDimensionalArrayAsOneColumn) {
  test::temp_dir dir;
  for (const char* descr : {"<f8", "<f4"}) {
    const std::size_t item = descr[2] == '8' ? 8 : 4;
    test::write_file(dir / "v.npy",
                     npy_file(1, npy_dict(descr, false, "(9,)"), matrix_bytes(9, 1, item, true)));
    npy_source npy(dir / "v.npy");
    EXPECT_EQ(npy.rows(), 9u);
    EXPECT_EQ(npy.columns(), 1u);
    EXPECT_TRUE(npy.fortran_order());
    EXPECT_NE(npy.description().find("1-D"), std::string::npos) << npy.description();
    expect_columns(npy, made_up_columns(9, 1, item == 4));
  }
  // A single column of a 2-D C-order matrix is contiguous too; it stays "C order".
  test::write_file(dir / "c.npy",
                   npy_file(1, npy_dict("<f8", false, "(9, 1)"), matrix_bytes(9, 1, 8, false)));
  npy_source npy(dir / "c.npy", {0});
  EXPECT_FALSE(npy.fortran_order());
  EXPECT_NE(npy.description().find("C order"), std::string::npos) << npy.description();
  expect_columns(npy, made_up_columns(9, 1, false));
}

TEST(NpyReaderTest, COrderBlockSizeDoesNotChangeValues) {
  test::temp_dir dir;
  const std::size_t rows = 13, columns = 9;
  test::write_file(dir / "m.npy", npy_file(1, npy_dict("<f8", false, shape_of(rows, columns)),
                                           matrix_bytes(rows, columns, 8, false)));
  const auto expected = made_up_columns(rows, columns, false);
  // 0: one column at a time, gathered straight into the buffer; 2 and 4 columns per block
  // (9 is not a multiple: a short last block); everything in one block.
  for (std::size_t block_columns : {0, 2, 4, 1000}) {
    SCOPED_TRACE("block of " + std::to_string(block_columns) + " columns");
    npy_source npy(dir / "m.npy", {block_columns * rows * sizeof(double)});
    expect_columns(npy, expected);
    // Jumping around, backwards and repeated.
    std::vector<double> got(rows);
    for (std::size_t j : {8, 3, 3, 0, 7, 1, 8}) {
      npy.read_values(j, got);
      for (std::size_t i = 0; i < rows; ++i) ASSERT_TRUE(same_bits(got[i], expected[j][i]));
    }
  }
}

TEST(NpyReaderTest, KeepsSpecialValuesBitForBit) {
  test::temp_dir dir;
  const std::vector<double> values = {nan,  -nan,   std::numeric_limits<double>::infinity(),
                                      -0.0, 5e-324, std::numeric_limits<double>::max()};
  std::vector<char> data(values.size() * 8);
  std::memcpy(data.data(), values.data(), data.size());
  test::write_file(dir / "s.npy", npy_file(1, npy_dict("<f8", true, "(6, 1)"), data));
  npy_source npy(dir / "s.npy");
  expect_columns(npy, {values});
}

TEST(NpyReaderTest, AcceptsHeaderSpellingsNumpyAccepts) {
  test::temp_dir dir;
  const auto data = matrix_bytes(3, 2, 8, false);
  const auto expected = made_up_columns(3, 2, false);
  // Spellings numpy's reader (ast.literal_eval) accepts: other key order, double quotes, no
  // trailing comma, Python 2 long integers, spaces anywhere, tab padding; an unpadded header
  // also leaves the data unaligned, which the reader must not mind.
  const std::vector<std::pair<std::string, bool>> headers = {
      {"{'shape': (3, 2), 'fortran_order': False, 'descr': '<f8'}", true},
      {"{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": (3, 2)}", true},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (3L, 2L), }", true},
      {"{ 'descr' : '<f8' , 'fortran_order' : False , 'shape' : ( 3 , 2 ) , }\t\t\n", false},
      {"{'descr':'<f8','fortran_order':False,'shape':(3,2)}", false},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2)}\n", false},
  };
  for (const auto& [header, pad] : headers) {
    SCOPED_TRACE(header);
    test::write_file(dir / "h.npy", npy_file(1, header, data, pad));
    npy_source npy(dir / "h.npy");
    expect_columns(npy, expected);
  }
}

TEST(NpyReaderTest, ReadsFilesWrittenByNumpy) {
  // Written by tests/data/dense/make_dense_data.py with numpy, next to the same values as text.
  for (const char* name :
       {"numpy_f8_c", "numpy_f4_fortran", "numpy_f8_1d_v3", "numpy_f8_fortran_v2"}) {
    SCOPED_TRACE(name);
    npy_source npy(dense_data / (std::string(name) + ".npy"));
    expect_columns(npy, csv_columns(dense_data / (std::string(name) + ".expected.csv")));
  }
}

TEST(NpyReaderTest, ReadsFilesNumpySavesNow) {
  test::temp_dir dir;
  const std::string script =
      "import numpy as np, numpy.lib.format as f\n"
      "d = '" +
      dir.path().string() +
      "'\n"
      "r = np.random.default_rng(7)\n"
      "a = r.normal(size=(17, 6)); a[3, 4] = np.nan\n"
      "np.save(d + '/c.npy', a)\n"
      "np.savetxt(d + '/c.csv', a, fmt='%.17g', delimiter=',')\n"
      "b = np.asfortranarray(r.normal(size=(5, 3)).astype(np.float32))\n"
      "with open(d + '/f.npy', 'wb') as o: f.write_array(o, b, version=(2, 0))\n"
      "np.savetxt(d + '/f.csv', b.astype(np.float64), fmt='%.17g', delimiter=',')\n"
      "v = r.normal(size=4)\n"
      "with open(d + '/v.npy', 'wb') as o: f.write_array(o, v, version=(3, 0))\n"
      "np.savetxt(d + '/v.csv', v.reshape(4, 1), fmt='%.17g', delimiter=',')\n";
  write_text(dir / "make.py", script);
  // Debian's python3 (with python3-numpy, which scripts/install-deps.sh installs) first: a
  // pyenv or venv python3 earlier on PATH does not see Debian's packages.
  bool ran = false;
  std::string output, tried;
  for (const char* python : {"/usr/bin/python3", "python3"}) {
    const int status =
        test::run_command(std::string(python) + " " + (dir / "make.py").string(), output);
    if (status == 0) {
      ran = true;
      break;
    }
    // Only a missing interpreter (127) or a missing numpy may skip; anything else is a failure.
    ASSERT_TRUE(status == 127 || output.find("No module named 'numpy'") != std::string::npos)
        << python << " exited with " << status << ": " << output;
    tried += std::string(tried.empty() ? "" : ", ") + python;
  }
  if (!ran)
    GTEST_SKIP() << "no python3 with numpy (tried " << tried
                 << "; Debian package python3-numpy): the numpy-written files committed under "
                    "tests/data/dense still cover numpy's output";
  for (const char* name : {"c", "f", "v"}) {
    SCOPED_TRACE(name);
    npy_source npy(dir / (std::string(name) + ".npy"));
    expect_columns(npy, csv_columns(dir / (std::string(name) + ".csv")));
  }
}

TEST(NpyReaderTest, RejectsBadReadArguments) {
  test::temp_dir dir;
  test::write_file(dir / "m.npy",
                   npy_file(1, npy_dict("<f8", false, "(3, 2)"), matrix_bytes(3, 2, 8, false)));
  npy_source npy(dir / "m.npy");
  std::vector<double> ok(3), short_buffer(2);
  EXPECT_TRUE(fails_with([&] { npy.read_values(2, ok); }, errc::invalid_argument,
                         "column 2 is out of range (2 columns)"));
  EXPECT_TRUE(fails_with([&] { npy.read_values(0, short_buffer); }, errc::invalid_argument,
                         "needs a buffer of 3 values, got 2"));
  EXPECT_TRUE(
      fails_with([&] { npy.read_genotypes(0, {}); }, errc::invalid_argument, "holds no genotypes"));
}

// ---------------------------------------------------------------------------------------------
// npy: malformed files, each refused with a message naming the file and the problem

class NpyMalformedTest : public ::testing::Test {
 protected:
  // Writes `bytes` and expects opening them to fail with errc::bad_input and `fragment`.
  ::testing::AssertionResult refused(const std::vector<char>& bytes, const std::string& fragment) {
    test::write_file(path(), bytes);
    return fails_with([&] { npy_source npy(path()); }, errc::bad_input, fragment, path());
  }
  ::testing::AssertionResult refused_header(const std::string& header,
                                            const std::string& fragment) {
    return refused(npy_file(1, header, matrix_bytes(3, 2, 8, false)), fragment);
  }
  fs::path path() const { return dir_ / "bad.npy"; }
  test::temp_dir dir_;
};

TEST_F(NpyMalformedTest, RefusesBadMagic) {
  auto bytes = npy_file(1, npy_dict("<f8", false, "(3, 2)"), matrix_bytes(3, 2, 8, false));
  bytes[1] = 'n';
  EXPECT_TRUE(refused(bytes, "not a .npy file (bad magic"));
  EXPECT_TRUE(refused({'a', ',', 'b', '\n', '1', ',', '2', '\n'}, "bad magic"));
  EXPECT_TRUE(refused({'\x93', 'N', 'U'}, "bad magic"));
}

TEST_F(NpyMalformedTest, RefusesNpzArchive) {
  EXPECT_TRUE(refused({'P', 'K', '\x03', '\x04', 0, 0, 0, 0, 0, 0, 0, 0}, "is a .npz archive"));
}

TEST_F(NpyMalformedTest, RefusesEmptyFile) { EXPECT_TRUE(refused({}, "empty file")); }

TEST_F(NpyMalformedTest, RefusesUnsupportedVersion) {
  auto bytes = npy_file(1, npy_dict("<f8", false, "(3, 2)"), matrix_bytes(3, 2, 8, false));
  bytes[6] = 4;
  EXPECT_TRUE(refused(bytes, "unsupported .npy format version 4.0"));
  bytes[6] = 1;
  bytes[7] = 1;
  EXPECT_TRUE(refused(bytes, "unsupported .npy format version 1.1"));
  bytes[6] = 0;
  bytes[7] = 0;
  EXPECT_TRUE(refused(bytes, "unsupported .npy format version 0.0"));
}

TEST_F(NpyMalformedTest, RefusesTruncatedPreambleAndHeader) {
  EXPECT_TRUE(
      refused({'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0, 10}, "truncated .npy file (9 bytes)"));
  EXPECT_TRUE(refused({'\x93', 'N', 'U', 'M', 'P', 'Y', 2, 0, 10, 0}, "truncated .npy file"));
  auto bytes = npy_file(1, npy_dict("<f8", false, "(3, 2)"), {});
  bytes.resize(40);
  EXPECT_TRUE(
      refused(bytes, "the .npy header of 118 bytes runs past the end of the file (40 bytes)"));
  // A v2 length read as 4 bytes: a huge header.
  auto v2 = npy_file(2, npy_dict("<f8", false, "(3, 2)"), matrix_bytes(3, 2, 8, false));
  v2[11] = '\x7f';
  EXPECT_TRUE(refused(v2, "runs past the end of the file"));
}

TEST_F(NpyMalformedTest, RefusesUnparseableHeader) {
  EXPECT_TRUE(refused_header("descr: <f8", "unparseable .npy header: expected '{'"));
  EXPECT_TRUE(refused_header("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2)",
                             "unparseable .npy header: expected ',' or '}'"));
  EXPECT_TRUE(refused_header("{'descr': '<f8, 'fortran_order': False, 'shape': (3, 2)}",
                             "unparseable .npy header"));
  EXPECT_TRUE(refused_header("{'descr': '<f8', 'fortran_order': false, 'shape': (3, 2)}",
                             "unparseable .npy header: expected a value"));
  EXPECT_TRUE(refused_header("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2)} x",
                             "unexpected text after the closing '}'"));
  EXPECT_TRUE(refused_header("{descr: '<f8'}", "expected a quoted key"));
  EXPECT_TRUE(refused_header("{'shape': (99999999999999999999999, 2)}", "integer too large"));
  EXPECT_TRUE(refused_header("{'shape': " + std::string(100, '(') + "}", "nesting too deep"));
  EXPECT_TRUE(refused_header("{'descr': '<f8', 'fortran_order': False, 'shape': (3 2)}",
                             "expected ',' or ')'"));
}

TEST_F(NpyMalformedTest, RefusesMissingUnknownAndDuplicateKeys) {
  EXPECT_TRUE(refused_header("{'fortran_order': False, 'shape': (3, 2)}", "no 'descr' key"));
  EXPECT_TRUE(refused_header("{'descr': '<f8', 'shape': (3, 2)}", "no 'fortran_order' key"));
  EXPECT_TRUE(refused_header("{'descr': '<f8', 'fortran_order': False}", "no 'shape' key"));
  EXPECT_TRUE(refused_header("{}", "no 'descr' key"));
  EXPECT_TRUE(
      refused_header("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), 'extra': 1}",
                     "unexpected key 'extra'"));
  EXPECT_TRUE(
      refused_header("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (3, 2)}",
                     "duplicate key 'descr'"));
}

TEST_F(NpyMalformedTest, RefusesOtherDtypes) {
  EXPECT_TRUE(refused_header(npy_dict(">f8", false, "(3, 2)"),
                             "big-endian float64 ('>f8') is not supported"));
  EXPECT_TRUE(refused_header(npy_dict(">f4", false, "(3, 4)"),
                             "big-endian float32 ('>f4') is not supported"));
  for (const char* descr : {"<i4", "<i8", "|u1", "|b1", "<f2", "<c16", "|f8", "<U3", "O"})
    EXPECT_TRUE(refused_header(npy_dict(descr, false, "(3, 2)"),
                               "unsupported dtype '" + std::string(descr) + "'"));
  EXPECT_TRUE(refused_header(
      "{'descr': [('a', '<f8'), ('b', '<f8')], 'fortran_order': False, 'shape': (3,)}",
      "unsupported dtype [('a', '<f8'), ('b', '<f8')] (structured arrays are not read"));
}

TEST_F(NpyMalformedTest, RefusesBadOrderAndShape) {
  EXPECT_TRUE(refused_header("{'descr': '<f8', 'fortran_order': 0, 'shape': (3, 2)}",
                             "'fortran_order' is 0, expected True or False"));
  EXPECT_TRUE(refused_header("{'descr': '<f8', 'fortran_order': False, 'shape': [3, 2]}",
                             "'shape' is [3, 2], expected a tuple of integers"));
  EXPECT_TRUE(refused_header("{'descr': '<f8', 'fortran_order': False, 'shape': 6}",
                             "'shape' is 6, expected a tuple"));
  // (6) is the integer 6 in Python, not a tuple.
  EXPECT_TRUE(refused_header("{'descr': '<f8', 'fortran_order': False, 'shape': (6)}",
                             "'shape' is 6, expected a tuple"));
  EXPECT_TRUE(refused_header(npy_dict("<f8", false, "(3, -2)"),
                             "'shape' (3, -2) holds -2, expected non-negative integers"));
  EXPECT_TRUE(refused_header(npy_dict("<f8", false, "(3, 'a')"), "holds 'a'"));
  EXPECT_TRUE(refused_header(npy_dict("<f8", false, "(1, 3, 2)"),
                             "shape (1, 3, 2) is 3-D; expected a 2-D matrix"));
  EXPECT_TRUE(refused_header(npy_dict("<f8", false, "()"), "shape () is 0-D"));
  EXPECT_TRUE(
      refused(npy_file(1, npy_dict("<f8", false, "(0, 2)"), {}), "shape (0, 2) holds no values"));
  EXPECT_TRUE(
      refused(npy_file(1, npy_dict("<f8", false, "(3, 0)"), {}), "shape (3, 0) holds no values"));
  EXPECT_TRUE(
      refused(npy_file(1, npy_dict("<f8", false, "(0,)"), {}), "shape (0,) holds no values"));
  EXPECT_TRUE(refused_header(npy_dict("<f8", false, "(4294967296, 4294967296)"),
                             "is too large (its size overflows 64 bits)"));
}

TEST_F(NpyMalformedTest, RefusesDataOfTheWrongSize) {
  auto data = matrix_bytes(100, 100, 8, false);
  // The last value dropped (erase: resize(size - 8) trips GCC 12's overflow check at -O1).
  data.erase(data.end() - 8, data.end());
  EXPECT_TRUE(refused(npy_file(1, npy_dict("<f8", false, "(100, 100)"), data),
                      "expected 80000 bytes of float64 data for shape (100, 100), found 79992"));
  data = matrix_bytes(5, 1, 4, true);
  data.push_back(0);
  EXPECT_TRUE(refused(npy_file(3, npy_dict("<f4", false, "(5,)"), data),
                      "expected 20 bytes of float32 data for shape (5,), found 21"));
  EXPECT_TRUE(refused(npy_file(1, npy_dict("<f8", false, "(3, 2)"), {}),
                      "expected 48 bytes of float64 data for shape (3, 2), found 0"));
}

TEST(NpyReaderTest, ReportsMissingFilesAndDirectories) {
  test::temp_dir dir;
  EXPECT_TRUE(
      fails_with([&] { npy_source npy(dir / "absent.npy"); }, errc::not_found, "absent.npy"));
  EXPECT_TRUE(
      fails_with([&] { npy_source npy(dir.path()); }, errc::bad_input, "not a regular file"));
}

// ---------------------------------------------------------------------------------------------
// matrix_source: a matrix in memory, any layout

// A rows x columns matrix of cell() values inside a larger buffer, with element (i, j) at
// byte offset origin + i * row_stride + j * column_stride (strides in items here).
struct strided_matrix {
  std::vector<std::byte> bytes;
  matrix_view view;
};

strided_matrix make_matrix(std::size_t rows, std::size_t columns, std::size_t item,
                           std::ptrdiff_t row_step, std::ptrdiff_t column_step) {
  // Room for every offset, with the origin placed so that negative steps stay inside.
  const auto r = static_cast<std::ptrdiff_t>(rows) - 1,
             c = static_cast<std::ptrdiff_t>(columns) - 1;
  const std::ptrdiff_t low =
      std::min<std::ptrdiff_t>(0, r * row_step) + std::min<std::ptrdiff_t>(0, c * column_step);
  const std::ptrdiff_t high =
      std::max<std::ptrdiff_t>(0, r * row_step) + std::max<std::ptrdiff_t>(0, c * column_step);
  strided_matrix m;
  // One spare byte in front: every value is then unaligned.
  m.bytes.assign(static_cast<std::size_t>(high - low + 1) * item + 1, std::byte{0x7f});
  const std::ptrdiff_t origin = 1 - low * static_cast<std::ptrdiff_t>(item);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < columns; ++j) {
      const std::ptrdiff_t at = origin + (static_cast<std::ptrdiff_t>(i) * row_step +
                                          static_cast<std::ptrdiff_t>(j) * column_step) *
                                             static_cast<std::ptrdiff_t>(item);
      const double v = cell(i, j);
      const float f = static_cast<float>(v);
      std::memcpy(m.bytes.data() + at, item == 8 ? static_cast<const void*>(&v) : &f, item);
    }
  m.view.data = m.bytes.data() + origin;
  m.view.rows = rows;
  m.view.columns = columns;
  m.view.item_size = item;
  m.view.row_stride = row_step * static_cast<std::ptrdiff_t>(item);
  m.view.column_stride = column_step * static_cast<std::ptrdiff_t>(item);
  return m;
}

TEST(MatrixSourceTest, ReadsEveryLayoutAndBlockSize) {
  const std::size_t rows = 13, columns = 9;
  const auto r = static_cast<std::ptrdiff_t>(rows), c = static_cast<std::ptrdiff_t>(columns);
  // Fortran, C, every other row and column of larger matrices, rows and columns reversed.
  const std::vector<std::pair<std::ptrdiff_t, std::ptrdiff_t>> layouts = {
      {1, r}, {c, 1}, {2, 2 * r + 3}, {2 * c, 2}, {-c, 1}, {1, -r}, {-1, -r}};
  for (const std::size_t item : {std::size_t{8}, std::size_t{4}})
    for (const auto& [row_step, column_step] : layouts)
      for (std::size_t block_columns : {0, 2, 4, 1000}) {
        SCOPED_TRACE("item " + std::to_string(item) + ", steps " + std::to_string(row_step) + " " +
                     std::to_string(column_step) + ", block " + std::to_string(block_columns));
        const strided_matrix m = make_matrix(rows, columns, item, row_step, column_step);
        matrix_options o;
        o.block_bytes = block_columns * rows * sizeof(double);
        matrix_source source(m.view, o);
        EXPECT_EQ(source.contiguous_columns(), row_step == 1);
        const auto expected = made_up_columns(rows, columns, item == 4);
        expect_columns(source, expected);
        std::vector<double> got(rows);
        for (std::size_t j : {8, 3, 3, 0, 7, 1, 8}) {
          source.read_values(j, got);
          for (std::size_t i = 0; i < rows; ++i) ASSERT_TRUE(same_bits(got[i], expected[j][i]));
        }
      }
}

TEST(MatrixSourceTest, NamesSamplesAndColumnsAsGivenOrAsNpySourceDoes) {
  const strided_matrix m = make_matrix(3, 2, 8, 2, 1);
  matrix_source unnamed(m.view);
  EXPECT_EQ(unnamed.kind(), value_type::float64);
  EXPECT_EQ(unnamed.description(), "matrix in memory (float64, C order)");
  ASSERT_EQ(unnamed.samples().size(), 3u);
  EXPECT_EQ(unnamed.samples()[2].fid, "row3");
  EXPECT_EQ(unnamed.samples()[2].iid, "row3");
  EXPECT_EQ(unnamed.samples()[2].phenotype, "-9");
  EXPECT_EQ(unnamed.column(1).id, "col2");
  EXPECT_EQ(unnamed.column(1).chrom, "");

  matrix_options o;
  o.samples = {{"f1", "a", "0", "0", "1", "2.5"},
               {"f1", "b", "0", "0", "2", "-9"},
               {"c", "c", "0", "0", "0", "-9"}};
  o.column_ids = {"x", "y"};
  o.description = "my matrix";
  matrix_source named(m.view, o);
  EXPECT_EQ(named.samples()[0].sex, "1");
  EXPECT_EQ(named.samples()[1].iid, "b");
  EXPECT_EQ(named.column(0).id, "x");
  EXPECT_EQ(named.column(1).id, "y");
  EXPECT_EQ(named.description(), "my matrix");
  std::vector<double> column(3);
  EXPECT_TRUE(fails_with([&] { named.read_values(2, column); }, errc::invalid_argument,
                         "my matrix: column 2 is out of range"));
}

TEST(MatrixSourceTest, RefusesBadShapesAndNames) {
  const strided_matrix m = make_matrix(3, 2, 8, 2, 1);
  matrix_view v = m.view;
  v.item_size = 2;
  EXPECT_TRUE(fails_with([&] { matrix_source s(v); }, errc::invalid_argument, "2-byte items"));
  v = m.view;
  v.rows = 0;
  EXPECT_TRUE(fails_with([&] { matrix_source s(v); }, errc::invalid_argument, "one row"));
  v = m.view;
  v.data = nullptr;
  EXPECT_TRUE(fails_with([&] { matrix_source s(v); }, errc::invalid_argument, "one row"));
  matrix_options o;
  o.column_ids = {"x"};
  EXPECT_TRUE(fails_with([&] { matrix_source s(m.view, o); }, errc::invalid_argument,
                         "1 column names for a matrix of 2 columns"));
  o.column_ids = {"x", "y z"};
  EXPECT_TRUE(fails_with([&] { matrix_source s(m.view, o); }, errc::invalid_argument,
                         "column 2 'y z' holds whitespace"));
  o.column_ids = {"", "y"};
  EXPECT_TRUE(
      fails_with([&] { matrix_source s(m.view, o); }, errc::invalid_argument, "empty name"));
  o.column_ids.clear();
  o.samples = {{"a", "a", "0", "0", "0", "-9"}};
  EXPECT_TRUE(fails_with([&] { matrix_source s(m.view, o); }, errc::invalid_argument,
                         "1 samples named for a matrix of 3 rows"));
  o.samples = {{"a", "a", "0", "0", "0", "-9"},
               {"b", "b\t", "0", "0", "0", "-9"},
               {"c", "c", "0", "0", "0", "-9"}};
  EXPECT_TRUE(fails_with([&] { matrix_source s(m.view, o); }, errc::invalid_argument,
                         "the IID of sample 2"));
}

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
}  // namespace colflow::preprocess
