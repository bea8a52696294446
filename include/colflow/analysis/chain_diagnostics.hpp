/// @file chain_diagnostics.hpp
/// Convergence diagnostics of one Markov chain of a scalar (each trace quantity of `colflow
/// bayesr`): the integrated autocorrelation time, the effective sample size and Geweke's z, and
/// the chain's summary with its mean and SD.
///
/// Definitions (docs/PYTHON.md, "Chain diagnostics"; the Python package's
/// `colflow.effective_sample_size` and `colflow.geweke_z` compute the same):
/// - ρ_k = γ_k / γ_0 with γ_k = (1/n) Σ_{t<n-k} (x_t − x̄)(x_{t+k} − x̄);
/// - τ = −1 + 2 Σ_{m≤M} Γ_m over the pair sums Γ_m = ρ_{2m} + ρ_{2m+1} (2m + 1 < n), each
///   lowered to the one before it, stopping before the first Γ_m ≤ 0 (Geyer 1992, the initial
///   monotone sequence); τ is at least 1 / log10(n);
/// - ESS = n / τ (for an AR(1) chain of coefficient ρ it approaches n (1 − ρ) / (1 + ρ));
/// - Geweke's z = (x̄_A − x̄_B) / sqrt(S_A / n_A + S_B / n_B) over the first ⌊n/10⌋ draws (A)
///   and the last ⌊n/2⌋ (B), S = γ_0 τ of each part (τ = 1 for a part of fewer than 4 draws).
/// Each is NaN where undefined: fewer than 4 draws (20 for Geweke's z), a constant chain or
/// part. Pure functions of their input; thread-safe.
#pragma once

#include <limits>
#include <span>

namespace colflow {

/// τ of the chain x (the variance of its mean over that of as many independent draws).
double autocorrelation_time(std::span<const double> x);

/// n / autocorrelation_time(x).
double effective_sample_size(std::span<const double> x);

/// Geweke's z of the chain x: its first 10 % against its last 50 %.
double geweke_z(std::span<const double> x);

/// The summary of one chain: what `colflow bayesr` logs and writes per trace quantity, and
/// `colflow.plot.chain_summary` computes from the trace (MEAN SD ESS GEWEKE_Z).
struct chain_summary {
  /// The mean and SD of the draws (n − 1 divisor, 0 for one draw); NaN without draws.
  double mean = std::numeric_limits<double>::quiet_NaN();
  double sd = std::numeric_limits<double>::quiet_NaN();
  double ess = std::numeric_limits<double>::quiet_NaN();       ///< effective_sample_size(x)
  double geweke_z = std::numeric_limits<double>::quiet_NaN();  ///< geweke_z(x)
};

/// Summarises the chain x (any length, empty included).
chain_summary summarize_chain(std::span<const double> x);

}  // namespace colflow
