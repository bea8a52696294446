// colflow export: a store written back as PLINK 1 or PLINK 2 files or .npy.
#include <iostream>

#include "colflow/colflow.hpp"
#include "colflow/preprocess/exporter.hpp"
#include "commands.hpp"
#include "progress.hpp"
#include "validators.hpp"

namespace colflow::cli {

command add_export(CLI::App& app) {
  struct options {
    std::string store, bed, pfile, npy, dtype = "f64";
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
  auto* pfile =
      app.add_option("--pfile", o->pfile,
                     "Write PREFIX.pgen/.pvar/.psam (PLINK 2), records uncompressed: the hard\n"
                     "calls (storage mode 0x02; a float store must hold dosages), or a dosage\n"
                     "store's dosages in 1/16384 with their hard calls (mode 0x10). The .pvar's\n"
                     "ALT is the store's A1 (the allele counted), REF its A2");
  bed->excludes(npy);
  pfile->excludes(bed)->excludes(npy);
  auto* threshold =
      app.add_option("--hard-call-threshold", o->hard_call_threshold,
                     "--bed or --pfile of a dosage store: a dosage within this distance\n"
                     "of 0, 1 or 2 becomes that call, others missing (default 0.1, as\n"
                     "PLINK 2)")
          ->check(number_range(0.0, 0.5));
  app.add_option("--dtype", o->dtype, "Element type of --npy: f64 (default) or f32")
      ->check(CLI::IsMember({"f64", "f32"}));
  app.add_flag("--force", o->force, "Replace existing output files");
  app.add_flag("--quiet", o->quiet, "No progress display and no summary line");
  return [o, threshold] {
    if (o->bed.empty() && o->pfile.empty() && o->npy.empty())
      throw error(errc::invalid_argument,
                  "nothing to do: give --bed PREFIX, --pfile PREFIX or --npy FILE");
    if (threshold->count() > 0 && o->bed.empty() && o->pfile.empty())
      throw error(errc::invalid_argument, "--hard-call-threshold needs --bed or --pfile");
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
    } else if (!o->pfile.empty()) {
      preprocess::export_pfile(s, o->pfile, o->force, progress, o->hard_call_threshold);
      line.finish();
      if (!o->quiet) std::cout << "wrote " << o->pfile << ".pgen/.pvar/.psam\n";
    } else {
      preprocess::export_npy(s, o->npy, o->dtype == "f32", o->force, progress);
      line.finish();
      if (!o->quiet) std::cout << "wrote " << o->npy << "\n";
    }
    return 0;
  };
}

}  // namespace colflow::cli
