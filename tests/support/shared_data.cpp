// The shared datasets and plink2 for the tests: paths, PLINK inputs, plink2 runs, tables.
#include "shared_data.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "colflow/codec/genotype_codec.hpp"
#include "test_support.hpp"

namespace colflow::test {

namespace {
const std::filesystem::path data_dir = COLFLOW_SHARED_DATA_DIR;
}

bool shared_data_present() { return std::filesystem::exists(data_dir / "bed-reader"); }

std::string dataset(const std::string& name) { return (data_dir / name).string(); }

std::filesystem::path uk10k_store(const std::filesystem::path& dir) {
  const std::filesystem::path store = dir / "u.cf";
  std::string out;
  EXPECT_EQ(run_cli("preprocess --quiet --bed " + dataset("uk10k/uk10k_chr1_1mb") + " --out " +
                        store.string(),
                    out),
            0)
      << out;
  return store;
}

std::vector<std::string> all_datasets() {
  return {dataset("bed-reader/small"),
          dataset("bed-reader/some_missing"),
          dataset("bed-reader/plink_sim_10s_100v_10pmiss"),
          dataset("bed-reader/toydata.5chrom"),
          dataset("bed-reader/sparse"),
          dataset("hapmap-yri/plinkhapmap"),
          dataset("hapmap3/HapMap3"),
          dataset("switchgrass/example"),
          dataset("uk10k/uk10k_chr1_1mb")};
}

bool is_sex_or_mt_chromosome(const std::string& c) {
  return c == "X" || c == "Y" || c == "XY" || c == "MT" || c == "23" || c == "24" || c == "25" ||
         c == "26";
}

bool same_as_printed(double ours, const std::string& printed) {
  if (printed == "NA" || printed == "nan") return std::isnan(ours);
  const double ref = std::stod(printed);
  if (ref == 0) return ours == 0;
  return std::fabs(ours - ref) <=
         1.0001 * std::pow(10.0, std::floor(std::log10(std::fabs(ref))) - 5);
}

std::string plink2_input(const std::string& bfile, const std::filesystem::path& dir,
                         bool keep_sex) {
  const std::string copy = (dir / "plink2_in").string();
  std::filesystem::copy_file(bfile + ".bim", copy + ".bim",
                             std::filesystem::copy_options::overwrite_existing);
  std::size_t n = 0;
  {
    std::ifstream in(bfile + ".fam");
    std::ofstream fam(copy + ".fam");
    for (std::string line; std::getline(in, line);)
      if (line.find_first_not_of(" \t\r") != std::string::npos) {
        std::istringstream fields(line);
        std::string sex;
        for (int k = 0; k < 5; ++k) fields >> sex;  // the fifth field
        fam << "f" << n << " s" << n << " 0 0 " << (keep_sex ? sex : "0") << " -9\n";
        ++n;
      }
  }
  auto bed = read_file(bfile + ".bed");
  const std::size_t bytes = genotype_column_bytes(n);
  if (n % 4 != 0 && bed.size() > 2 && bed[2] == 1)
    for (std::size_t end = 3 + bytes; end <= bed.size(); end += bytes)
      bed[end - 1] = static_cast<char>(bed[end - 1] & ((1 << (2 * (n % 4))) - 1));
  write_file(copy + ".bed", bed);
  return copy;
}

void run_plink2(const std::string& args) {
  std::string out;
  EXPECT_EQ(run_command("plink2 " + args, out), 0)
      << "plink2 " << args << "\n(plink2 must be installed: scripts/install-deps.sh)\n"
      << out;
}

std::size_t text_table::column(const std::string& name) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  ADD_FAILURE() << "no column " << name;
  return std::string::npos;
}

text_table read_table(const std::filesystem::path& file) {
  text_table t;
  std::ifstream in(file);
  EXPECT_TRUE(in) << "cannot read " << file;
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::vector<std::string> fields;
    for (std::string f; s >> f;) fields.push_back(f);
    if (fields.empty()) continue;
    if (first) {
      if (fields[0].front() == '#') fields[0].erase(0, 1);
      t.header = std::move(fields);
      first = false;
    } else {
      t.rows.push_back(std::move(fields));
    }
  }
  return t;
}

// Writes the same subset of samples (rows with i % 3 != 1) as our IDs and as plink2's.
void write_keep_files(const std::vector<sample_info>& samples, const std::filesystem::path& ours,
                      const std::filesystem::path& theirs) {
  std::ofstream a(ours), b(theirs);
  for (std::size_t i = 0; i < samples.size(); ++i)
    if (i % 3 != 1) {
      a << samples[i].fid << " " << samples[i].iid << "\n";
      b << "f" << i << " s" << i << "\n";
    }
}

// A PLINK fileset PREFIX.bed/.bim/.fam of samples f<i> s<i> with these .fam sexes and random
// calls, heterozygous ones included (also for males on X and Y), ~10% missing, on
// `per_chromosome` variants of each chromosome of `chromosomes` (in that order, as plink2 wants
// them), then one with every call missing and one with every call heterozygous.
void write_sexed_fileset(const std::string& prefix, const std::vector<std::string>& sexes,
                         const std::vector<std::string>& chromosomes, std::size_t per_chromosome,
                         std::uint64_t seed) {
  const std::size_t n = sexes.size();
  {
    std::ofstream fam(prefix + ".fam");
    for (std::size_t i = 0; i < n; ++i)
      fam << "f" << i << " s" << i << " 0 0 " << sexes[i] << " -9\n";
  }
  std::ofstream bim(prefix + ".bim");
  std::ofstream bed(prefix + ".bed", std::ios::binary);
  bed.write("\x6c\x1b\x01", 3);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.05, 0.95);
  std::size_t j = 0;
  for (const std::string& chrom : chromosomes) {
    for (std::size_t k = 0; k < per_chromosome + 2; ++k, ++j) {
      std::vector<std::uint8_t> codes = random_genotype_codes(n, u(rng), 0.1, rng);
      if (k >= per_chromosome) {
        const std::uint8_t all = k == per_chromosome ? 0x55 : 0xaa;  // missing, heterozygous
        std::fill(codes.begin(), codes.end(), all);
        codes.back() = static_cast<std::uint8_t>(all & ((1u << (2 * ((n - 1) % 4 + 1))) - 1));
      }
      bed.write(reinterpret_cast<const char*>(codes.data()),
                static_cast<std::streamsize>(codes.size()));
      bim << chrom << "\tv" << j << "\t0\t" << 1000 + j << "\tA\tC\n";
    }
  }
}

// 31 samples (not a multiple of 4): males, females and unknown-sex samples, with the codes
// plink2 reads in a .fam (M and f too; -9 and 0 unknown).
std::vector<std::string> mixed_sexes() {
  const char* const cycle[] = {"1", "2", "0", "M", "f", "-9", "2", "1"};
  std::vector<std::string> sexes;
  for (std::size_t i = 0; i < 31; ++i) sexes.emplace_back(cycle[i % 8]);
  return sexes;
}

// A VCF of dosages (DS, 3 decimals) of `sexes.size()` samples s<i> on 30 variants of each
// of `chromosomes` (X, Y, MT and others): haploid calls (GT and DS of one allele) for some males on
// X and Y and for some samples on MT, diploid ones otherwise, ~10% missing.
void write_dosage_vcf(const std::string& path, const std::vector<std::string>& sexes,
                      const std::vector<std::string>& chromosomes) {
  std::ofstream vcf(path);
  vcf << "##fileformat=VCFv4.2\n";
  for (const std::string& c : chromosomes) vcf << "##contig=<ID=" << c << ">\n";
  vcf << "##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">\n"
         "##FORMAT=<ID=DS,Number=A,Type=Float,Description=\"Dosage\">\n"
         "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT";
  for (std::size_t i = 0; i < sexes.size(); ++i) vcf << "\ts" << i;
  vcf << "\n";
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(0, 1);
  for (const std::string& c : chromosomes)
    for (int j = 0; j < 30; ++j) {
      vcf << c << "\t" << 3000000 + j << "\t" << c << "_" << j << "\tC\tA\t.\t.\t.\tGT:DS";
      for (std::size_t i = 0; i < sexes.size(); ++i) {
        const bool male = sexes[i] == "1";
        const bool haploid =
            ((c == "X" || c == "Y") && male && u(rng) < 0.7) || (c == "MT" && u(rng) < 0.5);
        if (u(rng) < 0.1) {
          vcf << (haploid ? "\t.:." : "\t./.:.");
          continue;
        }
        vcf << (haploid ? "\t0:" : "\t0/0:") << std::round(u(rng) * (haploid ? 1000 : 2000)) / 1000;
      }
      vcf << "\n";
    }
}

}  // namespace colflow::test
