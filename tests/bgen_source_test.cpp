// The BGEN reader (preprocess/bgen_source.cpp): files written by plink2 against the .bed they
// came from and against plink2's own decoding, hand-made files for what plink2 does not write
// (phased and haploid probabilities, odd bit depths), malformed files that must be refused by
// name, and two-step reads (fetch in order, decode on several threads) equal to read_dosages.
#include "colflow/preprocess/bgen_source.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <thread>
#include <tuple>

#include "colflow/codec/codec.hpp"
#include "colflow/codec/dosage_codec.hpp"
#include "colflow/codec/genotype_codec.hpp"
#include "colflow/preprocess/bed_source.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow {
namespace {

using preprocess::bgen_options;
using preprocess::bgen_source;

bgen_options options(const std::filesystem::path& bgen, const std::filesystem::path& sample = {},
                     bool ref_first = false) {
  bgen_options o;
  o.bgen = bgen;
  o.sample = sample;
  o.ref_first = ref_first;
  return o;
}

// ---- Hand-made BGEN files ----------------------------------------------------------------

struct crafted_variant {
  std::string id, rsid = "rs1", chrom = "1";
  std::uint32_t pos = 1;
  std::vector<std::string> alleles{"A", "G"};
  // Layout 2: one byte per sample (bit 7 missing, low 6 bits ploidy), the stored values.
  // Layout 1: `values` holds three 16-bit probabilities per sample.
  std::vector<std::uint8_t> ploidy;
  bool phased = false;
  unsigned bits = 8;
  std::vector<std::uint64_t> values;
  std::int64_t declared_size_delta = 0;  // added to D, the declared decompressed size
};

struct crafted_bgen {
  int layout = 2;
  unsigned compression = 1;  // 0 none, 1 zlib, 2 zstd
  bool sample_ids = true;
  std::vector<std::string> samples;
  std::vector<crafted_variant> variants;
};

void put16(std::vector<char>& out, std::uint64_t v) {
  for (int i = 0; i < 2; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put32(std::vector<char>& out, std::uint64_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_bytes(std::vector<char>& out, const std::vector<char>& bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}
void put_text16(std::vector<char>& out, const std::string& s) {
  put16(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}
void put_text32(std::vector<char>& out, const std::string& s) {
  put32(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

std::vector<char> compress(unsigned compression, const std::vector<char>& payload) {
  std::vector<std::byte> frame;
  compress_frame(compression == 1 ? codec_id::zlib : codec_id::zstd, 1,
                 std::as_bytes(std::span(payload)), frame);
  std::vector<char> out(frame.size());
  std::memcpy(out.data(), frame.data(), frame.size());
  return out;
}

std::vector<char> build(const crafted_bgen& b) {
  const std::size_t n = b.samples.size();
  std::vector<char> id_block;
  if (b.sample_ids) {
    std::vector<char> body;
    put32(body, n);
    for (const auto& s : b.samples) put_text16(body, s);
    put32(id_block, body.size() + 4);
    put_bytes(id_block, body);
  }
  std::vector<char> out;
  put32(out, 20 + id_block.size());
  put32(out, 20);
  put32(out, b.variants.size());
  put32(out, n);
  out.insert(out.end(), {'b', 'g', 'e', 'n'});
  put32(out,
        b.compression | (static_cast<unsigned>(b.layout) << 2) | (b.sample_ids ? 1u << 31 : 0u));
  put_bytes(out, id_block);
  for (const auto& v : b.variants) {
    if (b.layout == 1) put32(out, n);
    put_text16(out, v.id);
    put_text16(out, v.rsid);
    put_text16(out, v.chrom);
    put32(out, v.pos);
    if (b.layout == 1) {
      put_text32(out, v.alleles.at(0));
      put_text32(out, v.alleles.at(1));
      std::vector<char> data;
      for (std::uint64_t x : v.values) put16(data, x);
      if (b.compression == 0) {
        put_bytes(out, data);
      } else {
        const auto frame = compress(b.compression, data);
        put32(out, frame.size());
        put_bytes(out, frame);
      }
      continue;
    }
    put16(out, v.alleles.size());
    for (const auto& a : v.alleles) put_text32(out, a);
    std::vector<char> data;
    put32(data, n);
    put16(data, v.alleles.size());
    std::uint8_t lo = 63, hi = 0;
    for (auto p : v.ploidy) {
      lo = std::min<std::uint8_t>(lo, p & 63);
      hi = std::max<std::uint8_t>(hi, p & 63);
    }
    data.push_back(static_cast<char>(lo));
    data.push_back(static_cast<char>(hi));
    for (auto p : v.ploidy) data.push_back(static_cast<char>(p));
    data.push_back(v.phased ? 1 : 0);
    data.push_back(static_cast<char>(v.bits));
    std::vector<char> packed((v.values.size() * v.bits + 7) / 8, 0);
    for (std::size_t i = 0; i < v.values.size(); ++i)
      for (unsigned k = 0; k < v.bits; ++k)
        if ((v.values[i] >> k) & 1) {
          const std::size_t bit = i * v.bits + k;
          packed[bit / 8] = static_cast<char>(packed[bit / 8] | (1 << (bit % 8)));
        }
    put_bytes(data, packed);
    if (b.compression == 0) {
      put32(out, data.size());
      put_bytes(out, data);
    } else {
      const auto frame = compress(b.compression, data);
      put32(out, frame.size() + 4);
      put32(out, static_cast<std::uint64_t>(static_cast<std::int64_t>(data.size()) +
                                            v.declared_size_delta));
      put_bytes(out, frame);
    }
  }
  return out;
}

// `n` samples s0..s(n-1), and `m` unphased diploid 8-bit variants rs0..rs(m-1) whose sample i
// has P(AA) = i, P(AB) = j.
crafted_bgen small_bgen(std::size_t n = 5, std::size_t m = 3) {
  crafted_bgen b;
  for (std::size_t i = 0; i < n; ++i)
    b.samples.push_back(std::string("s").append(std::to_string(i)));
  for (std::size_t j = 0; j < m; ++j) {
    crafted_variant v;
    v.rsid = "rs" + std::to_string(j);
    v.pos = static_cast<std::uint32_t>(100 + j);
    for (std::size_t i = 0; i < n; ++i) {
      v.ploidy.push_back(2);
      v.values.push_back(i);
      v.values.push_back(j);
    }
    b.variants.push_back(v);
  }
  return b;
}

void write_sample_file(const std::filesystem::path& file, const std::vector<std::string>& ids) {
  std::ofstream out(file);
  out << "ID_1 ID_2 missing sex\n0 0 0 D\n";
  for (std::size_t i = 0; i < ids.size(); ++i)
    out << "f" << ids[i] << " " << ids[i] << " 0 " << (i % 3) << "\n";
}

// Every column of a source.
std::vector<std::vector<std::uint16_t>> read_all(bgen_source& source) {
  std::vector<std::vector<std::uint16_t>> columns(source.columns());
  for (std::uint64_t j = 0; j < source.columns(); ++j) {
    columns[j].resize(source.rows());
    source.read_dosages(j, columns[j]);
  }
  return columns;
}

// One column's outcome: its dosages, or the message of the error reading it threw.
struct column_outcome {
  std::vector<std::uint16_t> dosages;
  std::string error;
  bool operator==(const column_outcome&) const = default;
};

void PrintTo(const column_outcome& c, std::ostream* os) {
  *os << (c.error.empty() ? std::to_string(c.dosages.size()) + " dosages" : "error: " + c.error);
}

// Every column read with read_dosages, in order.
std::vector<column_outcome> read_outcomes(bgen_source& source) {
  std::vector<column_outcome> out(source.columns());
  for (std::uint64_t j = 0; j < source.columns(); ++j) {
    out[j].dosages.resize(source.rows());
    try {
      source.read_dosages(j, out[j].dosages);
    } catch (const error& e) {
      out[j] = {{}, e.message()};
    }
  }
  return out;
}

// Every column read in two steps, as the converter reads them: fetched in order on this thread,
// then decoded by `threads` threads at once, taking the columns in a shuffled order.
std::vector<column_outcome> decode_outcomes(const std::shared_ptr<bgen_source>& source,
                                            unsigned threads, std::uint64_t seed) {
  const std::uint64_t m = source->columns();
  std::vector<column_outcome> out(m);
  std::vector<std::unique_ptr<preprocess::column_source::fetched>> raw(m);
  for (std::uint64_t j = 0; j < m; ++j) {
    try {
      raw[j] = source->fetch(j);
      EXPECT_NE(raw[j], nullptr) << j;
    } catch (const error& e) {
      out[j].error = e.message();
    }
  }
  std::vector<std::uint64_t> order(m);
  std::iota(order.begin(), order.end(), std::uint64_t{0});
  std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
  std::atomic<std::size_t> next{0};
  const bgen_source& decoder = *source;  // decode_dosages is const
  auto work = [&] {
    for (std::size_t k; (k = next.fetch_add(1)) < m;) {
      const std::uint64_t j = order[k];
      if (!raw[j]) continue;
      out[j].dosages.resize(decoder.rows());
      try {
        decoder.decode_dosages(*raw[j], out[j].dosages);
      } catch (const error& e) {
        out[j] = {{}, e.message()};
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
  for (auto& t : pool) t.join();
  return out;
}

// Expects decoding `source`'s columns on 4 threads to give what read_dosages gives, column by
// column, dosages and errors alike; returns the number of columns read without error.
std::size_t expect_decode_equals_read(const std::shared_ptr<bgen_source>& source,
                                      std::uint64_t seed = 1) {
  const auto parallel = decode_outcomes(source, 4, seed);
  const auto serial = read_outcomes(*source);
  std::size_t good = 0;
  for (std::uint64_t j = 0; j < source->columns(); ++j) {
    EXPECT_EQ(parallel[j], serial[j]) << "column " << j;
    if (serial[j].error.empty()) ++good;
  }
  return good;
}

// Expects `f` to throw colflow::error errc::bad_input whose message holds every `parts`.
template <typename F>
void expect_bad_input(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning '" << parts.front() << "'";
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), errc::bad_input) << e.message();
    for (const auto& p : parts) EXPECT_NE(e.message().find(p), std::string::npos) << e.message();
  }
}

// ---- plink2's decoding -------------------------------------------------------------------

// plink2's .traw (--export A-transpose): per variant, the counted allele and each sample's
// dosage of it in fixed point (plink2 prints the shortest decimal that gives back its 1/16384
// value), or dosage_missing.
struct traw_variant {
  std::string id, counted, other;
  std::vector<std::uint16_t> dosages;
};

std::vector<traw_variant> read_traw(const std::filesystem::path& file) {
  std::vector<traw_variant> out;
  std::ifstream in(file);
  EXPECT_TRUE(in) << file;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string chrom, cm, pos;
    traw_variant v;
    s >> chrom >> v.id >> cm >> pos >> v.counted >> v.other;
    for (std::string x; s >> x;) {
      v.dosages.push_back(x == "NA"
                              ? dosage_missing
                              : static_cast<std::uint16_t>(std::lround(std::stod(x) * 16384)));
    }
    out.push_back(std::move(v));
  }
  return out;
}

// Compares every column of `source` with plink2's decoding of the same file; returns the number
// of non-missing fractional dosages compared (so that a test can insist on some).
std::size_t expect_same_as_plink2(bgen_source& source, const std::vector<traw_variant>& traw) {
  EXPECT_EQ(traw.size(), source.columns());
  std::size_t fractional = 0;
  std::vector<std::uint16_t> ours(source.rows());
  for (std::uint64_t j = 0; j < std::min<std::uint64_t>(traw.size(), source.columns()); ++j) {
    const column_info info = source.column(j);
    const traw_variant& t = traw[j];
    EXPECT_EQ(info.id, t.id);
    if (t.dosages.size() != source.rows()) {
      ADD_FAILURE() << "variant " << j << ": plink2 gives " << t.dosages.size() << " samples";
      return fractional;
    }
    // plink2 counts its REF allele in .traw; ours is A1, one of the two.
    const bool same_allele = t.counted == info.a1;
    EXPECT_TRUE(same_allele ? t.other == info.a2 : (t.counted == info.a2 && t.other == info.a1))
        << "variant " << j;
    source.read_dosages(j, ours);
    for (std::size_t i = 0; i < ours.size(); ++i) {
      const std::uint16_t ref = t.dosages[i];
      const std::uint16_t expected =
          ref == dosage_missing || same_allele ? ref : static_cast<std::uint16_t>(dosage_max - ref);
      if (ours[i] != expected) {
        ADD_FAILURE() << "variant " << j << " (" << t.id << "), sample " << i << ": " << ours[i]
                      << ", plink2 " << expected;
        return fractional;
      }
      if (expected != dosage_missing && expected % dosage_one != 0) ++fractional;
    }
  }
  return fractional;
}

// ---- Files written by plink2 from a .bed ------------------------------------------------------

std::string chrom_code(const std::string& c) {
  static const std::map<std::string, std::string> names{
      {"X", "23"}, {"Y", "24"}, {"XY", "25"}, {"MT", "26"}};
  const auto it = names.find(c);
  return it == names.end() ? c : it->second;
}

class BgenFromBedTest : public ::testing::TestWithParam<std::string> {};

// plink2 writes A1 (ALT) first and the .fam's FID/IID/sex to the .sample: read back, every
// dosage is the .bed's call of A1 times dosage_one. Males' X calls and the MT calls are written
// haploid (ploidy 1): these check that a haploid dosage counts two copies.
TEST_P(BgenFromBedTest, DosagesEqualBedCalls) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const std::string bfile = test::dataset("hapmap3/HapMap3");
  const std::filesystem::path out = dir / "h";
  test::run_plink2("--bfile " + bfile + " --export " + GetParam() + " --threads 2 --out " +
                   out.string() + " --silent");
  bgen_source source(options(out.string() + ".bgen", out.string() + ".sample"));
  preprocess::bed_source bed(preprocess::plink_paths::from_prefix(bfile));
  const std::string version = GetParam() == "bgen-1.1"   ? "v1.1"
                              : GetParam() == "bgen-1.2" ? "v1.2"
                                                         : "v1.3";
  EXPECT_EQ(source.version(), version);
  EXPECT_EQ(source.description(), "BGEN " + version + " " + out.string() + ".bgen");
  EXPECT_EQ(source.layout(), GetParam() == "bgen-1.1" ? 1 : 2);
  EXPECT_EQ(source.compression(), GetParam() == "bgen-1.3" ? codec_id::zstd : codec_id::zlib);
  EXPECT_EQ(source.kind(), value_type::dosage);
  ASSERT_EQ(source.rows(), bed.rows());
  ASSERT_EQ(source.columns(), bed.columns());

  const auto fam = bed.samples(), ours = source.samples();
  for (std::size_t i = 0; i < fam.size(); ++i) {
    EXPECT_EQ(ours[i].fid, fam[i].fid) << i;
    EXPECT_EQ(ours[i].iid, fam[i].iid) << i;
    EXPECT_EQ(ours[i].sex, fam[i].sex) << i;
  }
  EXPECT_NE(fam[0].fid, fam[0].iid);

  const std::size_t n = fam.size();
  std::vector<std::uint8_t> codes(genotype_column_bytes(n));
  std::vector<std::uint16_t> dosages(source.rows());
  for (std::uint64_t j = 0; j < bed.columns(); ++j) {
    const column_info b = bed.column(j), c = source.column(j);
    EXPECT_EQ(chrom_code(c.chrom), b.chrom) << j;
    EXPECT_EQ(c.id, b.id);
    EXPECT_EQ(c.pos, b.pos);
    EXPECT_EQ(c.cm, "0");
    EXPECT_EQ(c.a1, b.a1) << b.id;
    EXPECT_EQ(c.a2, b.a2) << b.id;
    bed.read_genotypes(j, codes);
    source.read_dosages(j, dosages);
    for (std::uint64_t i = 0; i < n; ++i) {
      const unsigned code = (codes[i / 4] >> (2 * (i % 4))) & 3u;
      const std::uint16_t expected = code == 0   ? 2 * dosage_one
                                     : code == 2 ? dosage_one
                                     : code == 3 ? 0
                                                 : dosage_missing;
      ASSERT_EQ(dosages[i], expected) << b.id << ", sample " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllVersions, BgenFromBedTest,
                         ::testing::Values("bgen-1.1", "bgen-1.2", "bgen-1.3"),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string s = p.param;
                           std::replace(s.begin(), s.end(), '-', '_');
                           std::replace(s.begin(), s.end(), '.', '_');
                           return s;
                         });

// Counting the second allele swaps the alleles and complements the dosages; columns can be read
// in any order, any number of times.
TEST(BgenSourceTest, RefFirstCountsSecondAlleleInAnyOrder) {
  REQUIRE_SHARED_DATA();
  test::temp_dir dir;
  const std::filesystem::path out = dir / "h";
  test::run_plink2("--bfile " + test::dataset("hapmap3/HapMap3") +
                   " --export bgen-1.2 bits=8 --threads 2 --out " + out.string() + " --silent");
  bgen_source last(options(out.string() + ".bgen", out.string() + ".sample"));
  bgen_source first(options(out.string() + ".bgen", out.string() + ".sample", true));
  EXPECT_FALSE(last.counts_second_allele());
  EXPECT_TRUE(first.counts_second_allele());
  const auto forward = read_all(last);
  std::vector<std::uint16_t> d(first.rows());
  for (std::uint64_t j = first.columns(); j-- > 0;) {
    const column_info a = last.column(j), b = first.column(j);
    EXPECT_EQ(a.a1, b.a2);
    EXPECT_EQ(a.a2, b.a1);
    first.read_dosages(j, d);
    for (std::size_t i = 0; i < d.size(); ++i) {
      const std::uint16_t x = forward[j][i];
      ASSERT_EQ(d[i], x == dosage_missing ? x : dosage_max - x) << j << " " << i;
    }
    last.read_dosages(j, d);
    ASSERT_EQ(d, forward[j]);
  }
}

// ---- Dosages against plink2's decoding ---------------------------------------------------------

struct dummy_case {
  std::string name, export_flags;
};

void PrintTo(const dummy_case& c, std::ostream* os) { *os << c.name; }

class BgenDummyTest : public ::testing::TestWithParam<dummy_case> {};

// plink2 --dummy dosages (10% missing calls, 30% fractional dosages) exported to BGEN, then read
// back both by plink2 and by us, counting either allele: equal to the 1/16384.
TEST_P(BgenDummyTest, DosagesEqualPlink2) {
  test::temp_dir dir;
  const std::string d = (dir / "d").string(), x = (dir / "x").string();
  test::run_plink2("--dummy 301 200 0.1 dosage-freq=0.3 --seed 7 --out " + d + " --silent");
  test::run_plink2("--pfile " + d + " --export " + GetParam().export_flags + " --out " + x +
                   " --silent");
  for (const bool ref_first : {false, true}) {
    const std::string mode = ref_first ? "ref-first" : "ref-last";
    test::run_plink2("--bgen " + x + ".bgen " + mode + " --sample " + x +
                     ".sample --export A-transpose --out " + x + mode + " --silent");
    bgen_source source(options(x + ".bgen", x + ".sample", ref_first));
    EXPECT_GT(expect_same_as_plink2(source, read_traw(x + mode + ".traw")), 1000u) << mode;
  }
}

INSTANTIATE_TEST_SUITE_P(Exports, BgenDummyTest,
                         ::testing::Values(dummy_case{"V11", "bgen-1.1"},
                                           dummy_case{"V12Bits8", "bgen-1.2 bits=8"},
                                           dummy_case{"V12Bits16", "bgen-1.2 bits=16"},
                                           dummy_case{"V13Bits12", "bgen-1.3 bits=12"}),
                         [](const ::testing::TestParamInfo<dummy_case>& p) {
                           return p.param.name;
                         });

// ---- Two-step reads: fetch in order, decode on several threads --------------------------------

class BgenParallelDecodeTest : public ::testing::TestWithParam<dummy_case> {};

// Files plink2 writes, of each version: fetching every column in order and decoding them on four
// threads at once, in a shuffled order, gives exactly what read_dosages gives, either allele
// counted.
TEST_P(BgenParallelDecodeTest, DecodeOnThreadsEqualsReadDosages) {
  test::temp_dir dir;
  const std::string d = (dir / "d").string(), x = (dir / "x").string();
  test::run_plink2("--dummy 503 400 0.1 dosage-freq=0.3 --seed 5 --out " + d + " --silent");
  test::run_plink2("--pfile " + d + " --export " + GetParam().export_flags + " --out " + x +
                   " --silent");
  for (const bool ref_first : {false, true}) {
    auto source = std::make_shared<bgen_source>(options(x + ".bgen", x + ".sample", ref_first));
    EXPECT_EQ(expect_decode_equals_read(source, ref_first ? 2 : 3), source->columns());
    // Not vacuous: the columns hold fractional and missing dosages.
    std::vector<std::uint16_t> col(source->rows());
    std::size_t fractional = 0, missing = 0;
    for (std::uint64_t j = 0; j < source->columns(); ++j) {
      source->read_dosages(j, col);
      for (const std::uint16_t v : col) {
        fractional += v != dosage_missing && v % dosage_one != 0;
        missing += v == dosage_missing;
      }
    }
    EXPECT_GT(fractional, 10000u);
    EXPECT_GT(missing, 10000u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Exports, BgenParallelDecodeTest,
    ::testing::Values(dummy_case{"V11", "bgen-1.1"}, dummy_case{"V12Bits8", "bgen-1.2 bits=8"},
                      dummy_case{"V12Bits16", "bgen-1.2 bits=16"}, dummy_case{"V13", "bgen-1.3"}),
    [](const ::testing::TestParamInfo<dummy_case>& p) { return p.param.name; });

// Hand-made files of both layouts, uncompressed (decoded in place), zlib and zstd, with every bit
// depth from 1 to 32 (the 16 first through tables built on first use, here by concurrent
// decodes), phased, haploid and missing samples: decoded on threads as read_dosages reads them.
TEST(BgenSourceTest, ParallelDecodeOfHandMadeFiles) {
  test::temp_dir dir;
  std::mt19937_64 rng(17);
  const std::size_t n = 97;
  crafted_bgen b = small_bgen(n, 0);
  for (unsigned bits = 1; bits <= 32; ++bits) {
    for (const bool phased : {false, true}) {
      crafted_variant v;
      v.rsid = "rs" + std::to_string(b.variants.size());
      v.bits = bits;
      v.phased = phased;
      const std::uint64_t max = (std::uint64_t{1} << bits) - 1;
      for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t x = rng() & max, y = rng() & max;
        if (!phased) y %= max - x + 1;
        switch (i % 6) {
          case 0:
            v.ploidy.push_back(1);
            v.values.push_back(x);
            break;
          case 1:
            v.ploidy.push_back(0);
            break;
          case 2:
            v.ploidy.push_back(0x80 | 2);
            v.values.insert(v.values.end(), {0, 0});
            break;
          default:
            v.ploidy.push_back(2);
            v.values.insert(v.values.end(), {x, y});
        }
      }
      b.variants.push_back(v);
    }
  }
  for (const unsigned compression : {0u, 1u, 2u}) {
    crafted_bgen c = b;
    c.compression = compression;
    const auto file = dir / ("l2_" + std::to_string(compression) + ".bgen");
    test::write_file(file, build(c));
    auto source = std::make_shared<bgen_source>(options(file));
    EXPECT_EQ(expect_decode_equals_read(source, compression), source->columns()) << compression;
  }
  crafted_bgen l1 = small_bgen(n, 40);
  l1.layout = 1;
  for (auto& v : l1.variants) {
    v.values.clear();
    for (std::size_t i = 0; i < 3 * n; ++i) v.values.push_back(rng() % 20000);
  }
  for (const unsigned compression : {0u, 1u}) {
    l1.compression = compression;
    const auto file = dir / ("l1_" + std::to_string(compression) + ".bgen");
    test::write_file(file, build(l1));
    auto source = std::make_shared<bgen_source>(options(file, {}, compression == 1));
    EXPECT_EQ(expect_decode_equals_read(source, 9), source->columns()) << compression;
  }
}

// Probabilities plink2 never writes: phased and haploid samples, ploidy 0, missing samples, every
// pair of 3- and 8-bit values, 1- to 28-bit depths (plink2 reads no deeper), layout-1 triples that
// do not sum to 32768 and ties. plink2 reads them (as ref-last and ref-first); we must agree.
TEST(BgenSourceTest, HandMadeProbabilitiesEqualPlink2) {
  test::temp_dir dir;
  std::mt19937_64 rng(3);
  // Every pair of 8-bit values with P(AA) + P(AB) <= 1, plus some.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs8;
  for (std::uint64_t x = 0; x < 256; ++x)
    for (std::uint64_t y = 0; x + y < 256; ++y) pairs8.emplace_back(x, y);
  const std::size_t n = pairs8.size() + 11;
  crafted_bgen b;
  for (std::size_t i = 0; i < n; ++i) b.samples.push_back("s" + std::to_string(i));
  auto add = [&](unsigned bits, bool phased, int kind) {
    crafted_variant v;
    v.rsid = "rs" + std::to_string(b.variants.size());
    v.bits = bits;
    v.phased = phased;
    const std::uint64_t max = (std::uint64_t{1} << bits) - 1;
    for (std::size_t i = 0; i < n; ++i) {
      // kind 0: diploid only; 1: mixed ploidy 0, 1, 2 and missing samples.
      const unsigned shape = kind == 0 ? 2 : static_cast<unsigned>(i % 5);
      std::uint64_t x = rng() & max, y = rng() & max;
      if (!phased) y %= max - x + 1;
      if (bits == 8 && kind == 0 && i < pairs8.size()) std::tie(x, y) = pairs8[i];
      switch (shape) {
        case 0:  // haploid
          v.ploidy.push_back(1);
          v.values.push_back(x);
          break;
        case 1:  // ploidy 0
          v.ploidy.push_back(0);
          break;
        case 3:  // missing diploid: zero values
          v.ploidy.push_back(0x80 | 2);
          v.values.insert(v.values.end(), {0, 0});
          break;
        case 4:  // missing haploid
          v.ploidy.push_back(0x80 | 1);
          v.values.push_back(0);
          break;
        default:
          v.ploidy.push_back(2);
          v.values.insert(v.values.end(), {x, y});
      }
    }
    b.variants.push_back(v);
  };
  for (const bool phased : {false, true}) {
    for (const unsigned bits : {1u, 2u, 3u, 7u, 8u, 12u, 16u, 20u, 28u}) add(bits, phased, 0);
    add(8, phased, 1);
    add(13, phased, 1);
  }
  const std::filesystem::path file = dir / "c.bgen";
  test::write_file(file, build(b));
  for (const bool ref_first : {false, true}) {
    const std::string mode = ref_first ? "ref-first" : "ref-last";
    test::run_plink2("--bgen " + file.string() + " " + mode + " --export A-transpose --out " +
                     (dir / mode).string() + " --silent");
    bgen_source source(options(file, {}, ref_first));
    EXPECT_GT(expect_same_as_plink2(source, read_traw(dir / (mode + ".traw"))), n) << mode;
  }

  // Layout 1: sums of 32768 (ties to even), other sums (ties up), all-zero (missing).
  crafted_bgen l1;
  l1.layout = 1;
  l1.samples = b.samples;
  crafted_variant v;
  std::uniform_int_distribution<std::uint64_t> u16(0, 65535);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t aa, ab, bb;
    switch (i % 4) {
      case 0:  // sum 32768
        aa = u16(rng) % 32769, ab = u16(rng) % (32769 - aa), bb = 32768 - aa - ab;
        break;
      case 1: {  // ties at sum 32768 (p_AB odd) and at sum 65536 (p_AB + 2 p_BB = 2 mod 4)
        const bool half = i % 8 == 1;
        ab = 2 * (i % 97) + (half ? 1 : 2), bb = i % 7, aa = (half ? 32768 : 65536) - ab - bb;
        break;
      }
      case 2:
        aa = u16(rng), ab = u16(rng), bb = u16(rng);
        break;
      default:
        aa = ab = bb = i % 8 == 3 ? 0 : u16(rng) % 300;
    }
    v.values.insert(v.values.end(), {aa, ab, bb});
  }
  l1.variants.push_back(v);
  const std::filesystem::path file1 = dir / "l1.bgen";
  test::write_file(file1, build(l1));
  for (const bool ref_first : {false, true}) {
    const std::string mode = ref_first ? "ref-first" : "ref-last";
    test::run_plink2("--bgen " + file1.string() + " " + mode + " --export A-transpose --out " +
                     (dir / ("l1" + mode)).string() + " --silent");
    bgen_source source(options(file1, {}, ref_first));
    EXPECT_GT(expect_same_as_plink2(source, read_traw(dir / ("l1" + mode + ".traw"))), n / 2)
        << mode;
  }
}

// ---- Columns and samples -----------------------------------------------------------------------

TEST(BgenSourceTest, IdIsRsidElseVariantId) {
  test::temp_dir dir;
  crafted_bgen b = small_bgen(5, 4);
  b.variants[0].id = "v0";
  b.variants[1].id = "v1", b.variants[1].rsid = ".";
  b.variants[2].id = "v2", b.variants[2].rsid = "";
  b.variants[3].id = "", b.variants[3].rsid = ".";
  b.variants[3].chrom = "chrX";
  b.variants[3].pos = 4000000000u;
  b.variants[3].alleles = {"ACGT", "T"};
  test::write_file(dir / "a.bgen", build(b));
  bgen_source s(options(dir / "a.bgen"));
  EXPECT_EQ(s.column(0).id, "rs0");
  EXPECT_EQ(s.column(1).id, ".") << "the rsid as written, as plink2 takes it";
  EXPECT_EQ(s.column(2).id, "v2");
  const column_info c = s.column(3);
  EXPECT_EQ(c.id, ".");
  EXPECT_EQ(c.chrom, "chrX");  // as written
  EXPECT_EQ(c.pos, "4000000000");
  EXPECT_EQ(c.a1, "ACGT");
  EXPECT_EQ(c.a2, "T");
  EXPECT_THROW(s.column(4), error);
  std::vector<std::uint16_t> d(5), short_buffer(4);
  EXPECT_THROW(s.read_dosages(4, d), error);
  EXPECT_THROW(s.read_dosages(0, short_buffer), error);
}

TEST(BgenSourceTest, SamplesFromSampleFileElseFromBgen) {
  test::temp_dir dir;
  const crafted_bgen b = small_bgen(7, 1);
  test::write_file(dir / "a.bgen", build(b));
  bgen_source embedded(options(dir / "a.bgen"));
  ASSERT_EQ(embedded.rows(), 7u);
  EXPECT_TRUE(embedded.has_sample_identifiers());
  EXPECT_EQ(embedded.samples()[6].fid, "0");
  EXPECT_EQ(embedded.samples()[6].iid, "s6");
  EXPECT_EQ(embedded.samples()[6].sex, "0");
  EXPECT_EQ(embedded.samples()[6].phenotype, "-9");

  // The .sample file wins, even where the .bgen's identifiers differ.
  std::vector<std::string> ids;
  for (int i = 0; i < 7; ++i) ids.push_back("x" + std::to_string(i));
  write_sample_file(dir / "a.sample", ids);
  bgen_source with_file(options(dir / "a.bgen", dir / "a.sample"));
  const auto s = with_file.samples();
  EXPECT_EQ(s[4].fid, "fx4");
  EXPECT_EQ(s[4].iid, "x4");
  EXPECT_EQ(s[4].sex, "1");
  EXPECT_EQ(s[5].sex, "2");
  EXPECT_EQ(s[3].sex, "0");
  EXPECT_EQ(s[4].father, "0");
  EXPECT_EQ(s[4].mother, "0");

  // QCTOOL v2's variant: one ID column; sex unknown as 0 or NA.
  std::ofstream(dir / "v2.sample") << "ID missing sex PHENO1\n0 0 D B\n"
                                   << "y0 0 1 0\ny1 0 2 1\ny2 0 NA 0\ny3 0 0 1\n"
                                   << "y4 0 2 0\ny5 0 1 NA\ny6 0 2 1\n";
  const auto v2 = bgen_source(options(dir / "a.bgen", dir / "v2.sample")).samples();
  ASSERT_EQ(v2.size(), 7u);
  EXPECT_EQ(v2[2].fid, "0");
  EXPECT_EQ(v2[2].iid, "y2");
  EXPECT_EQ(v2[0].sex, "1");
  EXPECT_EQ(v2[1].sex, "2");
  EXPECT_EQ(v2[2].sex, "0");
  EXPECT_EQ(v2[3].sex, "0");
}

TEST(BgenSourceTest, UncompressedFilesOfBothLayouts) {
  test::temp_dir dir;
  crafted_bgen b = small_bgen(6, 2);
  b.compression = 0;
  test::write_file(dir / "a.bgen", build(b));
  bgen_source s2(options(dir / "a.bgen"));
  EXPECT_EQ(s2.compression(), codec_id::none);
  EXPECT_EQ(s2.version(), "v1.2");
  std::vector<std::uint16_t> d(6);
  s2.read_dosages(1, d);
  // Sample 3 of variant 1: P(AA) = 3/255, P(AB) = 1/255: 16384 * 7 / 255 = 449.75.
  EXPECT_EQ(d[3], 450);

  crafted_bgen l1 = small_bgen(6, 1);
  l1.layout = 1;
  l1.compression = 0;
  l1.variants[0].values = {32768, 0, 0, 0, 32768, 0, 0,    0,     32768,
                           0,     0, 0, 1, 1,     1, 8192, 16384, 8192};
  test::write_file(dir / "b.bgen", build(l1));
  bgen_source s1(options(dir / "b.bgen"));
  EXPECT_EQ(s1.version(), "v1.1");
  s1.read_dosages(0, d);
  EXPECT_EQ(d, (std::vector<std::uint16_t>{32768, 16384, 0, dosage_missing, 16384, 16384}));
}

// ---- Malformed files ---------------------------------------------------------------------------

class BgenMalformedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bytes_ = build(small_bgen(5, 3));
    write("ok.bgen", bytes_);
  }
  std::filesystem::path write(const std::string& name, const std::vector<char>& bytes) {
    test::write_file(dir_ / name, bytes);
    return dir_ / name;
  }
  // Opens `file` and reads every column.
  static void open_and_read(const std::filesystem::path& file,
                            const std::filesystem::path& sample = {}) {
    bgen_source s(options(file, sample));
    read_all(s);
  }
  test::temp_dir dir_;
  std::vector<char> bytes_;
};

TEST_F(BgenMalformedTest, ValidFileReads) { EXPECT_NO_THROW(open_and_read(dir_ / "ok.bgen")); }

TEST_F(BgenMalformedTest, RefusesTruncatedHeader) {
  for (const std::size_t size : {0, 3, 20, 23, 30, 44}) {
    const auto file = write("t.bgen", std::vector<char>(bytes_.begin(), bytes_.begin() + size));
    expect_bad_input([&] { open_and_read(file); }, {"t.bgen"});
  }
  const auto file = write("t.bgen", std::vector<char>(bytes_.begin(), bytes_.begin() + 20));
  expect_bad_input([&] { open_and_read(file); }, {"t.bgen: file is 20 bytes, too short"});
  // Inside the sample identifier block (28 bytes: the first variant starts at byte 52).
  const auto ids = write("i.bgen", std::vector<char>(bytes_.begin(), bytes_.begin() + 40));
  expect_bad_input([&] { open_and_read(ids); }, {"i.bgen", "past the end of the file"});
}

TEST_F(BgenMalformedTest, RefusesTruncatedVariantBlock) {
  // Cut in the middle of the last variant's genotype block, then of its header, then between
  // two variants.
  const std::size_t size = bytes_.size();
  for (const std::size_t cut : {std::size_t{10}, std::size_t{30}}) {
    const auto file = write("t.bgen", std::vector<char>(bytes_.begin(), bytes_.end() - cut));
    expect_bad_input([&] { open_and_read(file); }, {"t.bgen", "variant 2 (rs2)"});
  }
  {
    const auto file = write("t.bgen", std::vector<char>(bytes_.begin(), bytes_.end() - 10));
    expect_bad_input([&] { open_and_read(file); }, {"genotype block", "runs past the end"});
  }
  // Just after variant 0's rsid length field: the rsid is cut.
  const std::size_t first_variant = 4 + 20 + 28;
  const auto file = write(
      "r.bgen", std::vector<char>(bytes_.begin(), bytes_.begin() + first_variant + 2 + 2 + 1));
  expect_bad_input([&] { open_and_read(file); }, {"variant 0", "ends inside the rsid"});
  (void)size;
}

TEST_F(BgenMalformedTest, RefusesMissingVariants) {
  auto bytes = bytes_;
  bytes[8] = 4;  // M = 4 variants, 3 present
  const auto file = write("m.bgen", bytes);
  expect_bad_input([&] { open_and_read(file); }, {"m.bgen", "ends after 3 of the 4 variants"});
}

TEST_F(BgenMalformedTest, RefusesBadMagic) {
  auto bytes = bytes_;
  bytes[19] = 'X';
  const auto file = write("m.bgen", bytes);
  expect_bad_input([&] { open_and_read(file); }, {"m.bgen", "magic number"});
  // Four zero bytes are allowed.
  std::fill(bytes.begin() + 16, bytes.begin() + 20, 0);
  EXPECT_NO_THROW(open_and_read(write("z.bgen", bytes)));
}

TEST_F(BgenMalformedTest, RefusesUnknownLayoutAndCompression) {
  auto bytes = bytes_;
  bytes[20] = static_cast<char>((bytes[20] & ~0x3c) | (3 << 2));  // layout 3
  expect_bad_input([&] { open_and_read(write("l.bgen", bytes)); }, {"l.bgen", "unknown layout 3"});
  bytes = bytes_;
  bytes[20] = static_cast<char>((bytes[20] & ~0x3c) | (0 << 2));  // layout 0
  expect_bad_input([&] { open_and_read(write("l.bgen", bytes)); }, {"unknown layout 0"});
  bytes = bytes_;
  bytes[20] = static_cast<char>(bytes[20] | 3);  // compression 3
  expect_bad_input([&] { open_and_read(write("c.bgen", bytes)); },
                   {"c.bgen", "unknown compression 3"});
  bytes = bytes_;
  bytes[20] = static_cast<char>((bytes[20] & ~0x3f) | (1 << 2) | 2);  // layout 1 with zstd
  expect_bad_input([&] { open_and_read(write("c.bgen", bytes)); },
                   {"zstd compression with layout 1"});
}

TEST_F(BgenMalformedTest, RefusesInconsistentHeaderLengths) {
  auto bytes = bytes_;
  bytes[4] = 19;  // L_H < 20
  expect_bad_input([&] { open_and_read(write("h.bgen", bytes)); }, {"h.bgen", "less than the 20"});
  bytes = bytes_;
  bytes[0] = 10;  // first variant inside the header block
  expect_bad_input([&] { open_and_read(write("h.bgen", bytes)); }, {"runs past the first variant"});
  bytes = bytes_;
  bytes[24] = static_cast<char>(bytes[24] + 1);  // L_SI one byte too long
  expect_bad_input([&] { open_and_read(write("h.bgen", bytes)); }, {"sample identifier block"});
  bytes = bytes_;
  bytes[28] = 4;  // the identifier block's own sample count
  expect_bad_input([&] { open_and_read(write("h.bgen", bytes)); }, {"holds 4 samples"});
  bytes = bytes_;
  bytes[0] = static_cast<char>(0xff), bytes[1] = static_cast<char>(0xff);  // offset past the end
  expect_bad_input([&] { open_and_read(write("h.bgen", bytes)); }, {"past the end of the file"});
}

TEST_F(BgenMalformedTest, RefusesMultiallelicVariant) {
  crafted_bgen b = small_bgen(5, 3);
  b.variants[1].alleles = {"A", "C", "G"};
  b.variants[1].values.clear();  // never read: the header alone is refused
  expect_bad_input([&] { open_and_read(write("multi.bgen", build(b))); },
                   {"multi.bgen: variant 1 (rs1) at byte", "has 3 alleles",
                    "colflow reads biallelic variants", "bcftools norm -m-"});
  b.variants[1].alleles = {"A"};
  expect_bad_input([&] { open_and_read(write("mono.bgen", build(b))); },
                   {"variant 1 (rs1)", "has 1 allele"});
}

TEST_F(BgenMalformedTest, RefusesDecompressedSizeMismatch) {
  for (const std::int64_t delta : {-1, 1, 1000}) {
    crafted_bgen b = small_bgen(5, 3);
    b.variants[2].declared_size_delta = delta;
    const auto file = write("d.bgen", build(b));
    bgen_source s(options(file));  // D is only read back when the block is
    std::vector<std::uint16_t> d(5);
    s.read_dosages(0, d);
    expect_bad_input([&] { s.read_dosages(2, d); },
                     {"d.bgen: variant 2 (rs2)", "does not decompress to the"});
  }
  // A declared size that cannot hold the samples is refused at once.
  crafted_bgen b = small_bgen(5, 3);
  b.variants[0].declared_size_delta = 100000;
  expect_bad_input([&] { bgen_source s(options(write("e.bgen", build(b)))); },
                   {"variant 0 (rs0)", "cannot hold 5 samples"});
}

TEST_F(BgenMalformedTest, RefusesBadProbabilityBlocks) {
  auto refused = [&](crafted_bgen b, const std::vector<std::string>& parts) {
    const auto file = write("p.bgen", build(b));
    bgen_source s(options(file));
    std::vector<std::uint16_t> d(s.rows());
    s.read_dosages(0, d);
    expect_bad_input([&] { s.read_dosages(1, d); }, parts);
  };
  crafted_bgen b = small_bgen(5, 2);
  b.variants[1].values[6] = 200, b.variants[1].values[7] = 100;  // sample 3: 300/255
  refused(b, {"p.bgen: variant 1 (rs1)", "sample 3", "sum to more than one"});
  b = small_bgen(5, 2);
  b.variants[1].ploidy[2] = 3;
  b.variants[1].values.push_back(0);
  refused(b, {"variant 1 (rs1)", "ploidy up to 3", "haploid and diploid"});
  b = small_bgen(5, 2);
  b.variants[1].bits = 0;
  refused(b, {"variant 1", "0 bits"});
  b = small_bgen(5, 2);
  b.variants[1].values.push_back(0);  // one value too many: one byte too long
  refused(b, {"variant 1", "genotype block of", "ploidies and 8-bit probabilities take"});
  b = small_bgen(5, 2);
  b.compression = 0;
  b.variants[1].values.pop_back();
  refused(b, {"variant 1", "probabilities take"});
}

// A damaged block is only found when decoded, on whichever thread decodes it: the error names
// the file and the variant, as read_dosages' does, and the other columns decode.
TEST_F(BgenMalformedTest, DecodeReportsDamagedBlocksByVariant) {
  crafted_bgen b = small_bgen(5, 6);
  b.variants[1].values[6] = 200, b.variants[1].values[7] = 100;  // sample 3: 300/255
  b.variants[2].declared_size_delta = 1;                         // does not decompress
  b.variants[4].ploidy[2] = 3;
  b.variants[4].values.push_back(0);
  const auto file = write("damaged.bgen", build(b));
  auto source = std::make_shared<bgen_source>(options(file));
  // Fetching reads the bytes and parses the variant's header: the blocks are not looked at.
  std::vector<std::unique_ptr<preprocess::column_source::fetched>> raw;
  for (std::uint64_t j = 0; j < 6; ++j) ASSERT_NO_THROW(raw.push_back(source->fetch(j))) << j;
  // Through decode_dosages itself, on another thread.
  std::string message;
  std::thread([&] {
    std::vector<std::uint16_t> d(5);
    try {
      source->decode_dosages(*raw[2], d);
    } catch (const error& e) {
      message = e.message();
      EXPECT_EQ(e.kind(), errc::bad_input);
    }
  }).join();
  EXPECT_NE(message.find("damaged.bgen: variant 2 (rs2) at byte "), std::string::npos) << message;
  EXPECT_NE(message.find("genotype block of"), std::string::npos) << message;
  EXPECT_NE(message.find("does not decompress to the 26 bytes it declares"), std::string::npos)
      << message;

  const auto outcomes = decode_outcomes(source, 4, 7);
  for (const std::uint64_t j : {0, 3, 5}) EXPECT_EQ(outcomes[j].error, "") << j;
  auto expect_error = [&](std::uint64_t j, const std::vector<std::string>& parts) {
    for (const auto& p : parts)
      EXPECT_NE(outcomes[j].error.find(p), std::string::npos) << outcomes[j].error;
  };
  expect_error(1, {"damaged.bgen: variant 1 (rs1)", "sample 3", "sum to more than one"});
  expect_error(2, {"damaged.bgen: variant 2 (rs2)", "does not decompress"});
  expect_error(4, {"damaged.bgen: variant 4 (rs4)", "ploidy up to 3"});
  EXPECT_EQ(expect_decode_equals_read(source), 3u);

  // Misuse: a column of another source, a buffer of another size, a column out of range.
  bgen_source other(options(dir_ / "ok.bgen"));
  std::vector<std::uint16_t> d(5), short_buffer(4);
  EXPECT_THROW(other.decode_dosages(*raw[0], d), error);
  EXPECT_THROW(source->decode_dosages(*raw[0], short_buffer), error);
  EXPECT_THROW(source->fetch(6), error);
  EXPECT_NO_THROW(source->decode_dosages(*raw[0], d));
  EXPECT_NO_THROW(other.decode_dosages(*other.fetch(0), d));
}

// Random damage, read in two steps on four threads: the same dosages and the same errors as
// read_dosages, column by column (and, under the sanitizers, no race and no stray access).
TEST_F(BgenMalformedTest, RandomDamageDecodesAsItReads) {
  std::mt19937_64 rng(23);
  crafted_bgen b = small_bgen(9, 6);
  b.variants[1].ploidy[2] = 1;
  b.variants[1].values.erase(b.variants[1].values.begin() + 5);
  b.variants[2].phased = true;
  b.variants[3].bits = 13;
  b.variants[4].bits = 16;
  std::size_t opened = 0, good = 0;
  for (int layout = 1; layout <= 2; ++layout) {
    for (const unsigned compression : {0u, 1u, 2u}) {
      if (layout == 1 && compression == 2) continue;
      crafted_bgen c = b;
      c.layout = layout;
      c.compression = compression;
      if (layout == 1)
        for (auto& v : c.variants) v.values.assign(27, 1000);
      const auto clean = build(c);
      for (int round = 0; round < 100; ++round) {
        auto bytes = clean;
        const int edits = round == 0 ? 0 : 1 + static_cast<int>(rng() % 3);
        for (int e = 0; e < edits; ++e) bytes[rng() % bytes.size()] = static_cast<char>(rng());
        std::shared_ptr<bgen_source> source;
        try {
          source = std::make_shared<bgen_source>(options(write("damaged.bgen", bytes)));
        } catch (const error&) {
          continue;
        }
        ++opened;
        good += expect_decode_equals_read(source, rng());
      }
    }
  }
  EXPECT_GT(opened, 100u);
  EXPECT_GT(good, 600u);
}

TEST_F(BgenMalformedTest, RefusesBadSampleSources) {
  crafted_bgen b = small_bgen(5, 2);
  b.sample_ids = false;
  const auto file = write("noids.bgen", build(b));
  expect_bad_input([&] { bgen_source s(options(file)); },
                   {"noids.bgen", "no sample identifiers", ".sample"});

  write_sample_file(dir_ / "six.sample", {"a", "b", "c", "d", "e", "f"});
  expect_bad_input([&] { bgen_source s(options(file, dir_ / "six.sample")); },
                   {"six.sample: holds 6 samples, but noids.bgen has 5"});
  write_sample_file(dir_ / "five.sample", {"a", "b", "c", "d", "e"});
  EXPECT_NO_THROW(bgen_source(options(file, dir_ / "five.sample")));
  write_sample_file(dir_ / "dup.sample", {"a", "b", "c", "b", "e"});
  expect_bad_input([&] { bgen_source s(options(file, dir_ / "dup.sample")); },
                   {"dup.sample", "duplicate sample ID 'fb b'"});
  b.sample_ids = true;
  b.samples[3] = "s1";
  expect_bad_input([&] { bgen_source s(options(write("dup.bgen", build(b)))); },
                   {"dup.bgen", "duplicate sample ID '0 s1' (samples 1 and 3)"});

  auto sample_text = [&](const std::string& text) {
    std::ofstream(dir_ / "bad.sample") << text;
    return dir_ / "bad.sample";
  };
  expect_bad_input(
      [&] { bgen_source s(options(file, sample_text("FID IID missing\n0 0 0\na a 0\n"))); },
      {"bad.sample", "line 1", "ID_1 ID_2 missing"});
  expect_bad_input([&] { bgen_source s(options(file, sample_text("ID_1 ID_2 missing\n0 0\n"))); },
                   {"bad.sample", "line 2", "expected 3 types"});
  expect_bad_input(
      [&] { bgen_source s(options(file, sample_text("ID_1 ID_2 missing x\n0 0 0 Q\na a 0 1\n"))); },
      {"bad.sample", "unknown type 'Q'"});
  expect_bad_input(
      [&] { bgen_source s(options(file, sample_text("ID_1 ID_2 missing\n0 0 0\na a 0\nb b\n"))); },
      {"bad.sample", "line 4", "expected 3 fields"});
  expect_bad_input(
      [&] {
        bgen_source s(options(file, sample_text("ID_1 ID_2 missing sex\n0 0 0 D\na a 0 1\n"
                                                "b b 0 M\nc c 0 2\nd d 0 2\ne e 0 1\n")));
      },
      {"bad.sample", "line 4", "invalid sex code 'M'"});
  EXPECT_THROW(bgen_source(options(file, dir_ / "absent.sample")), error);
  EXPECT_THROW(bgen_source(options(dir_ / "absent.bgen")), error);
}

// Random damage to a small file: whatever the bytes, the source either reads every column or
// throws colflow::error (the sanitizer builds check that it never reads out of bounds).
TEST_F(BgenMalformedTest, SurvivesRandomDamage) {
  std::mt19937_64 rng(11);
  crafted_bgen b = small_bgen(7, 4);
  b.variants[1].ploidy[2] = 1;
  b.variants[1].values.erase(b.variants[1].values.begin() + 5);
  b.variants[2].phased = true;
  b.variants[3].bits = 13;
  for (int layout = 1; layout <= 2; ++layout) {
    for (const unsigned compression : {0u, 1u, 2u}) {
      if (layout == 1 && compression == 2) continue;
      crafted_bgen c = b;
      c.layout = layout;
      c.compression = compression;
      if (layout == 1)
        for (auto& v : c.variants) v.values.assign(21, 1000);
      const auto clean = build(c);
      ASSERT_NO_THROW(open_and_read(write("clean.bgen", clean)));
      for (int round = 0; round < 300; ++round) {
        auto bytes = clean;
        const int edits = 1 + static_cast<int>(rng() % 4);
        for (int e = 0; e < edits; ++e) bytes[rng() % bytes.size()] = static_cast<char>(rng());
        if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
        const auto file = write("damaged.bgen", bytes);
        try {
          open_and_read(file);
        } catch (const error&) {
        }
      }
    }
  }
}

}  // namespace
}  // namespace colflow
