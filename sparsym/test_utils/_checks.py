"""Operator checks of mx.test_utils: forward/backward against expectations, finite
differences, consistency across contexts and dtypes, optimizers, timing."""
from __future__ import annotations

import time
import traceback
from collections import OrderedDict

import numpy as np

from .. import storage as st
from ..ndarray.ndarray import NDArray
from ._arrays import create_sparse_array, default_context, default_dtype, rand_ndarray
from ._compare import (
    assert_almost_equal,
    compare_ndarray_tuple,
    default_numeric_eps,
    get_tolerance,
    get_tols,
)

_FLOATS = (np.float16, np.float32, np.float64)


def _nd():
    from .. import ndarray
    return ndarray


def _sorted_dict(d):
    """The items of ``d`` ordered by key (random inputs are drawn in this order)."""
    return OrderedDict(sorted(d.items(), key=lambda t: t[0]))


def _check_dtype(dtype, allow_asnumpy=True):
    if not ((allow_asnumpy and isinstance(dtype, str) and dtype == "asnumpy")
            or dtype in _FLOATS):
        extra = " or 'asnumpy'" if allow_asnumpy else ""
        raise AssertionError(f"dtype must be float16, float32, float64{extra}; got {dtype!r}")


def _to_nd(v, ctx, dtype):
    """An NDArray from a numpy array (its own dtype when dtype is 'asnumpy'); NDArrays pass."""
    if isinstance(v, np.ndarray):
        return _nd().array(v, ctx=ctx, dtype=v.dtype if isinstance(dtype, str) else dtype)
    return v


def _parse_location(sym, location, ctx, dtype=default_dtype()):
    """{argument name: NDArray} from a list (in list_arguments order) or a dict."""
    assert isinstance(location, (dict, list, tuple))
    _check_dtype(dtype)
    if isinstance(location, dict):
        if set(location.keys()) != set(sym.list_arguments()):
            raise ValueError("Symbol arguments and keys of the given location do not match."
                             "symbol args:%s, location.keys():%s"
                             % (str(set(sym.list_arguments())), str(set(location.keys()))))
    else:
        location = dict(zip(sym.list_arguments(), location))
    return _sorted_dict({k: _to_nd(v, ctx, dtype) for k, v in location.items()})


def _parse_aux_states(sym, aux_states, ctx, dtype=default_dtype()):
    """{aux name: NDArray} from a list (list_auxiliary_states order) or a dict; None passes."""
    _check_dtype(dtype)
    if aux_states is None:
        return None
    if isinstance(aux_states, dict):
        if set(aux_states.keys()) != set(sym.list_auxiliary_states()):
            raise ValueError("Symbol aux_states names and given aux_states do not match."
                             "symbol aux_names:%s, aux_states.keys:%s"
                             % (str(set(sym.list_auxiliary_states())),
                                str(set(aux_states.keys()))))
    else:
        aux_states = dict(zip(sym.list_auxiliary_states(), aux_states))
    return {k: _nd().array(v, ctx=ctx, dtype=v.dtype if isinstance(dtype, str) else dtype)
            for k, v in aux_states.items()}


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """Forward ``sym`` on numpy inputs given by name; numpy output(s)."""
    ctx = ctx or default_context()
    exe = sym.bind(ctx, args={k: _nd().array(v) for k, v in inputs.items()})
    exe.forward(is_train=is_train)
    outs = [x.asnumpy() for x in exe.outputs]
    return outs[0] if len(outs) == 1 else outs


def _set_as(dst, value, dtype):
    """Write numpy ``value`` into the executor array ``dst``, keeping dst's storage type."""
    nd = _nd()
    src = nd.array(value, dtype=dtype)
    if dst.stype != "default":
        src = nd.cast_storage(src, stype=dst.stype)
    src.copyto(dst)


def numeric_grad(executor, location, aux_states=None, eps=1e-4, use_forward_train=True,
                 dtype=default_dtype()):
    """Central differences of ``sum(executor.outputs[0])`` w.r.t. each float input.

    Parameters
    ----------
    executor : Executor
    location : dict of str -> np.ndarray
        The point; every argument of the executor.
    aux_states : dict of str -> np.ndarray, optional
        Restored before every forward.
    eps : float
        Total step (x + eps/2 vs x - eps/2).
    use_forward_train : bool
    dtype : float16, float32 or float64

    Returns
    -------
    dict of str -> np.ndarray
    """
    _check_dtype(dtype, allow_asnumpy=False)
    approx = {k: np.zeros(v.shape, dtype=dtype) for k, v in location.items()}
    for k, v in location.items():
        if executor.arg_dict[k].stype == "default":
            _set_as(executor.arg_dict[k], v, dtype)
    location = {k: np.array(v, order="C") for k, v in location.items()}
    for k, v in location.items():
        if v.dtype.kind != "f":
            continue
        dst = executor.arg_dict[k]
        old = v.copy()
        flat = v.reshape(-1)
        for i in range(flat.size):
            outs = []
            for step in (eps / 2.0, -eps):
                flat[i] += step
                _set_as(dst, v, dtype)
                if aux_states is not None:
                    for key, val in aux_states.items():
                        _set_as(executor.aux_dict[key], val, dtype)
                executor.forward(is_train=use_forward_train)
                outs.append(executor.outputs[0].asnumpy())
            approx[k].reshape(-1)[i] = (outs[0] - outs[1]).sum() / eps
            flat[i] = old.reshape(-1)[i]
        _set_as(dst, old, dtype)
    return approx


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=default_dtype()):
    """Check the backward pass of ``sym`` against finite differences.

    The symbol's output is multiplied by a fixed random projection and wrapped in
    ``make_loss``; the gradient of that scalar objective is compared with central
    differences of step ``numeric_eps`` (by dtype: 2**-6, 2**-9, 2**-14).

    Parameters
    ----------
    sym : Symbol
    location : list or dict of np.ndarray
        Values of all arguments.
    aux_states : list or dict, optional
    numeric_eps, rtol, atol : float, optional
    grad_nodes : None, list or dict of name -> grad_req
        Arguments to check ('write', 'add' or 'null' for a dict).
    use_forward_train : bool
    ctx : Context, optional
    grad_stype_dict : dict of name -> stype, optional
        Storage types of the gradient arrays.
    dtype : float16, float32 or float64
    """
    _check_dtype(dtype, allow_asnumpy=False)
    nd = _nd()
    from .. import symbol as _sym
    ctx = ctx or default_context()
    location = _parse_location(sym=sym, location=location, ctx=ctx, dtype=dtype)
    location_npy = {k: v.asnumpy() for k, v in location.items()}
    aux_states = _parse_aux_states(sym=sym, aux_states=aux_states, ctx=ctx, dtype=dtype)
    aux_npy = None if aux_states is None else {k: v.asnumpy() for k, v in aux_states.items()}
    if grad_nodes is None:
        grad_nodes = sym.list_arguments()
        grad_req = {k: "write" for k in grad_nodes}
    elif isinstance(grad_nodes, (list, tuple)):
        grad_nodes = list(grad_nodes)
        grad_req = {k: "write" for k in grad_nodes}
    elif isinstance(grad_nodes, dict):
        grad_req = grad_nodes.copy()
        grad_nodes = list(grad_nodes.keys())
    else:
        raise ValueError(f"grad_nodes must be None, a list or a dict, got {type(grad_nodes)}")

    _, out_shape, _ = sym.infer_shape(**{k: v.shape for k, v in location.items()})
    out = _sym.make_loss(sym * _sym.Variable("__random_proj"))
    location = dict(location)
    location["__random_proj"] = nd.array(np.random.rand(*out_shape[0]) + 0.1, ctx=ctx,
                                         dtype=dtype)
    grads_npy = {k: np.random.normal(0, 0.01, size=location[k].shape) for k in grad_nodes}
    grads_npy["__random_proj"] = np.random.normal(0, 0.01, size=out_shape[0])
    args_grad = {k: nd.array(v, ctx=ctx, dtype=dtype) for k, v in grads_npy.items()}
    if grad_stype_dict is not None:
        assert isinstance(grad_stype_dict, dict), "grad_stype_dict must be a dict"
        for k, v in grad_stype_dict.items():
            if k in args_grad and v in st.STYPE_ID and v not in ("default", "undefined"):
                args_grad[k] = nd.zeros(args_grad[k].shape, ctx=ctx, dtype=args_grad[k].dtype,
                                        stype=v)
    executor = out.bind(ctx, grad_req=grad_req, args=location, args_grad=args_grad,
                        aux_states=aux_states)
    if len(executor.arg_arrays) != len(location):
        raise ValueError("Executor arg_arrays and and location len do not match."
                         "Got %d inputs and %d locations"
                         % (len(executor.arg_arrays), len(location)))
    assert len(executor.outputs) == 1
    executor.forward(is_train=True)
    eps = get_tolerance(executor.outputs[0], numeric_eps, default_numeric_eps())
    if dtype in (np.float32, np.float16):
        assert eps >= 1e-5, "numeric_eps below 1e-5 needs float64"
    executor.backward()
    symbolic = executor.grad_dict
    numeric = numeric_grad(executor, location_npy, aux_npy, eps=eps,
                           use_forward_train=use_forward_train, dtype=dtype)
    for name in grad_nodes:
        names = ("NUMERICAL_%s" % name, "BACKWARD_%s" % name)
        req = grad_req[name]
        if req == "write":
            assert_almost_equal(numeric[name], symbolic[name], rtol, atol, names)
        elif req == "add":
            assert_almost_equal(numeric[name], symbolic[name].asnumpy() - grads_npy[name],
                                rtol, atol, names)
        elif req == "null":
            assert_almost_equal(grads_npy[name], symbolic[name], rtol, atol, names)
        else:
            raise ValueError("Invalid grad_req %s for argument %s" % (req, name))


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=default_dtype()):
    """Forward ``sym`` at ``location`` and compare each output with ``expected``.

    Parameters
    ----------
    sym : Symbol
    location : list or dict of np.ndarray
    expected : list or dict (by output name) of np.ndarray
    rtol, atol : float, optional
    aux_states : list or dict, optional
    ctx : Context, optional
    equal_nan : bool
    dtype : float16, float32, float64 or "asnumpy" (each input keeps its numpy dtype)

    Returns
    -------
    list of NDArray
        The executor's outputs.
    """
    _check_dtype(dtype)
    nd = _nd()
    ctx = ctx or default_context()
    location = _parse_location(sym=sym, location=location, ctx=ctx, dtype=dtype)
    aux_states = _parse_aux_states(sym=sym, aux_states=aux_states, ctx=ctx, dtype=dtype)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    grads = {k: nd.zeros(v.shape, ctx=ctx, dtype=v.dtype if isinstance(dtype, str) else dtype)
             for k, v in location.items()}
    executor = sym.bind(ctx=ctx, args=location, args_grad=grads, aux_states=aux_states)
    executor.forward(is_train=False)
    for name, expect, output in zip(sym.list_outputs(), expected, executor.outputs):
        assert_almost_equal(expect, output, rtol, atol,
                            ("EXPECTED_%s" % name, "FORWARD_%s" % name), equal_nan=equal_nan)
    return executor.outputs


def _out_grads_nd(out_grads, ctx, dtype):
    if isinstance(out_grads, (tuple, list)):
        return [_to_nd(a, ctx, dtype) for a in out_grads]
    if isinstance(out_grads, dict):
        return {k: _to_nd(v, ctx, dtype) for k, v in out_grads.items()}
    assert out_grads is None or isinstance(out_grads, NDArray)
    return out_grads


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req="write", ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=default_dtype()):
    """Forward and backward ``sym`` with head gradients ``out_grads``; compare the input
    gradients with ``expected`` (gradient buffers start dirty, so 'add' and 'null' are
    checked against their starting values).

    Parameters
    ----------
    sym : Symbol
    location : list or dict of np.ndarray
    out_grads : None, list or dict of np.ndarray
    expected : list or dict (by argument name) of np.ndarray
    rtol, atol : float, optional
    aux_states : list or dict, optional
    grad_req : str, list or dict
    ctx : Context, optional
    grad_stypes : dict of name -> stype, optional
    equal_nan : bool
    dtype : float16, float32, float64 or "asnumpy"

    Returns
    -------
    dict of str -> NDArray
        The gradient arrays.
    """
    _check_dtype(dtype)
    nd = _nd()
    ctx = ctx or default_context()
    location = _parse_location(sym=sym, location=location, ctx=ctx, dtype=dtype)
    aux_states = _parse_aux_states(sym=sym, aux_states=aux_states, ctx=ctx, dtype=dtype)
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(sym.list_arguments(), expected))
    grads_npy = {k: np.random.normal(size=v.shape) for k, v in _sorted_dict(expected).items()}
    grads = {}
    for k, v in grads_npy.items():
        gdt = np.asarray(expected[k]).dtype if isinstance(dtype, str) else dtype
        stype = (grad_stypes or {}).get(k)
        if stype is not None and stype != "default":
            grads[k] = create_sparse_array(v.shape, stype, density=0.0)
        else:
            grads[k] = nd.array(v, ctx=ctx, dtype=gdt)
    if isinstance(grad_req, str):
        grad_req = {k: grad_req for k in sym.list_arguments()}
    elif isinstance(grad_req, (list, tuple)):
        grad_req = dict(zip(sym.list_arguments(), grad_req))
    executor = sym.bind(ctx=ctx, args=location, args_grad=grads, aux_states=aux_states,
                        grad_req=grad_req)
    executor.forward(is_train=True)
    executor.backward(_out_grads_nd(out_grads, ctx, dtype))
    for name in expected:
        names = ("EXPECTED_%s" % name, "BACKWARD_%s" % name)
        req = grad_req[name]
        if req == "write":
            assert_almost_equal(expected[name], grads[name], rtol, atol, names,
                                equal_nan=equal_nan)
        elif req == "add":
            assert_almost_equal(expected[name], grads[name].asnumpy() - grads_npy[name],
                                rtol, atol, names, equal_nan=equal_nan)
        elif req == "null":
            assert_almost_equal(grads_npy[name], grads[name], rtol, atol, names,
                                equal_nan=equal_nan)
        else:
            raise ValueError("Invalid grad_req %s for argument %s" % (req, name))
    return grads


def check_speed(sym, location=None, ctx=None, N=20, grad_req=None, typ="whole", **kwargs):
    """Seconds per run of ``sym``: forward+backward (typ='whole') or forward only."""
    ctx = ctx or default_context()
    grad_req = grad_req or "write"
    if location is None:
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx, **kwargs)
        location = {k: np.random.normal(size=arr.shape, scale=1.0)
                    for k, arr in exe.arg_dict.items()}
    else:
        assert isinstance(location, dict), 'Expect dict, get "location"=%s' % str(location)
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx,
                              **{k: v.shape for k, v in location.items()})
    for name, value in location.items():
        exe.arg_dict[name][:] = value.astype(exe.arg_dict[name].dtype)
    if typ not in ("whole", "forward"):
        raise ValueError('typ can only be "whole" or "forward".')
    train = typ == "whole"

    def run():
        exe.forward(is_train=train)
        if train:
            exe.backward(out_grads=exe.outputs)

    run()
    tic = time.time()
    for _ in range(N):
        run()
    return (time.time() - tic) / N


def _smaller_dtype(dt1, dt2):
    """The less precise of two dtypes (dt1 when dt2 is None)."""
    return dt1 if dt2 is None or np.dtype(dt1).itemsize < np.dtype(dt2).itemsize else dt2


def _check_or_report(arr, gtarr, rtol, atol, equal_nan, raise_on_err, what):
    try:
        assert_almost_equal(arr, gtarr, rtol=rtol, atol=atol, equal_nan=equal_nan)
    except AssertionError as e:
        print(what)
        traceback.print_exc()
        if raise_on_err:
            raise
        print(str(e))


def check_consistency(sym, ctx_list, scale=1.0, grad_req="write", arg_params=None,
                      aux_params=None, rtol=None, atol=None, raise_on_err=True,
                      ground_truth=None, equal_nan=False, use_uniform=False,
                      rand_type=np.float64):
    """Check that ``sym`` gives the same outputs and gradients in every configuration.

    Parameters
    ----------
    sym : Symbol or list of Symbol
    ctx_list : list of dict
        simple_bind keywords per configuration: 'ctx', input shapes, 'type_dict'...
    scale : float
        Standard deviation (or half-range with use_uniform) of the random inputs.
    grad_req : str
    arg_params, aux_params : dict, optional
        Input values to use instead of random ones.
    rtol, atol : float or dict of dtype -> float, optional
    raise_on_err : bool
    ground_truth : dict, optional
        Reference outputs and gradients; by default the most precise configuration's.
    equal_nan, use_uniform : bool
    rand_type : dtype
        dtype the random inputs are drawn in.

    Returns
    -------
    dict
        The ground truth used.
    """
    assert len(ctx_list) > 1
    from ..symbol import Symbol
    nd = _nd()
    syms = [sym] * len(ctx_list) if isinstance(sym, Symbol) else list(sym)
    assert len(syms) == len(ctx_list)
    output_names = syms[0].list_outputs()
    arg_names = syms[0].list_arguments()
    exes = []
    for s, ctx in zip(syms, ctx_list):
        assert s.list_arguments() == arg_names
        assert s.list_outputs() == output_names
        exes.append(s.simple_bind(grad_req=grad_req, **ctx))
    arg_params = {} if arg_params is None else arg_params
    aux_params = {} if aux_params is None else aux_params
    for n, arr in _sorted_dict(exes[0].arg_dict).items():
        if n not in arg_params:
            if use_uniform:
                arg_params[n] = np.random.uniform(low=-0.92 * scale, high=0.92 * scale,
                                                  size=arr.shape).astype(rand_type)
            else:
                arg_params[n] = np.random.normal(size=arr.shape, scale=scale).astype(rand_type)
    for n in exes[0].aux_dict:
        aux_params.setdefault(n, 0)
    for exe in exes:
        for name, arr in exe.arg_dict.items():
            arr[:] = arg_params[name]
        for name, arr in exe.aux_dict.items():
            arr[:] = aux_params[name]
        if grad_req == "add":
            for arr in exe.grad_arrays:
                if arr is not None:
                    arr[:] = np.zeros(arr.shape, dtype=arr.dtype)
    dtypes = [np.dtype(exe.outputs[0].dtype) for exe in exes]
    gt_idx = int(np.argmax([d.itemsize for d in dtypes]))
    gt = ground_truth
    if gt is None:
        gt = exes[gt_idx].output_dict.copy()
        if grad_req != "null":
            gt.update(exes[gt_idx].grad_dict)
    for exe in exes:
        exe.forward(is_train=False)
    for i, exe in enumerate(exes):
        if i == gt_idx:
            continue
        for name, arr in zip(output_names, exe.outputs):
            _check_or_report(arr, gt[name], rtol, atol, equal_nan, raise_on_err,
                             "Predict Err: ctx %d vs ctx %d at %s" % (i, gt_idx, name))
    if grad_req == "null":
        return gt
    for exe in exes:
        exe.forward(is_train=True)
    least = [out.dtype for out in exes[0].outputs]
    for exe in exes:
        least = [_smaller_dtype(o.dtype, dt) for o, dt in zip(exe.outputs, least)]
    golden = [o.astype(dt).asnumpy() for o, dt in zip(exes[0].outputs, least)]
    for exe in exes:
        exe.backward([nd.array(g, ctx=exe._ctx, dtype=o.dtype).tostype(o.stype)
                      for g, o in zip(golden, exe.outputs)])
    for i, exe in enumerate(exes):
        if i == gt_idx:
            continue
        for name, arr in zip(output_names + arg_names, exe.outputs + exe.grad_arrays):
            if gt[name] is None:
                assert arr is None
                continue
            gtarr = gt[name]
            rt, at = rtol, atol
            small_arr = _smaller_dtype(arr.dtype, dtypes[i])
            small_gt = _smaller_dtype(gtarr.dtype, dtypes[gt_idx])
            if small_arr != arr.dtype or small_gt != gtarr.dtype:
                rt, at = get_tols(arr.astype(small_arr), gtarr.astype(small_gt), rtol, atol)
            _check_or_report(arr, gtarr, rt, at, equal_nan, raise_on_err,
                             f"Train Err: {np.dtype(arr.dtype).name} {arr.ctx} ctx {i} vs "
                             f"{np.dtype(gtarr.dtype).name} {gtarr.ctx} ctx {gt_idx} at {name}")
    return gt


def check_gluon_hybridize_consistency(net_builder, data_l, numpy_func=None, test_grad=True,
                                      rtol=1E-4, atol=1E-4):
    """Check that a HybridBlock gives the same outputs (and input gradients) hybridized
    and not, and optionally the same as ``numpy_func``."""
    from .. import autograd, initializer
    saved_out = saved_grads = params_init = None

    class _FromArrays(initializer.Initializer):
        """Initialise every parameter from saved numpy arrays by name."""

        def __init__(self, params):
            super().__init__()
            self._params = params

        def _init_weight(self, name, arr):
            arr[()] = self._params[name]

    for hybridize in (False, True):
        for use_autograd in ([False, True] if test_grad else [False]):
            net = net_builder(prefix="net_")
            net.initialize(params_init) if params_init is not None else net.initialize()
            if hybridize:
                net.hybridize()
            inputs = [x.copy() for x in data_l]
            if use_autograd:
                for x in inputs:
                    x.attach_grad()
                with autograd.record():
                    out = net(*inputs)
                out.backward(out)
            else:
                out = net(*inputs)
            if params_init is None:
                params_init = _FromArrays({k: v.data().asnumpy()
                                           for k, v in net.collect_params().items()})
            if saved_out is None:
                saved_out = out.asnumpy()
            else:
                assert_almost_equal(out.asnumpy(), saved_out, rtol=rtol, atol=atol)
            if use_autograd:
                if saved_grads is None:
                    saved_grads = [x.grad.asnumpy() for x in inputs]
                else:
                    for x, g in zip(inputs, saved_grads):
                        assert_almost_equal(x.grad.asnumpy(), g, rtol=rtol, atol=atol)
    if numpy_func is not None:
        assert_almost_equal(saved_out, numpy_func(*[x.asnumpy() for x in data_l]),
                            rtol=rtol, atol=atol)


def retry(n):
    """Decorator: rerun a stochastic test up to ``n`` times while it fails an assertion."""
    assert n > 0

    def decorate(f):
        def wrapper(*args, **kwargs):
            for i in range(n):
                try:
                    f(*args, **kwargs)
                    return
                except AssertionError:
                    if i == n - 1:
                        raise
        wrapper.__name__ = f.__name__
        wrapper.__doc__ = f.__doc__
        return wrapper
    return decorate


def compare_optimizer(opt1, opt2, shape, dtype, w_stype="default", g_stype="default",
                      rtol=1e-4, atol=1e-5, compare_states=True, ntensors=1):
    """Apply one update of ``opt1`` and ``opt2`` to the same weight and gradient and
    compare weights (and states); opt1 sees dense copies of sparse inputs."""
    from .. import random as mxrand
    ctx = default_context()
    if not isinstance(shape, list):
        assert ntensors == 1
        pairs = []
        for stype, density in ((w_stype, 1), (g_stype, None)):
            if stype == "default":
                a2 = mxrand.uniform(shape=shape, ctx=ctx, dtype=dtype)
                pairs.append((a2.copyto(ctx), a2))
            elif stype in ("row_sparse", "csr"):
                a2 = rand_ndarray(shape, stype, density=density, dtype=dtype)
                pairs.append((a2.copyto(ctx).tostype("default"), a2))
            else:
                raise TypeError(f"compare_optimizer: storage type {stype!r} not supported")
        (w1, w2), (g1, g2) = pairs
        s1 = opt1.create_state_multi_precision(0, w1)
        s2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(s1, s2)
        opt1.update_multi_precision(0, w1, g1, s1)
        opt2.update_multi_precision(0, w2, g2, s2)
        if compare_states:
            compare_ndarray_tuple(s1, s2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    w1 = tuple(mxrand.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    g1 = tuple(mxrand.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    w2 = tuple(w.copy() for w in w1)
    g2 = tuple(g.copy() for g in g1)
    s2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, s2)
    for i in range(ntensors):
        s1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], s1)
        if compare_states:
            compare_ndarray_tuple(s1, s2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)
