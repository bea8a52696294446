// What the linear and logistic association scans share.
#pragma once

#include <cstddef>
#include <functional>

#include "colflow/analysis/assoc.hpp"
#include "colflow/analysis/sex_chromosomes.hpp"

namespace colflow::detail {

// Adds the figures of pass `p` to `to`: one summary for a scan made of several passes.
void add_pass(pass_stats& to, const pass_stats& p);

// A scan of `sel` on this process alone, with these options, handing results to a sink.
using local_association =
    std::function<assoc_summary(const selection&, const assoc_sink&, const analysis_options&)>;

// On several processes: each scans its share of the columns with `local` (a column's tests
// depend on that column only), the results are exchanged, and every process hands all of
// them to `sink` in order. `phenotypes` results per column.
assoc_summary distributed_association(const store& s, const selection& sel, std::size_t phenotypes,
                                      const assoc_sink& sink, const analysis_options& options,
                                      const local_association& local);

// A scan of some columns, with the samples and covariates they need, of the phenotypes
// `only` lists (indices; all when empty).
using chromosome_run_scan =
    std::function<assoc_summary(const selection&, const phenotype_table* covariates,
                                std::span<const std::size_t> only, const assoc_sink&)>;

// Whether PLINK 2's sex-chromosome defaults change anything for `sel`: a column on X, Y or MT.
bool selects_sex_chromosomes(const store& s, const selection& sel);

// PLINK 2's --glm defaults on sex chromosomes, given each store row's sex: a column on X is
// tested with sex as one more covariate (SEX, 1 male, 2 female; when it varies among the
// selected samples of known sex) and without the samples of unknown sex, a male's call
// counting 0 or 2 copies (PLINK 2's default); a column on Y on the males alone; Y and MT
// haploid (a call counts 0 or 1 copies, half the stored dosage: BETA and SE double); other
// columns (autosomes, XY) as given. Splits `sel`'s columns into runs of one treatment, scans
// each run, and hands the results to `sink` in the selection's order. A phenotype that cannot
// be tested among the samples of X or Y (too few of them, no case or no control, a covariate
// constant there) gets TOO_FEW_SAMPLES on that run's columns; the others are tested.
// Returns the summary of the run of the most columns, with every run's pass added up.
assoc_summary scan_with_sex_chromosomes(const store& s, const selection& sel,
                                        const phenotype_table* covariates,
                                        std::span<const sample_sex> sex, std::size_t phenotypes,
                                        const assoc_sink& sink, const chromosome_run_scan& scan);

// Throws invalid_argument unless the tables and the selection have one row per store sample
// and there is a phenotype to test.
void check_association_inputs(const store& s, const selection& sel,
                              const phenotype_table& phenotypes, const phenotype_table* covariates);

// Two-sided p of the standard normal: erfc(|z| / √2).
double two_sided_normal_p(double z);

// logistic_association() with a fixed offset in each phenotype's linear predictor (regenie's
// step 2 with a case/control trait's LOCO prediction): `offsets` is store rows x phenotypes,
// NaN for a sample without one (left out of that phenotype), or null for none. With an offset
// every column is fitted sample by sample (the counting shortcut needs identical samples).
assoc_summary logistic_association_with_offsets(
    const store& s, const selection& sel, const phenotype_table& cases,
    const phenotype_table* covariates, const Eigen::MatrixXd* offsets, const assoc_sink& sink,
    firth_mode firth, const analysis_options& options, std::span<const sample_sex> sex,
    logistic_test test);

}  // namespace colflow::detail
