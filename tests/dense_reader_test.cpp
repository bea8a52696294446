// The dense input readers: npy_source (.npy, memory-mapped), matrix_source (a matrix in
// memory) and csv_source (CSV / TSV text). This file tests npy_source; matrix_source and
// csv_source are tested in dense_reader_matrix_test.cpp and dense_reader_csv_test.cpp.
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

#include "dense_reader_fixture.hpp"

namespace colflow::preprocess::dense_reader_tests {
namespace {

// ---------------------------------------------------------------------------------------------
// npy: helpers

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

}  // namespace
}  // namespace colflow::preprocess::dense_reader_tests
