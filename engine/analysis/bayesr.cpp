#include "colflow/analysis/bayesr.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "analysis/bayesr_checkpoint_internal.hpp"
#include "analysis/column_share_internal.hpp"
#include "analysis/random_draws_internal.hpp"
#include "analysis/standardized_columns_internal.hpp"
#include "colflow/cancellation.hpp"
#include "colflow/codec/codec.hpp"
#include "colflow/error.hpp"
#include "colflow/kernels/sample_blocks.hpp"
#include "colflow/stream/column_stream.hpp"

namespace colflow {
namespace {

// What each random sequence is for (the purpose tag of detail::random_draws).
enum draw_purpose : std::uint8_t {
  visit_order = 1,
  intercept = 2,
  column_effect = 3,
  variances = 4,
  weights = 5
};

}  // namespace

void check_bayesr_options(const bayesr_options& o) {
  const auto bad = [](const std::string& what) { throw error(errc::invalid_argument, what); };
  if (o.iterations == 0) bad("bayesr: --iterations must be at least 1");
  if (o.burnin >= o.iterations)
    bad("bayesr: the burn-in (" + std::to_string(o.burnin) + ") must be shorter than the chain (" +
        std::to_string(o.iterations) + " iterations)");
  if (o.thin == 0) bad("bayesr: --thin must be at least 1");
  if (o.mixture.empty() || o.mixture.size() > 254)
    bad("bayesr: the mixture needs 1 to 254 non-zero classes");
  for (std::size_t k = 0; k < o.mixture.size(); ++k) {
    if (!(o.mixture[k] > 0.0) || !std::isfinite(o.mixture[k]))
      bad("bayesr: mixture variances must be positive and finite");
    if (k > 0 && !(o.mixture[k] > o.mixture[k - 1])) bad("bayesr: mixture variances must increase");
  }
  if (!(o.dirichlet_alpha > 0.0) || !std::isfinite(o.dirichlet_alpha))
    bad("bayesr: the Dirichlet prior must be positive");
  for (double v : {o.sigma2_g_df, o.sigma2_g_scale, o.sigma2_e_df, o.sigma2_e_scale})
    if (!(v > 0.0) || !std::isfinite(v))
      bad("bayesr: prior degrees of freedom and scales must be positive");
  if ((o.checkpoint_every > 0 || o.resume) && o.checkpoint.empty())
    bad("bayesr: checkpoints need a checkpoint path");
  if (o.sync_every > 0 && (o.checkpoint_every > 0 || o.resume))
    bad("bayesr: a --sync-every chain writes no checkpoint and cannot resume one");
}

namespace {

// Everything a chain's numbers depend on besides the iteration count, hashed, so that a
// checkpoint is never resumed into another run.
std::uint64_t fingerprint_of(const selection& sel, const std::vector<std::uint8_t>& used,
                             const std::vector<double>& y, const bayesr_options& o) {
  std::string bytes = "colflow bayesr 1";
  const auto put = [&](const auto& v) {
    bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
  };
  put(used.size());
  put(sel.columns.size());
  for (std::size_t c : sel.columns) put(c);
  bytes.append(reinterpret_cast<const char*>(used.data()), used.size());
  for (double v : y) put(v);
  put(o.seed);
  put(o.burnin);
  put(o.thin);
  for (double g : o.mixture) put(g);
  for (double v :
       {o.dirichlet_alpha, o.sigma2_g_df, o.sigma2_g_scale, o.sigma2_e_df, o.sigma2_e_scale})
    put(v);
  return checksum64(std::as_bytes(std::span(bytes)));
}

// The Gibbs updates of one chain over its state. Column updates are the serial compute of a
// pass; the other parameters are drawn between passes.
class sampler {
 public:
  // `agree`, when set, makes sums over the residual the same on every process (hydra's scheme:
  // each process holds a copy of the residual that differs from the others' in the last bits).
  sampler(detail::bayesr_state& state, const bayesr_options& o,
          const std::vector<std::uint8_t>& used, const std::vector<double>& y, std::size_t n,
          sample_blocks& blocks, std::function<void(std::span<double>)> agree = nullptr)
      : agree_(std::move(agree)),
        st_(state),
        blocks_(blocks),
        o_(o),
        used_(used),
        y_(y),
        n_(static_cast<double>(n)),
        a_(n_ - 1.0),
        classes_(o.mixture.size() + 1),
        log_const_(classes_),
        quad_(classes_),
        shrink_(classes_),
        spread_(classes_),
        weight_(classes_) {}

  // Starts iteration t (1-based): draws μ and prepares each class's constants.
  void begin(std::uint64_t t) {
    t_ = t;
    double* e = st_.residual.data();
    const std::uint8_t* used = used_.data();
    double sum = blocks_.sum([&](std::size_t, std::size_t first, std::size_t n) {
      double partial = 0;
      for (std::size_t i = first; i < first + n; ++i)
        if (used[i]) partial += e[i];
      return partial;
    });
    if (agree_) agree_(std::span(&sum, 1));
    detail::random_draws d(o_.seed, intercept, t, 0);
    const double mu = (sum / n_ + st_.mu) + std::sqrt(st_.sigma2_e / n_) * d.normal();
    const double shift = mu - st_.mu;
    blocks_.for_each([&](std::size_t, std::size_t first, std::size_t n) {
      for (std::size_t i = first; i < first + n; ++i)
        if (used[i]) e[i] -= shift;
    });
    st_.mu = mu;
    // Class k > 0: β ~ N(0, v_k), v_k = γ_k σ²_G. With a = zᵀz and r = zᵀ(e + zβ_old), the
    // log marginal likelihood against the zero class is −½ log(v_k C_k / σ²_E) +
    // r² / (2 σ²_E C_k), C_k = a + σ²_E / v_k; and β | k ~ N(r / C_k, σ²_E / C_k).
    log_const_[0] = std::log(st_.pi[0]);
    quad_[0] = 0;
    for (std::size_t k = 1; k < classes_; ++k) {
      const double v = o_.mixture[k - 1] * st_.sigma2_g;
      const double c = a_ + st_.sigma2_e / v;
      log_const_[k] = std::log(st_.pi[k]) - 0.5 * std::log(v * c / st_.sigma2_e);
      quad_[k] = 0.5 / (st_.sigma2_e * c);
      shrink_[k] = 1.0 / c;
      spread_[k] = std::sqrt(st_.sigma2_e / c);
    }
  }

  // The update of selection position p given z_pᵀe (e excluding nothing: the current
  // residual). Returns the change of β_p, to be applied to the residual.
  double update(std::size_t p, double z_dot_e) {
    const double old = st_.beta[p];
    const double r = z_dot_e + a_ * old;
    const double r2 = r * r;
    double top = -std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < classes_; ++k) {
      weight_[k] = log_const_[k] + quad_[k] * r2;
      top = std::max(top, weight_[k]);
    }
    double total = 0;
    for (std::size_t k = 0; k < classes_; ++k) total += (weight_[k] = std::exp(weight_[k] - top));
    detail::random_draws d(o_.seed, column_effect, t_, static_cast<std::uint32_t>(p));
    double u = d.uniform() * total;
    std::size_t k = 0;
    while (k + 1 < classes_ && u >= weight_[k]) u -= weight_[k++];
    const double beta = k == 0 ? 0.0 : r * shrink_[k] + spread_[k] * d.normal();
    st_.component[p] = static_cast<std::uint8_t>(k);
    st_.beta[p] = beta;
    return beta - old;
  }

  // Ends iteration t: the variances and weights, the trace, the posterior sums.
  void end(const std::vector<std::size_t>& visited) {
    std::vector<double> counts(classes_, 0.0);
    double beta_squares = 0;
    for (std::size_t p : visited) {
      counts[st_.component[p]] += 1;
      beta_squares += st_.beta[p] * st_.beta[p];
    }
    const double nonzero = static_cast<double>(visited.size()) - counts[0];
    const double* residual = st_.residual.data();
    const std::uint8_t* used = used_.data();
    const double mu = st_.mu;
    // e'e, and the sum and sum of squares of the genetic values g = y − μ − e.
    auto [ee, g_sum, g_squares] =
        blocks_.sums<3>([&](std::size_t, std::size_t first, std::size_t n, double* out) {
          double e2 = 0, gs = 0, g2 = 0;
          for (std::size_t i = first; i < first + n; ++i)
            if (used[i]) {
              const double e = residual[i], g = y_[i] - mu - e;
              e2 += e * e;
              gs += g;
              g2 += g * g;
            }
          out[0] = e2;
          out[1] = gs;
          out[2] = g2;
        });
    if (agree_) {
      double sums[3] = {ee, g_sum, g_squares};
      agree_(sums);
      ee = sums[0];
      g_sum = sums[1];
      g_squares = sums[2];
    }
    detail::random_draws d(o_.seed, variances, t_, 0);
    const double g_df = o_.sigma2_g_df + nonzero, e_df = o_.sigma2_e_df + n_;
    st_.sigma2_g = d.scaled_inverse_chi_square(
        g_df, (nonzero * beta_squares + o_.sigma2_g_df * o_.sigma2_g_scale) / g_df);
    st_.sigma2_e =
        d.scaled_inverse_chi_square(e_df, (ee + o_.sigma2_e_df * o_.sigma2_e_scale) / e_df);
    detail::random_draws w(o_.seed, weights, t_, 0);
    double total = 0;
    for (std::size_t k = 0; k < classes_; ++k)
      total += (st_.pi[k] = w.gamma(counts[k] + o_.dirichlet_alpha));
    for (double& p : st_.pi) p /= total;
    st_.iteration = t_;
    // h² as GCTB reports it: the variance of the genetic values Zβ over the phenotype's.
    genetic_variance = (g_squares - g_sum * g_sum / n_) / (n_ - 1.0);
    h2 = genetic_variance / (genetic_variance + st_.sigma2_e);

    const bool kept = t_ % o_.thin == 0;
    if (kept) {
      bayesr_sample s;
      s.iteration = t_;
      s.mu = st_.mu;
      s.sigma2_g = st_.sigma2_g;
      s.sigma2_e = st_.sigma2_e;
      s.genetic_variance = genetic_variance;
      s.h2 = genetic_variance / (genetic_variance + st_.sigma2_e);
      s.nonzero = static_cast<std::size_t>(nonzero);
      s.pi = st_.pi;
      st_.trace.push_back(std::move(s));
    }
    if (kept && t_ > o_.burnin) {
      ++st_.posterior_samples;
      for (std::size_t p : visited)
        if (st_.beta[p] != 0.0) {
          ++st_.included[p];
          st_.beta_sum[p] += st_.beta[p];
          st_.beta_square_sum[p] += st_.beta[p] * st_.beta[p];
        }
    }
  }

 private:
  std::function<void(std::span<double>)> agree_;
  detail::bayesr_state& st_;
  sample_blocks& blocks_;
  const bayesr_options& o_;
  const std::vector<std::uint8_t>& used_;
  const std::vector<double>& y_;
  double n_, a_;
  std::size_t classes_;
  std::uint64_t t_ = 0;

 public:
  double genetic_variance = 0, h2 = 0;  // of the last iteration

 private:
  std::vector<double> log_const_, quad_, shrink_, spread_, weight_;
};

}  // namespace

bayesr_result bayesr(const store& s, const selection& sel, std::span<const double> phenotype,
                     const bayesr_options& o, const analysis_options& analysis) {
  check_bayesr_options(o);
  const std::size_t rows = s.num_rows(), m = sel.columns.size(), classes = o.mixture.size() + 1;
  const detail::phenotype_samples fit = detail::used_samples(s, sel, phenotype, 3, "bayesr: ");
  const std::vector<std::uint8_t>& used = fit.used;
  const std::size_t n = fit.count;
  bayesr_result result;
  result.samples = n;
  result.phenotype_mean = fit.mean;
  result.phenotype_sd = fit.sd;
  result.burnin = o.burnin;
  result.classes = classes;
  std::vector<double> y(rows, 0.0);  // standardised over the used samples, 0 elsewhere
  for (std::size_t i = 0; i < rows; ++i)
    if (used[i]) y[i] = (phenotype[i] - result.phenotype_mean) / result.phenotype_sd;

  detail::bayesr_state state;
  const std::uint64_t fingerprint = fingerprint_of(sel, used, y, o);
  if (o.resume) {
    state = detail::read_bayesr_checkpoint(o.checkpoint, fingerprint, rows, m, classes);
    if (state.iteration > o.iterations)
      throw error(errc::invalid_argument,
                  o.checkpoint.string() + ": the checkpoint is at iteration " +
                      std::to_string(state.iteration) + ", past --iterations " +
                      std::to_string(o.iterations));
    result.resumed_from = state.iteration;
  } else {
    state.fingerprint = fingerprint;
    state.sigma2_g = state.sigma2_e = 0.5;  // y has variance 1: start at h² = 0.5
    // A sparse start (GCTB's 0.95 for the zero class): from π₀ = 0.5 the first sweeps admit
    // half the columns and the chain takes hundreds of iterations to shed them when m > n.
    state.pi.assign(classes, 0.05 / static_cast<double>(classes - 1));
    state.pi[0] = 0.95;
    state.beta.assign(m, 0.0);
    state.component.assign(m, 0);
    state.residual.assign(y.begin(), y.end());
    state.included.assign(m, 0);
    state.beta_sum.assign(m, 0.0);
    state.beta_square_sum.assign(m, 0.0);
  }

  // First pass: each column's statistics over the used samples (and, in memory, its values).
  communicator* const processes = distributed(analysis.processes) ? analysis.processes : nullptr;
  // hydra's scheme: the columns split, every process with a whole residual of its own.
  const bool hydra = processes != nullptr && o.sync_every > 0;
  detail::standardized_columns z(s, sel, used, hydra ? nullptr : processes);
  const bool writer = processes == nullptr || processes->rank() == 0;
  stream_options so = analysis.stream;
  so.values = decode_as::stored;
  so.decode_values = !z.genotype();
  column_stream<double> stream(s, so);
  std::string label = "statistics";
  if (analysis.progress)
    stream.on_progress([&](const pass_progress& p) { analysis.progress(label, p); });
  result.execution = o.execution;
  if (o.execution == bayesr_execution::automatic) {
    bool nothing_to_decode = z.genotype();
    for (std::size_t j : sel.columns)
      if (nothing_to_decode && s.entry(j).codec != codec_id::none) nothing_to_decode = false;
    result.execution =
        nothing_to_decode ? bayesr_execution::sequential : bayesr_execution::pipelined;
  }
  const bool in_memory = result.execution == bayesr_execution::in_memory;
  if (hydra && in_memory)
    throw error(errc::invalid_argument, "bayesr: --sync-every runs pipelined or sequential");
  Eigen::MatrixXd matrix;
  if (in_memory) matrix.resize(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(m));
  stream.run(sel.columns, [&](const column_view<double>& v) {
    z.learn(v.position, v);
    if (in_memory)
      z.values(v.position, v, matrix.col(static_cast<Eigen::Index>(v.position)).data());
    return true;
  });
  result.columns = z.stats();
  std::vector<std::size_t> visited;  // selection positions of the non-constant columns
  for (std::size_t p = 0; p < m; ++p)
    if (!z.constant(p)) visited.push_back(p);

  // Every process takes process 0's values of the sums over its residual (hydra's scheme).
  const auto agree = [processes](std::span<double> values) { take_from_first(*processes, values); };
  sampler chain(state, o, used, y, n, z.blocks(),
                hydra ? std::function<void(std::span<double>)>(agree) : nullptr);
  // hydra's scheme: this process's columns (selection positions [own_begin, own_end), shares
  // balanced by stored bytes), the most any process has among the visited ones, and the
  // changes made since the last exchange.
  std::size_t own_begin = 0, own_end = m, most_own = 0;
  struct change {
    std::size_t position;
    double beta, component, delta;
  };
  std::vector<change> changes;
  std::vector<std::size_t> own_order;
  if (hydra) {
    const detail::column_share share = detail::share_columns(s, sel.columns, *processes);
    own_begin = share.begin;
    own_end = share.end;
    std::size_t first = 0;
    for (std::size_t c : share.counts) {
      std::size_t visited_here = 0;
      for (std::size_t p : visited) visited_here += p >= first && p < first + c;
      most_own = std::max(most_own, visited_here);
      first += c;
    }
  }
  std::vector<std::uint8_t> payload(hydra && z.genotype() ? genotype_column_bytes(rows) : 0);
  std::vector<double> dense_values(hydra && !z.genotype() ? rows : 0);
  // One exchange: every process's changes to every process; each applies the others' (their
  // effects, and their columns' updates of its own residual), in rank order.
  const auto exchange_changes = [&] {
    const auto size = static_cast<std::size_t>(processes->size());
    const auto me = static_cast<std::size_t>(processes->rank());
    std::vector<double> mine;
    for (const change& c : changes)
      mine.insert(mine.end(), {static_cast<double>(c.position), c.beta, c.component, c.delta});
    changes.clear();
    std::vector<std::size_t> counts;
    std::size_t total = 0;
    for (double c : all_gather_one(*processes, static_cast<double>(mine.size())))
      total += counts.emplace_back(static_cast<std::size_t>(c));
    std::vector<double> all(total);
    processes->all_gather(mine, all, counts);
    std::size_t at = 0;
    for (std::size_t r = 0; r < size; ++r) {
      const std::size_t end = at + counts[r];
      for (; r != me && at < end; at += 4) {
        const auto p = static_cast<std::size_t>(all[at]);
        state.beta[p] = all[at + 1];
        state.component[p] = static_cast<std::uint8_t>(all[at + 2]);
        column_view<double> v;
        v.column = sel.columns[p];
        v.position = p;
        if (z.genotype()) {
          s.read_payload(v.column, std::as_writable_bytes(std::span(payload)));
          v.codes = payload;
        } else {
          s.read_column(v.column, dense_values, decode_as::stored);
          // Eigen's way to point a Map elsewhere: construct it again in place.
          new (&v.values) Eigen::Map<const Eigen::VectorXd>(
              dense_values.data(), static_cast<Eigen::Index>(dense_values.size()));
        }
        z.subtract(p, v, all[at + 3], state.residual);
      }
      at = end;
    }
  };
  std::vector<std::size_t> order(visited.size()), order_columns(visited.size());
  const auto e_map = [&] {
    return Eigen::Map<Eigen::VectorXd>(state.residual.data(), static_cast<Eigen::Index>(rows));
  };
  const auto chain_start = std::chrono::steady_clock::now();
  while (state.iteration < o.iterations) {
    const std::uint64_t t = state.iteration + 1;
    chain.begin(t);
    // A fresh visiting order: Fisher-Yates driven by this iteration's draws.
    order = visited;
    detail::random_draws shuffle(o.seed, visit_order, t, 0);
    for (std::size_t i = order.size(); i > 1; --i)
      std::swap(order[i - 1], order[shuffle.below(static_cast<std::uint32_t>(i))]);
    // The residual's sum over the used samples, for the products (column updates keep it).
    const double* residual = state.residual.data();
    const double residual_sum =
        z.blocks().sum([&](std::size_t, std::size_t first, std::size_t count) {
          return std::accumulate(residual + first, residual + first + count, 0.0);
        });
    label = "iteration " + std::to_string(t) + "/" + std::to_string(o.iterations);
    if (hydra) {
      // This process's columns in this iteration's order, an exchange every sync_every of
      // them, and as many exchanges as the process with the most columns makes.
      own_order.clear();
      for (std::size_t p : order)
        if (p >= own_begin && p < own_end) own_order.push_back(p);
      order_columns.resize(own_order.size());
      for (std::size_t i = 0; i < own_order.size(); ++i)
        order_columns[i] = sel.columns[own_order[i]];
      const std::size_t rounds = (most_own + o.sync_every - 1) / o.sync_every;
      std::size_t done = 0, exchanges = 0;
      const column_kernel<double> kernel = [&](const column_view<double>& v) {
        const std::size_t p = own_order[v.position];
        const double delta = chain.update(p, z.dot(p, v, state.residual, residual_sum));
        if (delta != 0.0) {
          z.subtract(p, v, delta, state.residual);
          changes.push_back({p, state.beta[p], static_cast<double>(state.component[p]), delta});
        }
        if (++done % o.sync_every == 0) {
          exchange_changes();
          ++exchanges;
        }
        return true;
      };
      const pass_stats ps = result.execution == bayesr_execution::sequential
                                ? stream.run_sequential(order_columns, kernel)
                                : stream.run(order_columns, kernel);
      for (; exchanges < rounds; ++exchanges) exchange_changes();
      result.seconds += ps.wall_seconds;
      result.compute_busy_seconds += ps.compute_busy_seconds;
    } else if (in_memory) {
      // No stream here to honour a stop request between columns: one check per iteration.
      throw_if_stop_requested();
      const auto start = std::chrono::steady_clock::now();
      auto e = e_map();
      sample_blocks& blocks = z.blocks();
      for (std::size_t p : order) {
        const auto col = matrix.col(static_cast<Eigen::Index>(p));
        const double delta =
            chain.update(p, blocks.sum([&](std::size_t, std::size_t first, std::size_t count) {
              const auto at = static_cast<Eigen::Index>(first);
              const auto len = static_cast<Eigen::Index>(count);
              return col.segment(at, len).dot(e.segment(at, len));
            }));
        if (delta != 0.0)
          blocks.for_each([&](std::size_t, std::size_t first, std::size_t count) {
            const auto at = static_cast<Eigen::Index>(first);
            const auto len = static_cast<Eigen::Index>(count);
            e.segment(at, len) -= delta * col.segment(at, len);
          });
      }
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      result.seconds += secs;
      result.compute_busy_seconds += secs;
      if (analysis.progress)
        analysis.progress(label, pass_progress{order.size(), order.size(), 0, secs});
    } else {
      for (std::size_t i = 0; i < order.size(); ++i) order_columns[i] = sel.columns[order[i]];
      const column_kernel<double> kernel = [&](const column_view<double>& v) {
        const std::size_t p = order[v.position];
        const double delta = chain.update(p, z.dot(p, v, state.residual, residual_sum));
        if (delta != 0.0) z.subtract(p, v, delta, state.residual);
        return true;
      };
      const pass_stats ps = result.execution == bayesr_execution::sequential
                                ? stream.run_sequential(order_columns, kernel)
                                : stream.run(order_columns, kernel);
      result.seconds += ps.wall_seconds;
      result.compute_busy_seconds += ps.compute_busy_seconds;
    }
    chain.end(visited);
    ++result.iterations_run;
    if (o.on_iteration) o.on_iteration(t, o.iterations, chain.h2);
    if (!hydra && ((o.checkpoint_every > 0 && t % o.checkpoint_every == 0) ||
                   (!o.checkpoint.empty() && t == o.iterations))) {
      // On several processes each holds the residual of its own blocks: made whole first.
      z.blocks().gather(state.residual);
      if (writer) detail::write_bayesr_checkpoint(o.checkpoint, state);
    }
    if (analysis.on_step)
      analysis.on_step("chain", loop_progress{t, o.iterations, result.resumed_from,
                                              std::chrono::duration<double>(
                                                  std::chrono::steady_clock::now() - chain_start)
                                                  .count()});
  }

  result.trace = std::move(state.trace);
  result.posterior_samples = state.posterior_samples;
  const double ps = static_cast<double>(state.posterior_samples);
  result.inclusion.assign(m, 0.0);
  result.beta_mean.assign(m, 0.0);
  result.beta_sd.assign(m, 0.0);
  if (ps > 0)
    for (std::size_t p = 0; p < m; ++p) {
      result.inclusion[p] = static_cast<double>(state.included[p]) / ps;
      const double mean = state.beta_sum[p] / ps;
      result.beta_mean[p] = mean;
      if (ps > 1)
        result.beta_sd[p] =
            std::sqrt(std::max(0.0, (state.beta_square_sum[p] - ps * mean * mean) / (ps - 1.0)));
    }
  return result;
}

}  // namespace colflow
