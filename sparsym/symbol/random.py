"""``mx.sym.random``: sampler symbols (scalar or Symbol parameters)."""
from __future__ import annotations

from ..ops.random.distributions import DISTRIBUTIONS, arrays_or_numbers
from .op import call
from .symbol import Symbol

__all__ = ["uniform", "normal", "randn", "uniform_like", "normal_like", "gamma", "exponential",
           "poisson", "negative_binomial", "generalized_negative_binomial", "multinomial",
           "randint", "shuffle"] + [n + "_like" for n in DISTRIBUTIONS]


def _shape(shape):
    if shape is None:
        return ()
    return (int(shape),) if isinstance(shape, int) else tuple(shape)


def _draw(scalar_op, array_op, params, shape, dtype, kwargs):
    """MXNet's _random_helper: Symbol parameters -> ``array_op``, numbers -> ``scalar_op``."""
    name, attr = kwargs.pop("name", None), kwargs.pop("attr", None)
    if arrays_or_numbers(params, Symbol):
        return call(array_op, [v for _, v in params], dict(kwargs, shape=_shape(shape),
                                                           dtype=dtype), name=name, attr=attr)
    attrs = dict(kwargs, **{n: v for n, v in params}, shape=_shape(shape), dtype=dtype)
    return call(scalar_op, [], attrs, name=name, attr=attr)


def uniform(low=0, high=1, shape=None, dtype=None, **kwargs):
    """A U[low, high) sample symbol; 0 dims in ``shape`` are inferred from the graph.

    Parameters
    ----------
    low, high : float or Symbol
    shape : int or tuple of int, optional
    dtype : {'float16', 'float32', 'float64'}, optional
    name : str, optional

    Returns
    -------
    Symbol

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.sym.random.uniform(shape=(2, 3)).infer_shape()[1]
    [(2, 3)]
    """
    return _draw("_random_uniform", "_sample_uniform", [("low", low), ("high", high)], shape,
                 dtype, kwargs)


def normal(loc=0, scale=1, shape=None, dtype=None, **kwargs):
    """An N(loc, scale^2) sample symbol; parameters as :func:`uniform`."""
    return _draw("_random_normal", "_sample_normal", [("loc", loc), ("scale", scale)], shape,
                 dtype, kwargs)


def randn(*shape, loc=0, scale=1, dtype=None, **kwargs):
    """Standard-normal sample symbol of shape ``shape``."""
    return normal(loc, scale, shape or None, dtype, **kwargs)


def uniform_like(data, low=0, high=1, **kwargs):
    """U[low, high) samples shaped like ``data``."""
    return call("_random_uniform_like", [data], dict(kwargs, low=low, high=high))


def normal_like(data, loc=0, scale=1, **kwargs):
    """N(loc, scale^2) samples shaped like ``data``."""
    return call("_random_normal_like", [data], dict(kwargs, loc=loc, scale=scale))


def gamma(alpha=1, beta=1, shape=None, dtype=None, **kwargs):
    """Gamma samples with shape ``alpha`` and scale ``beta`` (numbers or Symbols)."""
    return _draw("_random_gamma", "_sample_gamma", [("alpha", alpha), ("beta", beta)], shape,
                 dtype, kwargs)


def exponential(scale=1, shape=None, dtype=None, **kwargs):
    """Exponential samples with mean ``scale`` (the operators take the rate 1/scale)."""
    return _draw("_random_exponential", "_sample_exponential", [("lam", 1.0 / scale)], shape,
                 dtype, kwargs)


def poisson(lam=1, shape=None, dtype=None, **kwargs):
    """Poisson samples with rate ``lam``."""
    return _draw("_random_poisson", "_sample_poisson", [("lam", lam)], shape, dtype, kwargs)


def negative_binomial(k=1, p=1, shape=None, dtype=None, **kwargs):
    """Negative binomial samples: failures before the k-th success (probability p)."""
    return _draw("_random_negative_binomial", "_sample_negative_binomial", [("k", k), ("p", p)],
                 shape, dtype, kwargs)


def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, **kwargs):
    """Negative binomial samples with mean ``mu`` and dispersion ``alpha``."""
    return _draw("_random_generalized_negative_binomial", "_sample_generalized_negative_binomial",
                 [("mu", mu), ("alpha", alpha)], shape, dtype, kwargs)


def multinomial(data, shape=None, get_prob=True, dtype="int32", **kwargs):
    """Class indices drawn from the distributions in the last axis of ``data`` (and, with
    ``get_prob`` -- the default here, as in MXNet's symbol API -- their log probabilities)."""
    return _call("_sample_multinomial", [data], dict(kwargs, shape=_shape(shape),
                                                     get_prob=get_prob, dtype=dtype))


def randint(low, high, shape=None, dtype=None, **kwargs):
    """Uniform integers in [low, high) (int32 unless ``dtype='int64'``)."""
    return _call("_random_randint", [], dict(kwargs, low=low, high=high, shape=_shape(shape),
                                             dtype=dtype))


def _call(op_name, inputs, kwargs):
    name, attr = kwargs.pop("name", None), kwargs.pop("attr", None)
    return call(op_name, inputs, kwargs, name=name, attr=attr)


def shuffle(data, **kwargs):
    """A random permutation of ``data`` along its first axis."""
    return _call("_shuffle", [data], kwargs)


def _like(op_name):
    def fn(data=None, **kwargs):
        return _call(op_name, [data], kwargs)
    fn.__name__ = op_name[len("_random_"):]
    fn.__doc__ = f"Samples shaped like ``data`` ({op_name[8:-5]} distribution)."
    return fn




for _name in DISTRIBUTIONS:
    globals()[_name + "_like"] = _like(f"_random_{_name}_like")
