#include <chrono>
#include <iostream>

#include "colflow/colflow.hpp"
#include "commands.hpp"

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
      "Validates the headers and every index entry, reads the sample and column lists, then\n"
      "checks each frame's XXH3-64 checksum and decodes it. Exit status 0 when the store is\n"
      "sound; otherwise 1, with a message naming the first bad column.");
  return [o] {
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    const store s = store::open(o->store);
    s.samples();
    s.columns();
    std::vector<double> values(s.num_rows());
    const bool progress = !o->quiet && stderr_is_terminal();
    std::uint64_t frame_bytes = 0;
    for (std::size_t j = 0; j < s.num_columns(); ++j) {
      s.verify_checksum(j);
      s.read_column(j, values, decode_as::stored);
      frame_bytes += s.entry(j).frame_size;
      if (progress && (j % 1024 == 0 || j + 1 == s.num_columns()))
        std::cerr << "\rverify: " << (j + 1) << "/" << s.num_columns() << " columns" << std::flush;
    }
    if (progress) std::cerr << "\n";
    const double seconds = std::chrono::duration<double>(clock::now() - start).count();
    if (!o->quiet)
      std::cout << "ok: " << s.num_columns() << " columns, " << s.num_rows() << " rows, "
                << human_bytes(static_cast<double>(frame_bytes)) << " of frames verified in "
                << seconds << " s\n";
    return 0;
  };
}

}  // namespace colflow::cli
