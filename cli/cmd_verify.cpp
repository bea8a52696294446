// colflow verify: every checksum and every frame's decode (colflow::verify), with progress.
#include <iostream>

#include "colflow/colflow.hpp"
#include "commands.hpp"
#include "progress.hpp"

namespace colflow::cli {

command add_verify(CLI::App& app) {
  struct options {
    std::string store;
    bool quiet = false;
  };
  auto o = std::make_shared<options>();
  app.add_option("STORE", o->store, "The store directory")->required();
  app.add_flag("--quiet", o->quiet, "No progress display and no summary line");
  app.footer(
      "Validates the headers and every index entry, checks the sample and column lists\n"
      "against the manifest's checksums (format 1.3 and later) and reads them, then checks\n"
      "each frame's XXH3-64 checksum and decodes it. Exit status 0 when the store is sound;\n"
      "otherwise 1, with a message naming the first bad column or file.");
  return [o] {
    const store s = store::open(o->store);
    progress_line line("verify", !o->quiet);
    const verify_report report = verify(s, [&line](const verify_progress& p) {
      line.update(p.columns_done, p.columns_total, "columns", static_cast<double>(p.frame_bytes),
                  p.seconds);
    });
    line.finish();
    if (!o->quiet && !report.list_checksums)
      std::cout << "note: format 1." << s.version_minor()
                << " store: it carries no list checksums (samples.tsv and columns.tsv were "
                   "parsed, not checksummed)\n";
    if (!o->quiet)
      std::cout << "ok: " << report.columns << " columns, " << report.rows << " rows, "
                << human_bytes(static_cast<double>(report.frame_bytes)) << " of frames verified in "
                << report.seconds << " s\n";
    return 0;
  };
}

}  // namespace colflow::cli
