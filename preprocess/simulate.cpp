// Simulated PLINK data with a known truth (see colflow/preprocess/simulate.hpp for the model).
//
// Variants are generated in blocks of about 1 MiB of .bed by a oneTBB pipeline:
//   serial input (next block, pooled buffer) -> parallel generate -> serial in-order write.
// Every random number is Philox4x32-10 of a counter that names what it is for, so a block's
// bytes depend only on (seed, variant) and the output is the same whatever the thread count.
// The genetic values are accumulated in the serial stage from the causal variants' codes,
// still in the block buffer, always in variant order per sample: the floating-point sums are
// therefore reproducible too.
#include "colflow/preprocess/simulate.hpp"

#include <Random123/philox.h>
#include <fcntl.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <Random123/boxmuller.hpp>
#include <Random123/uniform.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <tuple>
#include <unordered_set>
#include <utility>

#include "colflow/cancellation.hpp"
#include "colflow/error.hpp"
#include "colflow/io/staged_output.hpp"
#include "colflow/version.hpp"

namespace colflow::preprocess {
namespace {

// Counts and positions stay within signed 32 bits, as PLINK's formats and tools expect.
constexpr std::uint64_t max_count = 2147483645;
constexpr std::uint64_t max_position = 2147483646;

enum stream : std::uint32_t {
  stream_genotypes = 0,
  stream_variant = 1,
  stream_causal = 2,
  stream_effect = 3,
  stream_noise = 4,
  stream_population = 5,
  stream_offspring = 6,
};

class generator {
 public:
  explicit generator(std::uint64_t seed)
      : key_{{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}} {}

  r123::Philox4x32::ctr_type operator()(std::uint32_t c0, std::uint32_t c1, stream s) const {
    return philox_(r123::Philox4x32::ctr_type{{c0, c1, s, 0}}, key_);
  }
  const r123::Philox4x32::key_type& key() const noexcept { return key_; }

 private:
  r123::Philox4x32 philox_;
  r123::Philox4x32::key_type key_;
};

std::uint64_t join(std::uint32_t hi, std::uint32_t lo) {
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}

// Uniform integer in [0, n) from 64 random bits (multiply-shift; bias below n / 2^64).
std::uint64_t below(std::uint64_t bits, std::uint64_t n) {
  __extension__ using u128 = unsigned __int128;
  return static_cast<std::uint64_t>((static_cast<u128>(bits) * n) >> 64);
}

std::uint64_t causal_count(const simulate_options& o) {
  if (o.causal) return *o.causal;
  return o.h2 == 0 ? 0 : std::min<std::uint64_t>(100, o.variants);
}

// Position spacing: 1000 bp, closer when M is so large that positions would overflow.
std::uint64_t position_step(std::uint64_t variants) {
  return std::clamp<std::uint64_t>((max_position - 1) / std::max<std::uint64_t>(variants, 1), 1,
                                   1000);
}

// Chromosome c (0-based) holds variants floor(c M / C) to floor((c + 1) M / C) - 1.
std::uint64_t first_of_chromosome(std::uint64_t c, const simulate_options& o) {
  return c * o.variants / o.chromosomes;
}
std::uint64_t chromosome_of(std::uint64_t j, const simulate_options& o) {
  return ((j + 1) * o.chromosomes - 1) / o.variants;
}

simulated_variant draw_variant(const generator& gen, const simulate_options& o, std::uint64_t j) {
  const auto r = gen(0, static_cast<std::uint32_t>(j), stream_variant);
  simulated_variant v;
  v.index = j;
  v.id = "snp";
  v.id += std::to_string(j + 1);
  const std::uint64_t c = chromosome_of(j, o);
  v.chromosome = static_cast<std::uint32_t>(c + 1);
  v.position =
      static_cast<std::uint32_t>(position_step(o.variants) * (j - first_of_chromosome(c, o)) + 1);
  // Log-uniform MAF: density proportional to 1/MAF (neutral site-frequency spectrum).
  const double u = r123::u01<double>(join(r[0], r[1]));  // (0, 1]
  const double maf = std::min(o.maf_min * std::pow(o.maf_max / o.maf_min, u), o.maf_max);
  v.a1_freq = (r[2] >> 31) ? maf : 1 - maf;
  static constexpr char bases[] = "ACGT";
  const auto pair = static_cast<unsigned>(below(join(r[3], r[2] & 0x7fffffff), 12));
  const unsigned a1 = pair / 3;
  unsigned a2 = pair % 3;
  if (a2 >= a1) ++a2;
  v.a1 = bases[a1];
  v.a2 = bases[a2];
  return v;
}

// The 32-bit thresholds t1 <= t2 <= t3 splitting [0, 2^32) into hom A1 (code 00), missing
// (01), het (10) and hom A2 (11), in code order, so that the code of a draw u is simply
// (u >= t1) + (u >= t2) + (u >= t3). Rounding moves each probability by less than 2^-32.
std::array<std::uint32_t, 3> thresholds(double p, double missing) {
  const double observed = 1 - missing;
  const double c[3] = {observed * p * p, observed * p * p + missing,
                       observed * p * p + missing + observed * 2 * p * (1 - p)};
  std::array<std::uint32_t, 3> t{};
  for (int k = 0; k < 3; ++k)
    t[k] = static_cast<std::uint32_t>(std::min(std::floor(c[k] * 4294967296.0), 4294967295.0));
  return t;
}

// How one population draws a variant's calls: the code thresholds, and the A1 frequency as a
// 32-bit threshold for an offspring's untransmitted allele.
struct population_draw {
  std::array<std::uint32_t, 3> t;
  std::uint32_t a1;
};

population_draw make_draw(double p, double missing) {
  return {thresholds(p, missing),
          static_cast<std::uint32_t>(std::min(std::floor(p * 4294967296.0), 4294967295.0))};
}

// Variant j's A1 frequency in each population: p_j itself in a single population, else the
// truncated normal of Balding-Nichols' mean and variance (simulate.hpp).
std::vector<double> population_frequencies(const generator& gen, const simulate_options& o,
                                           std::uint32_t j, double p) {
  if (o.populations == 1) return {p};
  std::vector<double> f(o.populations);
  const double sd = std::sqrt(o.fst * p * (1 - p));
  for (std::uint32_t k = 0; k < o.populations; k += 2) {
    const auto r = gen(k / 2, j, stream_population);
    const r123::double2 z = r123::boxmuller(join(r[0], r[1]), join(r[2], r[3]));
    f[k] = std::clamp(p + sd * z.x, 0.001, 0.999);
    if (k + 1 < o.populations) f[k + 1] = std::clamp(p + sd * z.y, 0.001, 0.999);
  }
  return f;
}

// The code of an offspring whose parent has code `parent`: one allele of the parent's (either
// with probability 1/2), one with the population frequency; missing when its own call is, and
// its own call when the parent's is missing.
unsigned offspring_code(unsigned own, unsigned parent, const r123::Philox4x32::ctr_type& r,
                        std::uint32_t a1_threshold) {
  if (own == 1 || parent == 1) return own;
  // By code: 00 = two copies of A1, 10 = one, 11 = none.
  const unsigned transmitted = parent == 0 ? 1u : parent == 3 ? 0u : (r[0] >> 31);
  const unsigned other = r[1] < a1_threshold ? 1u : 0u;
  static constexpr unsigned code_of_dosage[3] = {3, 2, 0};
  return code_of_dosage[transmitted + other];
}

// Fills ceil(N/4) bytes of PLINK codes for variant j; padding bits stay 0. Group of four b
// draws with draws[group_population[b]]; the first `relatives` groups hold a parent (sample
// 4b) and its offspring (4b + 1).
void generate_codes(const generator& gen, std::uint32_t j, std::uint64_t samples,
                    std::span<const population_draw> draws,
                    std::span<const std::uint32_t> group_population, std::uint64_t relatives,
                    std::uint8_t* out) {
  const std::uint64_t full = samples / 4;
  const r123::Philox4x32 philox;
  const auto key = gen.key();
  const auto code = [](std::uint32_t u, const population_draw& d) {
    return static_cast<unsigned>(u >= d.t[0]) + static_cast<unsigned>(u >= d.t[1]) +
           static_cast<unsigned>(u >= d.t[2]);
  };
  for (std::uint64_t b = 0; b < full; ++b) {
    const population_draw& d = draws[group_population[b]];
    const auto r = philox(
        r123::Philox4x32::ctr_type{{static_cast<std::uint32_t>(b), j, stream_genotypes, 0}}, key);
    const unsigned c0 = code(r[0], d);
    unsigned c1 = code(r[1], d);
    if (b < relatives) {
      const auto o = philox(
          r123::Philox4x32::ctr_type{{static_cast<std::uint32_t>(b), j, stream_offspring, 0}}, key);
      c1 = offspring_code(c1, c0, o, d.a1);
    }
    out[b] =
        static_cast<std::uint8_t>(c0 | (c1 << 2) | (code(r[2], d) << 4) | (code(r[3], d) << 6));
  }
  if (const unsigned rest = samples % 4; rest != 0) {
    const population_draw& d = draws[group_population[full]];
    const auto r = philox(
        r123::Philox4x32::ctr_type{{static_cast<std::uint32_t>(full), j, stream_genotypes, 0}},
        key);
    unsigned byte = 0;
    for (unsigned k = 0; k < rest; ++k) byte |= code(r[k], d) << (2 * k);
    out[full] = static_cast<std::uint8_t>(byte);
  }
}

// The population of each group of four samples: consecutive groups, none split.
std::vector<std::uint32_t> group_populations(const simulate_options& o) {
  const std::uint64_t groups = (o.samples + 3) / 4;
  std::vector<std::uint32_t> pop(groups);
  for (std::uint64_t b = 0; b < groups; ++b)
    pop[b] = static_cast<std::uint32_t>(b * o.populations / groups);
  return pop;
}

// Missing calls (code 01) in packed codes.
std::uint64_t count_missing(std::span<const std::uint8_t> codes) {
  std::uint64_t n = 0;
  std::size_t i = 0;
  for (; i + 8 <= codes.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, codes.data() + i, 8);
    n += std::popcount(w & ~(w >> 1) & 0x5555555555555555ull);
  }
  for (; i < codes.size(); ++i) {
    const unsigned b = codes[i];
    n += std::popcount(b & ~(b >> 1) & 0x55u);
  }
  return n;
}

// A file written into a staged_output: under a hidden temporary name beside its target, which
// it gets on commit(); the temporary is removed if it never does.
class output_file {
 public:
  explicit output_file(std::filesystem::path target) : staged_(std::move(target)) {
    fd_ = ::open(staged_.path().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd_ < 0) throw_system_error(errno, "cannot open output file", staged_.path().string());
  }
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;
  ~output_file() {
    if (fd_ >= 0) ::close(fd_);
    // staged_ then removes the temporary unless it was committed.
  }

  void write(const void* data, std::size_t size) {
    const auto* p = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t n = ::write(fd_, p, std::min<std::size_t>(size, std::size_t{1} << 30));
      if (n < 0) {
        if (errno == EINTR) continue;
        throw_system_error(errno, "cannot write", staged_.path().string());
      }
      p += n;
      size -= static_cast<std::size_t>(n);
    }
  }
  void write(std::string_view text) { write(text.data(), text.size()); }

  // Flushes the data to disk and closes, so that every file is complete on disk before any
  // is published (commit() then finds nothing left to sync).
  void finish() {
    if (::fsync(fd_) != 0) throw_system_error(errno, "cannot fsync", staged_.path().string());
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) throw_system_error(errno, "cannot close", staged_.path().string());
  }
  // Renames the file into place and syncs the directory (staged_output::commit).
  void commit() { staged_.commit(); }
  const std::filesystem::path& path() const noexcept { return staged_.target(); }

 private:
  staged_output staged_;
  int fd_ = -1;
};

std::string format_double(double x, int digits = 10) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, x);
  return buf;
}

// Sample variance (denominator n - 1), two passes; 0 when n < 2.
double sample_variance(std::span<const double> x) {
  if (x.size() < 2) return 0;
  double mean = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(x.size());
  double ss = 0;
  for (double v : x) ss += (v - mean) * (v - mean);
  return ss / static_cast<double>(x.size() - 1);
}

// K indices of [0, M) uniformly without replacement (Floyd's algorithm), sorted.
std::vector<std::uint64_t> choose_causal(const generator& gen, std::uint64_t m, std::uint64_t k) {
  std::vector<std::uint64_t> chosen;
  chosen.reserve(k);
  std::unordered_set<std::uint64_t> taken;
  taken.reserve(k);
  std::uint32_t step = 0;
  for (std::uint64_t j = m - k; j < m; ++j, ++step) {
    const auto r = gen(step, 0, stream_causal);
    const std::uint64_t t = below(join(r[0], r[1]), j + 1);
    const std::uint64_t pick = taken.insert(t).second ? t : j;
    if (pick == j) taken.insert(j);
    chosen.push_back(pick);
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

// Adds beta (x_i - 2p) to g[i] for one causal variant's codes (a missing call adds nothing:
// it counts as the mean dosage 2p), and returns the A1 frequency among observed calls.
// Each g[i] is updated by exactly one thread, so the result does not depend on the split.
double add_genetic_values(const std::uint8_t* codes, double beta, double p, std::span<double> g) {
  // By code: 00 = two copies of A1, 01 = missing, 10 = one, 11 = none.
  const double contribution[4] = {beta * (2 - 2 * p), 0.0, beta * (1 - 2 * p), beta * -2 * p};
  static constexpr unsigned dosage[4] = {2, 0, 1, 0};
  static constexpr unsigned observed[4] = {1, 0, 1, 1};
  const auto add = [&](std::uint64_t i0, std::uint64_t i1) {
    std::uint64_t a1 = 0, obs = 0;
    for (std::uint64_t i = i0; i < i1; ++i) {
      const unsigned code = (codes[i / 4] >> (2 * (i % 4))) & 3u;
      g[i] += contribution[code];
      a1 += dosage[code];
      obs += observed[code];
    }
    return std::pair{a1, obs};
  };
  constexpr std::uint64_t grain = 1 << 15;
  std::uint64_t a1 = 0, obs = 0;
  if (g.size() < 2 * grain) {
    std::tie(a1, obs) = add(0, g.size());
  } else {
    std::atomic<std::uint64_t> a1_total = 0, obs_total = 0;
    tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, g.size(), grain),
                      [&](const tbb::blocked_range<std::uint64_t>& r) {
                        const auto [x, y] = add(r.begin(), r.end());
                        a1_total += x;
                        obs_total += y;
                      });
    a1 = a1_total;
    obs = obs_total;
  }
  return obs ? static_cast<double>(a1) / (2.0 * static_cast<double>(obs))
             : std::numeric_limits<double>::quiet_NaN();
}

struct block {
  std::uint64_t first = 0;  // first variant
  std::uint64_t count = 0;  // variants in the block
  std::vector<std::uint8_t> bed;
  std::string bim;
  std::uint64_t missing = 0;
};

// (Appending rather than "s" + to_string(...) avoids GCC 12's false -Wrestrict warning.)
std::string sample_id(std::uint64_t i) {
  std::string id = "s";
  id += std::to_string(i + 1);
  return id;
}

// FID and IID of sample i: FID pop{k+1} when there are populations, else the IID.
std::string family_and_sample(std::uint64_t i, const simulate_options& o,
                              std::span<const std::uint32_t> group_population) {
  std::string fid = o.populations > 1 ? "pop" : "";
  fid += o.populations > 1 ? std::to_string(group_population[i / 4] + 1) : sample_id(i);
  return fid + '\t' + sample_id(i);
}

void check_range(bool ok, const std::string& what) {
  if (!ok) throw error(errc::invalid_argument, "simulate: " + what);
}

// The truth, drawn before any genotype: which variants are causal (their indices, sorted) and
// their effects, into result.causal.
std::vector<std::uint64_t> draw_truth(const generator& gen, const simulate_options& o,
                                      simulate_result& result) {
  std::vector<std::uint64_t> causal_index = choose_causal(gen, o.variants, causal_count(o));
  result.causal.reserve(causal_index.size());
  for (std::uint64_t j : causal_index) {
    causal_variant c;
    c.variant = draw_variant(gen, o, j);
    const auto r = gen(0, static_cast<std::uint32_t>(j), stream_effect);
    c.std_effect = r123::boxmuller(join(r[0], r[1]), join(r[2], r[3])).x;
    const double p = c.variant.a1_freq;
    c.beta = o.h2 > 0 ? c.std_effect / std::sqrt(2 * p * (1 - p)) : 0;
    result.causal.push_back(std::move(c));
  }
  return causal_index;
}

// Writes text to f in pieces of about 1 MiB, one line from line(i) for each i < n.
template <typename Line>
void write_lines(output_file& f, std::uint64_t n, std::size_t reserve, const Line& line) {
  std::string text;
  text.reserve(reserve);
  for (std::uint64_t i = 0; i < n; ++i) {
    line(i, text);
    if (text.size() >= (1u << 20)) f.write(text), text.clear();
  }
  f.write(text);
}

// The variants, generated in blocks by a pipeline: serial input (next block, pooled buffer) ->
// parallel generate -> serial in-order write of .bed and .bim, which also adds the causal
// variants' contributions to the genetic values g.
class variant_pass {
 public:
  variant_pass(const generator& gen, const simulate_options& o,
               const std::vector<std::uint64_t>& causal_index, output_file& bed, output_file& bim,
               simulate_result& result, const simulate_progress_callback& progress,
               std::chrono::steady_clock::time_point start, std::uint64_t bytes_written)
      : gen_(gen),
        o_(o),
        causal_index_(causal_index),
        bed_(bed),
        bim_(bim),
        result_(result),
        progress_(progress),
        start_(start),
        n_(o.samples),
        m_(o.variants),
        bytes_per_variant_((n_ + 3) / 4),
        // Blocks of about block_bytes of .bed. The output does not depend on their size: each
        // variant's codes depend only on (seed, variant) and g is summed in variant order.
        per_block_(std::max<std::uint64_t>(1, o.block_bytes / bytes_per_variant_)),
        num_blocks_((m_ + per_block_ - 1) / per_block_),
        bytes_written_(bytes_written),
        group_population_(group_populations(o)),
        g_(n_, 0.0) {}

  // Runs the pipeline in the current task arena.
  void run() {
    const int concurrency = tbb::this_task_arena::max_concurrency();
    const std::size_t tokens = static_cast<std::size_t>(std::max(2, 2 * concurrency));
    tbb::parallel_pipeline(
        tokens,
        tbb::make_filter<void, block*>(tbb::filter_mode::serial_in_order,
                                       [this](tbb::flow_control& fc) { return next_block(fc); }) &
            tbb::make_filter<block*, block*>(tbb::filter_mode::parallel,
                                             [this](block* b) {
                                               generate(*b);
                                               return b;
                                             }) &
            tbb::make_filter<block*, void>(tbb::filter_mode::serial_in_order,
                                           [this](block* b) { write(b); }));
  }

  // The genetic values, complete once run returns.
  const std::vector<double>& genetic_values() const noexcept { return g_; }
  std::uint64_t bytes_written() const noexcept { return bytes_written_; }

 private:
  const generator& gen_;
  const simulate_options& o_;
  const std::vector<std::uint64_t>& causal_index_;
  output_file &bed_, &bim_;
  simulate_result& result_;
  const simulate_progress_callback& progress_;
  const std::chrono::steady_clock::time_point start_;
  const std::uint64_t n_, m_, bytes_per_variant_, per_block_, num_blocks_;
  std::uint64_t next_block_ = 0;
  std::uint64_t bytes_written_;
  std::uint64_t variants_done_ = 0;
  const std::vector<std::uint32_t> group_population_;
  std::vector<double> g_;

  // Buffers circulate through a pool: at most `tokens` blocks are ever in flight. The pool
  // owns them all, so a cancelled pipeline (which drops its in-flight items) leaks nothing.
  std::vector<std::unique_ptr<block>> owned_;
  std::vector<block*> free_blocks_;
  std::mutex pool_mutex_;

  block* next_block(tbb::flow_control& fc) {
    if (next_block_ == num_blocks_) {
      fc.stop();
      return nullptr;
    }
    throw_if_stop_requested();
    block* b = nullptr;
    {
      std::lock_guard lock(pool_mutex_);
      if (free_blocks_.empty()) {
        owned_.push_back(std::make_unique<block>());
        free_blocks_.push_back(owned_.back().get());
      }
      b = free_blocks_.back();
      free_blocks_.pop_back();
    }
    b->first = next_block_ * per_block_;
    b->count = std::min(per_block_, m_ - b->first);
    ++next_block_;
    return b;
  }

  // The codes and .bim lines of a block's variants, and its missing calls.
  void generate(block& b) const {
    b.bed.resize(b.count * bytes_per_variant_);
    b.bim.clear();
    std::vector<population_draw> draws(o_.populations);
    for (std::uint64_t v = 0; v < b.count; ++v) {
      // Between variants (columns): a stop request ends the run; the staged files remove
      // themselves.
      throw_if_stop_requested();
      const auto j = static_cast<std::uint32_t>(b.first + v);
      const simulated_variant var = draw_variant(gen_, o_, j);
      const std::vector<double> p = population_frequencies(gen_, o_, j, var.a1_freq);
      for (std::size_t k = 0; k < p.size(); ++k) draws[k] = make_draw(p[k], o_.missing_rate);
      generate_codes(gen_, j, n_, draws, group_population_, o_.relatives,
                     b.bed.data() + v * bytes_per_variant_);
      b.bim += std::to_string(var.chromosome) + '\t' + var.id + "\t0\t" +
               std::to_string(var.position) + '\t' + var.a1 + '\t' + var.a2 + '\n';
    }
    b.missing = o_.missing_rate > 0 ? count_missing(b.bed) : 0;
  }

  void write(block* b) {
    bed_.write(b->bed.data(), b->bed.size());
    bim_.write(b->bim);
    add_causal_values(*b);
    result_.missing_calls += b->missing;
    bytes_written_ += b->bed.size();
    variants_done_ += b->count;
    {
      std::lock_guard lock(pool_mutex_);
      free_blocks_.push_back(b);
    }
    if (progress_)
      progress_({variants_done_, m_, bytes_written_,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count()});
  }

  // Genetic values from this block's causal variants, in variant order for each sample
  // (parallel over samples only, so the sums are reproducible).
  void add_causal_values(const block& b) {
    const auto lo = std::lower_bound(causal_index_.begin(), causal_index_.end(), b.first) -
                    causal_index_.begin();
    const auto hi =
        std::lower_bound(causal_index_.begin(), causal_index_.end(), b.first + b.count) -
        causal_index_.begin();
    for (auto c = lo; c < hi; ++c) {
      causal_variant& cv = result_.causal[static_cast<std::size_t>(c)];
      cv.a1_freq_observed =
          add_genetic_values(b.bed.data() + (cv.variant.index - b.first) * bytes_per_variant_,
                             cv.beta, cv.variant.a1_freq, g_);
    }
  }
};

// The phenotype y = g + e, the noise scaled so that var_g / (var_g + var_e) = h2 with the
// realised var_g; the variances into result.
std::vector<double> draw_phenotype(const generator& gen, const simulate_options& o,
                                   const std::vector<double>& g,
                                   std::span<const std::uint32_t> group_population,
                                   simulate_result& result) {
  const std::uint64_t n = o.samples;
  result.var_g = sample_variance(g);
  if (o.h2 == 0) {
    result.var_e = 1;
  } else if (result.var_g > 0) {
    result.var_e = result.var_g * (1 - o.h2) / o.h2;
  } else {
    result.var_e = 1;
    result.warnings.push_back(
        n < 2 ? "one sample: the genetic variance is undefined; the phenotype is pure noise"
              : "the genetic values are constant (every causal variant is monomorphic in the "
                "sample): the phenotype is pure noise with variance 1, realised h2 = 0");
  }
  const double sd_e = std::sqrt(result.var_e);
  std::vector<double> y(n);
  for (std::uint64_t i = 0; i < n; i += 2) {
    const auto r = gen(static_cast<std::uint32_t>(i / 2), 0, stream_noise);
    const r123::double2 z = r123::boxmuller(join(r[0], r[1]), join(r[2], r[3]));
    y[i] = g[i] + sd_e * z.x;
    if (i + 1 < n) y[i + 1] = g[i + 1] + sd_e * z.y;
  }
  if (o.population_shift != 0)
    for (std::uint64_t i = 0; i < n; ++i) y[i] += o.population_shift * group_population[i / 4];
  result.var_y = sample_variance(y);
  result.h2_realised =
      result.var_y > 0 ? result.var_g / result.var_y : std::numeric_limits<double>::quiet_NaN();
  return y;
}

// The .truth.tsv file: the run's parameters and realised values as comments, then one line
// per causal variant.
void write_truth(output_file& truth, const simulate_options& o, const simulate_result& result) {
  const std::uint64_t n = o.samples, m = o.variants;
  const double calls = static_cast<double>(n) * static_cast<double>(m);
  std::string t;
  t += "# colflow_simulate_truth 1\n";
  t += "# colflow_version " + std::string(version()) + "\n";
  t += "# samples " + std::to_string(n) + "\n";
  t += "# variants " + std::to_string(m) + "\n";
  t += "# causal " + std::to_string(result.causal.size()) + "\n";
  t += "# seed " + std::to_string(o.seed) + "\n";
  t += "# maf_model log-uniform\n";
  t += "# maf_min " + format_double(o.maf_min) + "\n";
  t += "# maf_max " + format_double(o.maf_max) + "\n";
  t += "# missing_rate " + format_double(o.missing_rate) + "\n";
  t += "# missing_rate_observed " +
       format_double(static_cast<double>(result.missing_calls) / calls) + "\n";
  t += "# chromosomes " + std::to_string(o.chromosomes) + "\n";
  t += "# populations " + std::to_string(o.populations) + "\n";
  if (o.populations > 1) {
    t += "# fst " + format_double(o.fst) + "\n";
    t += "# population_shift " + format_double(o.population_shift) + "\n";
  }
  t += "# relatives " + std::to_string(o.relatives) + "\n";
  t += "# model y = g + e; g_i = sum_j BETA_j * (x_ij - 2 * A1_FREQ_j), x_ij = count of A1 "
       "(missing: 2 * A1_FREQ_j); e ~ N(0, var_e)\n";
  t += "# h2_target " + format_double(o.h2) + "\n";
  t += "# h2_realised " + format_double(result.h2_realised) + "\n";
  t += "# var_g " + format_double(result.var_g, 12) + "\n";
  t += "# var_e " + format_double(result.var_e, 12) + "\n";
  t += "# var_y " + format_double(result.var_y, 12) + "\n";
  t += "ID\tA1\tBETA\tA1_FREQ\tA2\tSTD_BETA\tA1_FREQ_OBSERVED\n";
  for (const causal_variant& c : result.causal) {
    t += c.variant.id + '\t' + c.variant.a1 + '\t' + format_double(c.beta, 12) + '\t' +
         format_double(c.variant.a1_freq, 12) + '\t' + c.variant.a2 + '\t' +
         format_double(c.std_effect, 12) + '\t' + format_double(c.a1_freq_observed, 10) + '\n';
    if (t.size() >= (1u << 20)) truth.write(t), t.clear();
  }
  truth.write(t);
}

}  // namespace

void validate(const simulate_options& o) {
  check_range(o.samples >= 1 && o.samples <= max_count, "--samples must be between 1 and " +
                                                            std::to_string(max_count) + " (got " +
                                                            std::to_string(o.samples) + ")");
  check_range(o.variants >= 1 && o.variants <= max_count, "--variants must be between 1 and " +
                                                              std::to_string(max_count) + " (got " +
                                                              std::to_string(o.variants) + ")");
  check_range(o.h2 >= 0 && o.h2 < 1, "--h2 must be in [0, 1) (got " + format_double(o.h2) + ")");
  check_range(o.missing_rate >= 0 && o.missing_rate < 1,
              "--missing must be in [0, 1) (got " + format_double(o.missing_rate) + ")");
  check_range(o.maf_min > 0 && o.maf_min <= o.maf_max && o.maf_max <= 0.5,
              "the MAF range must satisfy 0 < --maf-min <= --maf-max <= 0.5 (got " +
                  format_double(o.maf_min) + ", " + format_double(o.maf_max) + ")");
  const std::uint64_t k = causal_count(o);
  check_range(k <= o.variants, "--causal " + std::to_string(k) +
                                   " exceeds the number of variants " + std::to_string(o.variants));
  check_range(k > 0 || o.h2 == 0,
              "--causal 0 needs --h2 0 (a heritable phenotype needs causal variants)");
  check_range(o.chromosomes >= 1 && o.chromosomes <= 22 && o.chromosomes <= o.variants,
              "--chromosomes must be between 1 and min(22, --variants) (got " +
                  std::to_string(o.chromosomes) + ")");
  const std::uint64_t groups = (o.samples + 3) / 4;
  check_range(o.populations >= 1 && o.populations <= groups,
              "--populations must be between 1 and ceil(--samples / 4) = " +
                  std::to_string(groups) + " (got " + std::to_string(o.populations) + ")");
  check_range(o.populations == 1 || (o.fst > 0 && o.fst < 1),
              "--fst must be in (0, 1) (got " + format_double(o.fst) + ")");
  check_range(o.populations > 1 || o.population_shift == 0,
              "--population-shift needs --populations 2 or more");
  check_range(std::isfinite(o.population_shift),
              "--population-shift must be finite (got " + format_double(o.population_shift) + ")");
  check_range(o.relatives <= o.samples / 4, "--relatives must be at most floor(--samples / 4) = " +
                                                std::to_string(o.samples / 4) + " (got " +
                                                std::to_string(o.relatives) + ")");
  check_range(!o.out.empty(), "no output prefix (--out)");
}

simulated_variant describe_variant(const simulate_options& o, std::uint64_t j) {
  validate(o);
  check_range(j < o.variants, "variant " + std::to_string(j) + " out of range (" +
                                  std::to_string(o.variants) + " variants)");
  return draw_variant(generator(o.seed), o, j);
}

simulate_result simulate(const simulate_options& o, const simulate_progress_callback& progress) {
  validate(o);
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const generator gen(o.seed);
  const std::uint64_t n = o.samples;

  // Set up: the truth, then the files (staged, published at the end) and the .fam.
  simulate_result result;
  result.samples = n;
  result.variants = o.variants;
  result.h2_target = o.h2;
  const std::vector<std::uint64_t> causal_index = draw_truth(gen, o, result);

  const std::string prefix = o.out.string();
  output_file bed(prefix + ".bed"), bim(prefix + ".bim"), fam(prefix + ".fam"),
      phen(prefix + ".phen"), truth(prefix + ".truth.tsv");
  const std::vector<std::uint32_t> group_population = group_populations(o);
  write_lines(fam, n, std::min<std::uint64_t>(n, 1 << 20) * 24,
              [&](std::uint64_t i, std::string& text) {
                text += family_and_sample(i, o, group_population) + "\t0\t0\t0\t-9\n";
              });
  static constexpr std::uint8_t magic[3] = {0x6c, 0x1b, 0x01};
  bed.write(magic, sizeof magic);

  // The pass over the variants.
  variant_pass pass(gen, o, causal_index, bed, bim, result, progress, start, sizeof magic);
  if (o.threads > 0) {
    tbb::task_arena arena(static_cast<int>(o.threads));
    arena.execute([&] { pass.run(); });
  } else {
    pass.run();
  }

  // Summarise: the phenotype and the truth, then publish.
  const std::vector<double> y =
      draw_phenotype(gen, o, pass.genetic_values(), group_population, result);
  write_lines(phen, n, 0, [&](std::uint64_t i, std::string& text) {
    text += family_and_sample(i, o, group_population) + '\t' + format_double(y[i]) + '\n';
  });
  write_truth(truth, o, result);

  throw_if_stop_requested();  // the last chance to stop before the old files are replaced

  // Publish: every file complete on disk first; then the old .bed goes, the companions are
  // renamed, and the new .bed comes last, so a .bed under the final name always has its own
  // run's companions beside it.
  for (output_file* f : {&fam, &bim, &phen, &truth, &bed}) f->finish();
  if (::unlink(bed.path().c_str()) != 0 && errno != ENOENT)
    throw_system_error(errno, "cannot replace", bed.path().string());
  for (output_file* f : {&fam, &bim, &phen, &truth, &bed}) f->commit();

  result.bed_bytes = pass.bytes_written();
  result.seconds = std::chrono::duration<double>(clock::now() - start).count();
  return result;
}

}  // namespace colflow::preprocess
