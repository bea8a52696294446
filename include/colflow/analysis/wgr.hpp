/// @file wgr.hpp
/// Whole-genome regression with leave-one-chromosome-out (LOCO) predictions: regenie's step 1
/// (Mbatchou et al., Nat Genet 2021), `colflow wgr`.
///
/// On the samples used (selected, with every covariate and, for each trait, a value; with
/// several traits a missing value of a quantitative trait is the trait's mean over the others,
/// and a sample without a case/control trait's status is left out of that trait's covariates'
/// fit, of its predictors' centring and scaling and of its level 1, its LOCO predictions NaN:
/// regenie's masks):
/// - covariates (an intercept and the covariate file's columns) are projected out of the traits
///   and of the genotype columns (a missing call is first the column's mean), and each is
///   scaled to ‖v‖² = n − c (c the covariates' rank, the intercept included);
/// - **level 0**: the columns of each chromosome, in store order, form blocks of
///   `block_size`; the samples form `folds` consecutive folds of ⌊n/K⌋ (the last one takes the
///   rest). For each block, fold k and shrinkage λ_j = M(1 − h²_j)/h²_j (M the columns of
///   step 1), the ridge fit β = (GᵀG + λ_j I)⁻¹ Gᵀy on the other folds predicts fold k's
///   samples: one predictor per block and λ_j, each then centred and scaled to SD 1;
/// - **level 1**: ridge regression of the trait on those predictors, without intercept, at
///   τ_j = C(1 − h²_j)/h²_j (C the predictors), fitted on all folds but k to predict fold k;
///   the τ_j with the smallest cross-validated squared error wins. A case/control trait (0/1)
///   takes ridge logistic regression instead, at τ_j·3/π², with the log odds of its logistic
///   fit on the covariates as a fixed offset, chosen by the held-out −log-likelihood
///   (regenie's `--bt`);
/// - the **LOCO prediction** of chromosome c for a sample of fold k is fold k's level-1 fit
///   over the predictors of every other chromosome;
/// - with **leave-one-out** (wgr_validation) every sample is a fold of its own: the ridge fits'
///   held-out predictions come exactly from the fit on every sample and the sample's leverage;
///   a case/control level 1 takes each sample's coefficients one Newton step from the full fit
///   without it (regenie's --loocv).
/// The predictions are on the scale of the covariate-adjusted, scaled trait (quantitative) or
/// log odds without the covariates' offset (case/control), as regenie writes them. Every product is
/// computed in a fixed order on fixed ranges, so the results depend neither on the thread count
/// nor on the in-flight depth.
///
/// Unlike regenie, a column constant among the samples (or a combination of the covariates)
/// is kept at zero rather than refused: it counts in M and predicts nothing. Samples outside
/// the analysis take no part at any level (regenie lets them into level 1 with the predictors'
/// centred zeros), so the two agree when every sample of the store is analysed.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/phenotype.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/store/store.hpp"

namespace colflow {

/// How level 0 and level 1 hold samples out of the fits that predict them.
enum class wgr_validation {
  /// K folds, or leave-one-out when a case/control trait is fitted on fewer than
  /// wgr_leave_one_out_below samples (regenie's rule: K-fold logistic fits are unstable there).
  automatic,
  folds,          ///< K consecutive folds of the samples
  leave_one_out,  ///< every sample a fold of its own (regenie's --loocv)
};

/// The sample count below which wgr_validation::automatic leaves one out for a case/control
/// trait.
inline constexpr std::size_t wgr_leave_one_out_below = 5000;

struct wgr_options {
  std::size_t block_size = 1000;  ///< columns per level-0 block (within a chromosome)
  /// Kept so that existing callers still compile; changes nothing. A chromosome with fewer
  /// selected columns than one block is always fitted as one smaller block, as regenie does.
  bool allow_short_chromosomes = false;
  std::size_t folds = 5;  ///< K of the cross-validation, at least 2
  wgr_validation validation = wgr_validation::automatic;
  /// With leave-one-out, a case/control trait's LOCO predictions come from the level-1 fit on
  /// every sample rather than from each sample's leave-one-out fit (regenie's --l1-full).
  bool level1_full_fit = false;
  /// The heritabilities that set the shrinkage of level 0 and of level 1, each in (0, 1).
  std::vector<double> level0_h2 = {0.01, 0.25, 0.5, 0.75, 0.99};
  std::vector<double> level1_h2 = {0.01, 0.25, 0.5, 0.75, 0.99};
  /// Per trait: fitted as case/control (values 0 control, 1 case) at level 1; empty: every
  /// trait quantitative.
  std::vector<bool> case_control;
  /// Where the level-0 predictors wait for level 1: empty, in memory; else a directory for an
  /// unnamed scratch file (freed at the end, or by the system at a crash), so that memory holds
  /// one trait's predictors at a time (regenie's --lowmem).
  std::filesystem::path spill_directory;
};

/// regenie's grid of `count` heritabilities (its --l0/--l1): 0.01, 1/(count − 1), …,
/// (count − 2)/(count − 1), 0.99. Throws colflow::error invalid_argument for a count below 2.
std::vector<double> heritability_grid(std::size_t count);

/// The chromosome number of a store column as whole-genome regression counts them:
/// autosome_or_x_number (store/chromosome.hpp), 1-22 and 23 for X; 0 for every other code (Y,
/// XY, MT, contigs), which step 1 leaves out.
int wgr_chromosome(const std::string& chrom) noexcept;

/// The model of one trait.
struct wgr_trait {
  std::string name;
  std::size_t values = 0;  ///< samples with a value (the others took the mean)
  double scale = 0;  ///< the covariate-adjusted trait's ‖y‖ / √(n − c), before scaling
  bool case_control = false;  ///< fitted by ridge logistic regression at level 1
  /// Per level-1 shrinkage: its τ and the cross-validated loss: the mean squared error
  /// Σ (y − ŷ)² / n (quantitative) or the held-out −log-likelihood / n (case/control).
  std::vector<double> level1_tau, level1_loss;
  std::size_t chosen = 0;  ///< index of the τ with the smallest loss
  double cv_r2 = 0;  ///< 1 − that loss's sum / Σ y², on the scaled trait; NaN case/control
  /// loco(c − 1, i): the prediction for sample i (of `wgr_result::rows`) without chromosome c,
  /// c = 1 … 23.
  Eigen::MatrixXd loco;
};

struct wgr_result {
  std::vector<std::size_t> rows;     ///< the store rows used, increasing
  std::size_t covariates = 0;        ///< c: the covariates' rank, the intercept included
  std::size_t columns = 0;           ///< M: columns of step 1
  std::size_t constant_columns = 0;  ///< of them, constant once the covariates are projected out
  std::size_t left_out_columns = 0;  ///< selected columns on chromosomes step 1 does not use
  std::size_t blocks = 0;
  bool leave_one_out = false;            ///< validated by leave-one-out, not by folds
  std::vector<std::size_t> fold_starts;  ///< first position in `rows` of each fold, and n; empty
                                         ///< with leave-one-out
  std::vector<wgr_trait> traits;
  pass_stats pass;
};

/// What a run will use, known before it starts: its sizes and the memory of its largest
/// parts, in bytes. With n samples, P traits, B blocks of at most b columns (the widest block
/// of the layout), R = |level0_h2|, K folds, C = B·R predictors and T threads:
/// - predictors: P · n · C · 8 (every trait's level-0 predictions, held until its level 1);
///   spilled (wgr_options::spill_directory), n · C · 8 in memory (one trait's, read back for
///   its level 1) and P · n · C · 8 on disk;
/// - level 0: the block the pass gathers and A fitted beside it, A = 0 (the pass fits each
///   block itself) unless T > K, then 2 (2 with leave-one-out and T ≥ 2, its
///   eigendecomposition being one task): (A + 1)·n·b·8 (the blocks) + max(A, 1)·(n·R·P·8 +
///   (K + min(T, K·R))·b²·8) (the fits' predictions, the folds' products and each running
///   factorisation's sum, a task per fold and shrinkage);
/// - level 1: K·C²·8 (the folds' products) + min(T, K)·C²·8 (each running fold's sum),
///   with a case/control trait + min(T, K)·4096·C·8 (each running fold's weighted rows), and
///   + n·C·8 when one misses some statuses (a copy of its samples' predictors);
/// - fixed: n·(c + P)·8 for the covariates' basis and the traits, 8 per store row.
/// With leave-one-out, level 0 is (A + 1)·n·b·8 + max(A, 1)·(n·R·P·8 + 6·b²·8) (the
/// products in 4 parts, their sum and eigenvectors) + 2·T·1024·b·8 (each running chunk of
/// rows), and level 1 is 6·C²·8 + 2·T·1024·C·8, with a case/control trait + 4096·C·8.
/// The peak is predictors + max(level 0, level 1) + fixed.
struct wgr_plan {
  std::size_t samples = 0, traits = 0, columns = 0, blocks = 0, predictors = 0;
  bool leave_one_out = false;  ///< validated by leave-one-out (the memory below differs)
  std::uint64_t predictor_bytes = 0, level0_bytes = 0, level1_bytes = 0, fixed_bytes = 0;
  std::uint64_t spill_bytes = 0;  ///< on disk, spilled; 0 in memory
  std::uint64_t peak_bytes() const noexcept {
    return predictor_bytes + std::max(level0_bytes, level1_bytes) + fixed_bytes;
  }
};

/// The plan of whole_genome_regression(s, sel, traits, covariates, options) on `threads`
/// threads. Throws what that call throws for its options, samples and columns.
wgr_plan plan_wgr(const store& s, const selection& sel, const phenotype_table& traits,
                  const phenotype_table* covariates, const wgr_options& options,
                  std::size_t threads);

/// Runs step 1 for every trait of `traits` (quantitative, or case/control as
/// `options.case_control` says) in one pass over the store.
/// `covariates` may be null. Throws colflow::error invalid_argument for options out of range,
/// a trait without values or constant, fewer samples than folds, collinear covariates, no
/// column on chromosomes 1-23, a case/control trait with a value other than 0 or 1, a fold
/// without cases or controls (among the trait's samples), covariates
/// that separate them (all refused before the pass), or a level-1 fit that does not converge; the
/// stream's errors otherwise.
wgr_result whole_genome_regression(const store& s, const selection& sel,
                                   const phenotype_table& traits, const phenotype_table* covariates,
                                   const wgr_options& options = {},
                                   const analysis_options& analysis = {});

/// The files of `colflow wgr` for an output prefix (the prefix followed by the text): regenie's
/// PREFIX_<i>.loco per trait (i from 1), PREFIX_pred.list, and PREFIX.wgr.tsv, a line per trait
/// (with its MODEL, quantitative or binary) and level-1 shrinkage.
struct wgr_files {
  std::vector<std::filesystem::path> loco;
  std::filesystem::path pred_list, summary;
};

/// Writes step 1's files. A .loco file is regenie's: a header `FID_IID` and the samples'
/// FID_IID, then a line per chromosome 1-23, its number and the predictions; PREFIX_pred.list
/// names each trait's file (absolute paths). Staged outputs, committed together. Throws
/// colflow::error naming the file.
wgr_files write_wgr(const store& s, const wgr_result& result, const std::filesystem::path& prefix,
                    int digits = 6);

/// LOCO predictions read for step 2, per trait: loco(c − 1, row) for store row `row`, NaN for a
/// sample the file does not have.
struct loco_predictions {
  std::vector<std::string> traits;
  std::vector<Eigen::MatrixXd> values;  ///< per trait: 23 × store rows
  /// per trait: "quantitative" or "binary" (log odds) as colflow wgr fitted it, from the
  /// PREFIX.wgr.tsv beside the list when its N is the .loco file's sample count; "" when
  /// unknown (regenie's files)
  std::vector<std::string> models;
};

/// Reads a PREFIX_pred.list (regenie's or colflow's) and the .loco files it names (relative
/// paths from the list's folder), matching samples by FID_IID to the store's, and each trait's
/// model from the PREFIX.wgr.tsv colflow wgr writes beside the list, when there. Throws
/// colflow::error bad_input naming the file and line for a malformed list or file, a sample
/// listed twice, a chromosome line out of order; not_found for a missing file.
loco_predictions read_loco(const std::filesystem::path& pred_list,
                           const std::vector<sample_info>& samples);

}  // namespace colflow
