"""Convergence diagnostics of Markov chains (numpy only): the effective sample size, Geweke's z
and the split R-hat, as ``colflow bayesr`` logs the first two for h² (docs/PYTHON.md, "Chain
diagnostics").

The definitions, which the library's ``chain_diagnostics`` (include/colflow/analysis/
chain_diagnostics.hpp) computes identically:

- autocorrelation ρ_k = γ_k / γ_0 with γ_k = (1/n) Σ_{t<n-k} (x_t - x̄)(x_{t+k} - x̄);
- integrated autocorrelation time τ = -1 + 2 Σ_{m≤M} Γ_m over the pair sums Γ_m = ρ_{2m} +
  ρ_{2m+1} (pairs with 2m + 1 < n), each lowered to the one before it (Geyer's initial monotone
  sequence), stopping before the first Γ_m ≤ 0; τ is at least 1 / log10(n) (an antithetic
  chain cannot claim more than n·log10(n) samples);
- effective sample size n / τ;
- Geweke's z: (x̄_A - x̄_B) / sqrt(S_A / n_A + S_B / n_B) over the first 10 % (A, n_A = ⌊n/10⌋)
  and the last 50 % (B, n_B = ⌊n/2⌋), with S = γ_0 τ of each part, the spectral density at
  zero that τ implies;
- split R-hat (Gelman et al., Bayesian Data Analysis, 3rd ed., §11.4): every chain cut to the
  shortest one's n draws, then into two halves of ⌊n/2⌋ (the middle draw of an odd n dropped), W the mean within-half variance,
  B/n the variance of the half means, R-hat = sqrt(((n-1)/n W + B/n) / W).

Each returns NaN where it is undefined: fewer than 4 draws (20 for Geweke's z, whose first part
then has 2), or a constant chain (a constant part).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["autocorrelation_time", "effective_sample_size", "geweke_z", "split_rhat"]


def _draws(x: Any, name: str = "chain") -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1:
        raise ValueError(f"{name}: expected one chain (a 1-d sequence), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        k = int(np.flatnonzero(~np.isfinite(a))[0])
        raise ValueError(f"{name}: draw {k} is {a[k]}, not a finite number")
    return a


def _autocovariances(x: np.ndarray) -> np.ndarray:
    # γ_0..γ_{n-1} with the 1/n divisor, by FFT of the zero-padded centred chain: O(n log n).
    n = x.size
    d = x - x.mean()
    size = 1 << int(2 * n - 1).bit_length()
    f = np.fft.rfft(d, size)
    return np.fft.irfft(f * np.conj(f), size)[:n] / n


def autocorrelation_time(x: Any) -> float:
    """The integrated autocorrelation time τ of one chain (module docstring): the variance of
    its mean is τ times that of as many independent draws. NaN for fewer than 4 draws or a
    constant chain."""
    a = _draws(x)
    n = a.size
    if n < 4:
        return float("nan")
    gamma = _autocovariances(a)
    if not gamma[0] > 0:
        return float("nan")
    rho = gamma / gamma[0]
    total, previous = 0.0, np.inf
    for m in range(n // 2):
        pair = rho[2 * m] + rho[2 * m + 1]
        if pair <= 0:
            break
        pair = min(pair, previous)
        total += pair
        previous = pair
    return max(-1.0 + 2.0 * total, 1.0 / np.log10(n))


def effective_sample_size(x: Any) -> float:
    """n / τ for one chain (module docstring); NaN for fewer than 4 draws or a constant chain.
    For an AR(1) chain of coefficient ρ it approaches n (1 - ρ) / (1 + ρ)."""
    a = _draws(x)
    return a.size / autocorrelation_time(a)


def geweke_z(x: Any, first: float = 0.1, last: float = 0.5) -> float:
    """Geweke's z of one chain: the first ``first`` and the last ``last`` fractions of it
    compared by their means, each with its spectral density at zero (module docstring). About
    N(0, 1) for a chain that has reached its stationary distribution; NaN for fewer than 20
    draws or a constant part."""
    a = _draws(x)
    if not (0 < first and 0 < last and first + last <= 1):
        raise ValueError(f"geweke_z: first={first} and last={last} must be positive fractions "
                         "whose sum is at most 1")
    n = a.size
    n_a, n_b = int(np.floor(first * n)), int(np.floor(last * n))
    if n < 20 or n_a < 2 or n_b < 2:
        return float("nan")
    head, tail = a[:n_a], a[n - n_b:]
    variance = 0.0
    for part in (head, tail):
        tau = autocorrelation_time(part) if part.size >= 4 else 1.0
        gamma0 = float(np.mean((part - part.mean()) ** 2))
        if not gamma0 > 0:
            return float("nan")
        variance += gamma0 * tau / part.size
    return float((head.mean() - tail.mean()) / np.sqrt(variance))


def split_rhat(chains: Sequence[Any]) -> float:
    """The split R-hat of several chains of one quantity (module docstring): about 1 when they
    sample the same distribution, above 1.01 to 1.1 when they have not mixed. Each chain is
    cut to its first L draws, L the shortest chain's length. NaN for fewer than 4 draws per
    chain or constant halves."""
    arrays = [_draws(c, f"chain {k}") for k, c in enumerate(chains)]
    if not arrays:
        raise ValueError("split_rhat: no chains")
    length = min(a.size for a in arrays)
    n = length // 2
    if n < 2:
        return float("nan")
    halves = np.array([h for a in arrays for h in (a[:n], a[length - n:length])])
    within = halves.var(axis=1, ddof=1).mean()
    if not within > 0:
        return float("nan")
    between_over_n = halves.mean(axis=1).var(ddof=1)
    return float(np.sqrt(((n - 1) / n * within + between_over_n) / within))
