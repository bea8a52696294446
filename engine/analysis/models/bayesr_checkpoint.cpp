// A BayesR chain's checkpoint file: its fields in the framing every chain's checkpoint shares
// (chain_checkpoint_internal.hpp).
#include <string>

#include "analysis/models/bayesr_checkpoint_internal.hpp"
#include "analysis/models/chain_checkpoint_internal.hpp"
#include "colflow/error.hpp"

namespace colflow::detail {
namespace {

// Version 3: chains whose residual updates defer the part of each column's mean
// (standardized_columns::defer_mean_updates). Versions 1 (sums over samples in one piece) and 2
// (on sample blocks, docs/DESIGN.md §4.8) hold the same fields from chains whose updates and
// products round otherwise: no chain of this build continues them bit for bit, so they are
// refused, saying why, rather than read with the generic message.
constexpr std::uint32_t whole_column_version = 1, full_update_version = 2;
constexpr checkpoint_format format = {
    {'C', 'F', 'B', 'A', 'Y', 'E', 'S', 'R'}, "BayesR", 3, whole_column_version};
constexpr std::size_t header_bytes = 64;  // magic, version, classes, six u64 fields

// Bytes of one trace row with k classes: iteration, five doubles, nonzero, k weights.
constexpr std::size_t trace_row_bytes(std::size_t k) { return 8 + 5 * 8 + 8 + 8 * k; }

std::size_t body_bytes(std::size_t rows, std::size_t m, std::size_t k, std::size_t trace_rows) {
  return 8 * (3 + k)        // mu, sigma2_g, sigma2_e, pi
         + m * (8 + 1)      // beta, component
         + 8 * rows         // residual
         + m * (8 + 8 + 8)  // included, beta_sum, beta_square_sum
         + trace_rows * trace_row_bytes(k);
}

}  // namespace

void write_bayesr_checkpoint(const std::filesystem::path& path, const bayesr_state& st) {
  const std::size_t k = st.pi.size();
  checkpoint_writer w(format);
  w.put(static_cast<std::uint32_t>(k));
  w.put(st.fingerprint);
  w.put(st.iteration);
  w.put(static_cast<std::uint64_t>(st.residual.size()));
  w.put(static_cast<std::uint64_t>(st.beta.size()));
  w.put(static_cast<std::uint64_t>(st.trace.size()));
  w.put(st.posterior_samples);
  w.put(st.mu);
  w.put(st.sigma2_g);
  w.put(st.sigma2_e);
  w.put_all(st.pi);
  w.put_all(st.beta);
  w.put_all(st.component);
  w.put_all(st.residual);
  w.put_all(st.included);
  w.put_all(st.beta_sum);
  w.put_all(st.beta_square_sum);
  for (const bayesr_sample& t : st.trace) {
    w.put(static_cast<std::uint64_t>(t.iteration));
    for (double v : {t.mu, t.sigma2_g, t.sigma2_e, t.h2, t.genetic_variance}) w.put(v);
    w.put(static_cast<std::uint64_t>(t.nonzero));
    w.put_all(t.pi);
  }
  w.write(path);
}

bayesr_state read_bayesr_checkpoint(const std::filesystem::path& path, std::uint64_t fingerprint,
                                    std::size_t rows, std::size_t columns, std::size_t classes) {
  checkpoint_reader r(path, format, header_bytes);
  const std::string& name = r.name();
  bayesr_state st;
  const auto k = r.get<std::uint32_t>();
  st.fingerprint = r.get<std::uint64_t>();
  st.iteration = r.get<std::uint64_t>();
  const auto n = r.get<std::uint64_t>(), m = r.get<std::uint64_t>();
  const auto trace_rows = r.get<std::uint64_t>();
  st.posterior_samples = r.get<std::uint64_t>();
  // Sizes first, so that no field is read past the end whatever the header says.
  if (k == 0 || k > 255) r.corrupt("checkpoint sizes do not match its length");
  for (std::uint64_t count : {n, m, trace_rows}) r.check_count(count);
  r.check_length(header_bytes + body_bytes(n, m, k, trace_rows));
  r.check_fingerprint(st.fingerprint, fingerprint,
                      "store, selection, phenotype, seed, priors, mixture, burn-in or thinning");
  if (n != rows || m != columns || k != classes)
    throw error(errc::invalid_argument,
                name + ": the checkpoint's dimensions differ from this run's");
  if (r.version() <= full_update_version)
    throw error(errc::unsupported_version,
                name + ": the checkpoint (format version " + std::to_string(r.version()) +
                    ") was written by a colflow from before its residual updates deferred " +
                    "each column's mean; its chain rounds its products otherwise, so this build " +
                    "cannot continue it bit for bit: start the chain again without --resume");
  st.mu = r.get<double>();
  st.sigma2_g = r.get<double>();
  st.sigma2_e = r.get<double>();
  st.pi = r.get_all<double>(k);
  st.beta = r.get_all<double>(m);
  st.component = r.get_all<std::uint8_t>(m);
  const std::vector<double> residual = r.get_all<double>(n);
  st.residual.assign(residual.begin(), residual.end());
  st.included = r.get_all<std::uint64_t>(m);
  st.beta_sum = r.get_all<double>(m);
  st.beta_square_sum = r.get_all<double>(m);
  st.trace.resize(trace_rows);
  for (bayesr_sample& t : st.trace) {
    t.iteration = r.get<std::uint64_t>();
    t.mu = r.get<double>();
    t.sigma2_g = r.get<double>();
    t.sigma2_e = r.get<double>();
    t.h2 = r.get<double>();
    t.genetic_variance = r.get<double>();
    t.nonzero = r.get<std::uint64_t>();
    t.pi = r.get_all<double>(k);
  }
  for (std::uint8_t c : st.component)
    if (c >= k) r.corrupt("a column's class is out of range");
  return st;
}

}  // namespace colflow::detail
