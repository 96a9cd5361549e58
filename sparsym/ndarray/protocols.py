"""NumPy's array protocol and the DLPack exchange protocol for NDArray.

A mixin of the NDArray class (defined here so that ``ndarray.py`` stays one page): it only
reads ``self._raw``, the numpy array under a dense NDArray, and imports nothing above it.
"""
from __future__ import annotations

import numpy as np

from .. import storage as st
from ..base import StorageError

KDLCPU = 1


def dense_raw(arr, where):
    """The numpy array under a dense NDArray; a sparse one is a StorageError naming ``where``
    (densifying is the caller's decision: ``asnumpy()`` or ``tostype('default')``)."""
    raw = arr._raw
    if not isinstance(raw, np.ndarray):
        raise StorageError(f"{where}: a {st.stype_of(raw)} NDArray has no dense buffer to "
                           "share; densify it explicitly with .asnumpy() (a copy) or "
                           ".tostype('default')")
    return raw


class ArrayProtocols:
    """``__array__``, ``__dlpack__`` and ``__dlpack_device__`` of a dense NDArray.

    NumPy's reflected-operator rules stay MXNet's: NDArray defines no ``__array_ufunc__`` and
    keeps ``__array_priority__`` high, so ``numpy_array + ndarray`` runs NDArray's
    ``__radd__`` (an NDArray), while NumPy functions (``np.all``, ``np.exp``) read the
    values through ``__array__`` and return NumPy results.
    """

    __slots__ = ()

    def __array__(self, dtype=None, copy=None):
        """The values as a numpy array, a copy as :meth:`asnumpy` gives.

        Parameters
        ----------
        dtype : numpy dtype, optional
            The result's dtype (cast when it differs).
        copy : bool or None
            NumPy 2's protocol: ``None`` or ``True`` give a copy (as ``asnumpy``);
            ``False`` gives the array's own memory (writes show in the NDArray), and raises
            ValueError when that needs a copy (a dtype change).

        Raises
        ------
        StorageError
            For a sparse array (convert it with ``asnumpy()`` or ``tostype('default')``).
        """
        raw = dense_raw(self, "__array__")
        if copy is False:
            if dtype is not None and np.dtype(dtype) != raw.dtype:
                raise ValueError(f"__array__(copy=False): casting {raw.dtype} to "
                                 f"{np.dtype(dtype)} needs a copy")
            return raw
        return np.array(raw, dtype=dtype, copy=True)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of this array's memory (the array API's exchange protocol).

        Delegates to the numpy array underneath, so ``np.from_dlpack(x)`` and
        ``torch.from_dlpack(x)`` share memory with ``x`` (a write through one is seen by
        the other) unless ``copy=True`` is asked for.

        Parameters
        ----------
        stream : None
            CPU arrays take no stream; must be None (or -1).
        max_version : tuple of int, optional
            Highest DLPack version the consumer understands.
        dl_device : tuple, optional
            Must be the CPU, ``(1, 0)``.
        copy : bool or None
            ``True`` exports a copy, ``False`` refuses to copy.

        Raises
        ------
        StorageError
            For a sparse array.
        """
        raw = dense_raw(self, "__dlpack__")
        if stream is not None and stream != -1:
            raise BufferError(f"__dlpack__: stream must be None on the CPU, got {stream!r}")
        kwargs = {}
        if max_version is not None:
            kwargs["max_version"] = max_version
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        if copy is not None:
            kwargs["copy"] = copy
        return raw.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        """``(1, 0)``: DLPack's CPU device (every sparsym context is host memory)."""
        dense_raw(self, "__dlpack_device__")
        return (KDLCPU, 0)
