// The state of an SBayesR chain after a whole iteration, and its checkpoint file (docs/FORMAT.md,
// appendix A, "SBayesR checkpoint"): everything the next iteration reads, so a resumed chain
// continues bit for bit, in the framing of chain_checkpoint_internal.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "colflow/analysis/sbayesr.hpp"

namespace colflow::detail {

struct sbayesr_state {
  std::uint64_t fingerprint = 0;  // of the data and settings the chain depends on
  std::uint64_t iteration = 0;    // iterations completed
  double sigma2_beta = 0, sigma2_e = 0, sigma2_g = 0;
  // σ²_β's prior scale in use, the mean learnt over the first iterations, σ²_e's prior scale.
  double scale_beta = 0, scale_prior = 0, scale_e = 0;
  std::vector<double> pi;        // per class, the zero class first
  std::vector<double> beta;      // per aligned variant (per SD of genotype)
  std::vector<double> residual;  // per aligned variant: (Xᵀy − XᵀXβ) / √D (version 2)
  std::vector<std::uint8_t> component;  // per aligned variant: its class
  // Posterior accumulators over the iterations after the burn-in.
  std::uint64_t posterior_samples = 0;
  std::vector<double> included, beta_sum, beta_square_sum;
  std::vector<sbayesr_sample> trace;  // every iteration so far
};

void write_sbayesr_checkpoint(const std::filesystem::path& path, const sbayesr_state& state);

// Reads a checkpoint and checks it against the run: its fingerprint and sizes (aligned
// variants, classes) must be these.
sbayesr_state read_sbayesr_checkpoint(const std::filesystem::path& path, std::uint64_t fingerprint,
                                      std::size_t variants, std::size_t classes);

}  // namespace colflow::detail
