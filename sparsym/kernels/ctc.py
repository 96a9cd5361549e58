"""Connectionist temporal classification loss (Graves et al. 2006) and its gradient with
respect to the unnormalised activations, in log space.

Storage contract: activations (T, N, K) dense; labels (N, L) of class indices already
decoded (padding removed through ``label_lengths``); the blank's index is given. Returns new
arrays: losses (N,) float64 and gradients (T, N, K) float64 (zero past each data length).
"""
from __future__ import annotations

import numpy as np
from numba import njit

_NEG = -np.inf


@njit(cache=True, nogil=True)
def _lse(a, b):
    if a == _NEG:
        return b
    if b == _NEG:
        return a
    m = max(a, b)
    return m + np.log(np.exp(a - m) + np.exp(b - m))


@njit(cache=True, nogil=True)
def _one(logp, ext, grad):
    """Loss of one sequence: logp (T, K) log-softmax, ext the blank-extended label (S,);
    writes the activation gradient into grad (T, K). Returns the negative log-likelihood."""
    T, K = logp.shape
    S = ext.shape[0]
    alpha = np.full((T, S), _NEG)
    beta = np.full((T, S), _NEG)
    alpha[0, 0] = logp[0, ext[0]]
    if S > 1:
        alpha[0, 1] = logp[0, ext[1]]
    for t in range(1, T):
        for s in range(S):
            a = alpha[t - 1, s]
            if s >= 1:
                a = _lse(a, alpha[t - 1, s - 1])
            if s >= 2 and ext[s] != ext[0] and ext[s] != ext[s - 2]:
                a = _lse(a, alpha[t - 1, s - 2])
            if a != _NEG:
                alpha[t, s] = a + logp[t, ext[s]]
    beta[T - 1, S - 1] = logp[T - 1, ext[S - 1]]
    if S > 1:
        beta[T - 1, S - 2] = logp[T - 1, ext[S - 2]]
    for t in range(T - 2, -1, -1):
        for s in range(S):
            b = beta[t + 1, s]
            if s + 1 < S:
                b = _lse(b, beta[t + 1, s + 1])
            if s + 2 < S and ext[s] != ext[0] and ext[s] != ext[s + 2]:
                b = _lse(b, beta[t + 1, s + 2])
            if b != _NEG:
                beta[t, s] = b + logp[t, ext[s]]
    ll = alpha[T - 1, S - 1]
    if S > 1:
        ll = _lse(ll, alpha[T - 1, S - 2])
    if ll == _NEG:      # no alignment fits: infinite loss, no gradient
        return np.inf
    occ = np.full(K, _NEG)
    for t in range(T):
        for k in range(K):
            occ[k] = _NEG
        for s in range(S):
            v = alpha[t, s] + beta[t, s] - logp[t, ext[s]]
            occ[ext[s]] = _lse(occ[ext[s]], v)
        for k in range(K):
            grad[t, k] = np.exp(logp[t, k]) - np.exp(occ[k] - ll)
    return -ll


def ctc_loss(acts, labels, data_lengths, label_lengths, blank):
    """Losses (N,) and activation gradients (T, N, K) of a batch (see module docstring)."""
    T, N, K = acts.shape
    loss = np.zeros(N)
    grad = np.zeros((T, N, K))
    for n in range(N):
        t_n = int(data_lengths[n])
        if t_n == 0:
            continue
        x = acts[:t_n, n].astype(np.float64)
        x = x - x.max(axis=1, keepdims=True)
        logp = x - np.log(np.exp(x).sum(axis=1, keepdims=True))
        lab = labels[n, :int(label_lengths[n])].astype(np.int64)
        ext = np.full(2 * len(lab) + 1, blank, np.int64)
        ext[1::2] = lab
        g = np.zeros((t_n, K))
        loss[n] = _one(logp, ext, g)
        grad[:t_n, n] = g
    return loss, grad
