"""Tolerances and array comparisons of mx.test_utils (MXNet 1.9.1's rules and messages)."""
from __future__ import annotations

import json
import numbers

import numpy as np
import numpy.testing as npt
from numba import njit

from ..ndarray.ndarray import NDArray


def _tol_table(floats):
    """A dtype -> tolerance table: the given float entries, 0 for bool and integers."""
    table = {np.dtype(k): v for k, v in floats.items()}
    for t in (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
              np.int64, np.uint64):
        table[np.dtype(t)] = 0
    return table


def default_rtols():
    """Default relative tolerance per dtype (float16 1e-2, float32 1e-4, float64 1e-5)."""
    return _tol_table({np.float16: 1e-2, np.float32: 1e-4, np.float64: 1e-5})


def default_atols():
    """Default absolute tolerance per dtype (float16 1e-1, float32 1e-3, float64 1e-20)."""
    return _tol_table({np.float16: 1e-1, np.float32: 1e-3, np.float64: 1e-20})


def default_numeric_eps():
    """Finite-difference step per dtype: powers of two, so the step itself is exact."""
    return {np.dtype(np.float16): 1.0 / 2 ** 6,
            np.dtype(np.float32): 1.0 / 2 ** 9,
            np.dtype(np.float64): 1.0 / 2 ** 14}


def effective_dtype(dat):
    """The dtype that decides ``dat``'s tolerance (its own dtype: there is no TF32 here)."""
    return np.dtype(dat.dtype)


def get_tolerance(dat, tol, default_tol):
    """``tol`` if it is a number, else its (or ``default_tol``'s) entry for dat's dtype."""
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    tol = {} if tol is None else tol
    if dtype in tol:
        return tol[dtype]
    return default_tol.get(dtype, 0)


def get_tols(x, y, rtol, atol):
    """(rtol, atol) for comparing x with y: the looser of the two arrays' tolerances."""
    # numbers and lists compare too (MXNet's helper needs a .dtype on both sides)
    if not hasattr(x, "dtype"):
        x = np.asarray(x)
    if not hasattr(y, "dtype"):
        y = np.asarray(y)
    rtol = max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols()))
    atol = max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols()))
    return rtol, atol


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    """``atol``, or the default absolute tolerance of ``dtype``."""
    return default_atols()[np.dtype(dtype)] if atol is None else atol


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    """``rtol``, or the default relative tolerance of ``dtype``."""
    return default_rtols()[np.dtype(dtype)] if rtol is None else rtol


def get_etol(etol=None):
    """``etol``, or 0 (no mismatch allowed)."""
    return 0 if etol is None else etol


def _np(x):
    """NumPy view of an NDArray (any storage), or x itself."""
    return x.asnumpy() if isinstance(x, NDArray) else x


def same(a, b):
    """True when two arrays have equal shapes and elements."""
    return np.array_equal(_np(a), _np(b))


def checkShapes(a, b):
    """Raise AssertionError (numpy's message layout) when the shapes of a and b differ."""
    if a.shape != b.shape:
        raise AssertionError(npt.build_err_msg(
            [a, b], err_msg=f"a.shape = {a.shape} and b.shape = {b.shape} are not equal"))


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    """``np.allclose(a, b)`` with float64's default tolerances when none are given."""
    if not use_broadcast:
        checkShapes(a, b)
    a, b = _np(a), _np(b)
    rtol, atol = get_rtol(rtol), get_atol(atol)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape \
            and a.size > _LARGE and a.dtype in _NUMBA_FLOATS and b.dtype in _NUMBA_FLOATS:
        # one pass: np.allclose's temporaries (|a - b|, masks) for a 512 MB array are
        # several fresh 512 MB buffers, and first-touching fresh pages dominates its time
        return bool(_allclose_flat(a.reshape(-1), b.reshape(-1), float(rtol), float(atol),
                                   bool(equal_nan)))
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


_LARGE = 1 << 20
_NUMBA_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))   # no float16 in Numba


@njit(cache=True)
def _allclose_flat(a, b, rtol, atol, equal_nan):
    """np.allclose over two flat float arrays (float64 arithmetic)."""
    for i in range(a.size):
        x, y = np.float64(a[i]), np.float64(b[i])
        if x == y:
            continue
        if np.isnan(x) or np.isnan(y):
            if equal_nan and np.isnan(x) and np.isnan(y):
                continue
            return False
        if np.isinf(x) or np.isinf(y) or abs(x - y) > atol + rtol * abs(y):
            return False
    return True


def locationError(a, b, index, names, maxError=False):
    """The 'Location of [maximum ]error: ...' line of a mismatch report."""
    maximum = "maximum " if maxError else ""
    return "Location of %serror: %s, %s=%.8f, %s=%.8f" % (
        maximum, str(index), names[0], a[index], names[1], b[index])


def _violations(a, b, rtol, atol, equal_nan):
    """|a - b| / (atol + rtol |b|) per element; equal elements (also equal infs) count 0."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        diff = np.where(np.equal(a, b), 0, np.abs(a - b))
        v = diff / (atol + rtol * np.abs(b) + 1e-20)
    v = np.asarray(v, dtype=np.float64)
    if equal_nan:
        v = np.where(np.isnan(a) & np.isnan(b), 0, v)
    return v


def _index(flat_pos, shape):
    """A position as a tuple of Python ints (printed as MXNet prints it: (1, 2))."""
    return tuple(int(i) for i in np.unravel_index(flat_pos, shape))


def _mismatch_report(a, b, rtol, atol, names, equal_nan, mismatches):
    """MXNet's report: the worst violations printed, the message for AssertionError."""
    v = _violations(a, b, rtol, atol, equal_nan)
    if v.ndim == 0:
        return "Error %f exceeds tolerance rtol=%e, atol=%e.\n" % (float(v), rtol, atol)
    flat = v.reshape(-1)
    # argmax order: NaN violations first (numpy's argmax stops at a NaN), then the largest
    key = np.where(np.isnan(flat), np.inf, flat)
    order = np.lexsort((np.arange(flat.size), -key, ~np.isnan(flat)))
    close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan).reshape(-1)
    n_bad = max(int((~close).sum()), 1)
    cap = mismatches[1]
    count = n_bad if cap <= 0 or n_bad <= cap else cap + 1
    print(f"\n*** Maximum errors for vector of size {a.size}:  rtol={rtol}, atol={atol}\n")
    for k in range(min(n_bad, mismatches[0], count)):
        idx = _index(order[k], v.shape)
        print("%3d: Error %f  %s" % (k + 1, flat[order[k]], locationError(a, b, idx, names)))
    worst = _index(order[0], v.shape)
    degree = "at least " if cap > 0 and count > cap else ""
    return "Error %f exceeds tolerance rtol=%e, atol=%e (mismatch %s%f%%).\n%s" % (
        flat[order[0]], rtol, atol, degree, 100 * count / a.size,
        locationError(a, b, worst, names, maxError=True))


def _raise_mismatch(a, b, err_msg):
    # numpy 2 prints scalars as np.float64(1.0) and summarised arrays with "shape=...";
    # MXNet's text comes from numpy 1's printing
    legacy = {"legacy": "1.25"} if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else {}
    with np.printoptions(threshold=4, suppress=True, **legacy):
        msg = npt.build_err_msg([a, b], err_msg=err_msg)
    raise AssertionError(msg)


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Raise AssertionError unless ``a`` and ``b`` are element-wise close.

    Parameters
    ----------
    a, b : np.ndarray or NDArray (any storage type) or number
    rtol, atol : None, float or dict of dtype -> float
        None takes the looser default of the two arrays' dtypes (float32: rtol 1e-4,
        atol 1e-3; float64: 1e-5 and 1e-20; float16: 1e-2 and 1e-1).
    names : tuple of str
        Names used in the report.
    equal_nan : bool
        Whether NaN equals NaN.
    use_broadcast : bool
        False requires equal shapes.
    mismatches : (int, int)
        How many mismatches to print, and to count before saying "at least".

    Examples
    --------
    >>> import numpy as np
    >>> from sparsym.test_utils import assert_almost_equal
    >>> assert_almost_equal(np.array([1.0]), np.array([1.0 + 1e-7]))
    """
    if not use_broadcast:
        checkShapes(a, b)
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _np(a), _np(b)
    if getattr(a, "dtype", None) == np.bool_ and getattr(b, "dtype", None) == np.bool_:
        np.testing.assert_equal(a, b)
        return
    if almost_equal(a, b, rtol, atol, equal_nan=equal_nan):
        return
    if not isinstance(a, (np.ndarray, np.generic)):
        a = np.asarray(a)
    if not isinstance(b, (np.ndarray, np.generic)):
        b = np.asarray(b)
    if a.shape != b.shape:
        a, b = np.broadcast_arrays(a, b)
    _raise_mismatch(a, b, _mismatch_report(a, b, rtol, atol, names, equal_nan, mismatches))


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    """numpy.testing.assert_allclose's defaults through :func:`assert_almost_equal`."""
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None, names=("a", "b"),
                                 equal_nan=False, mismatches=(10, 10)):
    """Like :func:`assert_almost_equal`, but a fraction ``etol`` of elements may mismatch."""
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = np.asarray(_np(a)), np.asarray(_np(b))
    equals = np.isclose(a, b, rtol=rtol, atol=atol)
    err = 1 - np.count_nonzero(equals) / equals.size
    if err > etol:
        _raise_mismatch(a, b, _mismatch_report(a, b, rtol, atol, names, equal_nan, mismatches))


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=("a", "b")):
    """:func:`assert_almost_equal` after zeroing positions where either array is NaN."""
    a = np.copy(_np(a))
    b = np.copy(_np(b))
    nan_mask = np.logical_or(np.isnan(a), np.isnan(b))
    a[nan_mask] = 0
    b[nan_mask] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f, exception_type, *args, **kwargs):
    """Raise AssertionError unless ``f(*args, **kwargs)`` raises ``exception_type``."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{getattr(f, '__name__', f)} did not raise "
                         f"{getattr(exception_type, '__name__', exception_type)}")


def same_array(array1, array2):
    """True when two NDArrays share memory (a write through one shows in the other)."""
    array1[:] += 1
    if not same(array1.asnumpy(), array2.asnumpy()):
        array1[:] -= 1
        return False
    array1[:] -= 1
    return same(array1.asnumpy(), array2.asnumpy())


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    """assert_almost_equal over (nested) tuples of arrays; None on either side skips."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def same_symbol_structure(sym1, sym2):
    """True when the two symbols' graphs have the same op at every node position."""
    nodes1 = json.loads(sym1.tojson())["nodes"]
    nodes2 = json.loads(sym2.tojson())["nodes"]
    return all(n1["op"] == n2["op"] for n1, n2 in zip(nodes1, nodes2))


def collapse_sum_like(a, shape):
    """Sum ``a`` over the axes that ``shape`` broadcasts (the reduction of a broadcast)."""
    assert len(a.shape) >= len(shape)
    if np.prod(shape) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    lead = len(a.shape) - len(shape)
    axes = list(range(lead))
    for i, s in enumerate(shape):
        if s != a.shape[i + lead]:
            assert s == 1
            axes.append(i + lead)
    return np.sum(a, axis=tuple(axes)).reshape(shape)


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """Reduce ``dat`` over one axis, several, or all (None) with a NumPy reduction."""
    if isinstance(axis, int):
        axis = [axis]
    else:
        axis = list(axis) if axis is not None else list(range(len(dat.shape)))
    ret = dat
    for i in reversed(sorted(axis)):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        keep = list(dat.shape)
        for i in axis:
            keep[i] = 1
        ret = ret.reshape(tuple(keep))
    return ret


def assign_each(the_input, function):
    """A float64 array of ``function`` applied to each element (a copy when None)."""
    if function is None:
        return np.array(the_input)
    out = np.zeros(the_input.shape)
    flat = out.reshape(-1)
    for i, v in enumerate(np.asarray(the_input).reshape(-1)):
        flat[i] = function(v)
    return out


def assign_each2(input1, input2, function):
    """A float64 array of ``function(x, y)`` over two same-shaped arrays (input1 when None)."""
    if function is None:
        return np.array(input1)
    assert input1.shape == input2.shape
    out = np.zeros(input1.shape)
    flat = out.reshape(-1)
    for i, (x, y) in enumerate(zip(np.asarray(input1).reshape(-1),
                                   np.asarray(input2).reshape(-1))):
        flat[i] = function(x, y)
    return out
