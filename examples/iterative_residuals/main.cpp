// iterative_residuals: ridge regression by coordinate descent, the shape of the iterative
// column algorithms colflow is for (Gibbs samplers, coordinate descent): many passes over the
// columns, each pass in a new random order, a residual vector updated column by column.
//
// The phenotype is made up: y = z_0 + e, e ~ N(0, 1), with z_0 the first column, standardised.
// The model minimises |y - Z b|^2 + lambda |b|^2. With the residual r = y - Z b, the exact
// minimum over b_j alone is b_j' = (z_j'r + z_j'z_j b_j) / (z_j'z_j + lambda), then
// r -= (b_j' - b_j) z_j: each update can only lower the objective, pass after pass.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <colflow/colflow.hpp>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2 || argc > 5) {
    std::fprintf(stderr, "usage: iterative_residuals STORE [PASSES=10] [LAMBDA=10] [SEED=1]\n");
    return 2;
  }
  const int passes = argc > 2 ? std::atoi(argv[2]) : 10;
  const double lambda = argc > 3 ? std::atof(argv[3]) : 10.0;
  const unsigned seed = argc > 4 ? static_cast<unsigned>(std::strtoul(argv[4], nullptr, 10)) : 1;
  try {
    const colflow::store s = colflow::store::open(argv[1]);
    const auto n = static_cast<Eigen::Index>(s.num_rows());
    std::mt19937 rng(seed);

    // y = z_0 + noise; b = 0, so the residual starts as y.
    std::vector<double> z0(s.num_rows());
    s.read_column(0, z0);
    std::normal_distribution<double> noise(0, 1);
    Eigen::VectorXd r(n);
    for (Eigen::Index i = 0; i < n; ++i) r[i] = z0[i] + noise(rng);
    std::vector<double> b(s.num_columns(), 0.0);

    // The graph is built once; every pass reuses it with its own order.
    colflow::column_stream<double> stream(s);
    std::vector<std::size_t> order = colflow::all_columns(s.num_columns());
    const auto update = [&](const colflow::column_view<double>& v) {
      const double zz = v.values.squaredNorm();
      if (zz == 0) return true;  // a constant column explains nothing
      const double bj = (v.values.dot(r) + zz * b[v.column]) / (zz + lambda);
      r -= (bj - b[v.column]) * v.values;  // serial: the next column sees this residual
      b[v.column] = bj;
      return true;
    };
    std::printf("%lld samples, %llu columns, lambda %g, seed %u\n", static_cast<long long>(n),
                static_cast<unsigned long long>(s.num_columns()), lambda, seed);
    std::printf("start    RSS %.4f\n", r.squaredNorm());
    for (int pass = 1; pass <= passes; ++pass) {
      std::shuffle(order.begin(), order.end(), rng);
      const colflow::pass_stats st = stream.run(order, update);
      double penalty = 0;
      for (double x : b) penalty += x * x;
      std::printf("pass %2d  RSS %.4f  objective %.4f  (%.3f s, compute busy %.0f%%)\n", pass,
                  r.squaredNorm(), r.squaredNorm() + lambda * penalty, st.wall_seconds,
                  st.wall_seconds > 0 ? 100 * st.compute_busy_seconds / st.wall_seconds : 0.0);
    }
    const auto largest = std::max_element(
        b.begin(), b.end(), [](double x, double y) { return std::abs(x) < std::abs(y); });
    const auto j = static_cast<std::size_t>(largest - b.begin());
    std::printf("largest effect: column %zu (%s), b = %.3f\n", j, s.columns()[j].id.c_str(),
                *largest);
  } catch (const colflow::error& e) {
    std::fprintf(stderr, "iterative_residuals: %s\n", e.message().c_str());
    return 1;
  }
  return 0;
}
