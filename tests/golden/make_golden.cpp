// Writes the golden stores of tests/golden/ and their expected decoded values.
// Run only when the format changes on purpose (and bump the version in docs/FORMAT.md):
//   make_golden tests/golden
// Each store has 7 samples (not a multiple of 4, so padding is exercised) and 3 columns. Only
// the cases of the format version this build writes are rewritten; the stores of earlier
// versions are kept as they are (golden_cases.hpp).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "colflow/colflow.hpp"
#include "golden_cases.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_golden DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  using namespace colflow;
  for (const golden::golden_case& g : golden::cases()) {
    if (g.minor != format_minor_for(g.type)) {
      std::cout << "kept " << g.name << " (format " << format_version_major << "." << g.minor
                << ")\n";
      continue;
    }
    writer_options o;
    o.type = g.type;
    o.rows = golden::rows;
    o.overwrite = true;
    o.source = "golden test store";
    store_writer w(dir / (g.name + ".cf"), o, golden::samples());
    for (std::uint64_t j = 0; j < golden::columns; ++j) {
      const column_info info = golden::column(j);
      if (g.type == value_type::genotype) {
        const auto codes = golden::genotype_codes(j);
        w.append(encode_genotype_column(codes, golden::rows, g.encoding), info);
      } else {
        const auto values = golden::dense_values(j);
        w.append(encode_float_column(values, g.type, dense_stats(values), 0, g.encoding), info);
      }
    }
    w.finish();
    std::cout << "wrote " << g.name << "\n";
    // Expected values: one line per column, standardised then stored values, as %a (exact).
    const store s = store::open(dir / (g.name + ".cf"));
    std::ofstream out(dir / (g.name + ".expected"));
    std::vector<double> z(golden::rows), v(golden::rows);
    char buf[64];
    for (std::uint64_t j = 0; j < golden::columns; ++j) {
      s.read_column(j, z, decode_as::standardized);
      s.read_column(j, v, decode_as::stored);
      for (double x : z) {
        std::snprintf(buf, sizeof buf, "%a ", x);
        out << buf;
      }
      out << "|";
      for (double x : v) {
        std::snprintf(buf, sizeof buf, " %a", x);
        out << buf;
      }
      out << "\n";
    }
  }
  return 0;
}
