/// @file assoc.hpp
/// Association scans (`colflow assoc`): per column, a regression of each phenotype on an
/// intercept, the column's value (the A1 dosage for genotypes) and optional covariates, as
/// PLINK 2's `--glm` does: ordinary least squares for quantitative traits
/// (linear_association), logistic regression with Firth's fallback for case/control traits
/// (logistic_association).
///
/// Each phenotype uses the selected samples with a value for it and for every covariate;
/// within a column, samples with a missing call are left out too (so N_OBS varies by column).
/// All phenotypes are answered in one streaming pass. For genotype stores the column is never
/// decoded: its sums come from the packed codes (counts and table dot products), covariates
/// are projected out of each phenotype once, and each column's missing calls are corrected
/// for exactly (a small k x k update per column, k = 1 + covariates).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/phenotype.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/analysis/sex_chromosomes.hpp"
#include "colflow/store/store.hpp"

namespace colflow {

/// Why a test has no estimate.
enum class assoc_status : std::uint8_t {
  ok = 0,
  constant,         ///< the column has one value among the samples used
  too_few_samples,  ///< no residual degree of freedom left
  collinear,      ///< the column is a combination of the covariates, or they lose rank without its
                  ///< missing calls
  not_converged,  ///< logistic: the fit did not converge (Firth's included, or not allowed)
};

/// "." for ok, else CONST_COLUMN, TOO_FEW_SAMPLES, COLLINEAR, NOT_CONVERGED.
std::string_view assoc_status_name(assoc_status s) noexcept;

/// The test of one column for one phenotype. Estimates are NaN unless status is ok.
struct assoc_result {
  std::uint64_t n_obs = 0;  ///< samples used: phenotype, covariates and call present
  /// Per A1 allele (per unit): the slope (linear) or the log odds ratio (logistic).
  double beta = std::numeric_limits<double>::quiet_NaN();
  double se = std::numeric_limits<double>::quiet_NaN();
  double t_stat = std::numeric_limits<double>::quiet_NaN();  ///< beta / se (logistic: Wald Z)
  /// Two-sided: t with n_obs−k−1 df (linear), standard normal (logistic).
  double p = std::numeric_limits<double>::quiet_NaN();
  assoc_status status = assoc_status::ok;
  bool firth = false;  ///< logistic: the estimate is Firth's penalised one
};

/// Receives the results of each selected column, serially and in the selection's order:
/// `position` in the selection, the store `column`, one result per phenotype.
using assoc_sink =
    std::function<void(std::size_t position, std::size_t column, std::span<const assoc_result>)>;

/// Per phenotype: the samples it can use (before missing calls are removed per column).
struct assoc_summary {
  std::vector<std::size_t> samples_used;
  std::size_t covariates = 0;
  pass_stats pass;
};

/// Runs the scan. `covariates` may be null. Throws colflow::error: invalid_argument when a
/// phenotype has no usable sample or the covariates are constant or collinear among its
/// samples; the stream's errors otherwise.
///
/// `sex`, one per store row (sexes_of(s.samples()) for the store's own), applies PLINK 2's
/// defaults on sex chromosomes: a column on X is tested with sex as one more covariate (when
/// it varies among the selected samples of known sex) and without the samples of unknown sex,
/// a male's call counting 0 or 2 copies, as stored; a column on Y on the males alone; on Y and
/// MT a call counts 0 or 1 copies (haploid: BETA and SE twice the stored dosage's). Empty:
/// every column as an autosome.
assoc_summary linear_association(const store& s, const selection& sel,
                                 const phenotype_table& phenotypes,
                                 const phenotype_table* covariates, const assoc_sink& sink,
                                 const analysis_options& options = {},
                                 std::span<const sample_sex> sex = {});

/// The scan of linear_association with whole-genome regression's LOCO predictions (regenie's
/// step 2): a column on chromosome c (1-22, X as 23) is tested on each phenotype minus s·loco(c),
/// s being the phenotype's covariate-adjusted scale (‖y − ŷ‖ / √(n − k) over its samples, k the
/// covariates with the intercept), the scale whole_genome_regression() fitted its predictions
/// on. `loco` holds one matrix per phenotype, 23 × store rows (read_loco(); NaN: a sample without
/// a prediction, left out of that phenotype). Columns on other chromosomes are not tested; their
/// count is returned in `untested`. Runs one scan per chromosome, in the order the selection
/// first meets them, so results reach the sink in the selection's order for a store sorted by
/// chromosome. Throws as linear_association, and invalid_argument for a `loco` of another shape.
assoc_summary linear_association_loco(const store& s, const selection& sel,
                                      const phenotype_table& phenotypes,
                                      const phenotype_table* covariates,
                                      std::span<const Eigen::MatrixXd> loco, const assoc_sink& sink,
                                      std::size_t& untested, const analysis_options& options = {},
                                      std::span<const sample_sex> sex = {});

/// When logistic regression uses Firth's penalised likelihood.
enum class firth_mode : std::uint8_t {
  fallback,  ///< when the plain fit cannot be trusted (PLINK 2's default): a zero count of
             ///< either allele among cases or among controls, or no convergence
  always,
  never,  ///< a plain fit that does not converge is reported NOT_CONVERGED
};

/// How logistic regression tests the column's coefficient.
enum class logistic_test : std::uint8_t {
  wald,   ///< the column's model fitted by Newton's method, Wald test (PLINK 2's --glm)
  score,  ///< the score test at the fit without the column (regenie's step 2): no fit per
          ///< column; a missing call takes the column's mean over the phenotype's samples
};

/// Runs the case/control scan: per column and phenotype, logistic regression of the case
/// status on an intercept, the column and the covariates (maximum likelihood by Newton's
/// method, started from the phenotype's fit without the column), Wald tests of the column's
/// coefficient. `cases` holds 1 for a case, 0 for a control, NaN for missing
/// (case_control_coding() makes it from PLINK's codes). Samples and statuses as
/// linear_association; columns run in parallel, each fit on one thread, so results never
/// depend on the thread count. Throws colflow::error invalid_argument for a value other than
/// 0, 1 or NaN, a phenotype without a case or without a control among its samples, or
/// covariates constant or collinear among them (naming the covariate); the stream's errors
/// otherwise. `sex` as for linear_association. With logistic_test::score each column's
/// coefficient is tested by the score U = g̃ᵀ(y − p) over its variance V = g̃ᵀWg̃ at the
/// phenotype's fit without the column (g̃ the column less its W-weighted projection on the
/// intercept and covariates): BETA U/V (one Newton step), SE 1/√V, Z U/√V; `firth` is unused
/// and the fit without the column must converge (invalid_argument otherwise).
assoc_summary logistic_association(const store& s, const selection& sel,
                                   const phenotype_table& cases, const phenotype_table* covariates,
                                   const assoc_sink& sink, firth_mode firth = firth_mode::fallback,
                                   const analysis_options& options = {},
                                   std::span<const sample_sex> sex = {},
                                   logistic_test test = logistic_test::wald);

/// The scan of logistic_association with whole-genome regression's LOCO predictions (regenie's
/// step 2 for case/control traits): a column on chromosome c (1-22, X as 23) is tested with the
/// phenotype's loco(c) as a fixed offset of the linear predictor, in the null model that starts
/// each fit as in the column's own (the predictions are log odds, as regenie's step 1 writes them
/// for a binary trait). `loco`, `untested`, the order of the scans and the errors as for
/// linear_association_loco; the fits, Firth's fallback and the tables as logistic_association.
assoc_summary logistic_association_loco(
    const store& s, const selection& sel, const phenotype_table& cases,
    const phenotype_table* covariates, std::span<const Eigen::MatrixXd> loco,
    const assoc_sink& sink, std::size_t& untested, firth_mode firth = firth_mode::fallback,
    const analysis_options& options = {}, std::span<const sample_sex> sex = {},
    logistic_test test = logistic_test::wald);

/// The model of an association table.
enum class assoc_model : std::uint8_t { linear, logistic };

/// The table of one phenotype: PREFIX.<phenotype>.assoc.tsv for the linear model,
/// PREFIX.<phenotype>.logistic.tsv for the logistic one (the prefix followed by the text,
/// not a path operation), a '/' in the name written as '_'.
std::filesystem::path assoc_file(const std::filesystem::path& prefix, std::string_view phenotype,
                                 assoc_model model = assoc_model::linear);

/// The tables of `colflow assoc`, written while the scan runs: one per phenotype,
/// assoc_file(prefix, name, model), with the columns `#CHR POS ID A1 A2 N_OBS BETA SE T_STAT P
/// NOTE` (linear) or `#CHR POS ID A1 A2 FIRTH? N_OBS OR LOG(OR)_SE Z_STAT P NOTE` (logistic;
/// FIRTH? Y or N; `BETA SE` in place of `OR LOG(OR)_SE` without `odds_ratio`); NA for a missing
/// estimate, NOTE the assoc_status_name. Results are formatted in batches,
/// one task per table, so that many phenotypes do not serialise the scan on number formatting.
/// Each table is a staged output (io/staged_output.hpp): nothing appears under its name before
/// commit(), and a writer destroyed without commit() leaves no file behind.
///
/// ```
/// assoc_writer tables(s, pheno.names, "out", 6);
/// linear_association(s, sel, pheno, nullptr, tables.sink());
/// tables.commit();  // out.PHENO1.assoc.tsv, ...
/// ```
class assoc_writer {
 public:
  /// Creates the tables and writes their header lines. `s` must outlive the writer; `digits`
  /// are the significant digits of the numbers (1 to 17). Throws colflow::error
  /// invalid_argument for digits out of range or no phenotype; the file system's errors,
  /// naming the file.
  assoc_writer(const store& s, std::span<const std::string> phenotypes,
               const std::filesystem::path& prefix, int digits = 6,
               assoc_model model = assoc_model::linear, bool odds_ratio = true);
  ~assoc_writer();
  assoc_writer(const assoc_writer&) = delete;
  assoc_writer& operator=(const assoc_writer&) = delete;

  /// A sink for linear_association() or logistic_association() that adds each column's lines; it
  /// refers to this writer, which must outlive the scan.
  assoc_sink sink();
  /// Adds the lines of one column: one result per phenotype, in the order of the
  /// constructor's names (what the sink calls). Throws colflow::error invalid_argument for a
  /// wrong number of results, io_error when a buffered batch cannot be written.
  void add(std::size_t position, std::size_t column, std::span<const assoc_result> results);
  /// Writes the lines still buffered, then syncs and renames every table into place.
  /// Returns the files, one per phenotype in order. Throws colflow::error naming the file.
  const std::vector<std::filesystem::path>& commit();
  /// The files the tables are written to, one per phenotype in order.
  const std::vector<std::filesystem::path>& files() const noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace colflow
