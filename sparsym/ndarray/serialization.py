"""MXNet 1.x's binary NDArray list format (``mx.nd.save`` / ``mx.nd.load``), at the raw level.

Values are raw (``numpy.ndarray``, :class:`~sparsym.storage.CSR`, :class:`~sparsym.storage.RSP`).
Every integer is little-endian. A file is::

    u64 0x112 (list magic) | u64 0 (reserved)
    u64 n | n x array
    u64 m | m x (u64 len | utf-8 bytes)        # names: m == 0 (list) or m == n (dict)

and one array (version 2, magic 0xF993FAC9; version 3, 0xF993FACA, is the same layout written
under numpy shape semantics, dense only, which MXNet 1.x needs for 0-d arrays; MXNet loads
version 3 only inside ``np_shape(True)`` and version 2 only outside it)::

    u32 magic | i32 stype (0 default, 1 row_sparse, 2 csr)
    [sparse only] storage shape                # csr: (nnz,); row_sparse: (nnr,) + shape[1:]
                                               # (readers take nnz/nnr from the aux shape)
    shape                                      # a shape is i32 ndim | ndim x i64
    i32 dev_type | i32 dev_id                  # context; 1 = cpu
    i32 type flag                    # 0 f32, 1 f64, 2 f16, 3 u8, 4 i32, 5 i8, 6 i64, 7 bool
    [sparse only] per aux array: i32 type flag | shape    # csr: indptr, indices; rsp: indices
    data bytes (storage shape) | aux bytes, in aux order

An array whose shape is "none" (ndim 0 outside version 3, ndim -1, or a -1 dim) stops after its
shape; :func:`load_raw` returns ``None`` for it (MXNet loads an empty handle). The older dense-only
versions are read too: version 1 (magic 0xF993FAC8, then a shape, context, type flag and data)
and the original one, whose first u32 is ndim followed by ndim x u32 dims.

Loading never unpickles: it uses ``struct`` and ``numpy`` reads, checks every length against the
bytes that remain, and raises :class:`~sparsym.base.FormatError` naming the array and field.
"""
from __future__ import annotations

import io
import os
import struct

import numpy as np

from ..base import DTypeError, FormatError, ShapeError, StorageError, open_for_load
from ..storage import CSR, IDX, RSP, check_csr, check_rsp
from ..utils import atomic_write, remove_stale_temps

__all__ = ["save_raw", "load_raw", "dumps_raw", "dumps_array", "loads_array", "LIST_MAGIC",
           "V1_MAGIC", "V2_MAGIC", "V3_MAGIC", "TYPE_FLAGS", "FLAG_DTYPES"]

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA

#: MXNet (mshadow) type flags of the dtypes this format carries.
TYPE_FLAGS = {
    np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.float16): 2,
    np.dtype(np.uint8): 3, np.dtype(np.int32): 4, np.dtype(np.int8): 5, np.dtype(np.int64): 6,
    np.dtype(np.bool_): 7,
}
FLAG_DTYPES = {v: k.newbyteorder("<") for k, v in TYPE_FLAGS.items()}

_STYPE_DEFAULT, _STYPE_RSP, _STYPE_CSR = 0, 1, 2
_NUM_AUX = {_STYPE_DEFAULT: 0, _STYPE_RSP: 1, _STYPE_CSR: 2}
_DEV_TYPES = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
_CPU = (1, 0)
_MAX_NDIM = 64
_CHUNK = 1 << 26


# ============================================================================ saving
def _type_flag(dtype, where):
    dtype = np.dtype(dtype)
    try:
        return TYPE_FLAGS[dtype.newbyteorder("=")]
    except KeyError:
        names = ", ".join(str(d) for d in TYPE_FLAGS)
        raise DTypeError(f"{where}: dtype {dtype} cannot be saved in MXNet's format; "
                         f"supported: {names}") from None


def _le(arr, dtype=None):
    """A C-contiguous little-endian view or copy of ``arr``."""
    arr = np.asarray(arr)
    dt = (np.dtype(dtype) if dtype is not None else arr.dtype).newbyteorder("<")
    return np.asarray(arr, dtype=dt, order="C")     # (ascontiguousarray makes 0-d arrays 1-d)


def _shape_bytes(shape):
    return struct.pack(f"<i{len(shape)}q", len(shape), *shape)


def _normalize(data):
    """(values, names or None) from a list, tuple, dict or single raw value."""
    if isinstance(data, (np.ndarray, np.generic, CSR, RSP)):
        return [data], None
    if isinstance(data, dict):
        names = list(data)
        for k in names:
            if not isinstance(k, str):
                raise TypeError(f"save: dict keys must be str, got {type(k).__name__} {k!r}")
        return [data[k] for k in names], names
    if isinstance(data, (list, tuple)):
        return list(data), None
    raise TypeError("save: data must be a list or dict of numpy arrays, CSR or RSP values, got "
                    f"{type(data).__name__}")


def _array_parts(value, where, dense_magic, dev=_CPU):
    """Header bytes and the list of contiguous arrays that follow it for one raw value
    (``dev``: the (device type, id) pair recorded as its context)."""
    if isinstance(value, CSR):
        data = _le(value.data)
        indices, indptr = _le(value.indices, IDX), _le(value.indptr, IDX)
        if data.ndim != 1 or indices.ndim != 1:
            raise StorageError(f"{where}: csr data and indices must be 1-D, got shapes "
                               f"{data.shape} and {indices.shape}")
        check_csr(data, indices, indptr, value.shape, where=where, full=False)
        flag = _type_flag(data.dtype, where)
        head = (struct.pack("<Ii", V2_MAGIC, _STYPE_CSR) + _shape_bytes(data.shape)
                + _shape_bytes(value.shape) + struct.pack("<iii", *dev, flag)
                + struct.pack("<i", TYPE_FLAGS[np.dtype(IDX)]) + _shape_bytes(indptr.shape)
                + struct.pack("<i", TYPE_FLAGS[np.dtype(IDX)]) + _shape_bytes(indices.shape))
        return head, [data, indptr, indices]
    if isinstance(value, RSP):
        data, indices = _le(value.data), _le(value.indices, IDX)
        if len(value.shape) < 1:
            raise StorageError(f"{where}: row_sparse needs at least 1 dimension")
        if indices.ndim != 1:
            raise StorageError(f"{where}: row_sparse indices must be 1-D, got {indices.shape}")
        check_rsp(data, indices, value.shape, where=where, full=False)
        flag = _type_flag(data.dtype, where)
        head = (struct.pack("<Ii", V2_MAGIC, _STYPE_RSP) + _shape_bytes(data.shape)
                + _shape_bytes(value.shape) + struct.pack("<iii", *dev, flag)
                + struct.pack("<i", TYPE_FLAGS[np.dtype(IDX)]) + _shape_bytes(indices.shape))
        return head, [data, indices]
    if isinstance(value, (np.ndarray, np.generic)):
        arr = _le(value)
        flag = _type_flag(arr.dtype, where)
        if arr.ndim == 0 and dense_magic != V3_MAGIC:
            raise ShapeError(f"{where}: a 0-d array needs numpy shape semantics (np_shape=True); "
                             "MXNet's legacy format reads ndim 0 as 'no array'")
        head = (struct.pack("<Ii", dense_magic, _STYPE_DEFAULT) + _shape_bytes(arr.shape)
                + struct.pack("<iii", *dev, flag))
        return head, [arr]
    raise TypeError(f"{where}: cannot save a {type(value).__name__}; expected numpy.ndarray, "
                    "CSR or RSP")


def _dense_magic(values, np_shape):
    sparse = [i for i, v in enumerate(values) if isinstance(v, (CSR, RSP))]
    if np_shape is None:
        np_shape = any(isinstance(v, (np.ndarray, np.generic)) and np.ndim(v) == 0
                       for v in values)
    elif np_shape and sparse:
        raise StorageError(f"array {sparse[0]}: MXNet allows only default storage under numpy "
                           "shape semantics (np_shape=True)")
    return V3_MAGIC if np_shape else V2_MAGIC


def _write_all(write, data, np_shape=None):
    values, names = _normalize(data)
    magic = _dense_magic(values, np_shape)
    parts = [_array_parts(v, f"array {i}" + (f" ({names[i]!r})" if names else ""), magic)
             for i, v in enumerate(values)]      # validate everything before writing a byte
    write(struct.pack("<QQQ", LIST_MAGIC, 0, len(values)))
    for head, arrays in parts:
        write(head)
        for a in arrays:
            buf = memoryview(a.reshape(-1).view(np.uint8))
            for start in range(0, len(buf), _CHUNK):
                write(buf[start:start + _CHUNK])
    enc = [n.encode("utf-8") for n in names] if names else []
    write(struct.pack("<Q", len(enc)))
    for b in enc:
        write(struct.pack("<Q", len(b)))
        write(b)


def dumps_raw(data, np_shape=None) -> bytes:
    """The bytes :func:`save_raw` would write."""
    out = io.BytesIO()
    _write_all(out.write, data, np_shape)
    return out.getvalue()


def save_raw(fname_or_fileobj, data, np_shape=None) -> None:
    """Save ``data`` (list, tuple or dict str -> raw value) in MXNet 1.9.1's NDArray format.

    A path is written through a temporary file in the same directory and ``os.replace``, so an
    interrupted save leaves any previous file intact (and its temp file goes at the next save
    of the same target). A binary file object is written in place.

    ``np_shape`` picks the array version of dense arrays, as MXNet's shape semantics do:
    ``False`` writes version 2 (MXNet's default; 0-d arrays raise ShapeError), ``True`` writes
    version 3 (MXNet loads it only inside ``mx.util.np_shape(True)``; sparse arrays raise
    StorageError, as in MXNet), ``None`` picks version 3 only when a 0-d array is present.
    Sparse arrays are always version 2, so MXNet 1.9.1 cannot load a file that holds both a 0-d
    and a sparse array (it allows no mixing of versions); sparsym can.
    """
    if hasattr(fname_or_fileobj, "write"):
        _write_all(fname_or_fileobj.write, data, np_shape)
        return
    fname = os.fspath(fname_or_fileobj)
    _normalize(data)   # fail on bad input before creating a temp file
    atomic_write(fname, writer=lambda f: _write_all(f.write, data, np_shape))


def dumps_array(value, dev=_CPU) -> bytes:
    """One raw value in MXNet's single-array format (``MXNDArraySaveRawBytes``, the
    ``handle`` bytes of an NDArray's pickled state); a 0-d array is written as version 3."""
    magic = V3_MAGIC if isinstance(value, (np.ndarray, np.generic)) and np.ndim(value) == 0 \
        else V2_MAGIC
    head, arrays = _array_parts(value, "array", magic, dev)
    return head + b"".join(a.reshape(-1).view(np.uint8).tobytes() for a in arrays)


def loads_array(buf):
    """``(value, (dev_type, dev_id))`` from :func:`dumps_array`'s bytes (or MXNet's); value is
    None for an MXNet "none" array. Raises FormatError on corrupt or trailing bytes."""
    view = memoryview(buf).cast("B")
    r = _Reader(io.BytesIO(view), view.nbytes)
    value = _read_array(r, "array")
    if r.remaining:
        raise FormatError(f"array: expected end after the data, got {r.remaining} trailing bytes")
    return value, r.dev


# ============================================================================ loading
class _Reader:
    """Reads exact byte counts from a binary stream of known size, or raises FormatError."""

    def __init__(self, stream, size):
        self.stream = stream
        self.size = size
        self.pos = 0
        self.dev = _CPU      # the context of the last array read
        self.np_shape = None  # True/False: the shape semantics dense arrays must be saved in

    @property
    def remaining(self):
        return self.size - self.pos

    def _need(self, n, what):
        if n > self.remaining:
            raise FormatError(f"{what}: truncated at byte {self.pos}: expected {n} bytes, got "
                              f"{self.remaining}")

    def read(self, n, what):
        self._need(n, what)
        b = self.stream.read(n)
        if len(b) != n:
            raise FormatError(f"{what}: truncated at byte {self.pos}: expected {n} bytes, got "
                              f"{len(b)}")
        self.pos += n
        return b

    def unpack(self, fmt, what):
        return struct.unpack("<" + fmt, self.read(struct.calcsize("<" + fmt), what))

    def array(self, dtype, shape, what):
        count = 1
        for s in shape:
            count *= s
        nbytes = count * dtype.itemsize
        self._need(nbytes, what)
        try:
            out = np.empty(shape, dtype=dtype)
        except (ValueError, MemoryError) as e:
            raise FormatError(f"{what}: cannot hold shape {tuple(shape)}: {e}") from None
        view = memoryview(out.reshape(-1).view(np.uint8))
        got = 0
        while got < nbytes:
            n = self.stream.readinto(view[got:got + _CHUNK])
            if not n:
                raise FormatError(f"{what}: truncated at byte {self.pos + got}: expected "
                                  f"{nbytes} bytes, got {got}")
            got += n
        self.pos += nbytes
        if not dtype.isnative:
            out = out.astype(dtype.newbyteorder("="))
        return out


def _read_shape(r, what):
    """Shape tuple, or None for a "none" shape (ndim -1 or a -1 dim)."""
    (ndim,) = r.unpack("i", f"{what} ndim")
    if ndim == -1:
        return None
    if ndim < 0 or ndim > _MAX_NDIM:
        raise FormatError(f"{what}: ndim must be in [0, {_MAX_NDIM}], got {ndim}")
    dims = r.unpack(f"{ndim}q", f"{what} ({ndim} dims)")
    if any(d == -1 for d in dims):
        return None
    if any(d < 0 for d in dims):
        raise FormatError(f"{what}: dims must be >= 0, got {tuple(dims)}")
    return tuple(dims)


def _read_ctx_type(r, where):
    dev_type, dev_id = r.unpack("ii", f"{where} context")
    if dev_type not in _DEV_TYPES or dev_id < 0:
        raise FormatError(f"{where} context: expected a device type in {sorted(_DEV_TYPES)} and "
                          f"id >= 0, got ({dev_type}, {dev_id})")
    r.dev = (dev_type, dev_id)
    (flag,) = r.unpack("i", f"{where} type flag")
    if flag not in FLAG_DTYPES:
        raise FormatError(f"{where} type flag: expected one of {sorted(FLAG_DTYPES)}, got {flag}")
    return FLAG_DTYPES[flag]


def _read_legacy(r, magic, where):
    """Versions 1 and 0: dense only; version 0's first u32 is the ndim of a u32 shape."""
    if magic == V1_MAGIC:
        shape = _read_shape(r, f"{where} shape")
        if shape is not None and len(shape) == 0:
            shape = None
    else:
        ndim = magic
        if ndim > _MAX_NDIM:
            raise FormatError(f"{where}: bad array magic 0x{magic:08X} (expected 0x{V2_MAGIC:08X},"
                              f" 0x{V3_MAGIC:08X}, 0x{V1_MAGIC:08X} or a legacy ndim <= "
                              f"{_MAX_NDIM})")
        shape = tuple(r.unpack(f"{ndim}I", f"{where} legacy shape ({ndim} dims)")) or None
    if shape is None:
        return None
    dtype = _read_ctx_type(r, where)
    return r.array(dtype, shape, f"{where} data")


def _peek_ndim(r):
    """The ndim field that comes next, without consuming it (None if truncated)."""
    pos = r.stream.tell()
    b = r.stream.read(4)
    r.stream.seek(pos)
    return struct.unpack("<i", b)[0] if len(b) == 4 else None


def _read_array(r, where):
    (magic,) = r.unpack("I", f"{where} magic")
    if magic not in (V2_MAGIC, V3_MAGIC):
        return _read_legacy(r, magic, where)
    (stype,) = r.unpack("i", f"{where} storage type")
    if stype not in _NUM_AUX:
        raise FormatError(f"{where} storage type: expected 0 (default), 1 (row_sparse) or "
                          f"2 (csr), got {stype}")
    if r.np_shape is not None and stype == _STYPE_DEFAULT and (magic == V3_MAGIC) != r.np_shape \
            and _peek_ndim(r) != 0:
        # MXNet refuses to read a dense array under the other shape semantics; a 0-d array,
        # which only version 3 can hold (sparsym writes it outside np_shape too), loads anyway
        raise FormatError(f"{where}: ndarray was saved in " + (
            "np shape semantics, must be loaded in the same semantics (mx.np_shape(True))"
            if magic == V3_MAGIC else "legacy shape semantics, must be loaded in the same "
            "semantics (outside mx.np_shape(True))"))
    nad = _NUM_AUX[stype]
    sshape = _read_shape(r, f"{where} storage shape") if nad else None
    shape = _read_shape(r, f"{where} shape")
    if shape is None or (len(shape) == 0 and magic != V3_MAGIC):
        return None                          # MXNet: a "none" array, nothing more is stored
    dtype = _read_ctx_type(r, where)
    if not nad:
        return r.array(dtype, shape, f"{where} data")
    aux = []
    for k in range(nad):
        (flag,) = r.unpack("i", f"{where} aux {k} type flag")
        if flag not in FLAG_DTYPES or FLAG_DTYPES[flag].kind not in "iu":
            raise FormatError(f"{where} aux {k} type flag: expected an integer type flag, got "
                              f"{flag}")
        ashape = _read_shape(r, f"{where} aux {k} shape")
        if ashape is None or len(ashape) != 1:
            raise FormatError(f"{where} aux {k} shape: expected 1-D, got {ashape}")
        aux.append((FLAG_DTYPES[flag], ashape))
    # MXNet sizes the data from the indices aux shape and ignores the stored first storage dim,
    # which arrays made by tostype()/cast_storage leave stale (0); only its other dims are used.
    if stype == _STYPE_CSR:
        if len(shape) != 2:
            raise FormatError(f"{where} shape: csr must be 2-D, got {shape}")
        if sshape is not None and len(sshape) not in (0, 1):
            raise FormatError(f"{where} storage shape: csr expects (nnz,), got {sshape}")
        if aux[0][1] != (shape[0] + 1,):
            raise FormatError(f"{where} indptr shape: expected ({shape[0] + 1},), got "
                              f"{aux[0][1]}")
        data = r.array(dtype, aux[1][1], f"{where} data")
        indptr = r.array(aux[0][0], aux[0][1], f"{where} indptr").astype(IDX, copy=False)
        indices = r.array(aux[1][0], aux[1][1], f"{where} indices").astype(IDX, copy=False)
        try:
            check_csr(data, indices, indptr, shape, where=where)
        except StorageError as e:
            raise FormatError(f"corrupt file: {e}") from None
        return CSR(data, indices, indptr, shape)
    if len(shape) < 1:
        raise FormatError(f"{where} shape: row_sparse needs at least 1 dimension, got {shape}")
    if sshape is not None and len(sshape) and tuple(sshape[1:]) != shape[1:]:
        raise FormatError(f"{where} storage shape: row_sparse expects (nnr,) + {shape[1:]}, got "
                          f"{sshape}")
    data = r.array(dtype, aux[0][1] + shape[1:], f"{where} data")
    indices = r.array(aux[0][0], aux[0][1], f"{where} indices").astype(IDX, copy=False)
    try:
        check_rsp(data, indices, shape, where=where)
    except StorageError as e:
        raise FormatError(f"corrupt file: {e}") from None
    return RSP(data, indices, shape)


def _load_stream(stream, size, np_shape=None):
    r = _Reader(stream, size)
    r.np_shape = np_shape
    magic, _reserved = r.unpack("QQ", "file header")
    if magic != LIST_MAGIC:
        raise FormatError(f"file header: bad magic 0x{magic:X}, expected 0x{LIST_MAGIC:X} "
                          "(not an MXNet NDArray file)")
    (n,) = r.unpack("Q", "array count")
    if n * 4 + 8 > r.remaining:      # an array takes at least 4 bytes, the name count 8
        raise FormatError(f"array count: {n} arrays cannot fit in the {r.remaining} bytes left")
    values = [_read_array(r, f"array {i}") for i in range(n)]
    (m,) = r.unpack("Q", "name count")
    if m not in (0, n):
        raise FormatError(f"name count: expected 0 or {n} (one per array), got {m}")
    names = []
    for i in range(m):
        (ln,) = r.unpack("Q", f"name {i} length")
        raw = r.read(ln, f"name {i}")
        try:
            names.append(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise FormatError(f"name {i}: not valid utf-8 ({e})") from None
    if r.remaining:
        raise FormatError(f"end of file: expected end after the names, got {r.remaining} "
                          "trailing bytes")
    if m:
        return dict(zip(names, values))
    return values


def load_raw(fname_or_bytes, np_shape=None):
    """Load an MXNet NDArray file: a list, or a dict str -> value when the file has names.

    Accepts a path, ``bytes``/``bytearray``/``memoryview`` holding the file, or a seekable binary
    file object. Values are ``numpy.ndarray``, ``CSR``, ``RSP`` (indices int64), or ``None`` for
    an MXNet "none" array. Raises :class:`FormatError` on truncated or corrupt input.
    ``np_shape`` True/False makes dense arrays of the other version (3 / 2) a FormatError, as
    MXNet's load under and outside numpy shape semantics; None reads both.
    """
    src = fname_or_bytes
    if isinstance(src, (bytes, bytearray, memoryview)):
        buf = memoryview(src).cast("B")
        return _load_stream(io.BytesIO(buf), buf.nbytes, np_shape)
    if hasattr(src, "readinto"):
        start = src.tell()
        size = src.seek(0, os.SEEK_END) - start
        src.seek(start)
        return _load_stream(src, size, np_shape)
    remove_stale_temps(src)  # what an interrupted save of this file left beside it
    with open_for_load(src) as f:
        return _load_stream(f, os.fstat(f.fileno()).st_size, np_shape)
