"""``mx.nd.contrib.foreach``, ``while_loop`` and ``cond``: control flow on NDArrays.

As in MXNet, the imperative forms run the Python body step by step; under
``autograd.record()`` every operator the body calls is recorded, so gradients flow through
the loop like through any Python code. (The symbolic forms build one node carrying the
body: sparsym/symbol/control_flow.py.)
"""
from __future__ import annotations

from ..base import flatten_nested, regroup_nested
from .ndarray import NDArray

__all__ = ["foreach", "while_loop", "cond"]


def _scalar(value, kind, what):
    """A predicate or count as a Python ``kind`` (an NDArray must hold one value)."""
    if isinstance(value, NDArray):
        value = value.asscalar()
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise ValueError(f"Cannot convert {what} to python {kind.__name__}") from None


def foreach(body, data, init_states):
    """Run ``body`` over slices of ``data`` along axis 0, carrying states.

    Parameters
    ----------
    body : callable
        ``body(data_slice, states) -> (outputs, new_states)``; NDArrays or (nested) lists.
    data : NDArray or list of NDArray
    init_states : NDArray or (nested) list of NDArray

    Returns
    -------
    (outputs, states)
        The outputs of every step stacked along a new axis 0, and the last states.

    Examples
    --------
    >>> import sparsym as mx
    >>> step = lambda x, s: (x + s[0], [s[0] * 2])
    >>> outs, states = mx.nd.contrib.foreach(step, mx.nd.ones((3, 2)), [mx.nd.ones(2)])
    >>> outs.asnumpy().tolist(), states[0].asnumpy().tolist()
    ([[2.0, 2.0], [3.0, 3.0], [5.0, 5.0]], [8.0, 8.0])
    """
    from .. import ndarray as op
    flat_data, _ = flatten_nested(data, NDArray, "foreach data")
    flatten_nested(init_states, NDArray, "foreach init_states")
    single = isinstance(data, NDArray)
    steps = data.shape[0] if single else flat_data[0].shape[0]
    states = init_states
    per_step, out_fmt = [], None
    for i in range(steps):
        item = data[i] if single else [d[i] for d in data]
        outs, states = body(item, states)
        flat, out_fmt = flatten_nested(outs, NDArray, "foreach output")
        per_step.append(flat)
    stacked = [op.stack(*items) for items in zip(*per_step)]
    if out_fmt is None:
        return [], states
    return regroup_nested(stacked, out_fmt)[0], states


def while_loop(cond, func, loop_vars, max_iterations=None):
    """Run ``func`` while ``cond`` holds, at most ``max_iterations`` times.

    Parameters
    ----------
    cond : callable
        ``cond(*loop_vars)``: an NDArray with one value (nonzero continues).
    func : callable
        ``func(*loop_vars) -> (step_output, new_loop_vars)``; ``step_output`` may be None.
    loop_vars : NDArray or list of NDArray
    max_iterations : int
        Required. The stacked outputs have ``max_iterations`` rows; rows after the last
        step are unspecified (MXNet leaves them uninitialised; here they are zeros).

    Returns
    -------
    (outputs, final loop_vars)
        The step outputs stacked along a new axis 0 (an empty list when no step ran).

    Examples
    --------
    >>> import sparsym as mx
    >>> cond = lambda i, s: i <= 5
    >>> func = lambda i, s: ([i + s], [i + 1, s + i])
    >>> i, s = mx.nd.array([0], dtype="int64"), mx.nd.array([1], dtype="int64")
    >>> outs, (i, s) = mx.nd.contrib.while_loop(cond, func, [i, s], max_iterations=10)
    >>> outs[0].shape, int(i.asscalar()), int(s.asscalar())
    ((10, 1), 6, 16)
    """
    from .. import ndarray as op
    if max_iterations is None:
        raise ValueError("max_iterations should be specified")
    max_iterations = _scalar(max_iterations, int, "max_iteration")
    single = isinstance(loop_vars, NDArray)
    lv = [loop_vars] if single else list(loop_vars)
    if not lv:
        raise ValueError("loop_vars should contain at least one element")
    per_step, out_fmt = [], None
    while len(per_step) < max_iterations and \
            _scalar(cond(*lv), bool, "Return value of cond"):
        step_out, new_vars = func(*lv)
        step_out = [] if step_out is None else step_out
        new_vars = [] if new_vars is None else new_vars
        new_vars = [new_vars] if isinstance(new_vars, NDArray) else list(new_vars)
        if len(new_vars) != len(lv):
            raise ValueError("The length of loop_vars should be consistent during the loop")
        flat, out_fmt = flatten_nested(step_out, NDArray, "while output")
        if per_step and len(flat) != len(per_step[0]):
            raise ValueError("Number of elements in step_output should be the same in each "
                             "step")
        per_step.append(flat)
        lv = new_vars
    stacked = []
    for k, items in enumerate(zip(*per_step), 1):
        rows = [x.expand_dims(0) for x in items]
        if len(per_step) < max_iterations:
            rows.append(op.zeros((max_iterations - len(per_step),) + tuple(items[0].shape),
                                 ctx=items[0].context, dtype=items[0].dtype))
        try:
            stacked.append(op.concat(*rows, dim=0))
        except ValueError as e:
            shapes = "\n".join(f"  Step {i}, shape is {x.shape}" for i, x in enumerate(items))
            raise ValueError(f"Shapes of {k}-th elements in step_outputs are inconsistent, "
                             f"which are:\n{shapes}") from e
    if out_fmt is not None:
        stacked = regroup_nested(stacked, out_fmt)[0]
    return stacked, (lv[0] if single else lv)


def cond(pred, then_func, else_func):
    """``then_func()`` if ``pred`` (one value) is nonzero, else ``else_func()``.

    Parameters
    ----------
    pred : NDArray
    then_func, else_func : callable
        No arguments; return NDArrays.

    Examples
    --------
    >>> import sparsym as mx
    >>> a, b = mx.nd.array([1]), mx.nd.array([2])
    >>> mx.nd.contrib.cond(a * b < 5, lambda: (a + 5) * (b + 5),
    ...                    lambda: (a - 5) * (b - 5)).asnumpy().tolist()
    [42.0]
    """
    return then_func() if _scalar(pred, bool, "pred") else else_func()
