"""Statistical checks of random generators (mx.test_utils): moments and chi-square."""
from __future__ import annotations

import numpy as np


def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """``nbuckets`` equal-probability buckets [ppf(i/n), ppf((i+1)/n)) and their probabilities."""
    assert nbuckets > 0
    probs = [1.0 / nbuckets for _ in range(nbuckets)]
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets)))
               for i in range(nbuckets)]
    return buckets, probs


def mean_check(generator, mu, sigma, nsamples=1000000):
    """True when the sample mean of ``generator(nsamples)`` is within mu +- 3 sigma/sqrt(n)."""
    mean = np.array(generator(nsamples)).mean()
    half = 3 * sigma / np.sqrt(nsamples)
    return bool(mu - half < mean < mu + half)


def var_check(generator, sigma, nsamples=1000000):
    """True when the sample variance is within sigma^2 +- 3 sqrt(2 sigma^4 / (n - 1))."""
    var = np.array(generator(nsamples)).var(ddof=1)
    half = 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return bool(sigma ** 2 - half < var < sigma ** 2 + half)


def chi_square_check(generator, buckets, probs, nsamples=1000000):
    """Chi-square test of ``generator(nsamples)`` against bucket probabilities.

    Parameters
    ----------
    generator : callable
        ``generator(n)`` returns n i.i.d. samples.
    buckets : list
        Ascending, disjoint (low, high) ranges for a continuous distribution, or the
        possible values of a discrete one.
    probs : list
        Probability of each bucket.
    nsamples : int

    Returns
    -------
    (p, obs_freq, expected_freq)
    """
    import scipy.stats as ss
    assert isinstance(buckets, list)
    samples = generator(nsamples)
    if hasattr(samples, "asnumpy"):
        samples = samples.asnumpy()
    samples = np.asarray(samples)
    assert len(probs) == len(buckets)
    expected = (nsamples * np.array(probs, dtype=np.float32)).astype(np.int32)
    obs = np.zeros(len(buckets), dtype=np.int64)
    if isinstance(buckets[0], (list, tuple)):
        edges = np.zeros(len(buckets) * 2, dtype=np.float32)
        for i, (lo, hi) in enumerate(buckets):
            assert lo <= hi
            if i < len(buckets) - 1:
                assert hi <= buckets[i + 1][0]
            edges[2 * i], edges[2 * i + 1] = lo, hi
        ids = np.searchsorted(edges, samples, side="right") // 2
        for i in range(len(buckets)):
            obs[i] = (ids == i).sum()
    else:
        for i, b in enumerate(buckets):
            obs[i] = (samples == b).sum()
    _, p = ss.chisquare(f_obs=obs, f_exp=expected)
    return p, obs, expected


def verify_generator(generator, buckets, probs, nsamples=1000000, nrepeat=5, success_rate=0.2,
                     alpha=0.05):
    """Run :func:`chi_square_check` ``nrepeat`` times; raise AssertionError when fewer
    than ``success_rate`` of the runs have p > alpha. Returns the p values."""
    ps, obs_l, exp_l = [], [], []
    for _ in range(nrepeat):
        p, obs, exp = chi_square_check(generator=generator, buckets=buckets, probs=probs,
                                       nsamples=nsamples)
        ps.append(p)
        obs_l.append(obs)
        exp_l.append(exp)
    if (np.array(ps) > alpha).sum() < nrepeat * success_rate:
        raise AssertionError("Generator test fails, Chi-square p=%s, obs_freq=%s, "
                             "expected_freq=%s.\nbuckets=%s, probs=%s"
                             % (str(ps), str(obs_l), str(exp_l), str(buckets), str(probs)))
    return ps
