// The SBayesR Gibbs sampler (analysis/sbayesr.hpp): the normal equations from the summary
// statistics, then iterations over the variants in index order that read a variant's LD column
// when its effect changes.
#include "colflow/analysis/sbayesr.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>
#include <string>

#include "analysis/models/bayesr_mixture_internal.hpp"
#include "analysis/models/chain_checkpoint_internal.hpp"
#include "analysis/models/ld_column_cache_internal.hpp"
#include "analysis/models/random_draws_internal.hpp"
#include "analysis/models/residual_vector_internal.hpp"
#include "analysis/models/sbayesr_checkpoint_internal.hpp"
#include "colflow/codec/codec.hpp"
#include "colflow/communicator.hpp"
#include "colflow/error.hpp"
#include "io/text_table_internal.hpp"
#include "kernels/allowed_threads_internal.hpp"
#include "kernels/block_team_internal.hpp"
#include "kernels/ld_update_internal.hpp"

namespace colflow {

void check_sbayesr_options(const sbayesr_options& o) {
  const auto bad = [](const std::string& what) { throw error(errc::invalid_argument, what); };
  if (o.iterations == 0) bad("sbayesr: --iterations must be at least 1");
  if (o.burnin >= o.iterations)
    bad("sbayesr: the burn-in (" + std::to_string(o.burnin) + ") must be shorter than the chain (" +
        std::to_string(o.iterations) + " iterations)");
  if (o.gamma.size() < 2 || o.gamma.size() > 255)
    bad("sbayesr: --gamma needs 2 to 255 classes, the zero class first");
  if (o.gamma[0] != 0.0) bad("sbayesr: the first --gamma must be 0 (the zero class)");
  for (std::size_t k = 1; k < o.gamma.size(); ++k)
    if (!(o.gamma[k] > o.gamma[k - 1]) || !std::isfinite(o.gamma[k]))
      bad("sbayesr: --gamma values must increase and be finite");
  if (o.pi.size() != o.gamma.size())
    bad("sbayesr: --pi needs one weight per --gamma class (" + std::to_string(o.gamma.size()) +
        "), not " + std::to_string(o.pi.size()));
  double total = 0;
  for (double p : o.pi) {
    if (!(p > 0.0 && p < 1.0)) bad("sbayesr: --pi weights must be in (0, 1)");
    total += p;
  }
  if (std::abs(total - 1.0) > 1e-6) bad("sbayesr: --pi weights must sum to 1");
  if (!(o.h2_start > 0.0 && o.h2_start < 1.0))
    bad("sbayesr: --hsq (the starting h2) must be in (0, 1)");
  if ((o.checkpoint_every > 0 || o.resume) && o.checkpoint.empty())
    bad("sbayesr: checkpoints need a checkpoint path");
}

namespace {

constexpr double prior_df = 4;                    // GCTB's df of σ²_β and σ²_e
constexpr std::uint64_t scale_iterations = 2000;  // GCTB's: σ²_β's prior scale learnt so long
constexpr std::size_t none = static_cast<std::size_t>(-1);
// Variants drawn between two updates of the whole residual (chain::sweep).
constexpr std::size_t sweep_block = 128;
// Positions per piece of a residual update: their residual and √D (4 KiB) stay in a core's
// first-level cache while the block's changes stream past.
constexpr std::size_t update_stretch = 256;
// A block's updates outside it (the values of its changes' windows) worth handing to the team:
// a few microseconds of work, against well under one to start the team's spinning helpers.
constexpr std::size_t team_work = 2048;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// One chain: the normal equations, the state, the iterations and the posterior summary.
class chain {
 public:
  chain(ld_columns& ld, const aligned_gwas& gwas, const sbayesr_options& o,
        const analysis_options& analysis)
      : ld_(ld),
        gwas_(gwas),
        o_(o),
        analysis_(analysis),
        m_(gwas.variant.size()),
        processes_(distributed(analysis.processes) ? analysis.processes : nullptr),
        mixture_(std::span(o.gamma).subspan(1), o.seed),
        cache_(ld, m_, o.ld_cache_bytes) {
    normal_equations();
    ld_sampling_variance();
    start();
    if (processes_) agree_on_inputs();
    if (o_.resume) resume();
  }

  // The iterations from the state's to o.iterations, each ended by its callbacks and, when
  // due, a checkpoint.
  void run() {
    const auto start = std::chrono::steady_clock::now();
    for (std::uint64_t t = iteration_ + 1; t <= o_.iterations; ++t) {
      sweep(t);
      draw_parameters(t);
      if (t > o_.burnin) accumulate();
      iteration_ = t;
      ++result_.iterations_run;
      if (o_.on_iteration) o_.on_iteration(t, o_.iterations, result_.trace.back().h2);
      if (!o_.checkpoint.empty() && writes_checkpoints() &&
          ((o_.checkpoint_every > 0 && t % o_.checkpoint_every == 0) || t == o_.iterations))
        detail::write_sbayesr_checkpoint(o_.checkpoint, state());
      if (analysis_.on_step)
        analysis_.on_step(
            "chain",
            loop_progress{
                t, o_.iterations, result_.resumed_from,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
    }
  }

  sbayesr_result summarise() {
    const double ps = static_cast<double>(result_.posterior_samples);
    result_.pip.assign(m_, 0.0);
    result_.beta_mean.assign(m_, 0.0);
    result_.beta_sd.assign(m_, 0.0);
    result_.a1_effect.assign(m_, 0.0);
    result_.a1_effect_sd.assign(m_, 0.0);
    for (std::size_t p = 0; p < m_; ++p) {
      const double mean = beta_sum_[p] / ps;
      result_.pip[p] = included_[p] / ps;
      result_.beta_mean[p] = mean;
      if (ps > 1)
        result_.beta_sd[p] =
            std::sqrt(std::max(0.0, (beta_square_sum_[p] - ps * mean * mean) / (ps - 1.0)));
      const double h = 2.0 * gwas_.freq[p] * (1.0 - gwas_.freq[p]);
      const double per_allele = h > 0 ? 1.0 / std::sqrt(h) : 0.0;
      result_.a1_effect[p] = mean * per_allele;
      result_.a1_effect_sd[p] = result_.beta_sd[p] * per_allele;
    }
    result_.beta = beta_;
    return std::move(result_);
  }

 private:
  // D_j, xᵀy, σ²_y, yᵀy and n from the summary statistics (sbayesr.hpp, "Data").
  void normal_equations() {
    std::vector<double> variance(m_), sums_of_squares(m_);
    d_.resize(m_);
    root_d_.resize(m_);
    xty_.resize(m_);
    for (std::size_t p = 0; p < m_; ++p) {
      const double h = 2.0 * gwas_.freq[p] * (1.0 - gwas_.freq[p]);
      if (!(h > 0))
        detail::bad_input_at(gwas_.path, gwas_.line[p],
                             "the A1 frequency is 0 or 1 (a monomorphic variant has no effect "
                             "SBayesR can fit: leave it out)");
      const double b = gwas_.b[p] * std::sqrt(h), se2 = gwas_.se[p] * gwas_.se[p] * h;
      variance[p] = gwas_.n[p] * se2 + b * b;
      sums_of_squares[p] = gwas_.n[p] * variance[p];
      d_[p] = gwas_.n[p];
      root_d_[p] = std::sqrt(d_[p]);
      xty_[p] = d_[p] * b;
    }
    varp_ = median(variance);
    yty_ = median(sums_of_squares);
    n_ = median(gwas_.n);
    position_.assign(ld_.variants().size(), none);
    for (std::size_t p = 0; p < m_; ++p) position_[gwas_.variant[p]] = p;
    result_.phenotype_variance = varp_;
    result_.sample_size = n_;
    result_.diagonal = d_;
    result_.rhs = xty_;
    result_.burnin = o_.burnin;
  }

  // One pass over the LD: each variant's own LD checked, and the variance its rhs gains from
  // the sampling error of its LD (GCTB's): the reference's per pair, (1 − r²)² / n_ref, summed
  // over its window, scaled by (N_j + n_ref) / m, plus (m − window) / m for the pairs outside
  // it, which the model takes as 0.
  void ld_sampling_variance() {
    ld_sampling_.assign(m_, 0.0);
    ld_hash_.assign(m_, 0);
    const double m = static_cast<double>(m_);
    ld_.pass(gwas_.variant, [&](const ld_column& c) {
      const std::size_t p = position_[c.index];
      const ld_variant& v = ld_.variants()[c.index];
      const std::size_t own = c.index - c.first;
      if (c.index < c.first || own >= c.values.size() || !std::isfinite(c.values[own]))
        throw error(errc::bad_input, ld_.description() + ": variant " + v.id +
                                         " has no finite LD with itself (constant in the "
                                         "reference?)");
      if (v.samples == 0)
        throw error(errc::bad_input, ld_.description() + ": variant " + v.id +
                                         ": the LD reference does not give its sample size");
      const double n_ref = static_cast<double>(v.samples);
      double sum = 0, window = 0;
      for (std::size_t i = 0; i < c.values.size(); ++i) {
        if (position_[c.first + i] == none) continue;
        const double r = c.values[i];
        sum += (1.0 - r * r) * (1.0 - r * r) / n_ref;
        window += 1;
      }
      ld_sampling_[p] = (gwas_.n[p] + n_ref) / m * sum + (m - window) / m;
      ld_hash_[p] = checksum64(std::as_bytes(std::span(c.values))) ^ c.first;
    });
  }

  // Everything the chain's numbers depend on besides its length, hashed, so that a checkpoint
  // is never resumed into another run: the normal equations, the LD (every column read, by its
  // hash), the alignment and the settings.
  std::uint64_t fingerprint() const {
    detail::fingerprint_builder f("colflow sbayesr 1");
    f.put(ld_.variants().size());
    f.put_all(gwas_.variant);
    for (const std::vector<double>* v : {&d_, &xty_, &gwas_.freq, &ld_sampling_}) f.put_all(*v);
    f.put_all(ld_hash_);
    for (double v : {varp_, yty_, n_, o_.h2_start}) f.put(v);
    f.put(o_.seed);
    f.put(o_.burnin);
    f.put_all(o_.gamma);
    f.put_all(o_.pi);
    return f.value();
  }

  // The chain's state after its last iteration, as a checkpoint holds it.
  detail::sbayesr_state state() const {
    detail::sbayesr_state st;
    st.fingerprint = fingerprint_;
    st.iteration = iteration_;
    st.sigma2_beta = sigma2_beta_;
    st.sigma2_e = sigma2_e_;
    st.sigma2_g = sigma2_g_;
    st.scale_beta = scale_beta_;
    st.scale_prior = scale_prior_;
    st.scale_e = scale_e_;
    st.pi = pi_;
    st.beta = beta_;
    st.residual.assign(u_.begin(), u_.end());
    st.component = component_;
    st.posterior_samples = result_.posterior_samples;
    st.included = included_;
    st.beta_sum = beta_sum_;
    st.beta_square_sum = beta_square_sum_;
    st.trace = result_.trace;
    return st;
  }

  // The state of the checkpoint to continue, in place of the start's.
  void resume() {
    detail::sbayesr_state st =
        detail::read_sbayesr_checkpoint(o_.checkpoint, fingerprint_, m_, o_.gamma.size());
    if (st.iteration > o_.iterations)
      throw error(errc::invalid_argument,
                  o_.checkpoint.string() + ": the checkpoint is at iteration " +
                      std::to_string(st.iteration) + ", past --iterations " +
                      std::to_string(o_.iterations));
    iteration_ = st.iteration;
    result_.resumed_from = st.iteration;
    sigma2_beta_ = st.sigma2_beta;
    sigma2_e_ = st.sigma2_e;
    sigma2_g_ = st.sigma2_g;
    scale_beta_ = st.scale_beta;
    scale_prior_ = st.scale_prior;
    scale_e_ = st.scale_e;
    pi_ = std::move(st.pi);
    beta_ = std::move(st.beta);
    u_.assign(st.residual.begin(), st.residual.end());
    component_ = std::move(st.component);
    result_.posterior_samples = st.posterior_samples;
    included_ = std::move(st.included);
    beta_sum_ = std::move(st.beta_sum);
    beta_square_sum_ = std::move(st.beta_square_sum);
    result_.trace = std::move(st.trace);
  }

  // GCTB's starting values: h² = h2_start, σ²_β = σ²_g / (m (1 − π_1)), the priors' scales half
  // the starting variances.
  void start() {
    pi_ = o_.pi;
    sigma2_g_ = o_.h2_start * varp_;
    sigma2_e_ = varp_ - sigma2_g_;
    sigma2_beta_ = sigma2_g_ / (static_cast<double>(m_) * (1.0 - pi_[0]));
    scale_beta_ = scale_prior_ = 0.5 * sigma2_beta_;
    scale_e_ = 0.5 * sigma2_e_;
    beta_.assign(m_, 0.0);
    component_.assign(m_, 0);
    u_.resize(m_);
    for (std::size_t p = 0; p < m_; ++p) u_[p] = xty_[p] / root_d_[p];
    included_.assign(m_, 0.0);
    beta_sum_.assign(m_, 0.0);
    beta_square_sum_.assign(m_, 0.0);
    constants_.resize(m_ * mixture_.constants_size());
    for (outside_update& update : updates_) {
      update.self = this;
      update.changes.reserve(sweep_block);
      update.copies.resize(sweep_block);
    }
    own_blocks();
    const std::size_t stretches = (m_ + update_stretch - 1) / update_stretch;
    const std::size_t threads = std::min(detail::allowed_threads(), stretches);
    if (threads > 1)
      team_ = std::make_unique<detail::block_team>(m_, update_stretch, 0, stretches, threads);
    every_.resize(m_);
    std::iota(every_.begin(), every_.end(), std::size_t{0});
    fingerprint_ = fingerprint();
  }

  // A changed effect's update of the residual over √D, u_i −= r_ij · scaled over its column's
  // window (scaled = √D_j Δβ_j), held until its block's end: the column stays where the cache
  // has it until then (let_go waits for the block's end), or in its own copy.
  struct change {
    detail::held_column column;
    std::size_t begin, end;  // the positions of the window's variants in the statistics
    bool contiguous;         // every variant of the window has one: value q − begin
    double scaled;           // for 16-bit values, times their scale (exact: a power of two)
  };

  // A block's changes, in order, on the positions outside [block_begin, skip_end) (the block
  // and the next, which the drawing thread updates itself), stretch by stretch of
  // update_stretch positions, on the team or the calling thread.
  struct outside_update {
    chain* self = nullptr;
    std::vector<change> changes;
    std::vector<std::vector<float>> copies;  // per change: its column when not kept
    std::size_t block_begin = 0, block_end = 0, skip_end = 0;

    void operator()(std::size_t, std::size_t first, std::size_t n) const {
      self->for_own(first, first + n, [&](std::size_t lo, std::size_t hi) {
        self->subtract_all(changes, lo, std::min(hi, block_begin));
        self->subtract_all(changes, std::max(lo, skip_end), hi);
      });
    }
  };

  // Every variant in index order: its class and effect, then, when the effect changed, the
  // residual from its LD column. Only then is the column read: most draws leave a zero effect
  // zero, so an iteration reads the columns of the non-zero effects (old or new), not all m.
  //
  // The variants are drawn in blocks of sweep_block. A change updates the residual of its own
  // block at once (the block's later draws read it); at the block's end, the block's changes
  // update the next block, then the rest of the residual on the team, while this thread draws
  // the next block (whose positions the team leaves alone). Every element still takes its
  // updates one by one in the order of the changes, each rounded as alone, so the bits are
  // those of updating the whole window at each change, whatever the threads.
  void sweep(std::uint64_t t) {
    prepare_draws(t);
    const std::size_t size = mixture_.constants_size();
    outside_update* running = nullptr;  // the update the team is on
    for (std::size_t b0 = 0, slot = 0; b0 < m_; b0 += sweep_block, slot ^= 1) {
      const std::size_t b1 = std::min(m_, b0 + sweep_block), b2 = std::min(m_, b1 + sweep_block);
      outside_update& update = updates_[slot];
      update.changes.clear();
      if (owner_of(b0) == rank_)
        for (std::size_t p = b0; p < b1; ++p) {
          const double old = beta_[p];
          const auto [k, beta] = mixture_.draw(p, root_d_[p] * u_[p] + d_[p] * old,
                                               std::span(constants_).subspan(p * size, size));
          component_[p] = k;
          beta_[p] = beta;
          const double delta = beta - old;
          if (delta == 0.0) continue;
          if (processes_) record_change(p, beta);
          update.changes.push_back(
              change_of(p, root_d_[p] * delta, update.copies[update.changes.size()]));
          subtract(update.changes.back(), b0, b1);
        }
      if (processes_) share_changes(b0, update);
      // The previous block's update covers the next block's positions: it ends first.
      if (running) finish(*running);
      running = nullptr;
      for_own(b1, b2,
              [&](std::size_t lo, std::size_t hi) { subtract_all(update.changes, lo, hi); });
      update.block_begin = b0;
      update.block_end = b1;
      update.skip_end = b2;
      std::size_t work = 0;
      for (const change& c : update.changes) work += (c.end - c.begin) / ranks_;
      if (team_ && work >= team_work) {
        team_->start_each(update);
        running = &update;
      } else {
        for (std::size_t lo = 0; lo < m_; lo += update_stretch)
          update(0, lo, std::min(update_stretch, m_ - lo));
        let_go(update);
      }
    }
    if (running) finish(*running);
    if (processes_) gather_residual();
  }

  // On several processes (docs/SCALING.md, "SBayesR on ranks"), the blocks of positions are
  // dealt out in turn, block b to process b mod R: each draws its blocks' variants and keeps
  // their residual. Every change is sent to every process, which updates its own positions
  // with it, in the order of the changes; so each element of the residual takes the very
  // updates, in the very order, of one process's, and the chain is the same bits. Dealt out in
  // turn, the blocks of any window (a band of LD as much as a whole chromosome) spread over
  // every process, and so does the work of its updates.
  void own_blocks() {
    rank_ = processes_ ? static_cast<std::size_t>(processes_->rank()) : 0;
    ranks_ = processes_ ? static_cast<std::size_t>(processes_->size()) : 1;
    if (processes_) message_.assign(1 + 3 * sweep_block, 0.0);
  }

  std::size_t owner_of(std::size_t position) const noexcept {
    return position / sweep_block % ranks_;
  }

  // f(lo, hi) on each run [lo, hi) of this process's positions within [first, last), in order.
  template <typename F>
  void for_own(std::size_t first, std::size_t last, F&& f) const {
    if (ranks_ == 1) {
      if (first < last) f(first, last);
      return;
    }
    for (std::size_t lo = first; lo < last;) {
      const std::size_t hi = std::min(last, (lo / sweep_block + 1) * sweep_block);
      if (owner_of(lo) == rank_) f(lo, hi);
      lo = hi;
    }
  }

  // Every process must run the same chain: one that was given other statistics, LD or settings
  // (the fingerprint differs) would send and expect other messages. All of them find out
  // together, before the first exchange, and stop with the same error.
  void agree_on_inputs() const {
    const double halves[2] = {static_cast<double>(fingerprint_ >> 32),
                              static_cast<double>(fingerprint_ & 0xffffffffu)};
    std::vector<double> all(2 * ranks_);
    processes_->all_gather(halves, all, std::vector<std::size_t>(ranks_, 2));
    for (std::size_t r = 1; r < ranks_; ++r)
      if (all[2 * r] != all[0] || all[2 * r + 1] != all[1])
        throw error(errc::invalid_argument,
                    "sbayesr: the MPI ranks were given different summary statistics, LD or "
                    "settings (rank " +
                        std::to_string(r) + "'s differ from rank 0's)");
  }

  // A change of the block being drawn, for share_changes: its position, class and effect.
  void record_change(std::size_t p, double beta) {
    const auto count = static_cast<std::size_t>(message_[0]);
    double* at = message_.data() + 1 + 3 * count;
    at[0] = static_cast<double>(p);
    at[1] = static_cast<double>(component_[p]);
    at[2] = beta;
    message_[0] = static_cast<double>(count + 1);
  }

  // The changes of the block at b0, from the process that drew it to every other, which takes
  // its effects and classes and the changes' columns into `update`. Positions and classes are
  // whole numbers, exact in doubles.
  void share_changes(std::size_t b0, outside_update& update) {
    const std::size_t owner = owner_of(b0);
    std::vector<std::size_t> counts(ranks_, 0);
    counts[owner] = message_.size();
    const bool mine = owner == rank_;
    const std::vector<double> sent = mine ? message_ : std::vector<double>();
    processes_->all_gather(sent, message_, counts);
    const auto count = static_cast<std::size_t>(message_[0]);
    message_[0] = 0;  // the next block's record starts empty
    if (mine) return;
    for (std::size_t i = 0; i < count; ++i) {
      const double* at = message_.data() + 1 + 3 * i;
      const auto p = static_cast<std::size_t>(at[0]);
      const double delta = at[2] - beta_[p];  // as the drawing process took it
      component_[p] = static_cast<std::uint8_t>(at[1]);
      beta_[p] = at[2];
      update.changes.push_back(
          change_of(p, root_d_[p] * delta, update.copies[update.changes.size()]));
    }
  }

  // Every process's positions of the residual to every process, for the iteration's
  // parameters (the same sums everywhere) and the checkpoint: each sends its blocks in order.
  void gather_residual() {
    std::vector<std::size_t> counts(ranks_, 0);
    for (std::size_t b0 = 0; b0 < m_; b0 += sweep_block)
      counts[owner_of(b0)] += std::min(m_, b0 + sweep_block) - b0;
    std::vector<double> mine;
    mine.reserve(counts[rank_]);
    for_own(0, m_, [&](std::size_t lo, std::size_t hi) {
      mine.insert(mine.end(), u_.begin() + static_cast<std::ptrdiff_t>(lo),
                  u_.begin() + static_cast<std::ptrdiff_t>(hi));
    });
    std::vector<double> all(m_);
    processes_->all_gather(mine, all, counts);
    std::vector<std::size_t> from(ranks_, 0);  // where each process's blocks start in `all`
    for (std::size_t r = 1; r < ranks_; ++r) from[r] = from[r - 1] + counts[r - 1];
    for (std::size_t b0 = 0; b0 < m_; b0 += sweep_block) {
      const std::size_t n = std::min(m_, b0 + sweep_block) - b0;
      std::size_t& at = from[owner_of(b0)];
      std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(at), n,
                  u_.begin() + static_cast<std::ptrdiff_t>(b0));
      at += n;
    }
  }

  bool writes_checkpoints() const { return processes_ == nullptr || processes_->rank() == 0; }

  // Every variant's constants of the mixture draw for iteration t: they depend on the
  // iteration's parameters, not on the residual, so they are computed before the sweep, on the
  // team (the sweep's draws are the one part that must run in order).
  void prepare_draws(std::uint64_t t) {
    mixture_.start(t, sigma2_beta_, pi_);
    const std::size_t size = mixture_.constants_size();
    auto fill = [&](std::size_t, std::size_t lo, std::size_t n) {
      for (std::size_t p = lo; p < lo + n; ++p) {
        // The residual variance of the variant's rhs: σ²_e and its LD's sampling error.
        const double variance = ld_sampling_[p] * sigma2_g_ + sigma2_e_;
        mixture_.column_constants(d_[p], variance, std::span(constants_).subspan(p * size, size));
      }
    };
    if (team_)
      team_->for_each(fill);
    else
      fill(0, 0, m_);
  }

  // A running update's end; then its block's columns of zero effects may go.
  void finish(const outside_update& update) {
    team_->finish();
    let_go(update);
  }

  void let_go(const outside_update& update) {
    for (std::size_t p = update.block_begin; p < update.block_end; ++p)
      if (beta_[p] == 0.0) cache_.let_go(p);
  }

  // `copy`: where the column goes when the cache neither keeps nor holds it.
  change change_of(std::size_t p, double scaled, std::vector<float>& copy) {
    const detail::held_column c = cache_.get(p, gwas_.variant[p], copy);
    change out{c, 0, 0, false, c.fixed ? scaled * fixed16_step : scaled};
    const std::size_t q0 = position_[c.first], q1 = position_[c.first + c.size - 1];
    out.contiguous = q0 != none && q1 != none && q1 - q0 == c.size - 1;
    if (out.contiguous) {
      // Every variant of the window is in the summary statistics (the usual case): positions
      // run on with the window's, and the update has no lookup.
      out.begin = q0;
      out.end = q1 + 1;
    } else {
      const auto& v = gwas_.variant;
      out.begin =
          static_cast<std::size_t>(std::lower_bound(v.begin(), v.end(), c.first) - v.begin());
      out.end = static_cast<std::size_t>(std::lower_bound(v.begin(), v.end(), c.first + c.size) -
                                         v.begin());
    }
    return out;
  }

  // c's update of the positions [lo, hi) of its window: u_i −= r_ij · scaled. The same
  // products whichever way (ld_update_internal.hpp).
  void subtract(const change& c, std::size_t lo, std::size_t hi) {
    lo = std::max(lo, c.begin);
    hi = std::min(hi, c.end);
    if (lo >= hi) return;
    const detail::held_column& h = c.column;
    if (c.contiguous) {
      const std::size_t at = lo - c.begin;
      if (h.fixed)
        detail::subtract_scaled_column(h.fixed + at, c.scaled, hi - lo, u_.data() + lo);
      else
        detail::subtract_scaled_column(h.values + at, c.scaled, hi - lo, u_.data() + lo);
      return;
    }
    for (std::size_t q = lo; q < hi; ++q) {
      const std::size_t i = gwas_.variant[q] - h.first;
      const double value = h.fixed ? static_cast<double>(h.fixed[i]) : h.values[i];
      u_[q] -= value * c.scaled;
    }
  }

  // The changes cs, in order, on the positions [lo, hi): four at a time where four running
  // changes cover them all with values of one kind, else one by one. The same bits either way.
  void subtract_all(std::span<const change> cs, std::size_t lo, std::size_t hi) {
    if (lo >= hi) return;
    std::size_t k = 0;
    for (; k + 4 <= cs.size(); k += 4) {
      const std::span<const change> four = cs.subspan(k, 4);
      const bool fixed = four[0].column.fixed != nullptr;
      const bool fit = std::all_of(four.begin(), four.end(), [&](const change& c) {
        return c.contiguous && c.begin <= lo && c.end >= hi && (c.column.fixed != nullptr) == fixed;
      });
      if (!fit) {
        for (const change& c : four) subtract(c, lo, hi);
        continue;
      }
      const std::array<double, 4> scaled = {four[0].scaled, four[1].scaled, four[2].scaled,
                                            four[3].scaled};
      const auto at = [&](const change& c) { return lo - c.begin; };
      if (fixed)
        detail::subtract_scaled_columns(
            {four[0].column.fixed + at(four[0]), four[1].column.fixed + at(four[1]),
             four[2].column.fixed + at(four[2]), four[3].column.fixed + at(four[3])},
            scaled, hi - lo, u_.data() + lo);
      else
        detail::subtract_scaled_columns(
            {four[0].column.values + at(four[0]), four[1].column.values + at(four[1]),
             four[2].column.values + at(four[2]), four[3].column.values + at(four[3])},
            scaled, hi - lo, u_.data() + lo);
    }
    for (; k < cs.size(); ++k) subtract(cs[k], lo, hi);
  }

  // σ²_β, π, σ²_g, σ²_e and h² after a sweep, and the learnt prior scale of σ²_β.
  void draw_parameters(std::uint64_t t) {
    const detail::bayesr_mixture::tally counted = mixture_.count(every_, component_, beta_);
    detail::random_draws d(o_.seed, detail::variances, t, 0);
    sigma2_beta_ = detail::bayesr_mixture::draw_sigma2_beta(d, counted, prior_df, scale_beta_);
    mixture_.draw_pi(t, counted, 1.0, pi_);
    double bty = 0, btr = 0;
    for (std::size_t p = 0; p < m_; ++p)
      if (beta_[p] != 0.0) {
        bty += beta_[p] * xty_[p];
        btr += beta_[p] * (root_d_[p] * u_[p]);
      }
    const double varg = sigma2_g_ = std::max(0.0, (bty - btr) / n_);
    const double sse = yty_ - bty - btr;
    if (sse < 0)
      throw error(errc::bad_input,
                  "sbayesr: iteration " + std::to_string(t) +
                      ": the residual variance turned negative (" + std::to_string(sse / n_) +
                      "): the effects are blowing up, the chain does not converge. The LD "
                      "reference may not match the GWAS samples, or its window is too narrow; "
                      "try a larger window, a reference closer to the GWAS population, or "
                      "fewer variants in high LD");
    const double e_df = prior_df + n_;
    sigma2_e_ = d.scaled_inverse_chi_square(e_df, (sse + prior_df * scale_e_) / e_df);
    // GCTB learns σ²_β's prior scale over its first 2,000 iterations and uses it from then on.
    if (t > scale_iterations) scale_beta_ = scale_prior_;
    if (t < scale_iterations) {
      double gamma_pi = 0;
      for (std::size_t k = 0; k < pi_.size(); ++k) gamma_pi += o_.gamma[k] * pi_[k];
      const double scale_now = 0.5 * varg / (static_cast<double>(m_) * gamma_pi);
      scale_prior_ += (scale_now - scale_prior_) / static_cast<double>(t);
    }
    sbayesr_sample s;
    s.iteration = t;
    s.counts = counted.counts;
    s.pi = pi_;
    s.nonzero = static_cast<std::size_t>(counted.nonzero);
    s.sigma2_beta = sigma2_beta_;
    s.sigma2_e = sigma2_e_;
    s.sigma2_g = varg;
    s.h2 = varg / varp_;
    result_.trace.push_back(std::move(s));
  }

  void accumulate() {
    ++result_.posterior_samples;
    for (std::size_t p = 0; p < m_; ++p)
      if (beta_[p] != 0.0) {
        included_[p] += 1;
        beta_sum_[p] += beta_[p];
        beta_square_sum_[p] += beta_[p] * beta_[p];
      }
  }

  ld_columns& ld_;
  const aligned_gwas& gwas_;
  const sbayesr_options& o_;
  const analysis_options& analysis_;
  std::size_t m_;
  communicator* processes_;  // null: this process alone
  // This process and their number (own_blocks): it draws and keeps the residual of the blocks
  // b with b mod ranks_ = rank_, all of them alone.
  std::size_t rank_ = 0, ranks_ = 1;
  std::vector<double> message_;  // a block's changes: their count, then position, class, β
  detail::bayesr_mixture mixture_;
  std::vector<double> constants_;  // per variant: the mixture's draw constants (prepare_draws)
  double varp_ = 0, n_ = 0, yty_ = 0;
  std::vector<double> d_, root_d_, xty_;
  std::vector<double> ld_sampling_;     // per variant: the LD sampling variance of its rhs
  std::vector<std::uint64_t> ld_hash_;  // per variant: its LD column's hash and first index
  std::uint64_t fingerprint_ = 0;
  std::vector<std::size_t> position_;  // per reference variant: its aligned position, or none
  std::vector<std::size_t> every_;     // 0 .. m − 1
  detail::ld_column_cache cache_;      // LD columns read, kept between iterations
  // Two blocks' updates, drawn and applied in turn (sweep); team_, below, applies them.
  std::array<outside_update, 2> updates_;
  // The chain's state.
  std::uint64_t iteration_ = 0;  // iterations completed
  std::vector<double> pi_, beta_;
  // The residual Xᵀy − XᵀXβ over √D, per variant, aligned to a cache line so that the
  // updates' vector loads never straddle two (residual_vector_internal.hpp).
  detail::residual_vector u_;
  std::vector<std::uint8_t> component_;
  double sigma2_beta_ = 0, sigma2_e_ = 0, sigma2_g_ = 0, scale_beta_ = 0, scale_prior_ = 0,
         scale_e_ = 0;
  std::vector<double> included_, beta_sum_, beta_square_sum_;
  sbayesr_result result_;
  // The threads that update the residual: the last member, so that when an error leaves a sweep
  // with an update running, the team's end (which waits for its helpers) comes before that of
  // anything they touch.
  std::unique_ptr<detail::block_team> team_;
};

}  // namespace

sbayesr_result sbayesr(ld_columns& ld, const aligned_gwas& gwas, const sbayesr_options& o,
                       const analysis_options& analysis) {
  check_sbayesr_options(o);
  if (gwas.variant.empty())
    throw error(errc::invalid_argument, "sbayesr: no variant in the summary statistics");
  for (std::size_t v : gwas.variant)
    if (v >= ld.variants().size())
      throw error(errc::invalid_argument,
                  "sbayesr: the summary statistics are aligned to another LD reference than " +
                      ld.description());
  chain c(ld, gwas, o, analysis);
  c.run();
  return c.summarise();
}

}  // namespace colflow
