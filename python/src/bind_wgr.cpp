// wgr: whole-genome regression (regenie's step 1), run as `colflow wgr` runs it, its LOCO
// predictions returned as numpy arrays (colflow/_wgr.py makes the DataFrames).

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "colflow/analysis/wgr.hpp"
#include "python_call.hpp"

using namespace nb::literals;

namespace colflow::python {
namespace {

nb::dict wgr_of(const py_store& ps, index_array rows, index_array cols, table_array pheno,
                const std::vector<std::string>& names, std::optional<table_array> covar,
                const std::vector<std::string>& covar_names, std::size_t block_size,
                bool allow_short_chromosomes, std::optional<std::size_t> folds, bool loocv,
                bool l1_full, std::size_t level0, std::size_t level1,
                const std::vector<bool>& case_control, int threads, nb::object progress) {
  const auto s = ps.get();
  const selection sel = make_selection(*s, span_of(rows), span_of(cols));
  const phenotype_table traits = make_table(pheno, names, s->num_rows());
  std::optional<phenotype_table> covariates;
  if (covar) covariates = make_table(*covar, covar_names, s->num_rows());
  wgr_options o;
  o.block_size = block_size;
  o.allow_short_chromosomes = allow_short_chromosomes;
  // As the command: K folds when given, leave-one-out when asked, else regenie's rule.
  if (folds) o.folds = *folds;
  o.validation = loocv   ? wgr_validation::leave_one_out
                 : folds ? wgr_validation::folds
                         : wgr_validation::automatic;
  o.level1_full_fit = l1_full;
  o.level0_h2 = heritability_grid(level0);
  o.level1_h2 = heritability_grid(level1);
  o.case_control = case_control;
  wgr_result r;
  python_call call(std::move(progress), {});
  const analysis_options options = call.options();
  call.run(threads, [&] {
    r = whole_genome_regression(*s, sel, traits, covariates ? &*covariates : nullptr, o, options);
  });
  nb::list loco, tau, loss, chosen;
  for (wgr_trait& t : r.traits) {
    // 23 × n, column-major: chromosome c's predictions are contiguous per sample.
    loco.append(to_numpy(std::vector<double>(t.loco.data(), t.loco.data() + t.loco.size())));
    tau.append(to_numpy(std::move(t.level1_tau)));
    loss.append(to_numpy(std::move(t.level1_loss)));
    chosen.append(t.chosen);
  }
  nb::dict d;
  d["rows"] = indices_to_numpy(r.rows);
  d["loco"] = loco;
  d["tau"] = tau;
  d["loss"] = loss;
  d["chosen"] = chosen;
  d["columns_used"] = r.columns;
  d["blocks"] = r.blocks;
  d["leave_one_out"] = r.leave_one_out;
  return d;
}

}  // namespace

void bind_wgr(nb::module_& m) {
  m.def("wgr", &wgr_of, "store"_a, "rows"_a, "cols"_a, "pheno"_a, "names"_a, "covar"_a.none(),
        "covar_names"_a, "block_size"_a, "allow_short_chromosomes"_a, "folds"_a.none(), "loocv"_a,
        "l1_full"_a, "level0"_a, "level1"_a, "case_control"_a, "threads"_a, "progress"_a.none());
}

}  // namespace colflow::python
