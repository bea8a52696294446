// read_store: open a colflow store, decode every column to standardised values and print,
// per column, its ID, A1 frequency and the sum of squares of its values (N - 1 for any
// polymorphic column: docs/DESIGN.md §2).
#include <colflow/colflow.hpp>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: read_store STORE\n");
    return 2;
  }
  try {
    const colflow::store s = colflow::store::open(argv[1]);
    std::printf("%llu rows x %llu columns (%s)\n", static_cast<unsigned long long>(s.num_rows()),
                static_cast<unsigned long long>(s.num_columns()),
                colflow::value_type_name(s.type()).data());
    std::vector<double> z(s.num_rows());
    for (std::size_t j = 0; j < s.num_columns() && j < 5; ++j) {
      s.read_column(j, z);  // standardised: missing -> 0, centred, z'z = N - 1
      double ss = 0;
      for (double v : z) ss += v * v;
      std::printf("%s\tA1 freq %.4f\tz'z %.1f\n", s.columns()[j].id.c_str(),
                  s.entry(j).stats.a1_freq, ss);
    }
  } catch (const colflow::error& e) {
    std::fprintf(stderr, "read_store: %s\n", e.message().c_str());
    return 1;
  }
  return 0;
}
