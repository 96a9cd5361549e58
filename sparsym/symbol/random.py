"""``mx.sym.random``: sampler symbols (scalar or Symbol parameters)."""
from __future__ import annotations

from .op import call
from .symbol import Symbol

__all__ = ["uniform", "normal", "randn", "uniform_like", "normal_like"]


def _shape(shape):
    if shape is None:
        return ()
    return (int(shape),) if isinstance(shape, int) else tuple(shape)


def _draw(scalar_op, array_op, p0, p1, names, shape, dtype, kwargs):
    name, attr = kwargs.pop("name", None), kwargs.pop("attr", None)
    if isinstance(p0, Symbol) or isinstance(p1, Symbol):
        if not (isinstance(p0, Symbol) and isinstance(p1, Symbol)):
            raise ValueError(f"{names[0]} and {names[1]} must both be Symbols or both scalars")
        return call(array_op, [p0, p1], dict(kwargs, shape=_shape(shape), dtype=dtype),
                    name=name, attr=attr)
    params = dict(kwargs, **{names[0]: float(p0), names[1]: float(p1)},
                  shape=_shape(shape), dtype=dtype)
    return call(scalar_op, [], params, name=name, attr=attr)


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
    return _draw("_random_uniform", "_sample_uniform", low, high, ("low", "high"), shape,
                 dtype, kwargs)


def normal(loc=0, scale=1, shape=None, dtype=None, **kwargs):
    """An N(loc, scale^2) sample symbol; parameters as :func:`uniform`."""
    return _draw("_random_normal", "_sample_normal", loc, scale, ("loc", "scale"), shape,
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
