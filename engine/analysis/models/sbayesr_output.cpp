// What `colflow sbayesr` writes from a chain: GCTB's .parRes and .snpRes tables, in GCTB's
// fixed-width layout, so that tools reading GCTB's files read colflow's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "analysis/shared/result_table_internal.hpp"
#include "colflow/analysis/sbayesr.hpp"
#include "colflow/error.hpp"
#include "colflow/io/staged_output.hpp"

namespace colflow {
namespace {

// printf into a string.
template <typename... Args>
std::string format(const char* pattern, Args... args) {
  char buffer[256];
  const int n = std::snprintf(buffer, sizeof buffer, pattern, args...);
  return std::string(buffer, static_cast<std::size_t>(std::max(n, 0)));
}

// Writes `text` under `path` as a staged output.
void write_staged(const std::filesystem::path& path, const std::string& text) {
  staged_output staged(path);
  {
    std::ofstream out(staged.path(), std::ios::binary);
    out << text;
    out.flush();
    if (!out) throw error(errc::io_error, path.string() + ": cannot write the file");
  }
  staged.commit();
}

std::string parameters_table(const sbayesr_result& r) {
  std::string text = format("%10s    %-15s %-15s\n", "", "Mean", "SD");
  for (const sbayesr_parameter& p : sbayesr_parameters(r))
    text += format("%10s    %-15.6f %-15.6f\n", p.name.c_str(), p.mean, p.sd);
  return text;
}

std::string effects_table(const ld_columns& ld, const aligned_gwas& gwas, const sbayesr_result& r) {
  std::string text =
      format("%6s %20s %6s %12s %6s %6s %12s %12s %12s %14s %14s\n", "Id", "Name", "Chrom",
             "Position", "A1", "A2", "A1Frq", "A1Effect", "SE", "PIP", "LastSampleEff");
  for (std::size_t p = 0; p < gwas.variant.size(); ++p) {
    const ld_variant& v = ld.variants()[gwas.variant[p]];
    const double h = 2.0 * gwas.freq[p] * (1.0 - gwas.freq[p]);
    const double last = h > 0 ? r.beta[p] / std::sqrt(h) : 0.0;
    text += format("%6zu %20s %6s %12lld %6s %6s %12.6f %12.6f %12.6f %14.8f %14.6f\n", p + 1,
                   v.id.c_str(), v.chrom.c_str(), static_cast<long long>(v.pos), v.a1.c_str(),
                   v.a2.c_str(), gwas.freq[p], r.a1_effect[p], r.a1_effect_sd[p], r.pip[p], last);
  }
  return text;
}

// Mean and SD (n − 1 divisor) of one parameter over the iterations after the burn-in.
template <typename Get>
sbayesr_parameter posterior(const sbayesr_result& r, std::string name, Get get) {
  double sum = 0, squares = 0, kept = 0;
  for (const sbayesr_sample& s : r.trace)
    if (s.iteration > r.burnin) {
      const double v = get(s);
      sum += v;
      squares += v * v;
      kept += 1;
    }
  if (kept == 0) return {std::move(name), std::nan(""), std::nan("")};
  const double mean = sum / kept;
  const double sd =
      kept > 1 ? std::sqrt(std::max(0.0, (squares - kept * mean * mean) / (kept - 1))) : 0.0;
  return {std::move(name), mean, sd};
}

}  // namespace

std::vector<sbayesr_parameter> sbayesr_parameters(const sbayesr_result& r) {
  std::vector<sbayesr_parameter> rows;
  const std::size_t classes = r.trace.empty() ? 0 : r.trace.front().counts.size();
  for (std::size_t k = 0; k < classes; ++k)
    rows.push_back(posterior(r, "NumSnp" + std::to_string(k + 1),
                             [k](const sbayesr_sample& s) { return s.counts[k]; }));
  rows.push_back(posterior(r, "SigmaSq", [](const sbayesr_sample& s) { return s.sigma2_beta; }));
  rows.push_back(posterior(r, "ResVar", [](const sbayesr_sample& s) { return s.sigma2_e; }));
  rows.push_back(posterior(r, "GenVar", [](const sbayesr_sample& s) { return s.sigma2_g; }));
  rows.push_back(posterior(r, "hsq", [](const sbayesr_sample& s) { return s.h2; }));
  return rows;
}

sbayesr_files sbayesr_output_files(const std::filesystem::path& prefix) {
  return {detail::prefixed(prefix, ".parRes"), detail::prefixed(prefix, ".snpRes")};
}

sbayesr_files write_sbayesr(const ld_columns& ld, const aligned_gwas& gwas, const sbayesr_result& r,
                            const std::filesystem::path& prefix) {
  const std::size_t m = gwas.variant.size();
  if (r.a1_effect.size() != m || r.pip.size() != m || r.beta.size() != m)
    throw error(errc::invalid_argument,
                "write_sbayesr: the result is of other summary statistics (" +
                    std::to_string(r.a1_effect.size()) + " variants, not " + std::to_string(m) +
                    ")");
  const sbayesr_files files = sbayesr_output_files(prefix);
  write_staged(files.parameters, parameters_table(r));
  write_staged(files.effects, effects_table(ld, gwas, r));
  return files;
}

}  // namespace colflow
