/// @file sex_chromosomes.hpp
/// Chromosome kinds and sample sexes: what PLINK 2's ploidy rules on X, Y and MT need.
///
/// PLINK 2 counts a male's calls on X as haploid, only males' calls on Y, and everyone's calls
/// on MT as haploid; XY (the pseudo-autosomal region) and the autosomes are diploid for
/// everyone. `colflow stats` follows these rules (docs/ANALYSES.md, "Sex chromosomes"); this
/// header gives the two inputs they need: the kind of a column's chromosome and each sample's
/// sex, from the store (the `.fam`'s, or `colflow preprocess --sex`) or from a sex file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "colflow/store/chromosome.hpp"
#include "colflow/store/store.hpp"

namespace colflow {

/// What a chromosome is, for the ploidy rules.
enum class chromosome_kind : std::uint8_t { autosome, x, y, xy, mt };

/// The kind of a chromosome code, read through normalize_chromosome (store/chromosome.hpp):
/// "X", 23, chrX and x are X, and so on for Y (24), XY (25) and MT (26, M); anything else is
/// an autosome, other species' codes ("Chr01K") and contigs too, as PLINK 2 counts them with
/// --allow-extra-chr. So a store written before codes were normalised reads as a new one.
chromosome_kind kind_of_chromosome(std::string_view code);

/// A sample's sex.
enum class sample_sex : std::uint8_t { unknown = 0, male = 1, female = 2 };

/// Each store sample's sex from its sample_info::sex ("1" male, "2" female, else unknown). As
/// PLINK 2 reads a `.fam`, "M"/"m" are male and "F"/"f" female too; "0", "-9", "NA" and any
/// other value are unknown.
std::vector<sample_sex> sexes_of(const std::vector<sample_info>& samples);

/// A sex code as plink2 --update-sex reads one, by its first character: 1, M or m male, 2, F or
/// f female, 0, N, U or u unknown (so "NA", "Male" and "female" read as plink2 reads them);
/// std::nullopt for any other code ("-9", "3") and an empty one. read_sex_file() reads its SEX
/// column with it.
std::optional<sample_sex> sex_of_code(std::string_view code) noexcept;

/// Reads a sex file for the store's samples, as plink2 --update-sex reads one: whitespace
/// table, optional header line starting with '#' (#FID IID SEX or #IID SEX; match on IID alone
/// for the IID form, refusing an ambiguous IID), or no header: FID IID SEX. SEX: 1/M/m male,
/// 2/F/f female, 0/NA unknown.
/// Store samples absent from the file keep `current`'s value. Throws colflow::error bad_input
/// naming file and line for malformed lines / bad codes / duplicate samples, not_found for a
/// missing file.
///
/// In detail: a header names the sex column SEX (any capitalisation; the first such column
/// after the IDs, so a `.psam` works); without one the sex is the third field. Every line has
/// the header's number of fields (or the first line's, at least three). As plink2 does, only
/// the first character of a sex is read: 1, M or m is male, 2, F or f female, 0, N, U or u
/// unknown (so NA, Male and female are read as plink2 reads them); anything else ("-9", "3") is
/// refused. Samples of the file that the store does not have are ignored (their sex still
/// checked). Also bad_input for an empty file, a header without a SEX column and an IID alone
/// that the store has in several families; invalid_argument when `current` has not one entry
/// per sample.
std::vector<sample_sex> read_sex_file(const std::filesystem::path& file,
                                      const std::vector<sample_info>& samples,
                                      std::vector<sample_sex> current);

}  // namespace colflow
