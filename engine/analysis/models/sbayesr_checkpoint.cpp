// An SBayesR chain's checkpoint file: its fields in the framing every chain's checkpoint shares
// (chain_checkpoint_internal.hpp).
#include <string>

#include "analysis/models/chain_checkpoint_internal.hpp"
#include "analysis/models/sbayesr_checkpoint_internal.hpp"
#include "colflow/error.hpp"

namespace colflow::detail {
namespace {

constexpr checkpoint_format format = {{'C', 'F', 'S', 'B', 'A', 'Y', 'E', 'S'}, "SBayesR", 2, 2};
constexpr std::size_t header_bytes = 56;  // magic, version, classes, five u64 fields

// Bytes of one trace row with k classes: iteration, k counts, k weights, nonzero, four doubles.
constexpr std::size_t trace_row_bytes(std::size_t k) { return 8 + 16 * k + 8 + 4 * 8; }

std::size_t body_bytes(std::size_t m, std::size_t k, std::size_t trace_rows) {
  return 8 * (6 + k)        // σ²_β, σ²_e, σ²_g, three prior scales, π
         + m * (8 + 8 + 1)  // beta, residual, component
         + m * (8 + 8 + 8)  // included, beta_sum, beta_square_sum
         + trace_rows * trace_row_bytes(k);
}

}  // namespace

void write_sbayesr_checkpoint(const std::filesystem::path& path, const sbayesr_state& st) {
  const std::size_t k = st.pi.size();
  checkpoint_writer w(format);
  w.put(static_cast<std::uint32_t>(k));
  w.put(st.fingerprint);
  w.put(st.iteration);
  w.put(static_cast<std::uint64_t>(st.beta.size()));
  w.put(static_cast<std::uint64_t>(st.trace.size()));
  w.put(st.posterior_samples);
  for (double v :
       {st.sigma2_beta, st.sigma2_e, st.sigma2_g, st.scale_beta, st.scale_prior, st.scale_e})
    w.put(v);
  w.put_all(st.pi);
  w.put_all(st.beta);
  w.put_all(st.residual);
  w.put_all(st.component);
  w.put_all(st.included);
  w.put_all(st.beta_sum);
  w.put_all(st.beta_square_sum);
  for (const sbayesr_sample& t : st.trace) {
    w.put(static_cast<std::uint64_t>(t.iteration));
    w.put_all(t.counts);
    w.put_all(t.pi);
    w.put(static_cast<std::uint64_t>(t.nonzero));
    for (double v : {t.sigma2_beta, t.sigma2_e, t.sigma2_g, t.h2}) w.put(v);
  }
  w.write(path);
}

sbayesr_state read_sbayesr_checkpoint(const std::filesystem::path& path, std::uint64_t fingerprint,
                                      std::size_t variants, std::size_t classes) {
  checkpoint_reader r(path, format, header_bytes);
  sbayesr_state st;
  const auto k = r.get<std::uint32_t>();
  st.fingerprint = r.get<std::uint64_t>();
  st.iteration = r.get<std::uint64_t>();
  const auto m = r.get<std::uint64_t>();
  const auto trace_rows = r.get<std::uint64_t>();
  st.posterior_samples = r.get<std::uint64_t>();
  // Sizes first, so that no field is read past the end whatever the header says.
  if (k < 2 || k > 255) r.corrupt("checkpoint sizes do not match its length");
  for (std::uint64_t count : {m, trace_rows}) r.check_count(count);
  r.check_length(header_bytes + body_bytes(m, k, trace_rows));
  r.check_fingerprint(st.fingerprint, fingerprint,
                      "GWAS file, LD reference, seed, burn-in, gamma, pi or starting h2");
  if (m != variants || k != classes)
    throw error(errc::invalid_argument,
                r.name() + ": the checkpoint's dimensions differ from this run's");
  if (st.posterior_samples > st.iteration || trace_rows != st.iteration)
    r.corrupt("the checkpoint's counts of iterations disagree");
  st.sigma2_beta = r.get<double>();
  st.sigma2_e = r.get<double>();
  st.sigma2_g = r.get<double>();
  st.scale_beta = r.get<double>();
  st.scale_prior = r.get<double>();
  st.scale_e = r.get<double>();
  st.pi = r.get_all<double>(k);
  st.beta = r.get_all<double>(m);
  st.residual = r.get_all<double>(m);
  st.component = r.get_all<std::uint8_t>(m);
  st.included = r.get_all<double>(m);
  st.beta_sum = r.get_all<double>(m);
  st.beta_square_sum = r.get_all<double>(m);
  st.trace.resize(trace_rows);
  for (sbayesr_sample& t : st.trace) {
    t.iteration = r.get<std::uint64_t>();
    t.counts = r.get_all<double>(k);
    t.pi = r.get_all<double>(k);
    t.nonzero = r.get<std::uint64_t>();
    t.sigma2_beta = r.get<double>();
    t.sigma2_e = r.get<double>();
    t.sigma2_g = r.get<double>();
    t.h2 = r.get<double>();
  }
  for (std::uint8_t c : st.component)
    if (c >= k) r.corrupt("a variant's class is out of range");
  return st;
}

}  // namespace colflow::detail
