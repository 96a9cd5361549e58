"""``mx.nd.random``: samplers returning NDArrays (scalar or NDArray parameters)."""
from __future__ import annotations

import numpy as np

from ..ops.random.distributions import DISTRIBUTIONS, arrays_or_numbers
from .ndarray import NDArray
from .op import invoke

__all__ = ["uniform", "normal", "randn", "uniform_like", "normal_like", "gamma", "exponential",
           "poisson", "negative_binomial", "generalized_negative_binomial", "multinomial",
           "randint", "shuffle"] + [n + "_like" for n in DISTRIBUTIONS]


def _shape(shape):
    if shape is None:
        return ()
    return (int(shape),) if isinstance(shape, int) else tuple(shape)


def _draw(scalar_op, array_op, params, shape, dtype, out, kwargs):
    """MXNet's _random_helper: NDArray parameters -> ``array_op`` (``shape`` draws per
    element), numbers -> ``scalar_op``; a mix is an error."""
    if arrays_or_numbers(params, NDArray):
        res = invoke(array_op, [v for _, v in params], dict(kwargs, shape=_shape(shape),
                                                            dtype=dtype), out=out)
    else:
        if out is not None and not _shape(shape):
            # MXNet: without a shape the draw fills ``out`` (custom initializers call
            # nd.random.uniform(low, high, out=arr)), in out's dtype
            shape = out.shape
            dtype = dtype if dtype is not None else np.dtype(out.dtype).name
        attrs = dict(kwargs, **{n: v for n, v in params}, shape=_shape(shape) or (1,),
                     dtype=dtype)
        res = invoke(scalar_op, [], attrs, out=out)
    return out if out is not None else res[0]


def uniform(low=0, high=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from U[low, high).

    Parameters
    ----------
    low, high : float or NDArray
        Bounds; with NDArrays one batch of ``shape`` samples is drawn per element.
    shape : int or tuple of int, optional
    dtype : {'float16', 'float32', 'float64'}, optional (float32)
    ctx : Context, optional (ignored: one CPU generator)
    out : NDArray, optional

    Returns
    -------
    NDArray

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.random.uniform(0, 1, shape=(2, 2)).shape
    (2, 2)
    """
    return _draw("_random_uniform", "_sample_uniform", [("low", low), ("high", high)], shape,
                 dtype, out, {})


def normal(loc=0, scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from N(loc, scale^2); parameters as :func:`uniform`.

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.random.normal(0, 1, shape=3).shape
    (3,)
    """
    return _draw("_random_normal", "_sample_normal", [("loc", loc), ("scale", scale)], shape,
                 dtype, out, {})


def randn(*shape, loc=0, scale=1, dtype=None, ctx=None, out=None, **kwargs):
    """Standard-normal samples of shape ``shape`` (``randn(2, 3)``)."""
    return normal(loc, scale, shape or None, dtype, ctx, out)


def uniform_like(data, low=0, high=1, out=None, **kwargs):
    """U[low, high) samples shaped and typed like ``data``."""
    return invoke("_random_uniform_like", [data], {"low": low, "high": high}, out=out)[0]


def normal_like(data, loc=0, scale=1, out=None, **kwargs):
    """N(loc, scale^2) samples shaped and typed like ``data``."""
    return invoke("_random_normal_like", [data], {"loc": loc, "scale": scale}, out=out)[0]


def gamma(alpha=1, beta=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Gamma samples with shape ``alpha`` and scale ``beta`` (numbers or NDArrays)."""
    return _draw("_random_gamma", "_sample_gamma", [("alpha", alpha), ("beta", beta)], shape,
                 dtype, out, {})


def exponential(scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Exponential samples with mean ``scale`` (the operators take the rate 1/scale)."""
    return _draw("_random_exponential", "_sample_exponential", [("lam", 1.0 / scale)], shape, dtype,
                 out, {})


def poisson(lam=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Poisson samples with rate ``lam``."""
    return _draw("_random_poisson", "_sample_poisson", [("lam", lam)], shape, dtype, out, {})


def negative_binomial(k=1, p=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Negative binomial samples: failures before the k-th success (probability p)."""
    return _draw("_random_negative_binomial", "_sample_negative_binomial", [("k", k), ("p", p)],
                 shape, dtype, out, {})


def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, ctx=None, out=None,
                                  **kwargs):
    """Negative binomial samples with mean ``mu`` and dispersion ``alpha``."""
    return _draw("_random_generalized_negative_binomial", "_sample_generalized_negative_binomial",
                 [("mu", mu), ("alpha", alpha)], shape, dtype, out, {})


def multinomial(data, shape=None, get_prob=False, out=None, dtype="int32", **kwargs):
    """Class indices drawn from the distributions in the last axis of ``data``; with
    ``get_prob`` also their log probabilities (a list of two NDArrays).

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.random.multinomial(mx.nd.array([0., 0., 1.]), shape=2).asnumpy()
    array([2, 2], dtype=int32)
    """
    res = invoke("_sample_multinomial", [data], {"shape": _shape(shape), "get_prob": get_prob,
                                                 "dtype": dtype}, out=out)
    if out is not None:
        return out
    return list(res) if get_prob else res[0]


def randint(low, high, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Uniform integers in [low, high) (int32 unless ``dtype='int64'``)."""
    res = invoke("_random_randint", [], {"low": low, "high": high,
                                         "shape": _shape(shape) or (1,), "dtype": dtype},
                 out=out)
    return out if out is not None else res[0]


def shuffle(data, **kwargs):
    """A random permutation of ``data`` along its first axis."""
    return invoke("_shuffle", [data], {}, out=kwargs.get("out"))[0]


def _like(op_name):
    def fn(data=None, out=None, name=None, **kwargs):
        return invoke(op_name, [data], kwargs, out=out)[0]
    fn.__name__ = op_name[len("_random_"):]
    fn.__doc__ = f"Samples shaped and typed like ``data`` ({op_name[8:-5]} distribution)."
    return fn




for _name in DISTRIBUTIONS:
    globals()[_name + "_like"] = _like(f"_random_{_name}_like")
