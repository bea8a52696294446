// The VCF/BCF reader's two-step reads: columns fetched in order and decoded on several threads
// equal one-step reads, and an error only decoding finds is named as a read names it, ending a
// conversion with no store.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <thread>
#include <type_traits>

#include "colflow/preprocess/converter.hpp"
#include "vcf_source_fixture.hpp"

namespace colflow::vcf_source_tests {
namespace {

// ---- Two-step reads: fetch in order, decode on several threads -------------------------

// Fetches every column of `s` in order, then decodes them all on `threads` threads at once, in
// a shuffled order: each fetched column must be complete in itself, and decoding must not
// depend on the source's current record or on the other decodes.
template <typename T>
std::vector<std::vector<T>> decode_on_threads(vcf_source& s, unsigned threads) {
  std::vector<std::unique_ptr<preprocess::column_source::fetched>> raw;
  for (std::uint64_t j = 0; j < s.columns(); ++j) {
    (void)s.column(j);
    raw.push_back(s.fetch(j));
    EXPECT_NE(raw.back(), nullptr);
  }
  const std::size_t n = s.rows();
  constexpr bool genotypes = std::is_same_v<T, std::uint8_t>;
  std::vector<std::vector<T>> out(raw.size(),
                                  std::vector<T>(genotypes ? genotype_column_bytes(n) : n, 0x55));
  std::vector<std::size_t> order(raw.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937 rng(17);
  std::shuffle(order.begin(), order.end(), rng);
  std::atomic<std::size_t> next{0};
  std::vector<std::string> errors(threads);
  const vcf_source& decoder = s;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      try {
        for (std::size_t k; (k = next++) < order.size();) {
          const std::size_t j = order[k];
          if constexpr (genotypes)
            decoder.decode_genotypes(*raw[j], out[j]);
          else
            decoder.decode_dosages(*raw[j], out[j]);
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& t : pool) t.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  if constexpr (genotypes)
    for (auto& c : out) c = masked(std::move(c), n);
  return out;
}

TEST(VcfSourceTest, FetchAndDecodeOnThreadsEqualReads) {
  test::temp_dir dir;
  const auto path = [&](const char* name) { return dir / name; };
  write_text(path("g.vcf"), genotype_vcf(false));
  write_text(path("h.vcf"), genotype_vcf(true));
  write_text(path("m.vcf"), multiallelic_vcf());
  {
    std::ifstream in(path("m.vcf"));
    std::ofstream out(path("gp.vcf"));
    for (std::string line; std::getline(in, line);)
      if (line.find("m3") == std::string::npos) out << line << "\n";
  }
  const std::string dummy = "--dummy 150 400 0.05 dosage-freq=0.2 acgt --seed 5 --export vcf";
  test::run_plink2(dummy + " vcf-dosage=DS --out " + path("ds").string());
  test::run_plink2(dummy + " vcf-dosage=GP --out " + path("gpd").string());
  test::run_plink2(dummy + " bgz vcf-dosage=DS-force --out " + path("dsz").string());
  run("bcftools view -Ob -o " + path("h.bcf").string() + " " + path("h.vcf").string());
  run("bcftools view -Ob -o " + path("m.bcf").string() + " " + path("m.vcf").string());
  run("bcftools view -Ob -o " + path("ds.bcf").string() + " " + path("ds.vcf").string());

  const std::vector<vcf_options> genotype_cases{
      options(path("g.vcf")),
      options(path("h.vcf"), dosage_field::none, half_call::missing),
      options(path("h.vcf"), dosage_field::none, half_call::haploid),
      options(path("h.vcf"), dosage_field::none, half_call::reference),
      options(path("m.vcf"), dosage_field::none, half_call::missing, true),
      options(path("h.bcf"), dosage_field::none, half_call::reference),
      options(path("m.bcf"), dosage_field::none, half_call::missing, true, 2),
  };
  for (const vcf_options& o : genotype_cases) {
    SCOPED_TRACE(o.path.filename().string() + " half " + std::to_string(static_cast<int>(o.half)) +
                 (o.split_multiallelic ? " split" : ""));
    vcf_source one_step(o), two_step(o);
    const genotype_columns expected = read_genotypes(one_step);
    ASSERT_GT(expected.codes.size(), 0u);
    EXPECT_EQ(decode_on_threads<std::uint8_t>(two_step, 4), expected.codes);
  }
  const std::vector<vcf_options> dosage_cases{
      options(path("ds.vcf"), dosage_field::ds),
      options(path("gpd.vcf"), dosage_field::gp),
      options(path("dsz.vcf.gz"), dosage_field::ds, half_call::error, false, 2),
      options(path("m.vcf"), dosage_field::ds, half_call::missing, true),
      options(path("gp.vcf"), dosage_field::gp, half_call::missing, true),
      options(path("h.vcf"), dosage_field::ds, half_call::haploid),
      options(path("ds.bcf"), dosage_field::ds),
      options(path("m.bcf"), dosage_field::ds, half_call::missing, true),
  };
  for (const vcf_options& o : dosage_cases) {
    SCOPED_TRACE(o.path.filename().string() + (o.split_multiallelic ? " split" : ""));
    vcf_source one_step(o), two_step(o);
    const dosage_columns expected = read_dosages(one_step);
    ASSERT_GT(expected.dosages.size(), 0u);
    EXPECT_EQ(decode_on_threads<std::uint16_t>(two_step, 4), expected.dosages);
  }
  // The columns of a split record share what was fetched; each still decodes its own ALT.
  vcf_source s(options(path("m.vcf"), dosage_field::none, half_call::missing, true));
  const auto first = s.fetch(0), second = s.fetch(1);
  std::vector<std::uint8_t> a(2), b(2);
  s.decode_genotypes(*second, b);
  s.decode_genotypes(*first, a);
  EXPECT_NE(a, b);
  // A dosage source does not decode genotypes, nor the other way round.
  std::vector<std::uint16_t> d(7);
  expect_error([&] { s.decode_dosages(*first, d); }, errc::invalid_argument, {"genotype source"});
}

// A problem that only decoding finds, in a record far into the file, is named as a read names it
// (file, line, record, sample), whichever thread decodes it, and ends a conversion with no store.
TEST(VcfSourceTest, DecodeErrorsNameTheRecordAndSample) {
  test::temp_dir dir;
  const auto file_with = [&](const std::string& name, const std::string& format,
                             const std::string& bad_sample) {
    std::string v = vcf_header();
    for (int i = 0; i < 300; ++i)
      v += record("1", 1000 + i, "rs" + std::to_string(i), "A", "G", format,
                  {"0/0", "0/1", "1/1", "./.", "0|1", "1", "0"});
    v += record("1", 5000, "rsBad", "A", "G", format,
                {"0/0", "0/1", "1/1", "./.", bad_sample, "1", "0"});
    v += record("1", 5001, "rsLast", "A", "G", format, {"0/0", "0/1", "1/1", "./.", "0", "1", "0"});
    write_text(dir / name, v);
    return dir / name;
  };
  struct bad_case {
    fs::path file;
    dosage_field field;
    std::string message;
  };
  const std::string at = "line 308 (record 301, 1:5000 rsBad), sample 5 's5': ";
  const std::vector<bad_case> cases{
      {file_with("allele.vcf", "GT", "0/2"), dosage_field::none,
       "allele.vcf: " + at + "GT '0/2' names an allele the record does not have (1 ALT)"},
      {file_with("half.vcf", "GT", "./1"), dosage_field::none,
       "half.vcf: " + at + "GT './1' is a half-call"},
      {file_with("text.vcf", "GT", "0/1x"), dosage_field::none,
       "text.vcf: line 308 (record 301): htslib cannot parse it (an invalid character): sample 5 "
       "'s5': GT '0/1x'"},
      {file_with("ds.vcf", "GT:DS", "0/1:2.5"), dosage_field::ds,
       "ds.vcf: " + at + "DS 2.5 is outside 0..2"},
      {file_with("nan.vcf", "GT:DS", "0/1:1.2.3"), dosage_field::ds,
       "nan.vcf: line 308 (record 301): htslib cannot parse it (an invalid character): sample 5 "
       "'s5': DS '1.2.3'"},
  };
  for (const bad_case& c : cases) {
    SCOPED_TRACE(c.file.filename().string());
    const vcf_options o = options(c.file, c.field);
    // Fetching reads the fixed fields only: every column is fetched. Decoding the bad one, on
    // another thread, fails; the others decode.
    {
      vcf_source s(o);
      std::vector<std::unique_ptr<preprocess::column_source::fetched>> raw;
      for (std::uint64_t j = 0; j < s.columns(); ++j) raw.push_back(s.fetch(j));
      ASSERT_EQ(raw.size(), 302u);
      std::string message;
      errc kind = errc::io_error;
      std::thread([&] {
        try {
          std::vector<std::uint8_t> codes(2);
          std::vector<std::uint16_t> dosages(7);
          if (c.field == dosage_field::none)
            s.decode_genotypes(*raw[300], codes);
          else
            s.decode_dosages(*raw[300], dosages);
        } catch (const error& e) {
          kind = e.kind();
          message = e.message();
        }
      }).join();
      EXPECT_EQ(kind, errc::bad_input);
      EXPECT_NE(message.find(c.message), std::string::npos) << message;
      std::vector<std::uint16_t> dosages(7);
      std::vector<std::uint8_t> codes(2);
      if (c.field == dosage_field::none)
        s.decode_genotypes(*raw[301], codes);
      else
        s.decode_dosages(*raw[301], dosages);
    }
    // A read is a fetch and a decode: the same error, from the same column.
    expect_error([&] { open_and_read(o); }, errc::bad_input, {c.message});
    // The converter decodes on its worker threads: the same error, and no store.
    vcf_source s(o);
    preprocess::convert_options co;
    co.out = dir / "store";
    co.codec = c.field == dosage_field::none ? preprocess::codec_choice::genotype
                                             : preprocess::codec_choice::zstd;
    expect_error([&] { preprocess::convert(s, co, {}); }, errc::bad_input, {c.message});
    EXPECT_FALSE(fs::exists(dir / "store"));
  }
}

}  // namespace
}  // namespace colflow::vcf_source_tests
