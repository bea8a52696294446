// The BayesR Gibbs sampler: a chain's updates, its set-up or resumption from a checkpoint,
// and its iterations, streamed, in memory, or with the columns split among processes.
#include "colflow/analysis/bayesr.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <string>

#include "analysis/models/bayesr_checkpoint_internal.hpp"
#include "analysis/models/bayesr_mixture_internal.hpp"
#include "analysis/models/chain_checkpoint_internal.hpp"
#include "analysis/models/random_draws_internal.hpp"
#include "analysis/shared/analysis_stream_internal.hpp"
#include "analysis/shared/column_share_internal.hpp"
#include "analysis/shared/standardized_columns_internal.hpp"
#include "colflow/cancellation.hpp"
#include "colflow/error.hpp"
#include "colflow/stream/column_stream.hpp"
#include "kernels/sample_blocks_internal.hpp"

namespace colflow {

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
  detail::fingerprint_builder f("colflow bayesr 1");
  f.put(used.size());
  f.put(sel.columns.size());
  for (std::size_t c : sel.columns) f.put(c);
  f.put_bytes(used.data(), used.size());
  for (double v : y) f.put(v);
  f.put(o.seed);
  f.put(o.burnin);
  f.put(o.thin);
  for (double g : o.mixture) f.put(g);
  for (double v :
       {o.dirichlet_alpha, o.sigma2_g_df, o.sigma2_g_scale, o.sigma2_e_df, o.sigma2_e_scale})
    f.put(v);
  return f.value();
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
        mixture_(o.mixture, o.seed) {}

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
    detail::random_draws d(o_.seed, detail::intercept, t, 0);
    const double mu = (sum / n_ + st_.mu) + std::sqrt(st_.sigma2_e / n_) * d.normal();
    const double shift = mu - st_.mu;
    blocks_.for_each([&](std::size_t, std::size_t first, std::size_t n) {
      for (std::size_t i = first; i < first + n; ++i)
        if (used[i]) e[i] -= shift;
    });
    st_.mu = mu;
    // Every standardised column has zᵀz = n − 1 over the used samples.
    mixture_.prepare(t, a_, st_.sigma2_g, st_.sigma2_e, st_.pi);
  }

  // The update of selection position p given z_pᵀe (e excluding nothing: the current
  // residual). Returns the change of β_p, to be applied to the residual.
  double update(std::size_t p, double z_dot_e) {
    const double old = st_.beta[p];
    const auto [component, beta] = mixture_.draw(p, z_dot_e + a_ * old);
    st_.component[p] = component;
    st_.beta[p] = beta;
    return beta - old;
  }

  // Ends iteration t: the variances and weights, the trace, the posterior sums.
  void end(const std::vector<std::size_t>& visited) {
    const detail::bayesr_mixture::tally counted = mixture_.count(visited, st_.component, st_.beta);
    const auto [ee, g_sum, g_squares] = residual_sums();
    detail::random_draws d(o_.seed, detail::variances, t_, 0);
    st_.sigma2_g =
        detail::bayesr_mixture::draw_sigma2_g(d, counted, o_.sigma2_g_df, o_.sigma2_g_scale);
    const double e_df = o_.sigma2_e_df + n_;
    st_.sigma2_e =
        d.scaled_inverse_chi_square(e_df, (ee + o_.sigma2_e_df * o_.sigma2_e_scale) / e_df);
    mixture_.draw_pi(t_, counted, o_.dirichlet_alpha, st_.pi);
    st_.iteration = t_;
    // h² as GCTB reports it: the variance of the genetic values Zβ over the phenotype's.
    genetic_variance = (g_squares - g_sum * g_sum / n_) / (n_ - 1.0);
    h2 = genetic_variance / (genetic_variance + st_.sigma2_e);
    if (t_ % o_.thin == 0) keep(static_cast<std::size_t>(counted.nonzero), visited);
  }

 private:
  // e'e, and the sum and sum of squares of the genetic values g = y − μ − e, over the used
  // samples.
  std::array<double, 3> residual_sums() {
    const double* residual = st_.residual.data();
    const std::uint8_t* used = used_.data();
    const double mu = st_.mu;
    std::array<double, 3> sums =
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
    if (agree_) agree_(sums);
    return sums;
  }

  // A kept iteration: its line of the trace and, after the burn-in, its posterior sums.
  void keep(std::size_t nonzero, const std::vector<std::size_t>& visited) {
    bayesr_sample s;
    s.iteration = t_;
    s.mu = st_.mu;
    s.sigma2_g = st_.sigma2_g;
    s.sigma2_e = st_.sigma2_e;
    s.genetic_variance = genetic_variance;
    s.h2 = genetic_variance / (genetic_variance + st_.sigma2_e);
    s.nonzero = nonzero;
    s.pi = st_.pi;
    st_.trace.push_back(std::move(s));
    if (t_ <= o_.burnin) return;
    ++st_.posterior_samples;
    for (std::size_t p : visited)
      if (st_.beta[p] != 0.0) {
        ++st_.included[p];
        st_.beta_sum[p] += st_.beta[p];
        st_.beta_square_sum[p] += st_.beta[p] * st_.beta[p];
      }
  }

  std::function<void(std::span<double>)> agree_;
  detail::bayesr_state& st_;
  sample_blocks& blocks_;
  const bayesr_options& o_;
  const std::vector<std::uint8_t>& used_;
  const std::vector<double>& y_;
  double n_, a_;
  detail::bayesr_mixture mixture_;
  std::uint64_t t_ = 0;

 public:
  double genetic_variance = 0, h2 = 0;  // of the last iteration
};

// hydra's scheme (--sync-every on several processes): each process samples its own columns
// against a whole residual of its own, and the processes exchange the changes they made every
// `sync_every` of their columns (docs/DESIGN.md §4.9).
class change_exchange {
 public:
  // This process's columns are selection positions [own_begin, own_end), shares balanced by
  // stored bytes; `visited` the positions of the columns a chain samples.
  change_exchange(const store& s, const selection& sel, const std::vector<std::size_t>& visited,
                  communicator& processes, detail::standardized_columns& z)
      : s_(s), sel_(sel), processes_(processes), z_(z) {
    const detail::column_share share = detail::share_columns(s, sel.columns, processes);
    own_begin_ = share.begin;
    own_end_ = share.end;
    std::size_t first = 0;
    for (std::size_t c : share.counts) {
      std::size_t visited_here = 0;
      for (std::size_t p : visited) visited_here += p >= first && p < first + c;
      most_own_ = std::max(most_own_, visited_here);
      first += c;
    }
    if (z.genotype())
      payload_.resize(genotype_column_bytes(s.num_rows()));
    else
      dense_values_.resize(s.num_rows());
  }

  bool owns(std::size_t p) const noexcept { return p >= own_begin_ && p < own_end_; }
  // The exchanges of an iteration: as many as the process with the most columns makes.
  std::size_t rounds(std::size_t sync_every) const {
    return (most_own_ + sync_every - 1) / sync_every;
  }
  // Column p moved by `delta` to its state's effect and class.
  void record(std::size_t p, const detail::bayesr_state& state, double delta) {
    changes_.push_back({p, state.beta[p], static_cast<double>(state.component[p]), delta});
  }

  // One exchange: every process's changes to every process; each applies the others' (their
  // effects, and their columns' updates of its own residual), in rank order.
  void exchange(detail::bayesr_state& state) {
    const auto size = static_cast<std::size_t>(processes_.size());
    const auto me = static_cast<std::size_t>(processes_.rank());
    std::vector<double> mine;
    for (const change& c : changes_)
      mine.insert(mine.end(), {static_cast<double>(c.position), c.beta, c.component, c.delta});
    changes_.clear();
    std::vector<std::size_t> counts;
    std::size_t total = 0;
    for (double c : all_gather_one(processes_, static_cast<double>(mine.size())))
      total += counts.emplace_back(static_cast<std::size_t>(c));
    std::vector<double> all(total);
    processes_.all_gather(mine, all, counts);
    std::size_t at = 0;
    for (std::size_t r = 0; r < size; ++r) {
      const std::size_t end = at + counts[r];
      for (; r != me && at < end; at += 4) apply(all.data() + at, state);
      at = end;
    }
  }

 private:
  struct change {
    std::size_t position;
    double beta, component, delta;
  };

  // Another process's change (position, effect, class, Δβ): its column read from the store.
  void apply(const double* c, detail::bayesr_state& state) {
    const auto p = static_cast<std::size_t>(c[0]);
    state.beta[p] = c[1];
    state.component[p] = static_cast<std::uint8_t>(c[2]);
    column_view<double> v;
    v.column = sel_.columns[p];
    v.position = p;
    if (z_.genotype()) {
      s_.read_payload(v.column, std::as_writable_bytes(std::span(payload_)));
      v.codes = payload_;
    } else {
      s_.read_column(v.column, dense_values_, decode_as::stored);
      // Eigen's way to point a Map elsewhere: construct it again in place.
      new (&v.values) Eigen::Map<const Eigen::VectorXd>(
          dense_values_.data(), static_cast<Eigen::Index>(dense_values_.size()));
    }
    z_.subtract(p, v, c[3], state.residual);
  }

  const store& s_;
  const selection& sel_;
  communicator& processes_;
  detail::standardized_columns& z_;
  std::size_t own_begin_ = 0, own_end_ = 0, most_own_ = 0;
  std::vector<change> changes_;  // made since the last exchange
  std::vector<std::uint8_t> payload_;
  std::vector<double> dense_values_;
};

// One run of a chain: its data and state, set up or resumed from a checkpoint, then the
// statistics pass, the iterations and the posterior summary.
class chain_run {
 public:
  chain_run(const store& s, const selection& sel, std::span<const double> phenotype,
            const bayesr_options& o, const analysis_options& analysis)
      : s_(s),
        sel_(sel),
        o_(o),
        analysis_(analysis),
        rows_(s.num_rows()),
        m_(sel.columns.size()),
        classes_(o.mixture.size() + 1),
        fit_(detail::used_samples(s, sel, phenotype, 3, "bayesr: ")),
        y_(standardized_phenotype(phenotype, fit_)),
        state_(start_or_resume()),
        processes_(distributed(analysis.processes) ? analysis.processes : nullptr),
        hydra_(processes_ != nullptr && o.sync_every > 0),
        writer_(processes_ == nullptr || processes_->rank() == 0),
        z_(s, sel, fit_.used, hydra_ ? nullptr : processes_),
        stream_(s, analysis, !z_.genotype(), "statistics"),
        chain_(state_, o, fit_.used, y_, fit_.count, z_.blocks(), agreement()) {
    result_.samples = fit_.count;
    result_.phenotype_mean = fit_.mean;
    result_.phenotype_sd = fit_.sd;
    result_.burnin = o.burnin;
    result_.classes = classes_;
    if (o.resume) result_.resumed_from = state_.iteration;
    result_.execution = execution();
    in_memory_ = result_.execution == bayesr_execution::in_memory;
    if (hydra_ && in_memory_)
      throw error(errc::invalid_argument, "bayesr: --sync-every runs pipelined or sequential");
    if (in_memory_) matrix_.resize(static_cast<Eigen::Index>(rows_), static_cast<Eigen::Index>(m_));
  }

  // First pass: each column's statistics over the used samples (and, in memory, its values;
  // streamed, the lists of the bytes its products add).
  void learn_columns() {
    if (!in_memory_) {
      z_.keep_live_lists(o_.live_list_bytes);
      z_.defer_mean_updates();
    }
    stream_.columns.run(sel_.columns, [&](const column_view<double>& v) {
      z_.learn(v.position, v);
      if (in_memory_)
        z_.values(v.position, v, matrix_.col(static_cast<Eigen::Index>(v.position)).data());
      return true;
    });
    result_.columns = z_.stats();
    result_.live_list_bytes = z_.live_list_bytes();
    for (std::size_t p = 0; p < m_; ++p)
      if (!z_.constant(p)) visited_.push_back(p);
    if (hydra_) exchange_.emplace(s_, sel_, visited_, *processes_, z_);
    order_columns_.resize(visited_.size());
  }

  // The iterations from the state's to o.iterations, each ended by its callbacks and, when
  // due, a checkpoint.
  void run_chain() {
    const auto chain_start = std::chrono::steady_clock::now();
    while (state_.iteration < o_.iterations) {
      const std::uint64_t t = state_.iteration + 1;
      iterate(t);
      ++result_.iterations_run;
      if (o_.on_iteration) o_.on_iteration(t, o_.iterations, chain_.h2);
      if (!hydra_ && ((o_.checkpoint_every > 0 && t % o_.checkpoint_every == 0) ||
                      (!o_.checkpoint.empty() && t == o_.iterations))) {
        // On several processes each holds the residual of its own blocks: made whole first.
        z_.blocks().gather(state_.residual);
        if (writer_) detail::write_bayesr_checkpoint(o_.checkpoint, state_);
      }
      if (analysis_.on_step)
        analysis_.on_step("chain", loop_progress{t, o_.iterations, result_.resumed_from,
                                                 std::chrono::duration<double>(
                                                     std::chrono::steady_clock::now() - chain_start)
                                                     .count()});
    }
  }

  // The trace and the posterior means, SDs and inclusion probabilities of the effects.
  bayesr_result summarise() {
    result_.trace = std::move(state_.trace);
    result_.posterior_samples = state_.posterior_samples;
    const double ps = static_cast<double>(state_.posterior_samples);
    result_.inclusion.assign(m_, 0.0);
    result_.beta_mean.assign(m_, 0.0);
    result_.beta_sd.assign(m_, 0.0);
    if (ps > 0)
      for (std::size_t p = 0; p < m_; ++p) {
        result_.inclusion[p] = static_cast<double>(state_.included[p]) / ps;
        const double mean = state_.beta_sum[p] / ps;
        result_.beta_mean[p] = mean;
        if (ps > 1)
          result_.beta_sd[p] =
              std::sqrt(std::max(0.0, (state_.beta_square_sum[p] - ps * mean * mean) / (ps - 1.0)));
      }
    return std::move(result_);
  }

 private:
  // The phenotype standardised over the used samples, 0 elsewhere.
  static std::vector<double> standardized_phenotype(std::span<const double> phenotype,
                                                    const detail::phenotype_samples& fit) {
    std::vector<double> y(phenotype.size(), 0.0);
    for (std::size_t i = 0; i < y.size(); ++i)
      if (fit.used[i]) y[i] = (phenotype[i] - fit.mean) / fit.sd;
    return y;
  }

  // The state of iteration 0, or that of the checkpoint to resume.
  detail::bayesr_state start_or_resume() const {
    const std::uint64_t fingerprint = fingerprint_of(sel_, fit_.used, y_, o_);
    if (o_.resume) {
      detail::bayesr_state state =
          detail::read_bayesr_checkpoint(o_.checkpoint, fingerprint, rows_, m_, classes_);
      if (state.iteration > o_.iterations)
        throw error(errc::invalid_argument,
                    o_.checkpoint.string() + ": the checkpoint is at iteration " +
                        std::to_string(state.iteration) + ", past --iterations " +
                        std::to_string(o_.iterations));
      return state;
    }
    detail::bayesr_state state;
    state.fingerprint = fingerprint;
    state.sigma2_g = state.sigma2_e = 0.5;  // y has variance 1: start at h² = 0.5
    // A sparse start (GCTB's 0.95 for the zero class): from π₀ = 0.5 the first sweeps admit
    // half the columns and the chain takes hundreds of iterations to shed them when m > n.
    state.pi.assign(classes_, 0.05 / static_cast<double>(classes_ - 1));
    state.pi[0] = 0.95;
    state.beta.assign(m_, 0.0);
    state.component.assign(m_, 0);
    state.residual.assign(y_.begin(), y_.end());
    state.included.assign(m_, 0);
    state.beta_sum.assign(m_, 0.0);
    state.beta_square_sum.assign(m_, 0.0);
    return state;
  }

  // hydra's scheme: every process takes process 0's values of the sums over its residual.
  std::function<void(std::span<double>)> agreement() const {
    if (!hydra_) return nullptr;
    return
        [processes = processes_](std::span<double> values) { take_from_first(*processes, values); };
  }

  // Automatic: sequential when no column needs decoding (a genotype store whose selected
  // columns are stored plain), pipelined otherwise.
  bayesr_execution execution() const {
    if (o_.execution != bayesr_execution::automatic) return o_.execution;
    bool nothing_to_decode = z_.genotype();
    for (std::size_t j : sel_.columns)
      if (nothing_to_decode && s_.entry(j).codec != codec_id::none) nothing_to_decode = false;
    return nothing_to_decode ? bayesr_execution::sequential : bayesr_execution::pipelined;
  }

  // Iteration t: μ and the classes' constants, every visited column in a fresh order, then
  // the variances and weights.
  void iterate(std::uint64_t t) {
    chain_.begin(t);
    // A fresh visiting order: Fisher-Yates driven by this iteration's draws.
    order_ = visited_;
    detail::random_draws shuffle(o_.seed, detail::visit_order, t, 0);
    for (std::size_t i = order_.size(); i > 1; --i)
      std::swap(order_[i - 1], order_[shuffle.below(static_cast<std::uint32_t>(i))]);
    // The residual's sum over the used samples, for the products (column updates keep it).
    const double* residual = state_.residual.data();
    const double residual_sum =
        z_.blocks().sum([&](std::size_t, std::size_t first, std::size_t count) {
          return std::accumulate(residual + first, residual + first + count, 0.0);
        });
    stream_.label = "iteration " + std::to_string(t) + "/" + std::to_string(o_.iterations);
    if (hydra_)
      own_columns_pass(residual_sum);
    else if (in_memory_)
      in_memory_pass();
    else
      streamed_pass(residual_sum);
    z_.settle(state_.residual);
    chain_.end(visited_);
  }

  // Every visited column, streamed in the iteration's order. Where the threads share each
  // product of a genotype store, its columns go two at a time where a message holds two
  // (visit_pair): one meeting of the threads for two products. So they do on one thread where
  // the columns' live bytes are listed: the two lists' sums run side by side, twice the chains
  // of one. Otherwise a column of one thread gains nothing by it, and would compute for nothing
  // the products that an update voids. On several processes each sum is a collective that all
  // must call alike, and whether a process's blocks run on threads is its own: there the columns
  // go one at a time.
  void streamed_pass(double residual_sum) {
    for (std::size_t i = 0; i < order_.size(); ++i) order_columns_[i] = sel_.columns[order_[i]];
    if (!z_.genotype() || !(z_.blocks().parallel() || z_.keeps_live_lists()) ||
        processes_ != nullptr) {
      run_pass([&](const column_view<double>& v) {
        cache_state(v.position + 1);
        visit(order_[v.position], v, residual_sum);
        return true;
      });
      return;
    }
    run_batch_pass([&](std::span<const column_view<double>> views) {
      std::size_t i = 0;
      for (; i + 1 < views.size(); i += 2) {
        detail::standardized_columns::next_pair next;  // the next pair's codes
        for (std::size_t k = 0; k < 2 && i + 2 + k < views.size(); ++k)
          next[k] = views[i + 2 + k].codes;
        visit_pair(order_[views[i].position], views[i], order_[views[i + 1].position], views[i + 1],
                   next, residual_sum);
      }
      if (i < views.size()) visit(order_[views[i].position], views[i], residual_sum);
      return true;
    });
  }

  // Samples column p's effect from its product with the residual and updates the residual;
  // returns the effect's change.
  double sample(std::size_t p, const column_view<double>& v, double product) {
    const double delta = chain_.update(p, product);
    if (delta != 0.0) z_.subtract(p, v, delta, state_.residual);
    return delta;
  }

  double visit(std::size_t p, const column_view<double>& v, double residual_sum) {
    return sample(p, v, z_.dot(p, v, state_.residual, residual_sum));
  }

  // visit() of p then q, with both products computed at once against the residual before p.
  // q's product holds when p leaves the residual as it is (its effect stays 0, most visits);
  // otherwise it is computed again after p's update. Either way each column sees the product a
  // visit in turn gives it, to the bit, and the draws come in the same order.
  void visit_pair(std::size_t p, const column_view<double>& v, std::size_t q,
                  const column_view<double>& u, const detail::standardized_columns::next_pair& next,
                  double residual_sum) {
    const std::size_t after = u.position + 1;
    cache_state(after);
    cache_state(after + 1);
    const auto [first, second] = z_.dot_pair(p, v, q, u, state_.residual, residual_sum, next);
    if (sample(p, v, first) != 0.0)
      visit(q, u, residual_sum);
    else
      sample(q, u, second);
  }

  // Asks for the statistics, effect and lists of live bytes of the column at position `at` of
  // the order without waiting, and for where the lists of the one after it are: requested while
  // the column before it is sampled, they spare a shuffled order's wait on each.
  void cache_state(std::size_t at) const noexcept {
    if (at >= order_.size()) return;
    const std::size_t p = order_[at];
    __builtin_prefetch(&z_.stats()[p]);
    __builtin_prefetch(&state_.beta[p]);
    z_.cache_live_lists(p, at + 1 < order_.size() ? order_[at + 1] : p);
  }

  // hydra's scheme: this process's columns in the iteration's order, an exchange every
  // sync_every of them, and as many exchanges as the process with the most columns makes.
  void own_columns_pass(double residual_sum) {
    own_order_.clear();
    for (std::size_t p : order_)
      if (exchange_->owns(p)) own_order_.push_back(p);
    order_columns_.resize(own_order_.size());
    for (std::size_t i = 0; i < own_order_.size(); ++i)
      order_columns_[i] = sel_.columns[own_order_[i]];
    std::size_t done = 0, exchanges = 0;
    run_pass([&](const column_view<double>& v) {
      const std::size_t p = own_order_[v.position];
      const double delta = visit(p, v, residual_sum);
      if (delta != 0.0) exchange_->record(p, state_, delta);
      if (++done % o_.sync_every == 0) {
        exchange_->exchange(state_);
        ++exchanges;
      }
      return true;
    });
    for (const std::size_t rounds = exchange_->rounds(o_.sync_every); exchanges < rounds;
         ++exchanges)
      exchange_->exchange(state_);
  }

  // One pass of `kernel` over order_columns_, pipelined or sequential; its time counted.
  void run_pass(const column_kernel<double>& kernel) {
    count(result_.execution == bayesr_execution::sequential
              ? stream_.columns.run_sequential(order_columns_, kernel)
              : stream_.columns.run(order_columns_, kernel));
  }

  // The same with the columns of a message together.
  void run_batch_pass(const batch_kernel<double>& kernel) {
    count(result_.execution == bayesr_execution::sequential
              ? stream_.columns.run_batches_sequential(order_columns_, kernel)
              : stream_.columns.run_batches(order_columns_, kernel));
  }

  void count(const pass_stats& ps) {
    result_.seconds += ps.wall_seconds;
    result_.compute_busy_seconds += ps.compute_busy_seconds;
  }

  // Every visited column from the matrix in memory, products by Eigen on the sample blocks.
  void in_memory_pass() {
    // No stream here to honour a stop request between columns: one check per iteration.
    throw_if_stop_requested();
    const auto start = std::chrono::steady_clock::now();
    Eigen::Map<Eigen::VectorXd> e(state_.residual.data(), static_cast<Eigen::Index>(rows_));
    sample_blocks& blocks = z_.blocks();
    for (std::size_t p : order_) {
      const auto col = matrix_.col(static_cast<Eigen::Index>(p));
      const double delta =
          chain_.update(p, blocks.sum([&](std::size_t, std::size_t first, std::size_t count) {
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
    result_.seconds += secs;
    result_.compute_busy_seconds += secs;
    if (analysis_.progress)
      analysis_.progress(stream_.label, pass_progress{order_.size(), order_.size(), 0, secs});
  }

  const store& s_;
  const selection& sel_;
  const bayesr_options& o_;
  const analysis_options& analysis_;
  std::size_t rows_, m_, classes_;
  detail::phenotype_samples fit_;
  std::vector<double> y_;  // standardised over the used samples, 0 elsewhere
  detail::bayesr_state state_;
  communicator* processes_;  // null: this process alone
  bool hydra_;               // the columns split, every process with a whole residual of its own
  bool writer_;              // writes the checkpoints
  detail::standardized_columns z_;
  detail::analysis_stream stream_;
  sampler chain_;
  bayesr_result result_;
  bool in_memory_ = false;
  Eigen::MatrixXd matrix_;                  // in memory: every selected column's z
  std::vector<std::size_t> visited_;        // selection positions of the non-constant columns
  std::vector<std::size_t> order_;          // visited_ in this iteration's order
  std::vector<std::size_t> own_order_;      // hydra's scheme: this process's of them
  std::vector<std::size_t> order_columns_;  // the store columns of the pass
  std::optional<change_exchange> exchange_;
};

}  // namespace

bayesr_result bayesr(const store& s, const selection& sel, std::span<const double> phenotype,
                     const bayesr_options& o, const analysis_options& analysis) {
  check_bayesr_options(o);
  chain_run run(s, sel, phenotype, o, analysis);
  run.learn_columns();
  run.run_chain();
  return run.summarise();
}

}  // namespace colflow
