"""``mx.nd.random``: samplers returning NDArrays (scalar or NDArray parameters)."""
from __future__ import annotations

from .ndarray import NDArray
from .op import invoke

__all__ = ["uniform", "normal", "randn", "uniform_like", "normal_like"]


def _shape(shape):
    if shape is None:
        return ()
    return (int(shape),) if isinstance(shape, int) else tuple(shape)


def _draw(scalar_op, array_op, p0, p1, names, shape, dtype, out, kwargs):
    if isinstance(p0, NDArray) or isinstance(p1, NDArray):
        if not (isinstance(p0, NDArray) and isinstance(p1, NDArray)):
            raise ValueError(f"{names[0]} and {names[1]} must both be NDArrays or both scalars")
        res = invoke(array_op, [p0, p1], {"shape": _shape(shape), "dtype": dtype}, out=out)
    else:
        params = {names[0]: float(p0), names[1]: float(p1),
                  "shape": _shape(shape) or (1,), "dtype": dtype}
        res = invoke(scalar_op, [], params, out=out)
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
    return _draw("_random_uniform", "_sample_uniform", low, high, ("low", "high"), shape,
                 dtype, out, kwargs)


def normal(loc=0, scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from N(loc, scale^2); parameters as :func:`uniform`.

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.random.normal(0, 1, shape=3).shape
    (3,)
    """
    return _draw("_random_normal", "_sample_normal", loc, scale, ("loc", "scale"), shape,
                 dtype, out, kwargs)


def randn(*shape, loc=0, scale=1, dtype=None, ctx=None, out=None, **kwargs):
    """Standard-normal samples of shape ``shape`` (``randn(2, 3)``)."""
    return normal(loc, scale, shape or None, dtype, ctx, out)


def uniform_like(data, low=0, high=1, out=None, **kwargs):
    """U[low, high) samples shaped and typed like ``data``."""
    return invoke("_random_uniform_like", [data], {"low": low, "high": high}, out=out)[0]


def normal_like(data, loc=0, scale=1, out=None, **kwargs):
    """N(loc, scale^2) samples shaped and typed like ``data``."""
    return invoke("_random_normal_like", [data], {"loc": loc, "scale": scale}, out=out)[0]
