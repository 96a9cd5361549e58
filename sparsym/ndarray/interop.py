"""Exchange with NumPy and DLPack consumers: ``nd.from_numpy``, ``nd.to_dlpack_for_read``,
``nd.to_dlpack_for_write``, ``nd.from_dlpack`` (MXNet 1.9.1's names and semantics)."""
from __future__ import annotations

import ctypes
import weakref

import numpy as np

from ..base import DTypeError, FormatError
from ..context import current_context
from .ndarray import NDArray, install_methods, wrap
from .protocols import KDLCPU, dense_raw

_DLTENSOR = b"dltensor"
# numpy arrays whose buffers from_numpy took over (made read-only on the numpy side)
# (numpy arrays are unhashable: keyed by id, each entry dropped when its array dies)
_TAKEN: dict = {}


def _taken(arr):
    ref = _TAKEN.get(id(arr))
    return ref is not None and ref() is arr


def _take(arr):
    key = id(arr)
    _TAKEN[key] = weakref.ref(arr, lambda _r: _TAKEN.pop(key, None))
_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]


def from_numpy(ndarray, zero_copy=True, array_cls=NDArray):
    """An NDArray over a numpy array.

    Parameters
    ----------
    ndarray : numpy.ndarray
        The source. With ``zero_copy`` it must be C-contiguous.
    zero_copy : bool, default True
        Share the numpy array's memory: the NDArray sees and makes every change, and the
        numpy array becomes read-only (MXNet takes ownership of the buffer); otherwise copy.
    array_cls : type, default NDArray
        Accepted for MXNet's signature; only NDArray is supported.

    Returns
    -------
    NDArray
        Of the source's shape and dtype.

    Examples
    --------
    >>> import numpy as np, sparsym as mx
    >>> a = np.array([[1, 2], [3, 4]], dtype="float32")
    >>> b = mx.nd.from_numpy(a)
    >>> b[0, 0] = 9
    >>> float(a[0, 0]), a.flags.writeable
    (9.0, False)
    """
    if array_cls is not NDArray:
        raise NotImplementedError("from_numpy: only array_cls=NDArray is supported")
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(ndarray).__name__}")
    if ndarray.dtype.kind not in "biuf":  # MXNet: "object is not supported."
        raise DTypeError(f"from_numpy: dtype {ndarray.dtype} is not supported (numbers and "
                         "bools only)")
    if not zero_copy:
        return wrap(np.array(ndarray, copy=True, order="C"), current_context())
    if not ndarray.flags["C_CONTIGUOUS"]:
        raise ValueError("Only c-contiguous arrays are supported for zero-copy")
    # MXNet takes the buffer over: it stays writeable through the NDArray only
    if ndarray.flags.writeable:
        raw = ndarray.view()
        ndarray.flags.writeable = False
        _take(ndarray)
    elif _taken(ndarray):  # handed over before: its memory is writeable
        raw = _writable_view(ndarray)
    else:
        raise ValueError("from_numpy: zero_copy needs a writeable numpy array (its memory is "
                         "read-only); pass zero_copy=False to copy it")
    return wrap(raw, current_context())


def to_dlpack_for_read(data):
    """A DLPack capsule (``"dltensor"``) sharing ``data``'s memory, for reading.

    Parameters
    ----------
    data : NDArray
        A dense array.

    Returns
    -------
    PyCapsule
        Consumed once, by :func:`from_dlpack` or any DLPack consumer.

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.ones((2, 3))
    >>> mx.nd.from_dlpack(mx.nd.to_dlpack_for_read(x)).shape
    (2, 3)
    """
    return _capsule(data, "to_dlpack_for_read")


def to_dlpack_for_write(data):
    """As :func:`to_dlpack_for_read`, for a consumer that writes (writes show in ``data``;
    MXNet waits for pending writes first, which eager sparsym never has)."""
    return _capsule(data, "to_dlpack_for_write")


def _capsule(data, where):
    if not isinstance(data, NDArray) or data.stype != "default":
        raise TypeError(f"{where}: expected a dense NDArray, got "
                        f"{getattr(data, 'stype', type(data).__name__)}")
    raw = data._raw
    if not raw.flags["C_CONTIGUOUS"]:  # DLPack consumers expect MXNet's compact layout
        raw = np.ascontiguousarray(raw)
        data._raw = raw
    return raw.__dlpack__()


class _CapsuleSource:
    """Presents a bare DLPack capsule to ``numpy.from_dlpack``."""

    __slots__ = ("capsule",)

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (KDLCPU, 0)


def from_dlpack(dlpack):
    """An NDArray sharing the memory of a DLPack capsule or of an object implementing the
    DLPack protocol (``__dlpack__``: numpy arrays, torch CPU tensors, NDArrays).

    A capsule is consumed: it is renamed ``"used_dltensor"`` and cannot be read again.

    Parameters
    ----------
    dlpack : PyCapsule or object with ``__dlpack__``
        A ``"dltensor"`` capsule on the CPU (e.g. from :func:`to_dlpack_for_read`), or an
        array whose ``__dlpack_device__`` is the CPU.

    Returns
    -------
    NDArray
        Over the producer's memory: writes through either side are seen by the other. A
        producer that exports its memory as read-only (a read-only numpy array) gives a
        read-only NDArray.

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.arange(3)
    >>> y = mx.nd.from_dlpack(x.to_dlpack_for_write())
    >>> y[0] = 7
    >>> x.asnumpy().tolist()
    [7.0, 1.0, 2.0]
    >>> import numpy as np
    >>> a = np.zeros(2, dtype="float32")
    >>> mx.nd.from_dlpack(a)[1] = 5
    >>> a.tolist()
    [0.0, 5.0]
    """
    if type(dlpack).__name__ == "PyCapsule":
        if not _capsule_is_valid(dlpack, _DLTENSOR):
            raise FormatError("Invalid DLPack Tensor. DLTensor capsules can be consumed only "
                              "once.")
        raw = np.from_dlpack(_CapsuleSource(dlpack))
        if not raw.flags.writeable:  # numpy marks legacy imports read-only; MXNet's allow writes
            raw = _writable_view(raw)
        return wrap(raw, current_context())
    if not hasattr(dlpack, "__dlpack__"):
        raise FormatError("Invalid DLPack Tensor. from_dlpack expects a DLPack capsule or an "
                          "object with __dlpack__ (numpy array, torch tensor), got "
                          f"{type(dlpack).__name__}")
    if isinstance(dlpack, NDArray):
        dense_raw(dlpack, "from_dlpack")
    device = tuple(dlpack.__dlpack_device__())
    if int(device[0]) != KDLCPU:
        raise BufferError(f"from_dlpack: the array is on DLPack device {device}; sparsym reads "
                          "CPU memory only (move it to the CPU first)")
    source = _Producer(dlpack)
    raw = np.from_dlpack(source)
    readonly = not raw.flags.writeable
    if readonly and not source.versioned:  # a legacy producer cannot say; MXNet's are writeable
        raw, readonly = _writable_view(raw), False
    out = wrap(raw, current_context())
    out.writable = not readonly
    return out


class _Producer:
    """Forwards the DLPack protocol and records whether the producer answered the versioned
    request (only a versioned capsule can say that its memory is read-only)."""

    __slots__ = ("obj", "versioned")

    def __init__(self, obj):
        self.obj, self.versioned = obj, False

    def __dlpack__(self, **kwargs):
        capsule = self.obj.__dlpack__(**kwargs)
        self.versioned = bool(_capsule_is_valid(capsule, b"dltensor_versioned"))
        return capsule

    def __dlpack_device__(self):
        return self.obj.__dlpack_device__()


def _writable_view(raw):
    """A writeable view of the same memory as ``raw`` (kept alive through ``base``)."""
    iface = dict(raw.__array_interface__)
    iface["data"] = (iface["data"][0], False)

    class _Holder:
        __array_interface__ = iface
        owner = raw

    return np.asarray(_Holder())


install_methods(to_dlpack_for_read=to_dlpack_for_read, to_dlpack_for_write=to_dlpack_for_write)
