/// @file score.hpp
/// Linear scores of the samples (polygenic scores): `colflow score`, PLINK 2's --score.
///
/// A score file names variants, an allele of each and one or more weights. A sample's score is
/// the sum, over the variants of the file found in the store, of each weight times the sample's
/// count (dosage) of the named allele: the A1 dosage d when the named allele is the store's A1,
/// 2 − d when it is A2. Missing calls are mean-imputed (2 × the named allele's frequency among
/// the selected samples) or, with no_mean_imputation, left out. `center` subtracts that mean
/// from every called dosage (a missing call then counts 0) and `variance_standardize` also
/// divides by sqrt(2f(1 − f)), f the A1 frequency. All scores are computed in one streaming pass
/// over the matched columns only. Each sample's sums are added in column order within at most
/// 16 fixed segments of the matched columns, and the segments' sums in segment order, so results
/// depend on neither threads, scheduling nor processes: on R processes (analysis.processes, a
/// collective) each scores whole segments and every process returns the single process's
/// result (docs/DESIGN.md §4.9, §7). docs/ANALYSES.md, "score".
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/store/store.hpp"

namespace colflow {

/// Where the weights are in a score file, as plink2's `--score FILE [ID_COL [ALLELE_COL
/// [SCORE_COL]]]` and `--score-col-nums` give them (columns 1-based).
struct score_file {
  std::filesystem::path path;
  std::size_t id_column = 1;
  std::size_t allele_column = 2;
  /// The weight columns; empty: the one after allele_column.
  std::vector<std::size_t> score_columns;
  enum class header_line {
    none,  ///< every line is an entry; scores are named SCORE1, SCORE2...
    skip,  ///< plink2's `header`: the first line is ignored
    read,  ///< plink2's `header-read`: the first line names the scores
  } header = header_line::none;
};

/// The entries of a score file.
struct score_table {
  /// What was read: "plink2" (the positional form), "colflow bayesr" (a .effects.tsv: ID A1
  /// and BETA_PER_UNIT), "colflow penalized" (a .coef.tsv: one score per LAMBDA, BETA_PER_UNIT),
  /// "GCTB snpRes" (GCTB's and colflow sbayesr's .snpRes: Name, A1 and A1Effect) or "PGS
  /// Catalog" (hm_rsID or rsID, effect_allele, effect_weight).
  std::string format;
  std::vector<std::string> names;  ///< one per score
  struct entry {
    std::string id, allele;
    std::size_t line = 0;         ///< 1-based line of the file
    std::vector<double> weights;  ///< one per score
  };
  std::vector<entry> entries;
};

/// Reads a score file. colflow's own `bayesr` .effects.tsv and `lasso/ridge/enet` .coef.tsv,
/// GCTB's .snpRes (header Id Name Chrom Position A1 A2 A1Frq A1Effect SE ...) and PGS Catalog
/// scoring files are recognised by their header lines and read by name (the
/// columns of `file` are then not used); any other file is read positionally. Empty lines are
/// skipped. Throws colflow::error: not_found for a missing file; bad_input naming the file and
/// line for a line with too few fields, a weight that is not a number, an (ID, allele) pair
/// given twice or no entry at all; invalid_argument for a column number of 0.
score_table read_score_file(const score_file& file);

/// How the dosages enter the scores.
struct score_options {
  enum class scaling {
    none,                  ///< the dosage of the named allele
    center,                ///< minus its mean 2f (plink2's `center`)
    variance_standardize,  ///< (dosage − 2f) / sqrt(2f(1 − f)) (`variance-standardize`)
  } scale = scaling::none;
  /// plink2's `no-mean-imputation`: a missing call adds nothing and is not counted in the
  /// denominator of the averages.
  bool no_mean_imputation = false;
};

/// The scores of the selected samples.
struct score_result {
  std::vector<std::string> names;  ///< the scores' names
  std::vector<std::size_t> rows;   ///< the store rows scored (the selection's)
  /// Matched variants: the columns scored (store indices, in store order) and their number.
  std::vector<std::size_t> columns;
  std::size_t entries_used = 0;       ///< entries of the file that matched
  std::size_t missing_ids = 0;        ///< entries whose ID the selected columns lack
  std::size_t allele_mismatches = 0;  ///< entries whose allele is neither A1 nor A2
  /// Per scored sample (rows order), row-major: sums[i * names.size() + k].
  std::vector<double> sums;
  std::vector<double> dosage_sums;           ///< named allele dosages of the called variants
  std::vector<std::uint64_t> allele_counts;  ///< 2 per called variant (plink2's ALLELE_CT)
  std::vector<std::uint64_t> denominators;   ///< of the averages (DENOM)
};

/// Scores of the selected samples of a genotype or dosage store with the weights of `table`,
/// matched to the selected columns by variant ID and then allele (A1, or A2 with the sign of the
/// dosage flipped). Entries whose ID is not among the selected columns, or whose allele is
/// neither, are skipped and counted, as plink2 does. An ID given with both alleles adds both.
/// On a genotype store the packed codes are scored without decoding (one lookup per code serves
/// every score). Throws colflow::error invalid_argument for a dense store, no matched variant,
/// or a matched ID that two selected columns share.
score_result score(const store& s, const selection& sel, const score_table& table,
                   const score_options& options = {}, const analysis_options& analysis = {});

/// Columns of the .sscore table, plink2's `cols=` sets.
struct score_columns {
  /// FID. plink2 writes it when the input had one; every store keeps a FID per sample (a .fam's,
  /// or "0" for VCF and BGEN samples without one), so `maybefid` and `fid` both write it.
  bool fid = true;
  bool nallele = true;      ///< ALLELE_CT
  bool denom = false;       ///< DENOM
  bool dosage_sum = true;   ///< NAMED_ALLELE_DOSAGE_SUM
  bool score_avgs = true;   ///< NAME_AVG per score: sum / DENOM
  bool score_sums = false;  ///< NAME_SUM per score
};

/// Parses a plink2 `cols=` descriptor: a comma-separated list of the sets to write
/// (maybefid, fid, nallele, denom, dosagesum, scoreavgs, scoresums; maybesid and phenos, which
/// name nothing a store holds, are accepted and write nothing), or one of changes to the default
/// each preceded by + or −. Throws colflow::error invalid_argument naming an unknown set.
score_columns parse_score_columns(const std::string& descriptor);

/// Writes `file`: #FID IID ALLELE_CT DENOM NAMED_ALLELE_DOSAGE_SUM NAME_AVG... NAME_SUM..., the
/// columns `columns` asks for in that order, one line per scored sample (an average with a
/// denominator of 0 is NA). A staged output: it appears only complete. Throws colflow::error
/// invalid_argument for digits out of 1-17; the file system's errors naming the file.
void write_score(const store& s, const score_result& result, const std::filesystem::path& file,
                 const score_columns& columns = {}, int digits = 6);

}  // namespace colflow
