#!/usr/bin/env python3
"""An independent dense implementation of colflow's SBayesR chain (docs/ANALYSES.md, SBayesR),
for sbayesr_test: numpy, the whole LD matrix in memory, the class probabilities written as
GCTB writes them (likelihoods of the least-squares effect), fed the draws of the C++ chain.

    dense_sbayesr.py DIR

DIR holds, as text with 17 significant digits: ld.txt (the m x m correlations), window.txt (m x
m: 1 where a pair is in the LD windows), gwas.txt (freq b se n per variant), settings.txt
(iterations, then gamma, then the starting pi, then h2_start, then the reference's samples),
uniform.txt and normal.txt (iterations x m: each variant's draws), chisq.txt (per iteration
the chi-square draws of sigma2_beta and sigma2_e) and dirichlet.txt (per iteration the gamma
draws of the mixture weights). Writes trace.txt (per iteration sigma2_beta sigma2_e sigma2_g h2
then pi and the class counts) and beta.txt (the last iteration's effects).
"""
import sys

import numpy as np

d = sys.argv[1]
R = np.loadtxt(f"{d}/ld.txt", ndmin=2)
gwas = np.loadtxt(f"{d}/gwas.txt", ndmin=2)
with open(f"{d}/settings.txt") as f:
    lines = f.read().split("\n")
iterations = int(lines[0])
gamma = np.array([float(x) for x in lines[1].split()])
pi = np.array([float(x) for x in lines[2].split()])
h2_start = float(lines[3])
n_ref = float(lines[4])
window = np.loadtxt(f"{d}/window.txt", ndmin=2)
U = np.loadtxt(f"{d}/uniform.txt", ndmin=2)
Z = np.loadtxt(f"{d}/normal.txt", ndmin=2)
chisq = np.loadtxt(f"{d}/chisq.txt", ndmin=2)
dirichlet = np.loadtxt(f"{d}/dirichlet.txt", ndmin=2)

freq, b, se, n = gwas.T
m = len(b)
h = 2 * freq * (1 - freq)
bs, se2 = b * np.sqrt(h), se**2 * h
v = n * se2 + bs**2
varp, yty, N = np.median(v), np.median(n * v), np.median(n)
D = n
XtX = R * np.sqrt(np.outer(D, D))
Xty = D * bs
sampling = ((1 - R**2) ** 2 * window).sum(axis=0) / n_ref
L = (n + n_ref) / m * sampling + (m - window.sum(axis=0)) / m

varg = h2_start * varp
vare = varp - varg
sigma2 = varg / (m * (1 - pi[0]))
scale_beta = scale_prior = 0.5 * sigma2
scale_e = 0.5 * vare
beta = np.zeros(m)
r = Xty.copy()
trace = []
for t in range(1, iterations + 1):
    cls = np.zeros(m, dtype=int)
    for j in range(m):
        rhs = r[j] + D[j] * beta[j]
        b_ls = rhs / D[j]
        eps = L[j] * varg + vare
        var_b_ls = gamma * sigma2 + eps / D[j]
        ll = -0.5 * np.log(var_b_ls) - b_ls**2 / (2 * var_b_ls) + np.log(pi)
        prob = np.exp(ll - ll.max())
        prob /= prob.sum()
        k = int(np.searchsorted(np.cumsum(prob), U[t - 1, j], side="right"))
        k = min(k, len(gamma) - 1)
        new = 0.0
        if k > 0:
            c = D[j] + eps / (gamma[k] * sigma2)
            new = rhs / c + Z[t - 1, j] * np.sqrt(eps / c)
        r -= XtX[:, j] * (new - beta[j])
        beta[j] = new
        cls[j] = k
    counts = np.bincount(cls, minlength=len(gamma)).astype(float)
    nnz = m - counts[0]
    nz = cls > 0
    ssq = np.sum(beta[nz] ** 2 / gamma[cls[nz]])
    sigma2 = (ssq + 4 * scale_beta) / chisq[t - 1, 0]
    g = dirichlet[t - 1, : len(gamma)]
    pi = g / g.sum()
    bty, btr = beta @ Xty, beta @ r
    varg = max(0.0, (bty - btr) / N)
    sse = yty - bty - btr
    vare = (sse + 4 * scale_e) / chisq[t - 1, 1]
    if t > 2000:
        scale_beta = scale_prior
    if t < 2000:
        scale_prior += (0.5 * varg / (m * (gamma @ pi)) - scale_prior) / t
    trace.append([sigma2, vare, varg, varg / varp, *pi, *counts])
np.savetxt(f"{d}/trace.txt", np.array(trace), fmt="%.17g")
np.savetxt(f"{d}/beta.txt", beta, fmt="%.17g")
