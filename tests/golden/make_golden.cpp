// Writes the golden stores of tests/golden/ and their expected decoded values.
// Run only when the format changes on purpose (and bump the version in docs/FORMAT.md):
//   make_golden tests/golden
// Each store has 7 samples (not a multiple of 4, so padding is exercised) and 3 columns.
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
    writer_options o;
    o.type = g.type;
    o.rows = golden::rows;
    o.overwrite = true;
    o.source = "golden test store";
    std::vector<sample_info> samples;
    for (std::uint64_t i = 0; i < golden::rows; ++i)
      samples.push_back({"F" + std::to_string(i), "I" + std::to_string(i), "0", "0", "1", "-9"});
    store_writer w(dir / (g.name + ".cf"), o, samples);
    for (std::uint64_t j = 0; j < golden::columns; ++j) {
      const column_info info{"1", "v" + std::to_string(j), "0", std::to_string(100 * (j + 1)), "A",
                             "G"};
      if (g.type == value_type::genotype) {
        const auto codes = golden::genotype_codes(j);
        w.append(encode_genotype_column(codes, golden::rows, g.encoding), info);
      } else {
        const auto values = golden::dense_values(j);
        w.append(encode_float_column(values, g.type, dense_stats(values), 0, g.encoding), info);
      }
    }
    w.finish();
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
