"""NDArray: an eager array over a raw value (numpy array, CSR or RSP)."""
from __future__ import annotations

import ctypes
import numbers
import weakref

import numpy as np

from .. import profiler as _profiler
from .. import storage as st
from ..base import MXNetError, ParamError, ShapeError, StorageError, dtype_of, np_shape_active
from ..context import Context, current_context, require_usable
from ..ops.core.shape_codes import reshape_target
from ..profiler import RUN as _PROF
from .protocols import ArrayProtocols
from .tape import AUTOGRAD, STATE

# MXNet's name for the builtin ``slice`` (its module shadows ``slice`` with the operator)
py_slice = slice
# MXNet's stype ids, under the names its Python API uses
_HANDLES = weakref.WeakValueDictionary()  # id -> array handed out as a ctypes handle
_STORAGE_TYPE_STR_TO_ID = dict(st.STYPE_ID)
_STORAGE_TYPE_ID_TO_STR = {v: k for k, v in st.STYPE_ID.items()}

__all__ = ["NDArray", "wrap", "array", "zeros", "ones", "empty", "full", "arange", "waitall",
           "concatenate", "moveaxis"]

# MXNet's module keeps Python's slice under this name (its own ``slice`` is the operator)
py_slice = slice


def wrap(raw, ctx=None):
    """Wrap a raw value in the NDArray class of its storage type."""
    if isinstance(raw, st.CSR):
        cls = LATE.CSRNDArray
    elif isinstance(raw, st.RSP):
        cls = LATE.RowSparseNDArray
    else:
        cls = NDArray
        if not isinstance(raw, np.ndarray):
            raw = np.asarray(raw)
    obj = object.__new__(cls)
    obj._raw = raw
    obj._ctx = ctx if ctx is not None else current_context()
    obj.writable = True
    obj._ag = None
    return obj


def _raw_of(x):
    return x._raw if isinstance(x, NDArray) else x


class NDArray(ArrayProtocols):
    """A dense n-dimensional array on a (logical) cpu context.

    Operations run immediately; :meth:`wait_to_read` returns at once.

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.ones((2, 3))
    >>> (x * 2).asnumpy().tolist()
    [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]
    """

    # _ag: the autograd tape entry (node, output index) this array is, or None
    __slots__ = ("_raw", "_ctx", "writable", "_ag", "__weakref__")
    __array_priority__ = 1000.0

    def __init__(self, handle=None, writable=True):
        # MXNet's NDArray(handle): here a handle from ctypes.cast(arr, NDArrayHandle), as
        # monitor callbacks written for MXNet build (a view of the same storage)
        value = getattr(handle, "value", handle)
        src = _HANDLES.get(value) if isinstance(value, int) else None
        if src is None:
            raise MXNetError("NDArray cannot be constructed directly; use "
                             "mx.nd.array/zeros/... (or NDArray(handle) with a handle of an "
                             "existing array, ctypes.cast(arr, NDArrayHandle))")
        self._raw, self._ctx, self._ag = src._raw, src._ctx, None
        self.writable = bool(writable)

    @property
    def _as_parameter_(self):
        """This array as a ctypes handle (``ctypes.cast(arr, NDArrayHandle)``)."""
        _HANDLES[id(self)] = self
        return ctypes.c_void_p(id(self))

    # ------------------------------------------------------------------ properties
    @property
    def shape(self):
        return tuple(self._raw.shape)

    @property
    def dtype(self):
        """The elements' scalar type (``numpy.float32``...), the value MXNet 1.9.1 gives:
        ``x.dtype == np.float32``, ``x.dtype is np.float32`` and dict lookups keyed by
        scalar types hold; ``np.dtype(x.dtype)`` is the ``numpy.dtype``."""
        return self._raw.dtype.type

    @property
    def __numpy_dtype__(self):
        """NumPy's dtype protocol (NumPy >= 2.4): ``np.dtype(x)`` of an NDArray, which
        NumPy 2 no longer reads from a ``dtype`` that is a scalar type."""
        return np.dtype(self._raw.dtype)

    @property
    def stype(self):
        return st.stype_of(self._raw)

    @property
    def context(self):
        return self._ctx

    ctx = context

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def handle(self):
        """This array's handle (``NDArray(handle)`` views it, as MXNet's)."""
        return self._as_parameter_

    @property
    def T(self):
        return self.transpose()

    @property
    def grad(self):
        """The gradient buffer of a marked variable (:meth:`attach_grad`), else None."""
        ag = self._ag
        if ag is None or ag[0].op is not None:
            return None
        return ag[0].grad

    @property
    def _fresh_grad(self):
        """MXNet's flag: a backward pass wrote this variable's gradient since it was reset."""
        ag = self._ag
        return bool(ag is not None and ag[0].op is None and ag[0].fresh)

    @_fresh_grad.setter
    def _fresh_grad(self, value):
        ag = self._ag
        if ag is None or ag[0].op is not None:
            raise MXNetError("_fresh_grad: the array is not a marked variable (attach_grad)")
        ag[0].fresh = bool(value)

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        shape = "x".join(str(s) for s in self.shape)
        return f"\n{self.asnumpy()}\n<{type(self).__name__} {shape} @{self._ctx}>"

    def __bool__(self):
        if self.size == 1:
            return bool(self.asnumpy().reshape(-1)[0])
        if self.size == 0:
            return False
        raise ValueError("The truth value of an NDArray with multiple elements is ambiguous.")

    def __float__(self):
        return float(self.asscalar())

    def __int__(self):
        return int(self.asscalar())

    def __index__(self):
        return int(self.asscalar())

    def __hash__(self):
        return id(self)

    def __iter__(self):
        for i in range(self.shape[0]):
            yield self[i]

    def __reduce__(self):
        # pickling keeps the storage type and context (loading pickles is the user's choice)
        return _new_empty, (type(self),), self.__getstate__()

    def __getstate__(self):
        """MXNet's pickled state: ``{'handle': bytearray}``, the array in MXNet's raw
        single-array format (its context's cpu id included)."""
        getstate = LATE.getstate
        return getstate(self)

    def __setstate__(self, state):
        """Become the array of a state from :meth:`__getstate__` (sparsym's or MXNet's)."""
        setstate = LATE.setstate
        setstate(self, state)

    # ------------------------------------------------------------------ conversion
    def asnumpy(self):
        """Return a numpy copy (dense) of the values."""
        return np.array(st.todense(self._raw), copy=True)

    def asscalar(self):
        if self.size != 1:
            raise ValueError("The current array is not a scalar")
        return self.asnumpy().reshape(-1)[0]

    def to_dlpack_for_read(self):
        """A DLPack capsule sharing this array's memory (see ``nd.to_dlpack_for_read``)."""
        to_dlpack_for_read = LATE.to_dlpack_for_read
        return to_dlpack_for_read(self)

    def to_dlpack_for_write(self):
        """A DLPack capsule sharing this array's memory (see ``nd.to_dlpack_for_write``)."""
        to_dlpack_for_write = LATE.to_dlpack_for_write
        return to_dlpack_for_write(self)

    def wait_to_read(self):
        """Operations are eager; returns at once."""

    def tostype(self, stype):
        """Return a copy with storage type ``stype`` ('default', 'csr', 'row_sparse')."""
        st.check_stype(stype, "tostype: ")
        invoke = LATE.invoke
        return invoke("cast_storage", [self], {"stype": stype})[0]

    def astype(self, dtype, copy=True):
        """Cast to ``dtype`` keeping the storage type; with copy=False the same array
        returns when the dtype already matches."""
        dtype = dtype_of(dtype)
        if not copy and np.dtype(self.dtype) == dtype:
            return self
        if self._ag is not None and STATE.recording:
            return _invoke("Cast", self, dtype=dtype.name)
        raw = self._raw
        if isinstance(raw, st.CSR):
            new = st.CSR(raw.data.astype(dtype), raw.indices.copy(), raw.indptr.copy(), raw.shape)
        elif isinstance(raw, st.RSP):
            new = st.RSP(raw.data.astype(dtype), raw.indices.copy(), raw.shape)
        else:
            new = raw.astype(dtype)
        return wrap(new, self._ctx)

    def copy(self):
        """A deep copy on the same context."""
        if self._ag is not None and STATE.recording:
            return _invoke("_copy", self)
        return self.copyto(self._ctx)

    def copyto(self, other):
        """Copy to a context (a new array, same storage type) or into an NDArray.

        Copying into an NDArray converts to the target's storage type and dtype
        (MXNet's CopyFromTo); the target must have the same shape.
        """
        if isinstance(other, Context):
            return wrap(self._raw.copy(), require_usable(other))
        if isinstance(other, NDArray):
            if other is self:
                return other
            if tuple(other.shape) != tuple(self.shape):
                raise ShapeError(f"copyto: shape mismatch, source {self.shape} vs target "
                                 f"{other.shape}")
            other._assign(self._raw)
            return other
        raise TypeError(f"copyto does not support type {type(other).__name__}")

    def as_in_context(self, context):
        return self if context == self._ctx else self.copyto(context)

    as_in_ctx = as_in_context

    def attach_grad(self, grad_req="write", stype=None):
        """Allocate a zero gradient buffer and mark this array as an autograd variable.

        Parameters
        ----------
        grad_req : {'write', 'add', 'null'}, default 'write'
            How backward stores the gradient: overwrite, accumulate, or not at all.
        stype : {'default', 'row_sparse', 'csr'}, optional
            Storage type of the gradient buffer; the array's own by default.

        Examples
        --------
        >>> import sparsym as mx
        >>> x = mx.nd.array([1.0, 2.0])
        >>> x.attach_grad()
        >>> with mx.autograd.record():
        ...     y = x * x
        >>> y.backward()
        >>> x.grad.asnumpy().tolist()
        [2.0, 4.0]
        """
        stype = st.check_stype(stype if stype is not None else self.stype, "attach_grad: ")
        grad = wrap(st.zeros_raw(stype, self.shape, self._raw.dtype), self._ctx)
        AUTOGRAD.mark_variables([self], [grad], grad_req)

    def detach(self):
        """The same values, cut off from the autograd graph (no gradient flows back)."""
        return wrap(self._raw, self._ctx)

    def backward(self, out_grad=None, retain_graph=False, train_mode=True):
        """Compute the gradients of this array with respect to the marked variables.

        Parameters
        ----------
        out_grad : NDArray, optional
            Head gradient (ones by default).
        retain_graph : bool, default False
            Keep the recorded graph for another backward pass.
        train_mode : bool, default True
            Run the backward ops in training mode.
        """
        AUTOGRAD.backward([self], None if out_grad is None else [out_grad],
                          retain_graph=retain_graph, train_mode=train_mode)

    # ------------------------------------------------------------------ assignment
    def _assign(self, value):
        """Write ``value`` (raw, NDArray, numpy or scalar) into this array, keeping its stype
        and dtype (a sparse target gets the value's structure, converted)."""
        if not self.writable:
            raise MXNetError("trying to assign to a readonly NDArray")
        value = _raw_of(value)
        mine = self._raw
        if isinstance(mine, np.ndarray):
            if isinstance(value, (st.CSR, st.RSP)):
                _scatter_into(mine, value)
                return
            value = np.asarray(value)
            try:
                np.copyto(mine, np.broadcast_to(value, mine.shape), casting="unsafe")
                st.bump(mine)
            except ValueError:
                raise ShapeError(f"cannot assign an array of shape {value.shape} to an NDArray "
                                 f"of shape {mine.shape}") from None
            return
        if isinstance(value, numbers.Number) or (isinstance(value, np.ndarray) and value.ndim == 0):
            value = np.full(mine.shape, value, dtype=mine.dtype)
        if not isinstance(value, (st.CSR, st.RSP)):
            value = np.asarray(value)
        if tuple(value.shape) != tuple(mine.shape):
            raise ShapeError(f"cannot assign an array of shape {tuple(value.shape)} to a "
                             f"{self.stype} NDArray of shape {mine.shape}")
        invoke_raw_cast = LATE.invoke_raw_cast
        new = invoke_raw_cast(value, self.stype)
        if new is value:
            new = value.copy()
        if new.dtype != mine.dtype:
            new.data = new.data.astype(mine.dtype)
        self._raw = new

    def __setitem__(self, key, value):
        """``x[key] = value`` (numpy indexing for dense arrays; sparse arrays take ``[:]``)."""
        whole = key is None or key is Ellipsis or (isinstance(key, slice) and key == slice(None))
        if whole and STATE.recording and _on_tape(self):
            _check_inplace_record(self, None)  # MXNet refuses y[:] = v for a recorded y too
        if isinstance(key, slice) and key == slice(None):
            if isinstance(value, NDArray) and value._raw is self._raw:
                return
            self._assign(value)
            return
        if self.stype != "default":
            raise StorageError(f"{self.stype} NDArray only supports assignment to [:], got "
                               f"{key!r}")
        if not self.writable:
            raise MXNetError("trying to assign to a readonly NDArray")
        if STATE.recording and key is not None and key is not Ellipsis:  # those copy, as [:]
            _check_inplace_record(self, value)
        value = _raw_of(value)
        if isinstance(value, (st.CSR, st.RSP)):
            value = st.todense(value)
        key = _raw_key(key)
        try:
            try:
                self._raw[key] = value
            except (ValueError, TypeError):
                # MXNet (and NumPy 1) put a one-element array or list into a single element
                if np.size(value) != 1:
                    raise
                self._raw[key] = np.asarray(value).reshape(())
            st.bump(self._raw)
        except (ValueError, IndexError) as err:
            raise ShapeError(f"NDArray.__setitem__: cannot assign {np.shape(value)} to "
                             f"index {key!r} of an array of shape {self.shape}: {err}") from None

    def __getitem__(self, key):
        """Numpy-style indexing of a dense array (a new array: MXNet's basic indexing).

        Result shapes are MXNet 1.9.1's: outside ``np_shape`` there are no 0-d arrays, so
        integers on every axis (``x[i]`` of a 1-D array, ``x[i, j]``) give shape (1,).
        """
        if isinstance(key, tuple) and len([k for k in key if k is not None and
                                           k is not Ellipsis]) > self.ndim:
            raise IndexError(f"too many indices ({len(key)}) for an array of {self.ndim} dims")
        LATE.check_legacy_key(key, self.shape)
        if self._ag is not None and STATE.recording:
            recorded_getitem = LATE.recorded_getitem
            return recorded_getitem(self, key)
        out = self._raw[_raw_key(key)]
        if not isinstance(out, np.ndarray) or out.ndim == 0:
            # MXNet's legacy shapes have no 0-d arrays: indexing every axis by an integer
            # (x[i] on a 1-D array too) gives shape (1,); under np_shape it is 0-d. NumPy
            # reads NDArrays through __array__, not item by item
            out = np.asarray(out).reshape(() if np_shape_active() else (1,))
        return wrap(out, self._ctx)

    # ------------------------------------------------------------------ shape methods
    def reshape(self, *shape, **kwargs):
        """Return a view with a new shape (MXNet's 0 / -1 / -2 / -3 / -4 codes accepted)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = kwargs.pop("shape", shape)
        reverse = kwargs.pop("reverse", False)
        if kwargs:
            raise TypeError(f"reshape got unexpected arguments {sorted(kwargs)}")
        if self.stype != "default":
            raise StorageError(f"reshape is only supported for default storage, got {self.stype}")
        target = reshape_target(self.shape, tuple(shape), reverse)
        if self._ag is not None and STATE.recording:
            return _invoke("Reshape", self, shape=target)
        return wrap(self._raw.reshape(target), self._ctx)

    def reshape_like(self, *args, **kwargs):
        """The ``reshape_like`` operator on this array (``rhs``, and the optional
        ``lhs_begin``/``lhs_end``/``rhs_begin``/``rhs_end`` ranges, as MXNet's)."""
        nd = _nd_pkg
        return nd.reshape_like(self, *args, **kwargs)

    def flatten(self, inplace=False):
        """Collapse all but the first axis; ``inplace=True`` returns a view (MXNet)."""
        out = self.reshape((self.shape[0], -1)) if self.ndim else self.reshape((1, 1))
        return out if inplace else out.copy()

    def expand_dims(self, axis, inplace=False):
        """Insert an axis of size 1; ``inplace=True`` returns a view (MXNet)."""
        if self._ag is not None and STATE.recording:
            return _invoke("expand_dims", self, axis=axis)
        out = np.expand_dims(self._raw, axis)
        return wrap(out if inplace else out.copy(), self._ctx)

    def squeeze(self, axis=None, inplace=False):
        """Remove axes of size 1 (all of them leave shape (1,), as MXNet's legacy shapes);
        ``inplace=True`` returns a view."""
        if self._ag is not None and STATE.recording:
            return _invoke("squeeze", self, axis=axis)
        out = np.squeeze(self._raw, axis)
        if out.ndim == 0 and self.ndim > 0:
            out = out.reshape((1,))
        return wrap(out if inplace else out.copy(), self._ctx)

    @staticmethod
    def _basic_indexing_slice_is_contiguous(slc_key, shape):
        """Whether basic indexing by ``slc_key`` gives a C-contiguous block of a C-ordered
        array of ``shape`` (MXNet returns such blocks as views and copies the others).

        Decided from strides alone: the slice is taken on a zero-size stand-in strided like
        a C array of ``shape``, so no data is touched.
        """
        strides, acc = [], 1
        for n in reversed(shape):
            strides.append(acc)
            acc *= max(int(n), 1)
        stand_in = np.lib.stride_tricks.as_strided(np.empty(1, np.int8), shape=tuple(shape),
                                                   strides=tuple(reversed(strides)),
                                                   writeable=False)
        return bool(stand_in[slc_key].flags.c_contiguous)

    def transpose(self, axes=None):
        invoke = LATE.invoke
        return invoke("transpose", [self], {"axes": axes} if axes else {})[0]

    def broadcast_to(self, shape):
        # sparse arrays broadcast densely, as MXNet's storage fallback does
        return wrap(np.ascontiguousarray(np.broadcast_to(st.todense(self._raw), tuple(shape))),
                    self._ctx)

    def slice_axis(self, axis, begin, end):
        idx = [slice(None)] * self.ndim
        idx[axis] = slice(begin, end)
        return self[tuple(idx)]

    # ------------------------------------------------------------------ arithmetic
    # MXNet 1.9: NDArray operators use the broadcast_* ops (dense + sparse -> broadcast rules),
    # sparse arrays override +, -, * with nd.sparse.add/subtract/multiply (elemwise rules).
    def _bin(self, other, name, scalar_name, reverse=False):
        binary = LATE.binary
        return binary(self, other, name, scalar_name, reverse)

    def __add__(self, o):
        return self._bin(o, "add", "_plus_scalar")

    def __radd__(self, o):
        return self.__add__(o)

    def __sub__(self, o):
        return self._bin(o, "sub", "_minus_scalar")

    def __rsub__(self, o):
        return self._bin(o, "sub", "_rminus_scalar", reverse=True)

    def __mul__(self, o):
        return self._bin(o, "mul", "_mul_scalar")

    def __rmul__(self, o):
        return self.__mul__(o)

    def __truediv__(self, o):
        return self._bin(o, "div", "_div_scalar")

    def __rtruediv__(self, o):
        return self._bin(o, "div", "_rdiv_scalar", reverse=True)

    __div__ = __truediv__
    __rdiv__ = __rtruediv__

    def __mod__(self, o):
        return self._bin(o, "mod", "_mod_scalar")

    def __rmod__(self, o):
        return self._bin(o, "mod", "_rmod_scalar", reverse=True)

    def __pow__(self, o):
        return self._bin(o, "power", "_power_scalar")

    def __rpow__(self, o):
        return self._bin(o, "power", "_rpower_scalar", reverse=True)

    def __neg__(self):
        invoke = LATE.invoke
        return invoke("negative", [self], {})[0]

    def __pos__(self):
        return self

    def __abs__(self):
        invoke = LATE.invoke
        return invoke("abs", [self], {})[0]

    def __eq__(self, o):
        return self._bin(o, "equal", "_equal_scalar")

    def __ne__(self, o):
        return self._bin(o, "not_equal", "_not_equal_scalar")

    def __gt__(self, o):
        return self._bin(o, "greater", "_greater_scalar")

    def __ge__(self, o):
        return self._bin(o, "greater_equal", "_greater_equal_scalar")

    def __lt__(self, o):
        return self._bin(o, "lesser", "_lesser_scalar")

    def __le__(self, o):
        return self._bin(o, "lesser_equal", "_lesser_equal_scalar")

    def _iop(self, other, fn):
        """Dense in-place operator: compute, then write back into this buffer."""
        if not self.writable:
            raise MXNetError("trying to assign to a readonly NDArray")
        if STATE.recording:
            _check_inplace_record(self, other)
        res = fn(self, other)
        if res.shape != self.shape:  # MXNet: the in-place output keeps its shape
            raise ShapeError(f"Shape inconsistent, Provided = {list(self.shape)}, inferred "
                             f"shape={list(res.shape)} (an in-place operator cannot grow its "
                             "left operand)")
        np.copyto(self._raw, st.todense(res._raw), casting="unsafe")
        st.bump(self._raw)
        return self

    def __iadd__(self, o):
        return self._iop(o, NDArray.__add__)

    def __isub__(self, o):
        return self._iop(o, NDArray.__sub__)

    def __imul__(self, o):
        return self._iop(o, NDArray.__mul__)

    def __itruediv__(self, o):
        return self._iop(o, NDArray.__truediv__)

    __idiv__ = __itruediv__

    def __imod__(self, o):
        return self._iop(o, NDArray.__mod__)

    def __getattr__(self, name):
        # fluent methods: x.sum(axis=1), x.exp(), ... resolve to the registered op
        fluent = LATE.fluent
        fn = fluent(name)
        if fn is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        return lambda *args, **kwargs: fn(self, *args, **kwargs)


def _on_tape(x):
    """Whether ``x`` is a variable or a recorded output of a live graph (a freed graph's
    outputs are constants again)."""
    e = x._ag
    return e is not None and (e[0].values is not None or e[0].op is None)


def _check_inplace_record(target, value):
    """MXNet's refusals of in-place writes that autograd would have to record (the write
    reads ``target`` itself): into an array of the graph, or from a recorded value."""
    if target._ag is not None:
        raise MXNetError("Assigning to NDArrays that are already in a computational graph will "
                         "cause undefined behavior when evaluating gradients. Please call "
                         "backward first to clear the graph or do this out side of a record "
                         "section. Also note that you cannot use inplace operations like +=, "
                         "*=, relu(x, out=x), y[idx]=x, etc inside a record section.")
    if isinstance(value, NDArray) and value._ag is not None:
        raise MXNetError("Inplace operations (+=, -=, x[:]=, etc) are not supported when "
                         "recording with autograd.")


def _new_empty(cls):
    """An uninitialised instance of ``cls`` for :meth:`NDArray.__setstate__` to fill."""
    obj = object.__new__(cls)
    obj._raw = np.zeros((0,), np.float32)
    obj._ctx = current_context()
    obj.writable = True
    obj._ag = None
    return obj


def _invoke(op_name, x, **params):
    """One output of operator ``op_name`` on ``x`` (the recorded form of a view method)."""
    invoke = LATE.invoke
    return invoke(op_name, [x], params)[0]


def _scatter_into(dense, raw):
    """Overwrite a dense buffer with a sparse value (zeros where nothing is stored)."""
    if tuple(raw.shape) != tuple(dense.shape):
        raise ShapeError(f"cannot assign a {raw.stype} array of shape {tuple(raw.shape)} to an "
                         f"NDArray of shape {dense.shape}")
    np.copyto(dense, st.todense(raw), casting="unsafe")
    st.bump(dense)


def _raw_key(key):
    if isinstance(key, NDArray):
        return key.asnumpy().astype(np.int64)
    if isinstance(key, tuple):
        return tuple(_raw_key(k) for k in key)
    return key


# ---------------------------------------------------------------------- constructors
def _ctx(ctx):
    return require_usable(ctx if ctx is not None else current_context())


def array(source_array, ctx=None, dtype=None):
    """Create an array from a list, numpy array, NDArray or scipy sparse matrix.

    The default dtype follows MXNet 1.9: the source's for an NDArray (or a scipy matrix,
    which gives a csr array), ``float32`` for anything else, numpy arrays included.
    """
    _is_scipy_sparse = LATE.is_scipy_sparse
    csr_matrix = LATE.csr_matrix
    if _is_scipy_sparse(source_array):
        return csr_matrix(source_array, ctx=ctx, dtype=dtype)
    if isinstance(source_array, NDArray):
        out = source_array.astype(dtype or source_array.dtype)
        out._ctx = _ctx(ctx)
        return out
    if dtype is None:  # MXNet 1.9: float32 for every non-NDArray source, numpy included
        dtype = np.float32
    try:
        raw = np.array(source_array, dtype=dtype_of(dtype), copy=True)
    except (TypeError, ValueError) as err:
        raise TypeError(f"source_array must be array like object, got {type(source_array).__name__}"
                        f": {err}") from None
    return wrap(raw, _ctx(ctx))


def _shape(shape):
    """``shape`` as a tuple of non-negative ints (ShapeError otherwise)."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) else shape
    try:
        out = tuple(int(s) for s in dims)
        ok = all(d >= 0 and d == s for d, s in zip(out, dims))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ShapeError(f"shape must be non-negative integers, got {shape!r}")
    return out


def _fill_out(out, shape, value, where):
    """Write ``value`` into ``out`` (MXNet's ``out=`` of the creation ops: same shape)."""
    if not isinstance(out, NDArray):
        raise TypeError(f"{where}: out must be an NDArray, got {type(out).__name__}")
    if tuple(out.shape) != shape:
        raise ShapeError(f"{where}: Shape inconsistent, Provided = {list(out.shape)}, "
                         f"inferred shape={list(shape)}")
    out._assign(value)
    return out


def _creation_shape(shape, op):
    """``shape`` for the public zeros/ones: MXNet's _zeros/_ones fail shape inference on the
    shape () and on a 0 dimension (both mean "unknown") unless NumPy shapes are on."""
    out = _shape(shape)
    if (not out or 0 in out) and not np_shape_active():
        raise ShapeError(f"Operator {op} inferring shapes failed: shape {out} is "
                         f"{'a scalar' if not out else 'zero-size'}, and without NumPy shape "
                         "semantics the shape () and a 0 dimension mean unknown; create it "
                         "under `with mx.np_shape():`")
    return out


def zeros(shape, ctx=None, dtype=None, stype=None, **kwargs):
    """All-zero array of storage type ``stype`` (default 'default'); ``out=`` fills an
    existing array of that shape instead.

    As in MXNet, the shape () and zero-size shapes raise unless ``mx.np_shape()`` is active.
    """
    shape = _creation_shape(shape, "_zeros")
    if kwargs.get("out") is not None:
        return _fill_out(kwargs["out"], shape, 0, "zeros")
    return _zeros(shape, ctx, dtype, stype)


def _zeros(shape, ctx=None, dtype=None, stype=None):
    """All-zero array of any shape, zero-size included (the internal creation path)."""
    dtype = dtype_of(dtype or np.float32)
    if _PROF.imperative:  # MXNet's profiler reports array creation as the _zeros operator
        profiler = _profiler
        t0 = profiler.now_us()
        out = wrap(st.zeros_raw(st.check_stype(stype), _shape(shape), dtype), _ctx(ctx))
        profiler.record_op("_zeros", t0, profiler.now_us(), out._ctx.device_id)
        return out
    return wrap(st.zeros_raw(st.check_stype(stype), _shape(shape), dtype), _ctx(ctx))


def empty(shape, ctx=None, dtype=None, stype=None):
    """Like :func:`zeros` (memory is always initialised); any shape, as MXNet's empty."""
    return _zeros(shape, ctx, dtype, stype)


def ones(shape, ctx=None, dtype=None, **kwargs):
    """All-one dense array; ``out=`` fills an existing array of that shape instead.

    As in MXNet, the shape () and zero-size shapes raise unless ``mx.np_shape()`` is active.
    """
    shape = _creation_shape(shape, "_ones")
    if kwargs.get("out") is not None:
        return _fill_out(kwargs["out"], shape, 1, "ones")
    dtype = dtype_of(dtype or np.float32)
    st.check_alloc(shape, dtype, "ones")
    return wrap(np.ones(shape, dtype=dtype), _ctx(ctx))


def full(shape, val, ctx=None, dtype=None, out=None):
    """Dense array filled with ``val``."""
    shape, dtype = _shape(shape), dtype_of(dtype or np.float32)
    if isinstance(val, (str, bytes)) or val is None:
        raise ParamError(f"full: val must be a number, got {val!r} of type "
                         f"{type(val).__name__}")
    st.check_alloc(shape, dtype, "full")
    raw = np.full(shape, val, dtype=dtype)
    if out is not None:
        out._assign(raw)
        return out
    return wrap(raw, _ctx(ctx))


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None, dtype=np.float32):
    """Evenly spaced values in [start, stop), each repeated ``repeat`` times (the _arange
    operator; integer dtypes cast start and step first, as MXNet does). ``infer_range`` is
    deprecated and ignored, as in MXNet."""
    invoke = LATE.invoke
    if infer_range is not None:
        import warnings
        warnings.warn("`infer_range` argument has been deprecated", DeprecationWarning,
                      stacklevel=2)
    params = {"start": start, "stop": stop, "step": step, "repeat": repeat,
              "infer_range": False, "dtype": np.dtype(dtype_of(dtype or np.float32)).name}
    out = invoke("_arange", [], params)[0]
    return out if ctx is None else out.as_in_context(_ctx(ctx))


def waitall():
    """Operations are eager; returns at once."""


def concatenate(arrays, axis=0, always_copy=True):
    """Concatenate dense arrays along ``axis``."""
    return wrap(np.concatenate([st.todense(a._raw) for a in arrays], axis=axis), arrays[0]._ctx)


def moveaxis(tensor, source, destination):
    return wrap(np.ascontiguousarray(np.moveaxis(tensor._raw, source, destination)), tensor._ctx)


class _Late:
    """The functions and classes of the modules built on this one (``op``, ``indexing``,
    ``interop``, ``pickling``, ``sparse``), which each hands over with
    :func:`install_methods` when it is imported (the package imports them all). NDArray's
    methods call them here, so this module imports none of them."""

    invoke = binary = fluent = invoke_raw_cast = None  # op.py
    check_legacy_key = recorded_getitem = None  # indexing.py
    to_dlpack_for_read = to_dlpack_for_write = None  # interop.py
    getstate = setstate = None  # pickling.py
    CSRNDArray = RowSparseNDArray = is_scipy_sparse = csr_matrix = None  # sparse.py


LATE = _Late()


def install_methods(**parts) -> None:
    """Hand NDArray's methods the named parts of a module built on this one."""
    for name, value in parts.items():
        if not hasattr(_Late, name):
            raise AttributeError(f"install_methods: {name!r} is not a part NDArray uses")
        setattr(LATE, name, value)


# the package, bound once this module is complete (nd.* front ends for fluent methods): a
# relative import inside a function costs about a microsecond per call
from .. import ndarray as _nd_pkg  # noqa: E402
