// colflow export: a store written back as PLINK files or .npy.
#include <iostream>

#include "colflow/colflow.hpp"
#include "colflow/preprocess/exporter.hpp"
#include "commands.hpp"
#include "progress.hpp"
#include "validators.hpp"

namespace colflow::cli {

command add_export(CLI::App& app) {
  struct options {
    std::string store, bed, npy, dtype = "f64";
    double hard_call_threshold = 0.1;
    bool force = false, quiet = false;
  };
  auto o = std::make_shared<options>();
  app.add_option("STORE", o->store, "The store directory")->required();
  auto* bed =
      app.add_option("--bed", o->bed,
                     "Write PREFIX.bed/.bim/.fam. A genotype store's .bed is byte-identical\n"
                     "to the one it was made from (padding bits zeroed); a dosage store's\n"
                     "holds its hard calls; a float store must hold dosages (made with\n"
                     "--no-standardize)");
  auto* npy =
      app.add_option("--npy", o->npy,
                     "Write the matrix as .npy (samples in rows, Fortran order): standardised\n"
                     "values for a genotype store, the stored values for a float store, the\n"
                     "dosages (NaN for missing) for a dosage store");
  bed->excludes(npy);
  app.add_option("--hard-call-threshold", o->hard_call_threshold,
                 "--bed of a dosage store: a dosage within this distance of 0, 1 or 2 becomes\n"
                 "that call, others missing (default 0.1, as PLINK 2)")
      ->check(number_range(0.0, 0.5))
      ->needs(bed);
  app.add_option("--dtype", o->dtype, "Element type of --npy: f64 (default) or f32")
      ->check(CLI::IsMember({"f64", "f32"}));
  app.add_flag("--force", o->force, "Replace existing output files");
  app.add_flag("--quiet", o->quiet, "No progress display and no summary line");
  return [o] {
    if (o->bed.empty() && o->npy.empty())
      throw error(errc::invalid_argument, "nothing to do: give --bed PREFIX or --npy FILE");
    const store s = store::open(o->store);
    // The stream's progress callback drives the progress line (stderr, terminals only).
    progress_line line("export", !o->quiet);
    const auto progress = [&](const pass_progress& p) {
      line.update(p.columns_done, p.columns_total, "columns", static_cast<double>(p.bytes_read),
                  p.seconds);
    };
    if (!o->bed.empty()) {
      preprocess::export_bed(s, o->bed, o->force, progress, o->hard_call_threshold);
      line.finish();
      if (!o->quiet) std::cout << "wrote " << o->bed << ".bed/.bim/.fam\n";
    } else {
      preprocess::export_npy(s, o->npy, o->dtype == "f32", o->force, progress);
      line.finish();
      if (!o->quiet) std::cout << "wrote " << o->npy << "\n";
    }
    return 0;
  };
}

}  // namespace colflow::cli
