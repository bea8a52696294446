// The state of a BayesR chain after a whole iteration, and its checkpoint file (docs/FORMAT.md,
// "BayesR checkpoint"): everything the next iteration reads, so a resumed chain continues
// bit for bit. Written as a staged output (colflow/io/staged_output.hpp: a temporary beside
// PATH, synced and renamed over it); read back with its size, magic, version, checksum and
// fingerprint checked before any field is trusted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "analysis/models/residual_vector_internal.hpp"
#include "colflow/analysis/bayesr.hpp"

namespace colflow::detail {

struct bayesr_state {
  std::uint64_t fingerprint = 0;  // of the data and settings the chain depends on
  std::uint64_t iteration = 0;    // iterations completed
  double mu = 0, sigma2_g = 0, sigma2_e = 0;
  std::vector<double> pi;               // per class, the zero class first
  std::vector<double> beta;             // per selected column (standardised scale)
  std::vector<std::uint8_t> component;  // per selected column: its class
  residual_vector residual;             // per store row: y − μ − Zβ on used rows, 0 elsewhere
  // Posterior accumulators over the kept iterations after burn-in.
  std::uint64_t posterior_samples = 0;
  std::vector<std::uint64_t> included;
  std::vector<double> beta_sum, beta_square_sum;
  std::vector<bayesr_sample> trace;
};

void write_bayesr_checkpoint(const std::filesystem::path& path, const bayesr_state& state);

// Reads a checkpoint and checks it against the run: its fingerprint and sizes (rows of the
// store, selected columns, classes) must be these.
bayesr_state read_bayesr_checkpoint(const std::filesystem::path& path, std::uint64_t fingerprint,
                                    std::size_t rows, std::size_t columns, std::size_t classes);

}  // namespace colflow::detail
