// The arithmetic of logistic_sums, included once per vector path by logistic_sums.cpp inside
// the path's namespace, after its `fused` and with COLFLOW_PATH its target attribute: the same
// operations in the same order on every path.

// e^a for a in [−708, 0]: a = n ln 2 + r with n = round(a / ln 2) and |r| ≤ ½ ln 2; e^r by its
// Taylor polynomial of degree 13 (the rest is below 5e-18 of it), evaluated as two chains of
// degree 6 joined by r^7 (half the latency of one chain), 2^n written into the exponent bits
// (n ≥ −1022: a normal number).
COLFLOW_PATH COLFLOW_INLINE lanes exp_nonpositive(const lanes& a) {
  // Added to a number below 2^51 in magnitude, 1.5 · 2^52 leaves it rounded to an integer,
  // held in the low bits of the sum.
  const lanes shifter = splat<lanes>(0x1.8p52);
  const lanes s = fused(a, splat<lanes>(0x1.71547652b82fep0), shifter);  // 1 / ln 2
  const lanes n = s - shifter;
  // a − n ln 2 with ln 2 in two parts, the first the double nearest it.
  lanes r = fused(n, splat<lanes>(-0x1.62e42fefa39efp-1), a);
  r = fused(n, splat<lanes>(-0x1.abc9e3b39803fp-56), r);
  lanes low = splat<lanes>(inverse_factorial(6)), high = splat<lanes>(inverse_factorial(13));
#pragma GCC unroll 8
  for (int d = 5; d >= 0; --d) {
    low = fused(low, r, splat<lanes>(inverse_factorial(d)));
    high = fused(high, r, splat<lanes>(inverse_factorial(d + 7)));
  }
  const lanes r2 = r * r, r7 = (r2 * r2) * (r2 * r);
  const lanes e = fused(high, r7, low);
  const lane_bits n_bits = bits_of(s) - bits_of(shifter);
  return e * lanes_of((n_bits + splat<lane_bits>(1023LL)) << 52);
}

// log(1 + t) for t in [0, 1]: 1 + t = 2^m u with m = 0, or m = 1 above √2, u in [1/√2, √2];
// log u = 2 atanh(s), s = (u − 1)/(u + 1) (from t itself, without rounding 1 + t), |s| ≤ 0.172,
// by its series to s^23 (the rest is below 1e-17 of it).
COLFLOW_PATH COLFLOW_INLINE lanes log_one_plus(const lanes& t) {
  constexpr int terms = 11;
  const lane_bits big = t > splat<lanes>(0x1.6a09e667f3bcdp-2);  // √2 − 1
  const lanes one = splat<lanes>(1.0);
  const lanes s =
      select(big, t - one, t) / select(big, t + splat<lanes>(3.0), t + splat<lanes>(2.0));
  const lanes z = s * s;
  lanes q = splat<lanes>(2.0 / (2 * terms + 1));
#pragma GCC unroll 16
  for (int i = terms - 1; i >= 1; --i) q = fused(q, z, splat<lanes>(2.0 / (2 * i + 1)));
  const lanes log_u = fused(s * z, q, s + s);
  return select(big, log_u + splat<lanes>(0x1.62e42fefa39efp-1), log_u);
}

// Eight samples' weights w and residuals r into the accumulators: the k(k + 1)/2 entries
// (l, j), l ≤ j, of Σ w x x' column by column, then the k of Σ r x.
template <int K>
COLFLOW_PATH COLFLOW_INLINE void accumulate(const samples_at& s, std::size_t k, const lanes& w,
                                            const lanes& residual, lanes* acc) {
  if constexpr (K > 0) k = K;
  std::size_t e = 0;
#pragma GCC unroll 16
  for (std::size_t j = 0; j < k; ++j) {
    const lanes xj = load(s.columns[j] + s.at);
    const lanes wx = w * xj;
#pragma GCC unroll 16
    for (std::size_t l = 0; l <= j; ++l, ++e) acc[e] = fused(wx, load(s.columns[l] + s.at), acc[e]);
  }
#pragma GCC unroll 16
  for (std::size_t j = 0; j < k; ++j, ++e)
    acc[e] = fused(residual, load(s.columns[j] + s.at), acc[e]);
}

// Eight samples' w = count · p(1 − p) and r = count · (y − p) in a logistic pass (p, w and
// the log-likelihood's terms kept when `rows` asks, the terms into acc[k(k + 3)/2]); in a
// Firth pass, w (1 + h) and count ((y − p) + h (½ − p)) with h = p(1 − p) |L⁻¹x|².
template <int K, bool Firth>
// `coefficients`: β in a logistic pass, L⁻¹ in a Firth pass.
COLFLOW_PATH COLFLOW_INLINE void weights(const samples_at& s, std::size_t k,
                                         const double* coefficients, lanes* acc,
                                         const logistic_rows* rows, std::size_t row, lanes& w,
                                         lanes& residual) {
  if constexpr (K > 0) k = K;
  if constexpr (Firth) {
    lanes norm{};
#pragma GCC unroll 16
    for (std::size_t j = 0; j < k; ++j) {
      lanes z{};
#pragma GCC unroll 16
      for (std::size_t q = 0; q <= j; ++q)
        z = fused(splat<lanes>(coefficients[j + q * k]), load(s.columns[q] + s.at), z);
      norm = fused(z, z, norm);
    }
    const lanes p = load(s.p + s.at), one = splat<lanes>(1.0);
    const lanes h = (p * (one - p)) * norm;
    residual = (load(s.y + s.at) - p) + h * (splat<lanes>(0.5) - p);
    if (s.count) residual = load(s.count + s.at) * residual;
    w = load(s.w + s.at) * (one + h);
    return;
  }
  lanes eta = s.offset ? load(s.offset + s.at) : lanes{};
#pragma GCC unroll 16
  for (std::size_t j = 0; j < k; ++j)
    eta = fused(load(s.columns[j] + s.at), splat<lanes>(coefficients[j]), eta);
  // −|η|, no lower than −708.
  const lane_bits sign = splat<lane_bits>(std::numeric_limits<long long>::min());
  lanes a = lanes_of(bits_of(eta) | sign);
  const lanes floor = splat<lanes>(-708.0);
  a = select(a < floor, floor, a);
  const lanes t = exp_nonpositive(a);
  const lanes one = splat<lanes>(1.0);
  const lanes inverse = one / (one + t);
  const lanes p = select(eta >= lanes{}, inverse, t * inverse);
  w = p * (one - p);
  residual = load(s.y + s.at) - p;
  if (s.count) {
    const lanes c = load(s.count + s.at);
    w = c * w;
    residual = c * residual;
  }
  if (rows) {
    store(rows->p + row, p);
    store(rows->w + row, w);
    // The log-likelihood's terms c (y η − max(η, 0) − log(1 + t)).
    const lanes y_eta = fused(load(s.y + s.at), eta, select(eta < lanes{}, lanes{}, -eta));
    const lanes term = y_eta - log_one_plus(t);
    const std::size_t e = k * (k + 3) / 2;
    acc[e] = s.count ? fused(load(s.count + s.at), term, acc[e]) : acc[e] + term;
  }
}

template <int K, bool Firth>
COLFLOW_PATH COLFLOW_INLINE void add_samples(const samples_at& s, std::size_t k,
                                             const double* coefficients, lanes* acc,
                                             const logistic_rows* rows, std::size_t row) {
  lanes w, residual;
  weights<K, Firth>(s, k, coefficients, acc, rows, row, w, residual);
  accumulate<K>(s, k, w, residual, acc);
}

// Any k: 64 samples at a time (eight vectors), their w and r first, then each sum's
// accumulator loaded once, fed the eight vectors in sample order, and stored: the same chain
// per lane as eight samples at a time, with an eighth of the accumulators' loads and stores.
template <bool Firth>
COLFLOW_PATH COLFLOW_INLINE void add_64_samples(samples_at s, std::size_t k,
                                                const double* coefficients, lanes* acc,
                                                const logistic_rows* rows, std::size_t row) {
  constexpr int vectors = 8;
  lanes w[vectors], residual[vectors], wx[vectors];
  const std::size_t at = s.at;
  for (int v = 0; v < vectors; ++v, s.at += 8)
    weights<0, Firth>(s, k, coefficients, acc, rows, row + 8 * v, w[v], residual[v]);
  s.at = at;
  std::size_t e = 0;
  for (std::size_t j = 0; j < k; ++j) {
    const double* xj = s.columns[j] + at;
#pragma GCC unroll 8
    for (int v = 0; v < vectors; ++v) wx[v] = w[v] * load(xj + 8 * v);
    for (std::size_t l = 0; l <= j; ++l, ++e) {
      const double* xl = s.columns[l] + at;
      lanes sum = acc[e];
#pragma GCC unroll 8
      for (int v = 0; v < vectors; ++v) sum = fused(wx[v], load(xl + 8 * v), sum);
      acc[e] = sum;
    }
  }
  for (std::size_t j = 0; j < k; ++j, ++e) {
    const double* xj = s.columns[j] + at;
    lanes sum = acc[e];
#pragma GCC unroll 8
    for (int v = 0; v < vectors; ++v) sum = fused(residual[v], load(xj + 8 * v), sum);
    acc[e] = sum;
  }
}

// The rows after the last full eight, in lanes 0 … rest − 1 of zero-padded copies, with counts
// (1 for each row when the design has none: c · v = v exactly). Zero counts and columns add
// exact zeros to every sum (w x_j x_l, r x_j and the log-likelihood's c · term are ±0 there,
// and a sum that starts at +0 never becomes −0), so the padding changes no bit.
template <int K, bool Firth>
COLFLOW_PATH COLFLOW_INLINE void add_last_rows(const pass_inputs& in, std::size_t from, lanes* acc,
                                               const logistic_rows* rows) {
  const logistic_design& d = in.design;
  const std::size_t k = d.columns.size(), rest = d.rows - from;
  std::vector<double> padded((k + 5) * 8, 0.0), out(rows ? 2 * 8 : 0);
  std::vector<const double*> columns(k);
  const auto copy = [&](const double* source, std::size_t slot) {
    std::memcpy(padded.data() + slot * 8, source + from, rest * sizeof(double));
    return padded.data() + slot * 8;
  };
  for (std::size_t j = 0; j < k; ++j) columns[j] = copy(d.columns[j], j);
  const auto optional = [&](const double* source, std::size_t slot) {
    return source ? copy(source, slot) : nullptr;
  };
  double* counts = padded.data() + (k + 1) * 8;
  if (d.count)
    copy(d.count, k + 1);
  else
    std::fill(counts, counts + rest, 1.0);
  const samples_at s{
      columns.data(),        optional(d.y, k),      counts, optional(d.offset, k + 2),
      optional(in.p, k + 3), optional(in.w, k + 4), 0};
  const logistic_rows staged{out.data(), out.data() + 8, nullptr};
  add_samples<K, Firth>(s, k, Firth ? in.l_inverse : in.beta, acc, rows ? &staged : nullptr, 0);
  if (!rows) return;
  std::memcpy(rows->p + from, out.data(), rest * sizeof(double));
  std::memcpy(rows->w + from, out.data() + 8, rest * sizeof(double));
}

// K > 0: a design of K columns, its accumulators in registers where they fit; K = 0: any k.
template <int K, bool Firth>
COLFLOW_PATH COLFLOW_INLINE void pass(const pass_inputs& in, double* information, double* gradient,
                                      const logistic_rows* rows) {
  const logistic_design& d = in.design;
  const std::size_t k = K > 0 ? K : d.columns.size(), pairs = k * (k + 1) / 2;
  // The sums of the information, the gradient, and the log-likelihood.
  constexpr std::size_t fixed = K > 0 ? K * (K + 3) / 2 + 1 : 1;
  lanes local[fixed];
  std::unique_ptr<lanes[]> heap(K > 0 ? nullptr : new lanes[pairs + k + 1]);
  lanes* acc = K > 0 ? local : heap.get();
#pragma GCC unroll 160
  for (std::size_t e = 0; e <= pairs + k; ++e) acc[e] = lanes{};
  const std::size_t full = d.rows / 8 * 8;
  std::size_t i = 0;
  if constexpr (K == 0)
    for (; i + 64 <= full; i += 64)
      add_64_samples<Firth>({d.columns.data(), d.y, d.count, d.offset, in.p, in.w, i}, k,
                            Firth ? in.l_inverse : in.beta, acc, rows, i);
  for (; i < full; i += 8)
    add_samples<K, Firth>({d.columns.data(), d.y, d.count, d.offset, in.p, in.w, i}, k,
                          Firth ? in.l_inverse : in.beta, acc, rows, i);
  if (full < d.rows) add_last_rows<K, Firth>(in, full, acc, rows);
  // Fully unrolled where K is known, so that the accumulators can live in registers.
  std::size_t e = 0;
#pragma GCC unroll 16
  for (std::size_t j = 0; j < k; ++j)
#pragma GCC unroll 16
    for (std::size_t l = 0; l <= j; ++l, ++e)
      information[l + j * k] = information[j + l * k] = lanes_total(acc[e]);
#pragma GCC unroll 16
  for (std::size_t j = 0; j < k; ++j, ++e) gradient[j] = lanes_total(acc[e]);
  if (rows) *rows->log_likelihood = lanes_total(acc[e]);
}

// Designs of up to 8 columns (intercept, the column, up to 6 covariates) get their own code,
// on a path that sets widths_specialised (the same bits as the code for any width).
template <bool Firth>
COLFLOW_PATH COLFLOW_INLINE void pass_any(const pass_inputs& in, double* information,
                                          double* gradient, const logistic_rows* rows) {
  if constexpr (!widths_specialised) return pass<0, Firth>(in, information, gradient, rows);
  switch (in.design.columns.size()) {
    case 1:
      return pass<1, Firth>(in, information, gradient, rows);
    case 2:
      return pass<2, Firth>(in, information, gradient, rows);
    case 3:
      return pass<3, Firth>(in, information, gradient, rows);
    case 4:
      return pass<4, Firth>(in, information, gradient, rows);
    case 5:
      return pass<5, Firth>(in, information, gradient, rows);
    case 6:
      return pass<6, Firth>(in, information, gradient, rows);
    case 7:
      return pass<7, Firth>(in, information, gradient, rows);
    case 8:
      return pass<8, Firth>(in, information, gradient, rows);
    default:
      return pass<0, Firth>(in, information, gradient, rows);
  }
}

// The path's entries: what logistic_sums and firth_sums call.
COLFLOW_PATH void sums(const pass_inputs& in, double* information, double* gradient,
                       const logistic_rows* rows) {
  pass_any<false>(in, information, gradient, rows);
}

COLFLOW_PATH void firth(const pass_inputs& in, double* information, double* gradient) {
  pass_any<true>(in, information, gradient, nullptr);
}
