// What a column visit of an iterative analysis costs on sample blocks (docs/DESIGN.md §4.8,
// docs/SCALING.md), by column length, with the contenders alternating in every round:
//
//   one thread      sample_blocks(rows, sample_blocks::never): the blocks in order on the caller
//   team            sample_blocks(rows): the library's loops on every allowed thread
//   parallel_for    the same blocks through a tbb::parallel_for per loop (static partitioner):
//                   what the team replaces, kept here to show why
//
// A visit is what BayesR and coordinate descent do per column: the packed product zᵀr over the
// blocks, then on one column in 16 (a coefficient that moved) the update r −= δz. Columns are
// random codes, 64 MiB of them, visited in order, so each visit reads its codes from memory as
// a pass over a large store does; the residual stays where the cache keeps it.
//
// Printed per length: µs per visit of each contender, the team's speedup over one thread, and
// excess_us = team − (one thread) / threads: what the split costs beyond an even share (the
// meeting at the end of each loop, the imbalance of whole blocks, cache effects). The crossover
// (parallel_rows_threshold in sample_blocks_internal.hpp) is where the speedup passes 1.
//
// Run: sample_blocks_bench [--rounds N] [--threads N] [--rows N,N,...]
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "colflow/kernels/genotype_kernels.hpp"
#include "kernels/sample_blocks_internal.hpp"

namespace {

using colflow::sample_block_rows;
using clock_type = std::chrono::steady_clock;

struct problem {
  std::size_t rows, bytes, columns;
  std::vector<std::uint8_t> codes;
  std::vector<double> residual;
  problem(std::size_t n, std::mt19937_64& rng)
      : rows(n),
        bytes((n + 3) / 4),
        columns(std::max<std::size_t>(64, (std::size_t{64} << 20) / ((n + 3) / 4))),
        codes(bytes * columns),
        residual(n) {
    for (auto& c : codes) c = static_cast<std::uint8_t>(rng());
    for (auto& r : residual) r = std::normal_distribution<double>()(rng);
  }
};

// One visit of column j through a loop runner (for_each / sum over the blocks).
template <typename Sum, typename ForEach>
double visit(const problem& p, std::size_t j, Sum&& sum, ForEach&& for_each) {
  const std::uint8_t* codes = p.codes.data() + j * p.bytes;
  double* r = const_cast<double*>(p.residual.data());
  const double dot = sum([&](std::size_t, std::size_t first, std::size_t n) {
    return colflow::dosage_dot({codes + first / 4, (n + 3) / 4}, n, r + first);
  });
  if (j % 16 == 0) {
    const double delta = 1e-9 * dot;
    for_each([&](std::size_t, std::size_t first, std::size_t n) {
      colflow::genotype_axpy({codes + first / 4, (n + 3) / 4}, n, {}, -delta, delta, r + first);
    });
  }
  return dot;
}

// µs per visit over all columns of the problem.
template <typename Sum, typename ForEach>
double time_visits(const problem& p, Sum&& sum, ForEach&& for_each, double& checksum) {
  const auto start = clock_type::now();
  for (std::size_t j = 0; j < p.columns; ++j) checksum += visit(p, j, sum, for_each);
  return std::chrono::duration<double, std::micro>(clock_type::now() - start).count() /
         static_cast<double>(p.columns);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  int threads = tbb::this_task_arena::max_concurrency();
  std::vector<std::size_t> lengths = {4096,  8192,  12288,  16384,  24576,
                                      32768, 65536, 100000, 200000, 500000};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds"))
      rounds = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads"))
      threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--rows")) {
      lengths.clear();
      for (char* s = argv[i + 1]; *s;) {
        lengths.push_back(std::strtoull(s, &s, 10));
        if (*s == ',') ++s;
      }
    } else {
      std::fprintf(stderr, "usage: %s [--rounds N] [--threads N] [--rows N,N,...]\n", argv[0]);
      return 2;
    }
  }
  tbb::global_control cap(tbb::global_control::max_allowed_parallelism,
                          static_cast<std::size_t>(threads));
  tbb::task_arena arena(threads);
  std::printf("# sample_blocks_bench: %d threads, %d rounds (median), block %zu rows\n", threads,
              rounds, sample_block_rows);
  std::printf("%9s %7s %8s %12s %10s %14s %8s %10s %12s\n", "rows", "blocks", "columns",
              "one_thread_us", "team_us", "parallel_for_us", "speedup", "excess_us",
              "ns_per_sample");
  std::mt19937_64 rng(1);
  double checksum = 0;
  arena.execute([&] {
    for (std::size_t n : lengths) {
      const problem p(n, rng);
      colflow::sample_blocks serial(n, colflow::sample_blocks::never);
      // The team whatever the library's threshold: the crossover is what is measured.
      colflow::sample_blocks team(n, 0);
      const std::size_t blocks = serial.count();
      std::vector<double> partials(blocks);
      auto serial_sum = [&](auto&& f) { return serial.sum(f); };
      auto serial_each = [&](auto&& f) { serial.for_each(f); };
      const bool team_fits = team.parallel();  // one block: nothing to share
      auto team_sum = [&](auto&& f) { return team.sum(f); };
      auto team_each = [&](auto&& f) { team.for_each(f); };
      auto pf_each = [&](auto&& f) {
        tbb::parallel_for(
            tbb::blocked_range<std::size_t>(0, blocks),
            [&](const tbb::blocked_range<std::size_t>& r) {
              for (std::size_t b = r.begin(); b != r.end(); ++b)
                f(b, b * sample_block_rows, std::min(sample_block_rows, n - b * sample_block_rows));
            },
            tbb::static_partitioner());
      };
      auto pf_sum = [&](auto&& f) {
        pf_each([&](std::size_t b, std::size_t first, std::size_t rows) {
          partials[b] = f(b, first, rows);
        });
        double total = 0;
        for (double x : partials) total += x;
        return total;
      };
      std::vector<double> one, together, pf;
      for (int r = 0; r < rounds; ++r) {
        one.push_back(time_visits(p, serial_sum, serial_each, checksum));
        if (team_fits) together.push_back(time_visits(p, team_sum, team_each, checksum));
        pf.push_back(time_visits(p, pf_sum, pf_each, checksum));
      }
      const double t1 = median(one);
      char team_us[16] = "-", speedup[16] = "-", excess_us[16] = "-";
      if (team_fits) {
        const double tp = median(together);
        std::snprintf(team_us, sizeof team_us, "%.2f", tp);
        std::snprintf(speedup, sizeof speedup, "%.2f", t1 / tp);
        std::snprintf(excess_us, sizeof excess_us, "%.2f", tp - t1 / threads);
      }
      std::printf("%9zu %7zu %8zu %12.2f %10s %14.2f %8s %10s %12.3f\n", n, blocks, p.columns, t1,
                  team_us, median(pf), speedup, excess_us, 1e3 * t1 / static_cast<double>(n));
    }
  });
  std::printf("# checksum %g\n", checksum);
  return 0;
}
