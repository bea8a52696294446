// The real PLINK datasets of ../shared/data and the reference tool (plink2) that tests compare
// colflow with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "colflow/store/store.hpp"

namespace colflow::test {

// Tests that need the shared data skip, saying why, when a checkout has no ../shared.
#define REQUIRE_SHARED_DATA()                  \
  if (!::colflow::test::shared_data_present()) \
  GTEST_SKIP() << "the shared test data (../shared/data) is absent in this checkout"

bool shared_data_present();
// The prefix of a dataset, e.g. dataset("hapmap3/HapMap3").
std::string dataset(const std::string& name);
// The genotype store of uk10k made by `colflow preprocess` in `dir`; its path.
std::filesystem::path uk10k_store(const std::filesystem::path& dir);
// Every PLINK dataset of the shared folder, as prefixes.
std::vector<std::string> all_datasets();

// PLINK applies ploidy rules on sex chromosomes and mitochondria (and --glm adds sex as a
// covariate on X); `colflow stats` and `assoc` follow them (colflow/analysis/sex_chromosomes.hpp)
// given the samples' sexes, which plink2_input() drops unless asked: comparisons on a copy
// without sexes skip these chromosomes, as do those of the analyses that use the stored
// value everywhere (docs/DESIGN.md §2).
bool is_sex_or_mt_chromosome(const std::string& chrom);

// True when `ours` equals what PLINK printed to 6 significant digits: within one unit of the
// last digit (the exact value may round either way at a boundary); "NA"/"nan" match NaN.
bool same_as_printed(double ours, const std::string& printed);

// A copy of a dataset that plink2 2.00a3.5 (Debian 12) reads as intended, under `dir`:
// samples renamed f<i> s<i> in the same order (plink2 refuses an IID of '0'), and the padding
// bits of each variant's last byte zeroed (with non-zero padding, as in switchgrass, plink2
// miscounts --freq although the calls it exports are right). The samples' sex is unknown (0),
// or with `keep_sex` the dataset's. Returns its prefix.
std::string plink2_input(const std::string& bfile, const std::filesystem::path& dir,
                         bool keep_sex = false);

// Runs plink2 with `args`; a failure is a test failure carrying plink2's output.
void run_plink2(const std::string& args);

// A whitespace table with a header line (a leading '#' is dropped from the first name).
struct text_table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // Index of column `name` in the header; a test failure and npos when absent.
  std::size_t column(const std::string& name) const;
};
text_table read_table(const std::filesystem::path& file);

// Writes the same subset of a store's samples (rows with i % 3 != 1) as the store's IDs (`ours`)
// and as plink2_input's (`theirs`), for --keep.
void write_keep_files(const std::vector<sample_info>& samples, const std::filesystem::path& ours,
                      const std::filesystem::path& theirs);

// A PLINK fileset PREFIX.bed/.bim/.fam of samples f<i> s<i> with these .fam sexes and random
// calls, heterozygous ones included (also for males on X and Y), ~10% missing, on
// `per_chromosome` variants of each chromosome of `chromosomes` (in that order, as plink2 wants
// them), then one with every call missing and one with every call heterozygous.
void write_sexed_fileset(const std::string& prefix, const std::vector<std::string>& sexes,
                         const std::vector<std::string>& chromosomes, std::size_t per_chromosome,
                         std::uint64_t seed);

// 31 samples (not a multiple of 4): males, females and unknown-sex samples, with the codes
// plink2 reads in a .fam (M and f too; -9 and 0 unknown).
std::vector<std::string> mixed_sexes();

// A VCF of dosages (DS, 3 decimals) of `sexes.size()` samples s<i> (sex "1" male) on 30
// variants of each of `chromosomes`: haploid calls (GT and DS of one allele) for some males on
// X and Y and for some samples on MT, diploid ones otherwise, ~10% missing.
void write_dosage_vcf(const std::string& path, const std::vector<std::string>& sexes,
                      const std::vector<std::string>& chromosomes);

}  // namespace colflow::test
