// Exact tests of Hardy-Weinberg equilibrium (hardy_weinberg.hpp): Wigginton, Cutler & Abecasis
// (2005) for diploid genotypes, Graffelman & Weir (2016) for X, where males are haploid.
//
// The tables of the X test are indexed by m, the males' copies of allele 1 (a "row"), and h,
// the females' heterozygotes; given the n1 copies of allele 1 in all, the females hold
// f = n1 − m of them, as x = (f − h)/2 homozygotes of allele 1 and y = nf − h − x of allele 2.
// A table's weight is W(m, h) = C(nm, m) · w_f(h), w_f(h) = nf!·2^h / (x!·h!·y!), and since
// Σ_h w_f(h) = C(2nf, f), a row weighs g(m) = C(nm, m)·C(2nf, n1 − m): the rows follow a
// hypergeometric distribution and each row a Levene-Haldane one. Both are log-concave, which
// every walk below relies on: from a mode the terms only decrease. The diploid test is the
// case of no male: a single row.
//
// Every weight is held relative to the observed table's: P = Σ_{W ≤ W_obs} W / Σ W. The total
// is the product of the observed row's sum and the sum of the row weights, each a sum around
// its mode. Then whichever part is the smaller is summed row by row: near equilibrium the
// center, the tables more probable than the observed one (P = 1 − center / total); otherwise
// the tail, a row entirely at most as probable as the observed table by its weight alone, the
// others term by term outward from where their two tails start, places that move little from
// one row to the next.
#include "colflow/analysis/hardy_weinberg.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "analysis/shared/hardy_weinberg_lanes_internal.hpp"

namespace colflow {
namespace {

// Two tables whose weights differ by less than this, relatively, are equally probable (a tie):
// the recurrences round each weight by far less, and weights that differ do so by far more.
constexpr double tie_tolerance = 1e-10;
// A tail is summed until its terms fall below this, relative to the observed table's weight
// (which the tail includes): what is left adds less than 2^-60 to P, relatively.
constexpr double negligible = detail::negligible_term;

// A positive number m · e^s whose magnitude is moved from the double m into s whenever m
// leaves [2^-500, 2^500]: a product of the ratios of a long walk through a distribution
// neither overflows nor underflows, for a multiplication per ratio and a logarithm per
// 346 nats.
class scaled_value {
 public:
  scaled_value() { set_limit(); }  // 1

  void multiply(double ratio) {
    mantissa_ *= ratio;
    if (mantissa_ < 0x1p-500 || mantissa_ > 0x1p500) rescale();
  }
  double log() const { return log_scale_ + std::log(mantissa_); }
  // Whether the value exceeds 1 by more than a tie: more probable than the observed table.
  bool above_ties() const { return mantissa_ > limit_; }
  // The value as a double; meant for values of at most about 1 (0 when it underflows).
  double value() const { return mantissa_ * std::exp(log_scale_); }

 private:
  void rescale() {
    log_scale_ += std::log(mantissa_);
    mantissa_ = 1;
    set_limit();
  }
  // Where |s| > 347 the comparison is decided by s alone (m ∈ [2^-500, 2^500]), so the
  // limit's overflow or underflow there changes nothing.
  void set_limit() { limit_ = (1 + tie_tolerance) * std::exp(-log_scale_); }

  double mantissa_ = 1;
  double log_scale_ = 0;
  double limit_;
};

// A sum of positive terms with Neumaier's compensation: exact to about one rounding however
// many terms it adds.
class compensated_sum {
 public:
  void add(double x) {
    const double t = sum_ + x;
    compensation_ += std::fabs(sum_) >= std::fabs(x) ? (sum_ - t) + x : (x - t) + sum_;
    sum_ = t;
  }
  // add(x) where |x| ≤ |sum| is known: the same operations without the comparison.
  void add_smaller(double x) {
    const double t = sum_ + x;
    compensation_ += (sum_ - t) + x;
    sum_ = t;
  }
  double value() const { return sum_ + compensation_; }

 private:
  double sum_ = 0, compensation_ = 0;
};

// The females' tables of one row (one count f of allele 1 among nf females), indexed by the
// heterozygotes h = f mod 2, f mod 2 + 2, ..., min(f, 2nf − f): the Levene-Haldane
// distribution. The counts are whole numbers held exactly in doubles.
class female_row {
 public:
  static constexpr double step = 2;

  female_row(double nf, double f)
      : nf_(nf),
        f_(f),
        first_(static_cast<double>(static_cast<std::uint64_t>(f) & 1u)),  // f mod 2
        last_(std::min(f, 2 * nf - f)) {}

  double first() const { return first_; }
  double last() const { return last_; }
  double hom1(double h) const { return (f_ - h) / 2; }
  double hom2(double h) const { return nf_ - (f_ + h) / 2; }
  // w(h + 2) / w(h) and w(h − 2) / w(h).
  double up(double h) const { return 4 * hom1(h) * hom2(h) / ((h + 1) * (h + 2)); }
  double down(double h) const { return h * (h - 1) / (4 * (hom1(h) + 1) * (hom2(h) + 1)); }

 private:
  double nf_, f_, first_, last_;
};

// The rows of the X test: the males' copies m of allele 1 out of n1 in all, with weights
// g(m) = C(nm, m) · C(2nf, n1 − m), for m = max(0, n1 − 2nf), ..., min(nm, n1).
struct male_split {
  double nm, nf, n1;
  static constexpr double step = 1;

  double first() const { return std::max(0.0, n1 - 2 * nf); }
  double last() const { return std::min(nm, n1); }
  double up(double m) const { return (nm - m) * (n1 - m) / ((m + 1) * (2 * nf - n1 + m + 1)); }
  double down(double m) const { return m * (2 * nf - n1 + m) / ((nm - m + 1) * (n1 - m + 1)); }
};

// Moves k one step in `direction` (+1 or −1) and returns t(new k) / t(k); returns 0 and leaves
// k where it is at the end of the sequence. Inlined: k then stays in a register through the
// walks, most of the test's time.
template <class Sequence>
[[gnu::always_inline]] inline double advance(const Sequence& s, double& k, int direction) {
  if (direction > 0) {
    if (k + s.step > s.last()) return 0;
    const double ratio = s.up(k);
    k += s.step;
    return ratio;
  }
  if (k - s.step < s.first()) return 0;
  const double ratio = s.down(k);
  k -= s.step;
  return ratio;
}

// Moves k to a mode of the sequence (a largest term), multiplying `value` by the ratios on
// the way: a log-concave sequence rises toward its mode from either side.
template <class Sequence>
double climb(const Sequence& s, double k, scaled_value& value) {
  for (const int direction : {+1, -1}) {
    for (;;) {
      double next = k;
      const double ratio = advance(s, next, direction);
      if (!(ratio > 1)) break;
      value.multiply(ratio);
      k = next;
    }
  }
  return k;
}

// log(Σ_j t(j) / t(k)) over the whole sequence.
template <class Sequence>
double log_sum_relative_to(const Sequence& s, double k) {
  scaled_value mode_value;
  const double mode = climb(s, k, mode_value);
  compensated_sum sum;  // the terms relative to the mode's, each at most 1
  sum.add(1);
  for (const int direction : {+1, -1}) {
    double j = mode, term = 1;
    for (double ratio; (ratio = advance(s, j, direction)) > 0;) {
      term *= ratio;
      sum.add(term);
      if (term < negligible * sum.value()) break;  // the rest decreases faster than geometrically
    }
  }
  return mode_value.log() + std::log(sum.value());
}

// A row of females summed: its mode, the mode's weight relative to the table it was climbed
// from, and log(Σ_h w(h) / w(that table)).
struct row_total {
  double mode;
  scaled_value mode_weight;
  double log_sum;
};

// Σ_h w(h) / w(mode) over a row of females, the diploid test's whole distribution and most of
// its time: the homozygote counts move by one a step, so they are carried from step to step
// rather than derived from h, and the terms, at most the mode's 1, join a sum of at least 1.
// The values and their order are those of the general walk (log_sum_relative_to), bit for bit,
// and of row_sums_in_lanes.
double row_sum(const female_row& row, double mode) {
  compensated_sum sum;  // the terms relative to the mode's, each at most 1
  sum.add(1);
  double h = mode, x = row.hom1(h), y = row.hom2(h), term = 1;
  while (h + female_row::step <= row.last()) {  // x, y ≥ 1: each ratio is positive
    term *= 4 * x * y / ((h + 1) * (h + 2));    // female_row::up
    h += 2, x -= 1, y -= 1;
    sum.add_smaller(term);
    if (term < negligible * sum.value()) break;  // the rest decreases faster than geometrically
  }
  h = mode, x = row.hom1(h), y = row.hom2(h), term = 1;
  while (h - female_row::step >= row.first()) {     // h ≥ 2
    term *= h * (h - 1) / (4 * (x + 1) * (y + 1));  // female_row::down
    h -= 2, x += 1, y += 1;
    sum.add_smaller(term);
    if (term < negligible * sum.value()) break;
  }
  return sum.value();
}

// The row's mode, climbed to from k, and its weight relative to k's.
row_total mode_of_row(const female_row& row, double k) {
  row_total r;
  r.mode = climb(row, k, r.mode_weight);
  return r;
}

// The sum of log_sum_relative_to over a row of females.
row_total total_of_row(const female_row& row, double k) {
  row_total r = mode_of_row(row, k);
  r.log_sum = r.mode_weight.log() + std::log(row_sum(row, r.mode));
  return r;
}

// A table of the row being summed: its heterozygous females h and its weight relative to the
// observed table's.
struct table_point {
  double h;
  scaled_value weight;
};

// Sums, relative to the observed table's weight, of the tables at most as probable as it and
// of those exactly as probable.
struct tail_sums {
  compensated_sum tail;
  double ties = 0;

  // Adds the terms of a row from `from` (included) outward in `direction` (away from the row's
  // mode, so that they decrease), given that `from` is at most as probable as the observed
  // table; nothing when it is more probable (a tail that the row's end cuts off).
  void add_tail(const female_row& row, table_point from, int direction) {
    if (from.weight.above_ties()) return;
    for (double term = from.weight.value();;) {
      tail.add(term);
      if (term >= 1 - tie_tolerance) ties += term;
      if (term < negligible) return;
      const double ratio = advance(row, from.h, direction);
      if (ratio == 0) return;
      term *= ratio;
    }
  }
};

// Sums, relative to the observed table's weight, of the tables more probable than it (up to
// `limit`) and of those exactly as probable.
struct center_sums {
  double limit;
  compensated_sum more_probable{};
  double ties = 0;
};

// One row of the X test's tables and three of its tables, carried from row to row: the mode
// of its females' tables, and on each side of it the innermost table at most as probable as
// the observed one (the tail's first), or the row's end where no table of that side is.
struct row_walk {
  double m;
  scaled_value weight;  // g(m) / g(observed m)
  table_point mode, left, right;
  bool sides_known;  // false after a row that lies wholly in the tail
};

class exact_test {
 public:
  exact_test(const diploid_counts& females, const haploid_counts& males)
      : nf_(static_cast<double>(females.hom_a1 + females.het + females.hom_a2)),
        observed_m_(static_cast<double>(males.a1)),
        observed_h_(static_cast<double>(females.het)),
        split_{static_cast<double>(males.a1 + males.a2), nf_,
               static_cast<double>(2 * females.hom_a1 + females.het + males.a1)} {}

  hwe_p_values run() {
    if (p_underflows()) return {0, 0};
    return run(total_of_row(observed_females(), observed_h_));
  }

  // Whether P is 0 for want of a double small enough, told before any walk.
  bool p_underflows() const { return !near_equilibrium() && underflows(); }
  // The row of the observed table, and where in it the observed table lies.
  female_row observed_females() const { return row(observed_m_); }
  double observed_heterozygotes() const { return observed_h_; }

  // run() given the observed row's total_of_row (from observed_heterozygotes()).
  hwe_p_values run(const row_total& observed_row) {
    log_observed_row_ = observed_row.log_sum;
    log_total_ = log_observed_row_ + log_sum_relative_to(split_, observed_m_);
    row_walk start{observed_m_, scaled_value(), {observed_row.mode, observed_row.mode_weight}, {},
                   {},          false};
    start.left = start.right = start.mode;  // any table of the row, until they are settled
    // Which sum is the smaller: a P of about e^-depth in a two-dimensional Gaussian's terms.
    if (log_depth_of_mode(start) <= 3)
      if (const auto near_mode = from_center(start)) return *near_mode;
    return from_tails(start);
  }

 private:
  female_row row(double m) const { return {nf_, split_.n1 - m}; }

  // Whether a diploid table lies within `near_mode` heterozygotes of its row's mode (about
  // f(2nf − f)/(2nf − 1)), most tables of real data: its climb to the mode is short, so the
  // factorials of underflows() would cost more than they spare. They never change P: where P
  // underflows the walks give 0 too.
  bool near_equilibrium() const {
    constexpr double near_mode = 256;
    if (split_.nm > 0 || nf_ < 1) return false;
    const double f = split_.n1, alleles = 2 * nf_;
    return std::fabs(observed_h_ - f * (alleles - f) / std::max(1.0, alleles - 1)) <= near_mode;
  }

  // Whether P is below the smallest positive double (0, as PLINK 2 prints it), told from the
  // factorials before any walk: the tables at most as probable as the observed one, at most
  // (nm + 1)(nf + 1) of them, weigh at most that many times W_obs, out of Σ W = C(nt, n1)
  // times the same constant. lgamma's rounding, far below the margin, cannot change the
  // answer; without the shortcut an extreme table would be climbed from, one ratio per step,
  // across a distance of the order of the sample size.
  bool underflows() const {
    // lgamma_r, not std::lgamma: that one writes the global signgam, a data race between the
    // threads that test columns side by side.
    const auto log_factorial = [](double k) {
      int sign = 0;
      return ::lgamma_r(k + 1, &sign);
    };
    const female_row observed = row(observed_m_);
    const double x = observed.hom1(observed_h_), y = observed.hom2(observed_h_);
    const double nm = split_.nm, n1 = split_.n1, nt = nm + 2 * nf_;
    const double log_observed = log_factorial(nm) - log_factorial(observed_m_) -
                                log_factorial(nm - observed_m_) + log_factorial(nf_) +
                                observed_h_ * std::log(2.0) - log_factorial(x) -
                                log_factorial(observed_h_) - log_factorial(y);
    const double log_all = log_factorial(nt) - log_factorial(n1) - log_factorial(nt - n1);
    const double log_tables = std::log((nm + 1) * (nf_ + 1));
    return log_tables + log_observed - log_all < -800;
  }

  // log(W_mode / W_obs), W_mode the largest weight of all: the modes of the rows, climbed
  // from row to row while they rise (they are log-concave along the rows).
  double log_depth_of_mode(const row_walk& start) const {
    double depth = start.mode.weight.log();
    for (const int direction : {+1, -1}) {
      row_walk walk = start;
      for (double last = depth; next_row(walk, direction);) {
        const double here = walk.mode.weight.log();
        if (here <= last) break;
        depth = std::max(depth, here);
        last = here;
      }
    }
    return depth;
  }

  // P summed over the tails, row by row away from the observed one, until no row is left or
  // they stop mattering.
  hwe_p_values from_tails(row_walk start) {
    add_row(start);
    for (const int direction : {+1, -1})
      for (row_walk walk = start; next_row(walk, direction) && add_row(walk);) {
      }
    hwe_p_values r;
    const double tail = sums_.tail.value();
    r.p = std::min(1.0, std::exp(std::log(tail) - log_total_));
    r.midp = r.p * (1 - sums_.ties / (2 * tail));
    return r;
  }

  // P = 1 − C / Σ W from the center C, the tables more probable than the observed one, when
  // they hold at most 95% of the weight: near equilibrium the center is far smaller than the
  // tails, and a P of at least 0.05 loses at most about 1e-14 relatively to the subtraction
  // (the center is summed with compensation, the total is exact to that). std::nullopt
  // otherwise, as soon as the center outgrows that.
  std::optional<hwe_p_values> from_center(const row_walk& start) {
    if (log_total_ > 700) return std::nullopt;  // Σ W / W_obs beyond a double: P is small
    const double total = std::exp(log_total_);
    center_sums center{0.95 * total};
    if (!add_center_row(start, center)) return std::nullopt;
    for (const int direction : {+1, -1})
      for (row_walk walk = start; next_row(walk, direction);) {
        if (std::exp(walk.weight.log() + log_observed_row_) < 1 - tie_tolerance) break;
        if (!add_center_row(walk, center)) return std::nullopt;
      }
    hwe_p_values r;
    r.p = 1 - center.more_probable.value() / total;
    r.midp = r.p - center.ties / (2 * total);
    return r;
  }

  // Adds a row's tables more probable than the observed one, and those as probable, walking
  // from the row's mode outward while they are; false when the center outgrows its limit. A
  // row lighter than the observed table holds neither, nor do the rows beyond it (lighter
  // still, the row weights being log-concave): the caller stops there.
  bool add_center_row(const row_walk& walk, center_sums& center) const {
    const female_row females = row(walk.m);
    for (const int direction : {+1, -1}) {
      double h = walk.mode.h, term = walk.mode.weight.value();
      if (direction < 0) {
        const double ratio = advance(females, h, -1);
        if (ratio == 0) break;
        term *= ratio;
      }
      for (double ratio = 1; ratio > 0; ratio = advance(females, h, direction), term *= ratio) {
        if (term > 1 + tie_tolerance)
          center.more_probable.add(term);
        else if (term >= 1 - tie_tolerance)
          center.ties += term;
        else
          break;
      }
    }
    return center.more_probable.value() <= center.limit;
  }

  // Adds a row's tables at most as probable as the observed one. Returns false when the row
  // lies wholly in the tail and weighs too little to matter: the rows further from the
  // observed one weigh less still (the row weights are log-concave and this one is lighter
  // than the observed row), so they too hold no table as probable as the observed one, and
  // their weights, falling faster than geometrically, add nothing P can show.
  bool add_row(row_walk& walk) {
    if (walk.mode.weight.above_ties()) {
      add_sides(walk);
      return true;
    }
    walk.sides_known = false;
    const double weight = std::exp(walk.weight.log() + log_observed_row_);
    sums_.tail.add(weight);
    if (walk.mode.weight.log() >= std::log1p(-tie_tolerance)) add_ties_around_mode(walk);
    return weight >= negligible;
  }

  // A row whose mode is more probable than the observed table: its two tails, from the
  // tables where they start, which move little from one row to the next.
  void add_sides(row_walk& walk) {
    const female_row females = row(walk.m);
    if (!walk.sides_known) walk.left = walk.right = walk.mode;
    walk.sides_known = true;
    settle(females, walk.mode, walk.right, +1);
    settle(females, walk.mode, walk.left, -1);
    sums_.add_tail(females, walk.right, +1);
    sums_.add_tail(females, walk.left, -1);
  }

  // A row wholly in the tail whose mode ties with the observed table: the tables around the
  // mode that do.
  void add_ties_around_mode(const row_walk& walk) {
    const female_row females = row(walk.m);
    sums_.ties += walk.mode.weight.value();
    for (const int direction : {+1, -1}) {
      table_point t = walk.mode;
      for (double ratio; (ratio = advance(females, t.h, direction)) > 0;) {
        t.weight.multiply(ratio);
        const double term = t.weight.value();
        if (term < 1 - tie_tolerance) break;
        sums_.ties += term;
      }
    }
  }

  // Moves a side's table to the first of its tail: outward while it is more probable than the
  // observed table (to the row's end at most), inward while its inner neighbour is not. The
  // mode is more probable, so neither side reaches it from outside.
  static void settle(const female_row& row, const table_point& mode, table_point& side,
                     int direction) {
    if ((side.h - mode.h) * direction < 0) side = mode;
    if (side.weight.above_ties()) {
      for (double ratio; side.weight.above_ties() && (ratio = advance(row, side.h, direction)) > 0;)
        side.weight.multiply(ratio);
      return;
    }
    for (;;) {
      table_point inner = side;
      const double ratio = advance(row, inner.h, -direction);
      if (ratio == 0) return;
      inner.weight.multiply(ratio);
      if (inner.weight.above_ties()) return;
      side = inner;
    }
  }

  // Moves the walk to the neighbouring row in `direction`, its mode climbed to; false when
  // there is none.
  bool next_row(row_walk& walk, int direction) const {
    double m = walk.m;
    const double split_ratio = advance(split_, m, direction);
    if (split_ratio == 0) return false;
    const female_row from = row(walk.m);
    for (table_point* t : {&walk.mode, &walk.left, &walk.right})
      move_to_next_row(from, walk.m, direction, *t);
    walk.m = m;
    walk.weight.multiply(split_ratio);
    walk.mode.h = climb(row(m), walk.mode.h, walk.mode.weight);
    return true;
  }

  // Moves a table of row m to row m ± 1, where the males hold one copy of allele 1 more (less)
  // and the females one less (more): a female homozygote of the allele that changes turns
  // heterozygous (h + 1) where one remains, else a heterozygote turns homozygous for the other
  // allele (h − 1). Any table of a row has such a neighbour in the next row.
  void move_to_next_row(const female_row& from, double m, int direction, table_point& t) const {
    const double nm = split_.nm;
    const double males = direction > 0 ? (nm - m) / (m + 1) : m / (nm - m + 1);
    const double turning = direction > 0 ? from.hom1(t.h) : from.hom2(t.h);
    const double other = direction > 0 ? from.hom2(t.h) : from.hom1(t.h);
    if (turning >= 1) {
      t.weight.multiply(males * 2 * turning / (t.h + 1));
      t.h += 1;
    } else {
      t.weight.multiply(males * t.h / (2 * (other + 1)));
      t.h -= 1;
    }
  }

  double nf_, observed_m_, observed_h_;
  male_split split_;
  double log_observed_row_ = 0, log_total_ = 0;
  tail_sums sums_;
};

}  // namespace

hwe_p_values hardy_weinberg_exact(const diploid_counts& genotypes) noexcept {
  return exact_test(genotypes, {}).run();
}

namespace {

// The heterozygotes a table's row has at equilibrium, about: the walks of the row's sum take a
// number of steps that grows with it (as its square root).
double expected_heterozygotes(const diploid_counts& g) {
  const double n = static_cast<double>(g.hom_a1 + g.het + g.hom_a2);
  const double f = static_cast<double>(2 * g.hom_a1 + g.het);
  return n > 0 ? f * (2 * n - f) / (2 * n) : 0;
}

// The tests of four tables (or fewer) whose P does not underflow: their rows summed side by
// side where the CPU allows.
void test_four(std::span<const diploid_counts> tables, std::span<const std::size_t> which,
               std::span<hwe_p_values> out) {
  std::array<std::optional<exact_test>, 4> tests;
  std::array<female_row, 4> rows{female_row(0, 0), female_row(0, 0), female_row(0, 0),
                                 female_row(0, 0)};
  std::array<row_total, 4> totals;
  std::array<detail::row_walk_start, 4> starts{};
  std::array<double, 4> sums{};
  for (std::size_t k = 0; k < which.size(); ++k) {
    tests[k].emplace(tables[which[k]], haploid_counts{});
    rows[k] = tests[k]->observed_females();
    totals[k] = mode_of_row(rows[k], tests[k]->observed_heterozygotes());
    const double mode = totals[k].mode;
    starts[k] = {mode, rows[k].hom1(mode), rows[k].hom2(mode), rows[k].first(), rows[k].last()};
  }
  if (!detail::row_sums_in_lanes(starts.data(), which.size(), sums.data()))
    for (std::size_t k = 0; k < which.size(); ++k) sums[k] = row_sum(rows[k], totals[k].mode);
  for (std::size_t k = 0; k < which.size(); ++k) {
    totals[k].log_sum = totals[k].mode_weight.log() + std::log(sums[k]);
    out[which[k]] = tests[k]->run(totals[k]);
  }
}

}  // namespace

void hardy_weinberg_exact(std::span<const diploid_counts> tables, std::span<hwe_p_values> out) {
  // The tables that walk, four at a time in order of their rows' spread, so that the four
  // summed side by side take about as many steps.
  std::vector<std::pair<double, std::size_t>> walking;
  for (std::size_t i = 0; i < tables.size(); ++i) {
    if (exact_test(tables[i], {}).p_underflows())
      out[i] = {0, 0};
    else
      walking.emplace_back(expected_heterozygotes(tables[i]), i);
  }
  std::sort(walking.begin(), walking.end());
  std::array<std::size_t, 4> four{};
  for (std::size_t first = 0; first < walking.size(); first += four.size()) {
    const std::size_t count = std::min(four.size(), walking.size() - first);
    for (std::size_t k = 0; k < count; ++k) four[k] = walking[first + k].second;
    test_four(tables, std::span(four).first(count), out);
  }
}

bool hardy_weinberg_surely_above(const diploid_counts& genotypes, double threshold) noexcept {
  const double n = static_cast<double>(genotypes.hom_a1 + genotypes.het + genotypes.hom_a2);
  if (n < 1) return false;
  const female_row row(n, static_cast<double>(2 * genotypes.hom_a1 + genotypes.het));
  scaled_value mode_weight;  // becomes W_mode / W_obs
  climb(row, static_cast<double>(genotypes.het), mode_weight);
  const double tables = (row.last() - row.first()) / female_row::step + 1;
  // The bound on the mid-p, W_obs / (2 T W_mode), with another factor 2 to spare for rounding
  // and for a filter's own tolerance around its threshold.
  return -mode_weight.log() - std::log(4 * tables) > std::log(threshold);
}

hwe_p_values hardy_weinberg_exact_x(const diploid_counts& females,
                                    const haploid_counts& males) noexcept {
  return exact_test(females, males).run();
}

}  // namespace colflow
