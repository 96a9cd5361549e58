"""Testing helpers with MXNet's names (mx.test_utils)."""
from __future__ import annotations

import contextlib
import os

import numpy as np

from . import storage as st
from .base import MXNetError
from .context import Context, cpu
from .ndarray.ndarray import NDArray, wrap
from .random import rng

__all__ = ["default_context", "set_default_context", "rand_shape_2d", "rand_shape_3d",
           "rand_shape_nd", "rand_coord_2d", "rand_ndarray", "rand_sparse_ndarray",
           "create_sparse_array", "create_sparse_array_zd", "shuffle_csr_column_indices",
           "random_arrays", "random_sample", "assert_almost_equal", "almost_equal", "same",
           "same_array", "assign_each", "assign_each2", "environment", "assert_exception",
           "discard_stderr", "compare_optimizer", "check_numeric_gradient",
           "check_symbolic_forward", "check_symbolic_backward", "np_reduce"]

_default_ctx = [None]


def default_context():
    """The context tests run on (cpu(0) unless set)."""
    return _default_ctx[0] or cpu()


def set_default_context(ctx):
    _default_ctx[0] = ctx if isinstance(ctx, Context) else Context(ctx)


def rand_shape_2d(dim0=10, dim1=10):
    return int(rng().integers(1, dim0 + 1)), int(rng().integers(1, dim1 + 1))


def rand_shape_3d(dim0=10, dim1=10, dim2=10):
    return (int(rng().integers(1, dim0 + 1)), int(rng().integers(1, dim1 + 1)),
            int(rng().integers(1, dim2 + 1)))


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return tuple(int(x) for x in rng().integers(low, dim + 1, size=num_dim))


def rand_coord_2d(x_low, x_high, y_low, y_high):
    """A random (x, y) with x in [x_low, x_high), y in [y_low, y_high)."""
    return int(rng().integers(x_low, x_high)), int(rng().integers(y_low, y_high))


def random_arrays(*shapes):
    """Standard-normal float32 numpy arrays (a float for shape ()); one or a list."""
    arrays = [np.array(rng().standard_normal(), dtype=np.float32) if len(s) == 0 else
              rng().standard_normal(s).astype(np.float32) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_sample(population, k):
    """k distinct items of ``population`` in random order."""
    population = list(population)
    return [population[i] for i in rng().permutation(len(population))[:k]]


def shuffle_csr_column_indices(csr):
    """Shuffle the column indices (and values) within each row of a CSRNDArray, in place."""
    raw = csr._raw
    ip = raw.indptr
    for i in range(raw.shape[0]):
        a, b = int(ip[i]), int(ip[i + 1])
        if b - a > 1:
            perm = rng().permutation(b - a) + a
            raw.indices[a:b] = raw.indices[perm]
            raw.data[a:b] = raw.data[perm]
    return csr


def _powerlaw_csr(shape, density, dtype):
    """Rows with geometrically growing nnz (MXNet's powerlaw generator, re-stated)."""
    m, n = shape
    total = int(np.ceil(density * m * n))
    data, indices, indptr = [], [], [0]
    unused, k = total, 1
    for _ in range(m):
        take = min(k, n, unused)
        cols = np.sort(rng().choice(n, size=take, replace=False)) if take else np.zeros(0)
        indices.append(cols)
        data.append(rng().uniform(0, 1, size=take))
        indptr.append(indptr[-1] + take)
        unused -= take
        k = min(2 * k, n)
    ind = np.concatenate(indices).astype(np.int64) if indices else np.zeros(0, np.int64)
    dat = np.concatenate(data).astype(dtype) if data else np.zeros(0, dtype)
    return st.CSR(dat, ind, np.asarray(indptr, np.int64), shape)


def rand_sparse_ndarray(shape, stype, density=None, dtype=None, distribution=None,
                        data_init=None, rsp_indices=None, modifier_func=None,
                        shuffle_csr_indices=False, ctx=None):
    """Random sparse array and its parts: (arr, (data, indices[, indptr])).

    density: fraction of non-zeros (csr) or of rows present (row_sparse).
    distribution: 'uniform' (default) or 'powerlaw' (csr only).
    """
    density = rng().random() if density is None else density
    dtype = np.dtype(dtype or np.float32)
    distribution = distribution or "uniform"
    if stype == "row_sparse":
        if rsp_indices is not None:
            idx = np.unique(np.asarray(rsp_indices, np.int64))
        else:
            idx = np.flatnonzero(rng().random(shape[0]) < density).astype(np.int64)
        data = rng().uniform(0, 1, size=(len(idx),) + tuple(shape[1:])).astype(dtype)
        if data_init is not None:
            data[:] = data_init
        if modifier_func is not None:
            data = np.vectorize(modifier_func)(data).astype(dtype)
        arr = wrap(st.RSP(np.ascontiguousarray(data), idx, tuple(shape)), ctx)
        return arr, (arr.data, arr.indices)
    if stype != "csr":
        raise MXNetError(f"unknown storage type {stype!r}")
    if len(shape) != 2:
        raise MXNetError(f"csr needs a 2-D shape, got {shape}")
    if distribution == "powerlaw":
        raw = _powerlaw_csr(tuple(shape), density, dtype)
    elif distribution == "uniform":
        m, n = shape
        total = m * n
        nnz = int(rng().binomial(total, density)) if total else 0
        flat = np.sort(rng().choice(total, size=nnz, replace=False)) if nnz else \
            np.zeros(0, np.int64)
        rows, cols = np.divmod(flat, n)
        indptr = np.zeros(m + 1, np.int64)
        np.cumsum(np.bincount(rows, minlength=m), out=indptr[1:])
        raw = st.CSR(rng().uniform(0, 1, size=nnz).astype(dtype), cols.astype(np.int64), indptr,
                     (m, n))
    else:
        raise MXNetError(f"Distribution {distribution} not supported")
    if data_init is not None:
        raw.data[:] = data_init
    if modifier_func is not None:
        raw.data = np.vectorize(modifier_func)(raw.data).astype(dtype)
    if shuffle_csr_indices:
        for i in range(raw.shape[0]):
            a, b = raw.indptr[i], raw.indptr[i + 1]
            perm = rng().permutation(b - a) + a
            raw.indices[a:b] = raw.indices[perm]
            raw.data[a:b] = raw.data[perm]
    arr = wrap(raw, ctx)
    return arr, (arr.data, arr.indices, arr.indptr)


def rand_ndarray(shape, stype="default", density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """A random array of any storage type.

    Dense values are standard normal (MXNet's ``random_arrays``); sparse ones come from
    :func:`rand_sparse_ndarray` (density, distribution 'uniform'|'powerlaw',
    shuffle_csr_indices for unsorted columns, modifier_func applied to stored values).
    """
    if stype == "default":
        arr = rng().standard_normal(size=shape).astype(np.dtype(dtype or np.float32))
        if modifier_func is not None:
            arr = np.vectorize(modifier_func)(arr).astype(arr.dtype)
        return wrap(arr, ctx)
    return rand_sparse_ndarray(shape, stype, density=density, dtype=dtype,
                               modifier_func=modifier_func,
                               shuffle_csr_indices=shuffle_csr_indices,
                               distribution=distribution, ctx=ctx)[0]


def create_sparse_array(shape, stype, data_init=None, rsp_indices=None, dtype=None,
                        modifier_func=None, density=0.5, shuffle_csr_indices=False):
    """A random sparse array (MXNet's helper)."""
    if stype == "row_sparse":
        return rand_sparse_ndarray(shape, stype, density=density, dtype=dtype,
                                   data_init=data_init, rsp_indices=rsp_indices,
                                   modifier_func=modifier_func)[0]
    return rand_sparse_ndarray(shape, stype, density=density, dtype=dtype, data_init=data_init,
                               modifier_func=modifier_func,
                               shuffle_csr_indices=shuffle_csr_indices)[0]


def create_sparse_array_zd(shape, stype, density, data_init=None, rsp_indices=None,
                           dtype=None, modifier_func=None, shuffle_csr_indices=False):
    """Like create_sparse_array, allowing zero density."""
    return create_sparse_array(shape, stype, data_init, rsp_indices, dtype, modifier_func,
                               density, shuffle_csr_indices)


def _as_np(x):
    if isinstance(x, NDArray):
        return x.asnumpy()
    return np.asarray(x)


def _default_tol(a, b):
    dt = np.result_type(a.dtype, b.dtype) if a.dtype.kind == "f" or b.dtype.kind == "f" else None
    if dt == np.float16:
        return 1e-2, 1e-4
    if dt == np.float32:
        return 1e-4, 1e-5
    return 1e-5, 1e-20


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    """True when |a - b| <= atol + rtol*|b| everywhere."""
    a, b = _as_np(a), _as_np(b)
    r, t = _default_tol(a, b)
    return bool(np.allclose(a, b, rtol=r if rtol is None else rtol,
                            atol=t if atol is None else atol, equal_nan=equal_nan))


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Raise AssertionError naming the worst mismatch when a and b differ."""
    a, b = _as_np(a), _as_np(b)
    if not use_broadcast and a.shape != b.shape:
        raise AssertionError(f"shapes differ: {names[0]}{a.shape} vs {names[1]}{b.shape}")
    r, t = _default_tol(a, b)
    rtol = r if rtol is None else rtol
    atol = t if atol is None else atol
    if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    a_b, b_b = np.broadcast_arrays(a, b)
    err = np.abs(a_b.astype(np.float64) - b_b) - (atol + rtol * np.abs(b_b.astype(np.float64)))
    err = np.where(np.isnan(err), np.inf, err)
    idx = np.unravel_index(np.argmax(err), err.shape) if err.size else ()
    raise AssertionError(
        f"Items are not equal (rtol={rtol}, atol={atol}):\n Location of maximum error: {idx}, "
        f"{names[0]}={a_b[idx] if err.size else a}, {names[1]}={b_b[idx] if err.size else b}\n"
        f" {names[0]}: {a}\n {names[1]}: {b}")


def same(a, b):
    """Exact equality of values (and shapes)."""
    return np.array_equal(_as_np(a), _as_np(b))


def assign_each(the_input, function):
    """Apply ``function`` to every element of a numpy array (a new array)."""
    if function is None:
        return np.array(the_input)
    return np.vectorize(function)(the_input)


def assign_each2(input1, input2, function):
    """Apply ``function`` elementwise to two numpy arrays of one shape (a new array)."""
    if function is None:
        return np.array(input1)
    return np.vectorize(function)(input1, input2)


def same_array(array1, array2):
    """True when the two NDArrays share their memory."""
    r1, r2 = array1._raw, array2._raw
    if isinstance(r1, np.ndarray) and isinstance(r2, np.ndarray):
        return np.shares_memory(r1, r2)
    return r1 is r2


@contextlib.contextmanager
def environment(*args):
    """Temporarily set environment variables: environment('K', 'v') or environment({...})."""
    if len(args) == 2:
        env = {args[0]: args[1]}
    elif len(args) == 1 and isinstance(args[0], dict):
        env = args[0]
    else:
        raise ValueError("environment takes (name, value) or a dict")
    old = {k: os.environ.get(k) for k in env}
    try:
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = str(v)
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def discard_stderr():
    """Silence writes to file descriptor 2 (C-level logging) inside the block."""
    import sys
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


def compare_optimizer(opt1, opt2, shape, dtype, w_stype="default", g_stype="default",
                      rtol=1e-4, atol=1e-5, compare_states=True, ntensors=1):
    """Run one update of two optimizers on the same random weight/gradient and compare
    the weights (and states); MXNet's helper for optimizer tests."""
    from .ndarray import array
    shapes = shape if ntensors > 1 else [shape]
    for i, shp in enumerate(shapes):
        if w_stype == "default":
            w2 = array(rng().uniform(-1, 1, shp).astype(np.dtype(dtype)))
        else:
            w2 = rand_ndarray(shp, w_stype, density=1, dtype=dtype)
        w1 = w2.copy()
        if g_stype == "default":
            g2 = array(rng().uniform(-1, 1, shp).astype(np.dtype(dtype)))
        else:
            g2 = rand_ndarray(shp, g_stype, dtype=dtype)
        g1 = g2.copy()
        s1 = opt1.create_state_multi_precision(i, w1)
        s2 = opt2.create_state_multi_precision(i, w2)
        if compare_states:
            _compare_states(s1, s2, rtol, atol)
        opt1.update_multi_precision(i, w1, g1, s1)
        opt2.update_multi_precision(i, w2, g2, s2)
        if compare_states:
            _compare_states(s1, s2, rtol, atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol, names=("opt1_weight", "opt2_weight"))


def _compare_states(s1, s2, rtol, atol):
    if s1 is None or s2 is None:
        return
    if isinstance(s1, (tuple, list)):
        for a, b in zip(s1, s2):
            _compare_states(a, b, rtol, atol)
        return
    assert_almost_equal(s1, s2, rtol=rtol, atol=atol, names=("opt1_state", "opt2_state"))


def assert_exception(f, exception_type, *args, **kwargs):
    """Assert that ``f(*args, **kwargs)`` raises ``exception_type``."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{getattr(f, '__name__', f)} did not raise {exception_type.__name__}")


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """Reduce over several axes with a numpy function (MXNet's helper)."""
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


# ---------------------------------------------------------------------- gradient checks
def _bind_inputs(sym, location, ctx, dtype, grad_req="write", grad_stype_dict=None, aux=None):
    from .ndarray import array
    names = sym.list_arguments()
    if isinstance(location, dict):
        loc = {k: (v if isinstance(v, NDArray) else array(v, dtype=dtype)) for k, v in
               location.items()}
    else:
        loc = {n: (v if isinstance(v, NDArray) else array(v, dtype=dtype))
               for n, v in zip(names, location)}
    for n in names:
        if n not in loc:
            raise MXNetError(f"location is missing argument {n!r}")
    grads = {}
    for n in names:
        stype = (grad_stype_dict or {}).get(n, "default")
        grads[n] = wrap(st.zeros_raw(stype, loc[n].shape, np.dtype(loc[n].dtype)), ctx)
    aux_states = None
    if aux is not None:
        aux_states = {k: (v if isinstance(v, NDArray) else array(v, dtype=dtype))
                      for k, v in (aux.items() if isinstance(aux, dict) else
                                   zip(sym.list_auxiliary_states(), aux))}
    exe = sym.bind(ctx, args=loc, args_grad=grads, grad_req=grad_req, aux_states=aux_states)
    return exe, loc, grads


def check_symbolic_forward(sym, location, expected, rtol=1e-4, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=np.float32):
    """Forward ``sym`` on ``location`` and compare every output with ``expected``."""
    ctx = ctx or default_context()
    exe, _, _ = _bind_inputs(sym, location, ctx, dtype, "null", aux=aux_states)
    outs = exe.forward(is_train=False)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    for o, e, name in zip(outs, expected, sym.list_outputs()):
        assert_almost_equal(o, e, rtol=rtol, atol=atol, names=(f"FORWARD_{name}", "EXPECTED"),
                            equal_nan=equal_nan)
    return [o.asnumpy() for o in outs]


def check_symbolic_backward(sym, location, out_grads, expected, rtol=1e-5, atol=None,
                            aux_states=None, grad_req="write", ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=np.float32):
    """Backward with head gradients ``out_grads`` and compare input gradients."""
    ctx = ctx or default_context()
    exe, loc, grads = _bind_inputs(sym, location, ctx, dtype, grad_req, grad_stypes,
                                   aux=aux_states)
    exe.forward(is_train=True)
    from .ndarray import array
    og = None
    if out_grads is not None:
        og = [g if isinstance(g, NDArray) else array(g, dtype=dtype)
              for g in (out_grads if isinstance(out_grads, (list, tuple)) else [out_grads])]
    exe.backward(og)
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(sym.list_arguments(), expected))
    for name, e in expected.items():
        if e is None:
            continue
        assert_almost_equal(exe.grad_dict[name], e, rtol=rtol, atol=atol,
                            names=(f"BACKWARD_{name}", "EXPECTED"), equal_nan=equal_nan)
    return {k: v.asnumpy() for k, v in exe.grad_dict.items() if v is not None}


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=1e-3, rtol=1e-2,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=np.float64):
    """Compare the symbolic gradient of sum(outputs * random projection) with central
    differences, in ``dtype`` (float64 by default for tight checks)."""
    ctx = ctx or default_context()
    from .ndarray import array
    names = sym.list_arguments()
    if not isinstance(location, dict):
        location = dict(zip(names, location))
    loc = {k: _as_np(v).astype(dtype) for k, v in location.items()}
    grad_nodes = grad_nodes or [n for n in names if n in loc]
    if isinstance(grad_nodes, dict):
        grad_nodes = list(grad_nodes)
    exe, _, grads = _bind_inputs(sym, {k: array(v, dtype=dtype) for k, v in loc.items()}, ctx,
                                 dtype, {n: ("write" if n in grad_nodes else "null")
                                         for n in names}, grad_stype_dict, aux=aux_states)
    outs = exe.forward(is_train=use_forward_train)
    proj = [np.random.RandomState(7 + i).normal(0, 1, o.shape).astype(dtype)
            for i, o in enumerate(outs)]
    exe.backward([array(p, dtype=dtype) for p in proj])
    sym_grads = {n: exe.grad_dict[n].asnumpy() for n in grad_nodes}

    def f():
        res = exe.forward(is_train=use_forward_train)
        return sum(float((o.asnumpy().astype(np.float64) * p).sum()) for o, p in zip(res, proj))

    for n in grad_nodes:
        arr = exe.arg_dict[n]
        base = arr.asnumpy().astype(dtype)
        num = np.zeros(base.shape, np.float64)
        flat = base.reshape(-1)
        for i in range(flat.size):
            orig = flat[i]
            flat[i] = orig + numeric_eps
            arr[:] = base
            fp = f()
            flat[i] = orig - numeric_eps
            arr[:] = base
            fm = f()
            flat[i] = orig
            num.reshape(-1)[i] = (fp - fm) / (2 * numeric_eps)
        arr[:] = base
        assert_almost_equal(sym_grads[n], num, rtol=rtol, atol=atol if atol is not None else 1e-4,
                            names=(f"NUMERICAL_{n}", "BACKWARD"))
