"""Log densities of MXNet's random_pdf_* operators and their partial derivatives.

Each ``<dist>(x, *params)`` returns ``(logp, [d logp / d x, d logp / d param ...])`` in
float64, the parameters already broadcast against the samples. Discrete distributions give
a zero derivative for the sample (MXNet does not differentiate a count).
"""
from __future__ import annotations

import numpy as np
from numba import njit


def gammaln(x):
    """scipy.special.gammaln, imported on first use (not at package import)."""
    from scipy.special import gammaln as f
    return f(x)


def digamma(x):
    """scipy.special.digamma, imported on first use (not at package import)."""
    from scipy.special import digamma as f
    return f(x)


_LOG_SQRT_2PI = 0.5 * np.log(2 * np.pi)


def normal(x, mu, sigma):
    z = (x - mu) / sigma
    logp = -0.5 * z * z - np.log(sigma) - _LOG_SQRT_2PI
    return logp, [-z / sigma, z / sigma, (z * z - 1) / sigma]


def uniform(x, low, high):
    width = high - low
    inside = (x >= low) & (x <= high)
    with np.errstate(divide="ignore"):
        logp = np.where(inside, -np.log(width), -np.inf)
    return logp, [np.zeros_like(x), 1 / width + 0 * x, -1 / width + 0 * x]


def gamma(x, alpha, beta):
    """alpha: shape, beta: rate (MXNet's pdf parametrisation)."""
    logp = alpha * np.log(beta) + (alpha - 1) * np.log(x) - beta * x - gammaln(alpha)
    return logp, [(alpha - 1) / x - beta, np.log(beta) + np.log(x) - digamma(alpha),
                  alpha / beta - x]


def exponential(x, lam):
    return np.log(lam) - lam * x, [-lam + 0 * x, 1 / lam - x]


def poisson(x, lam):
    logp = x * np.log(lam) - lam - gammaln(x + 1)
    return logp, [np.zeros_like(x), x / lam - 1]


def negative_binomial(x, k, p):
    """Failures x before the k-th success, success probability p."""
    logp = gammaln(x + k) - gammaln(x + 1) - gammaln(k) + k * np.log(p) + x * np.log1p(-p)
    return logp, [np.zeros_like(x), digamma(x + k) - digamma(k) + np.log(p),
                  k / p - x / (1 - p)]


def generalized_negative_binomial(x, mu, alpha):
    """Negative binomial with mean mu and dispersion alpha: k = 1/alpha, p = 1/(1 + mu alpha)."""
    k, p = 1 / alpha, 1 / (1 + mu * alpha)
    logp, (_, dk, dp) = negative_binomial(x, k, p)
    dp_dmu = -alpha * p * p
    dp_dalpha = -mu * p * p
    return logp, [np.zeros_like(x), dp * dp_dmu, dk * (-k * k) + dp * dp_dalpha]


def dirichlet(x, alpha):
    """x, alpha: (..., k); logp: (...)."""
    logp = (gammaln(alpha.sum(-1)) - gammaln(alpha).sum(-1)
            + ((alpha - 1) * np.log(x)).sum(-1))
    return logp, [(alpha - 1) / x, digamma(alpha.sum(-1, keepdims=True)) - digamma(alpha)
                  + np.log(x)]


@njit(cache=True, nogil=True)
def _uniform_rows(x, low, high, out):
    for r in range(x.shape[0]):
        lo, hi = np.float64(low[r]), np.float64(high[r])
        dens = 1.0 / (hi - lo) if hi != lo else np.inf
        for j in range(x.shape[1]):
            v = np.float64(x[r, j])
            out[r, j] = dens if lo <= v <= hi else 0.0


def uniform_density(x, low, high):
    """The uniform density itself (1 / width inside, 0 outside; no exp of a log), one
    compiled pass: ``low``/``high`` hold one distribution per leading index of ``x``."""
    xr = np.ascontiguousarray(x, dtype=np.float32 if x.dtype == np.float16 else None)
    xr = xr.reshape(low.size, -1)
    out = np.empty(xr.shape, dtype=np.float64)
    _uniform_rows(xr, np.ascontiguousarray(low, np.float64).reshape(-1),
                  np.ascontiguousarray(high, np.float64).reshape(-1), out)
    return out.reshape(x.shape)


# densities computed directly where exp(logp) would only cost time
DENSITIES = {"uniform": uniform_density}
PDFS = {"normal": (normal, ("mu", "sigma")), "uniform": (uniform, ("low", "high")),
        "gamma": (gamma, ("alpha", "beta")), "exponential": (exponential, ("lam",)),
        "poisson": (poisson, ("lam",)), "negative_binomial": (negative_binomial, ("k", "p")),
        "generalized_negative_binomial": (generalized_negative_binomial, ("mu", "alpha")),
        "dirichlet": (dirichlet, ("alpha",))}
