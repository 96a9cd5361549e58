"""Log-likelihood of marked self-exciting Hawkes processes and its gradient (MXNet 1.9.1's
``_contrib_hawkesll``), one sequence per row.

Storage contract: dense arrays; ``mu`` (N, K), ``alpha`` and ``beta`` (K,), ``state`` (N, K),
``lags`` and ``marks`` (N, T) (marks integers in [0, K)), ``valid_length`` and ``max_time``
(N,). Inputs are only read; results are new float64 arrays.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["hawkesll", "hawkesll_grad"]


@njit(cache=True)
def _run(mu, alpha, beta, state, lags, marks, valid, max_time, og, grad, ll, out_state,
         gmu, galpha, gbeta):
    """One pass over each row: the log-likelihood and final state, or (``grad``) the
    gradients of ``sum(og * loglik)``, carrying the state's derivative in beta along."""
    n, k = mu.shape
    for i in range(n):
        last = np.zeros(k)
        phi = out_state[i]
        phi[:] = state[i]
        dphi, ga, gb = np.zeros(k), np.zeros(k), np.zeros(k)
        t, acc = 0.0, 0.0
        for j in range(int(valid[i])):
            c = marks[i, j]
            t += lags[i, j]
            d = t - last[c]
            ed = math.exp(-beta[c] * d)
            lda = mu[i, c] + alpha[c] * beta[c] * phi[c] * ed
            if grad:
                gmu[i, c] += 1.0 / lda - d
                ga[c] += beta[c] * phi[c] * ed / lda - phi[c] * (1.0 - ed)
                gb[c] += (alpha[c] * ed * (phi[c] * (1.0 - beta[c] * d) + beta[c] * dphi[c])
                          / lda - alpha[c] * (dphi[c] * (1.0 - ed) + phi[c] * d * ed))
                dphi[c] = ed * (-d * phi[c] + dphi[c])
            else:
                acc += math.log(lda) - (mu[i, c] * d + alpha[c] * phi[c] * (1.0 - ed))
            phi[c] = 1.0 + phi[c] * ed
            last[c] = t
        for c in range(k):  # the compensator up to max_time, and the state there
            d = max_time[i] - last[c]
            ed = math.exp(-beta[c] * d)
            if grad:
                gmu[i, c] = og[i] * (gmu[i, c] - d)
                galpha[c] += og[i] * (ga[c] - phi[c] * (1.0 - ed))
                gbeta[c] += og[i] * (gb[c] - alpha[c] * (dphi[c] * (1.0 - ed)
                                                         + phi[c] * d * ed))
            else:
                acc -= mu[i, c] * d + alpha[c] * phi[c] * (1.0 - ed)
            phi[c] = ed * phi[c]
        ll[i] = acc


def _args(mu, alpha, beta, state, lags, marks, valid_length, max_time):
    f = np.float64
    return (np.ascontiguousarray(mu, f), np.ascontiguousarray(alpha, f),
            np.ascontiguousarray(beta, f), np.ascontiguousarray(state, f),
            np.ascontiguousarray(lags, f), np.ascontiguousarray(marks, np.int64),
            np.ascontiguousarray(valid_length, f), np.ascontiguousarray(max_time, f))


def hawkesll(mu, alpha, beta, state, lags, marks, valid_length, max_time):
    """(log-likelihood (N,), state at max_time (N, K)) of each row's sequence."""
    args = _args(mu, alpha, beta, state, lags, marks, valid_length, max_time)
    n, k = args[0].shape
    ll, out_state = np.zeros(n), np.zeros((n, k))
    _run(*args, ll, False, ll, out_state, out_state, args[1], args[1])
    return ll, out_state


def hawkesll_grad(og, mu, alpha, beta, state, lags, marks, valid_length, max_time):
    """Gradients of ``sum(og * loglik)`` in mu (N, K), alpha (K,) and beta (K,)."""
    args = _args(mu, alpha, beta, state, lags, marks, valid_length, max_time)
    gmu, galpha, gbeta = np.zeros(args[0].shape), np.zeros(len(args[1])), np.zeros(len(args[2]))
    _run(*args, np.ascontiguousarray(og, np.float64), True, np.zeros(len(gmu)),
         np.zeros(gmu.shape), gmu, galpha, gbeta)
    return gmu, galpha, gbeta
