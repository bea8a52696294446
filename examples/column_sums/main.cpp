// column_sums: one pass of a column_stream over a store. The kernel gets each column's
// standardised values, in order, while the columns ahead of it are decoded in parallel; it
// keeps their sum of squares (N - 1 for any polymorphic column). Then the pass figures.
#include <colflow/colflow.hpp>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: column_sums STORE [IN_FLIGHT]\n");
    return 2;
  }
  try {
    const colflow::store s = colflow::store::open(argv[1]);
    colflow::stream_options options;  // standardised doubles, in_flight 0 = 2 x threads
    if (argc == 3) options.in_flight = std::strtoull(argv[2], nullptr, 10);
    colflow::column_stream<double> stream(s, options);

    std::vector<double> sums(s.num_columns());
    const std::vector<std::size_t> order = colflow::all_columns(s.num_columns());
    const colflow::pass_stats pass = stream.run(order, [&](const colflow::column_view<double>& v) {
      sums[v.column] = v.values.squaredNorm();  // called serially, in order
      return true;                              // false would stop the pass here
    });

    std::printf("%llu rows x %llu columns (%s)\n", static_cast<unsigned long long>(s.num_rows()),
                static_cast<unsigned long long>(s.num_columns()),
                colflow::value_type_name(s.type()).data());
    for (std::size_t j = 0; j < sums.size() && j < 5; ++j)
      std::printf("%s\tz'z %.1f\n", s.columns()[j].id.c_str(), sums[j]);
    std::printf("pass: %llu columns in %.3f s, compute busy %.0f%%, %zu in flight x %zu columns\n",
                static_cast<unsigned long long>(pass.columns), pass.wall_seconds,
                pass.wall_seconds > 0 ? 100 * pass.compute_busy_seconds / pass.wall_seconds : 0.0,
                stream.in_flight(), stream.columns_per_block());
  } catch (const colflow::error& e) {
    std::fprintf(stderr, "column_sums: %s\n", e.message().c_str());
    return 1;
  }
  return 0;
}
