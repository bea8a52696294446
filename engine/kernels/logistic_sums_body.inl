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
  const lane_bits n_bits = std::bit_cast<lane_bits>(s) - std::bit_cast<lane_bits>(shifter);
  return e * std::bit_cast<lanes>((n_bits + splat<lane_bits>(1023LL)) << 52);
}

// Eight samples into the accumulators: the k(k + 1)/2 entries (l, j), l ≤ j, of the
// information column by column, then the k of the gradient.
template <int K>
COLFLOW_PATH COLFLOW_INLINE void add_samples(const samples_at& s, std::size_t k, const double* beta,
                                             lanes* acc, const logistic_rows* rows,
                                             std::size_t row) {
  if constexpr (K > 0) k = K;
  lanes eta = s.offset ? load(s.offset + s.at) : lanes{};
#pragma GCC unroll 16
  for (std::size_t j = 0; j < k; ++j)
    eta = fused(load(s.columns[j] + s.at), splat<lanes>(beta[j]), eta);
  // −|η|, no lower than −708.
  const lane_bits sign = splat<lane_bits>(std::numeric_limits<long long>::min());
  lanes a = std::bit_cast<lanes>(std::bit_cast<lane_bits>(eta) | sign);
  const lanes floor = splat<lanes>(-708.0);
  a = a < floor ? floor : a;
  const lanes t = exp_nonpositive(a);
  const lanes one = splat<lanes>(1.0);
  const lanes one_plus_t = one + t;
  const lanes inverse = one / one_plus_t;
  const lanes p = eta >= lanes{} ? inverse : t * inverse;
  lanes w = p * (one - p);
  lanes residual = load(s.y + s.at) - p;
  if (s.count) {
    const lanes c = load(s.count + s.at);
    w = c * w;
    residual = c * residual;
  }
  if (rows) {
    store(rows->eta + row, eta);
    store(rows->one_plus_t + row, one_plus_t);
    store(rows->p + row, p);
    store(rows->w + row, w);
  }
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

// The rows after the last full eight, in lanes 0 … rest − 1 of zero-padded copies. Zero
// columns add exact zeros to every sum (w x_j x_l and (y − p) x_j are ±0 there, and a sum that
// starts at +0 never becomes −0), so the padding changes no bit.
template <int K>
COLFLOW_PATH COLFLOW_INLINE void add_last_rows(const logistic_design& d, std::size_t from,
                                               const double* beta, lanes* acc,
                                               const logistic_rows* rows) {
  const std::size_t k = d.columns.size(), rest = d.rows - from;
  std::vector<double> padded((k + 3) * 8, 0.0), out(rows ? 4 * 8 : 0);
  std::vector<const double*> columns(k);
  const auto copy = [&](const double* source, std::size_t slot) {
    std::memcpy(padded.data() + slot * 8, source + from, rest * sizeof(double));
    return padded.data() + slot * 8;
  };
  for (std::size_t j = 0; j < k; ++j) columns[j] = copy(d.columns[j], j);
  const samples_at s{columns.data(), copy(d.y, k), d.count ? copy(d.count, k + 1) : nullptr,
                     d.offset ? copy(d.offset, k + 2) : nullptr, 0};
  const logistic_rows staged{out.data(), out.data() + 8, out.data() + 16, out.data() + 24};
  add_samples<K>(s, k, beta, acc, rows ? &staged : nullptr, 0);
  if (!rows) return;
  for (int v = 0; v < 4; ++v) {
    double* target[] = {rows->eta, rows->one_plus_t, rows->p, rows->w};
    std::memcpy(target[v] + from, out.data() + v * 8, rest * sizeof(double));
  }
}

// K > 0: a design of K columns, its accumulators in registers where they fit; K = 0: any k.
template <int K>
COLFLOW_PATH COLFLOW_INLINE void pass(const logistic_design& d, const double* beta,
                                      double* information, double* gradient,
                                      const logistic_rows* rows) {
  const std::size_t k = d.columns.size(), pairs = k * (k + 1) / 2;
  constexpr std::size_t fixed = K > 0 ? K * (K + 3) / 2 : 1;
  lanes local[fixed];
  std::unique_ptr<lanes[]> heap(K > 0 ? nullptr : new lanes[pairs + k]);
  lanes* acc = K > 0 ? local : heap.get();
  for (std::size_t e = 0; e < pairs + k; ++e) acc[e] = lanes{};
  const std::size_t full = d.rows / 8 * 8;
  for (std::size_t i = 0; i < full; i += 8)
    add_samples<K>({d.columns.data(), d.y, d.count, d.offset, i}, k, beta, acc, rows, i);
  if (full < d.rows) add_last_rows<K>(d, full, beta, acc, rows);
  std::size_t e = 0;
  for (std::size_t j = 0; j < k; ++j)
    for (std::size_t l = 0; l <= j; ++l, ++e)
      information[l + j * k] = information[j + l * k] = lanes_total(acc[e]);
  for (std::size_t j = 0; j < k; ++j, ++e) gradient[j] = lanes_total(acc[e]);
}

// Designs of up to 8 columns (intercept, the column, up to 6 covariates) get their own code.
COLFLOW_PATH COLFLOW_INLINE void pass_any(const logistic_design& d, const double* beta,
                                          double* information, double* gradient,
                                          const logistic_rows* rows) {
  switch (d.columns.size()) {
    case 1:
      return pass<1>(d, beta, information, gradient, rows);
    case 2:
      return pass<2>(d, beta, information, gradient, rows);
    case 3:
      return pass<3>(d, beta, information, gradient, rows);
    case 4:
      return pass<4>(d, beta, information, gradient, rows);
    case 5:
      return pass<5>(d, beta, information, gradient, rows);
    case 6:
      return pass<6>(d, beta, information, gradient, rows);
    case 7:
      return pass<7>(d, beta, information, gradient, rows);
    case 8:
      return pass<8>(d, beta, information, gradient, rows);
    default:
      return pass<0>(d, beta, information, gradient, rows);
  }
}

// The path's entry: what logistic_sums calls.
COLFLOW_PATH void sums(const logistic_design& d, const double* beta, double* information,
                       double* gradient, const logistic_rows* rows) {
  pass_any(d, beta, information, gradient, rows);
}
