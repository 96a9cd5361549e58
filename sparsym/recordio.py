"""RecordIO: MXNet's ``.rec`` record files and their ``.idx`` indexes, byte for byte.

A record is written as ``magic (u32) | lrec (u32) | data | zero padding to 4 bytes``, where
``lrec = cflag << 29 | length``. A payload containing the magic number at a 4-byte aligned
offset is split there into parts (cflag 1 = first, 2 = middle, 3 = last; 0 = whole record)
and the magic itself is dropped, so that a reader can always resynchronise on the magic;
reading puts it back. All integers are little-endian. The ``.idx`` file is text:
``key\\tbyte offset\\n`` per record. Files written here load in MXNet and the reverse.

``pack``/``unpack`` prepend/parse the image-record header ``IRHeader`` (flag, label, id,
id2) used by ``im2rec`` and ImageRecordIter; ``pack_img``/``unpack_img`` also encode or
decode the image, with Pillow when it is installed (MXNet uses OpenCV).
"""
from __future__ import annotations

import numbers
import os
import struct
from collections import namedtuple

import numpy as np

from .base import FormatError, MXNetError

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img",
           "unpack_img"]

# MXNet's module holds its OpenCV handle (None without OpenCV); images go through Pillow here
cv2 = None

_MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", _MAGIC)
_HEAD = struct.Struct("<II")
_MAX_LEN = 1 << 29  # the length field has 29 bits


def _padded(n):
    return (n + 3) & ~3


def _magic_offsets(buf):
    """4-byte aligned offsets at which ``buf`` holds the magic number (where it is split)."""
    n = len(buf) & ~3
    if n == 0:
        return ()
    words = np.frombuffer(buf, dtype="<u4", count=n // 4)
    return (np.flatnonzero(words == _MAGIC) * 4).tolist()


def _encode(buf):
    """The bytes of one record holding ``buf`` (split at aligned magic numbers)."""
    if len(buf) >= _MAX_LEN:
        raise MXNetError(f"RecordIO only accept record less than 2^29 bytes, got {len(buf)}")
    parts = []
    start = 0
    for off in _magic_offsets(buf):
        parts.append(_HEAD.pack(_MAGIC, ((1 if start == 0 else 2) << 29) | (off - start)))
        parts.append(buf[start:off])
        start = off + 4
    parts.append(_HEAD.pack(_MAGIC, ((3 if start else 0) << 29) | (len(buf) - start)))
    parts.append(buf[start:])
    pad = _padded(len(buf)) - len(buf)
    if pad:
        parts.append(b"\0" * pad)
    return b"".join(parts)


class MXRecordIO:
    """Read or write a sequence of binary records (MXNet's RecordIO format).

    Parameters
    ----------
    uri : str
        Path of the record file.
    flag : str
        ``'w'`` to write (the file is truncated), ``'r'`` to read.

    Examples
    --------
    >>> import os, tempfile
    >>> import sparsym as mx
    >>> path = os.path.join(tempfile.mkdtemp(), 'demo.rec')
    >>> w = mx.recordio.MXRecordIO(path, 'w')
    >>> for i in range(3):
    ...     w.write(b'record_%d' % i)
    >>> w.close()
    >>> r = mx.recordio.MXRecordIO(path, 'r')
    >>> r.read(), r.read(), r.read(), r.read()
    (b'record_0', b'record_1', b'record_2', None)
    """

    def __init__(self, uri, flag):
        self.uri = os.fspath(uri)
        self.flag = flag
        self.pid = None
        self.is_open = False
        self.writable = flag == "w"
        self._f = None
        self.open()

    def open(self):
        """Open the file (``reset`` and unpickling call this)."""
        if self.flag not in ("w", "r"):
            raise ValueError("Invalid flag %s" % self.flag)
        self.writable = self.flag == "w"
        try:
            self._f = open(self.uri, "wb" if self.writable else "rb")  # noqa: SIM115
        except OSError as err:
            raise MXNetError(f'RecordIO: cannot open "{self.uri}": {err.strerror}') from err
        self.pid = os.getpid()
        self.is_open = True

    def __del__(self):
        self.close()

    def __getstate__(self):
        # a file handle does not pickle: the copy reopens the file (readers start over)
        if self.writable and self.is_open:
            raise MXNetError(f"MXRecordIO: cannot pickle the open writer of {self.uri!r} "
                             "(reopening it would truncate the file)")
        d = dict(self.__dict__)
        d["_f"] = None
        return d

    def __setstate__(self, d):
        self.__dict__.update(d)
        was_open = self.is_open
        self.is_open = False
        if was_open:
            self.open()

    def _check_pid(self, allow_reset=False):
        """A forked reader reopens the file; other use across processes is refused (MXNet)."""
        if not self.is_open:
            raise RuntimeError(f"MXRecordIO: {self.uri!r} is closed")
        if self.pid != os.getpid():
            if not allow_reset:
                raise RuntimeError("Forbidden operation in multiple processes")
            self.reset()

    def close(self):
        """Close the file (no-op when already closed)."""
        if not getattr(self, "is_open", False):
            return
        self._f.close()
        self._f = None
        self.is_open = False
        self.pid = None

    def reset(self):
        """Reopen the file: a reader starts again from the first record."""
        self.close()
        self.open()

    def write(self, buf):
        """Append one record.

        Parameters
        ----------
        buf : bytes
            The record's payload (less than 2**29 bytes).
        """
        assert self.writable, f"MXRecordIO: {self.uri!r} is opened for reading"
        self._check_pid(allow_reset=False)
        if not isinstance(buf, bytes):
            raise TypeError(f"bytes or integer address expected instead of "
                            f"{type(buf).__name__} instance")
        self._f.write(_encode(buf))

    def _read_exact(self, n, what):
        data = self._f.read(n)
        if len(data) != n:
            raise FormatError(f"Invalid RecordIO File {self.uri!r}: truncated {what} at byte "
                              f"{self._f.tell() - len(data)} (expected {n} bytes, got "
                              f"{len(data)})")
        return data

    def read(self):
        """The next record's payload, or None at the end of the file."""
        assert not self.writable, f"MXRecordIO: {self.uri!r} is opened for writing"
        self._check_pid(allow_reset=True)
        parts = []
        while True:
            head = self._f.read(_HEAD.size)
            if not head and not parts:
                return None
            if len(head) != _HEAD.size:
                raise FormatError(f"Invalid RecordIO File {self.uri!r}: truncated header at "
                                  f"byte {self._f.tell() - len(head)}")
            magic, lrec = _HEAD.unpack(head)
            if magic != _MAGIC:
                raise FormatError(f"Invalid RecordIO File {self.uri!r}: bad magic number "
                                  f"{magic:#010x} at byte {self._f.tell() - _HEAD.size} "
                                  f"(expected {_MAGIC:#010x})")
            cflag, length = lrec >> 29, lrec & (_MAX_LEN - 1)
            data = self._read_exact(_padded(length), "record")
            parts.append(data[:length])
            if cflag in (0, 3):
                return _MAGIC_BYTES.join(parts)

    def tell(self):
        """Byte offset where the next record will be written."""
        assert self.writable, f"MXRecordIO: {self.uri!r} is opened for reading"
        self._check_pid(allow_reset=False)
        return self._f.tell()


class MXIndexedRecordIO(MXRecordIO):
    """RecordIO with an index file, for random access by key.

    Parameters
    ----------
    idx_path : str
        Path of the index file (``key\\toffset`` lines).
    uri : str
        Path of the record file.
    flag : str
        ``'w'`` or ``'r'``.
    key_type : type
        Type of the keys (``int`` by default).

    Examples
    --------
    >>> import os, tempfile
    >>> import sparsym as mx
    >>> d = tempfile.mkdtemp()
    >>> w = mx.recordio.MXIndexedRecordIO(os.path.join(d, 'a.idx'), os.path.join(d, 'a.rec'), 'w')
    >>> for i in range(3):
    ...     w.write_idx(i, b'record_%d' % i)
    >>> w.close()
    >>> r = mx.recordio.MXIndexedRecordIO(os.path.join(d, 'a.idx'), os.path.join(d, 'a.rec'), 'r')
    >>> r.keys, r.read_idx(2)
    ([0, 1, 2], b'record_2')
    """

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path = os.fspath(idx_path)
        self.idx = {}
        self.keys = []
        self.key_type = key_type
        self.fidx = None
        super().__init__(uri, flag)

    def open(self):
        super().open()
        self.idx = {}
        self.keys = []
        self.fidx = open(self.idx_path, self.flag)  # noqa: SIM115
        if not self.writable:
            for lineno, line in enumerate(self.fidx, 1):
                fields = line.strip().split("\t")
                if fields == [""]:
                    continue
                try:
                    key, pos = self.key_type(fields[0]), int(fields[1])
                except (ValueError, IndexError):
                    raise FormatError(f"{self.idx_path}:{lineno}: expected 'key<TAB>offset', "
                                      f"got {line.rstrip()!r}") from None
                self.idx[key] = pos
                self.keys.append(key)

    def close(self):
        if not getattr(self, "is_open", False):
            return
        super().close()
        self.fidx.close()
        self.fidx = None

    def __getstate__(self):
        d = super().__getstate__()
        d["fidx"] = None
        return d

    def seek(self, idx):
        """Position the reader at the record of key ``idx``."""
        assert not self.writable, f"MXIndexedRecordIO: {self.uri!r} is opened for writing"
        self._check_pid(allow_reset=True)
        self._f.seek(self.idx[idx])

    def read_idx(self, idx):
        """The record of key ``idx``."""
        self.seek(idx)
        return self.read()

    def write_idx(self, idx, buf):
        """Append a record under key ``idx`` and index it."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write("%s\t%d\n" % (str(key), pos))
        self.idx[key] = pos
        self.keys.append(key)


IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
IRHeader.__doc__ = """Header of an image record.

Parameters
----------
flag : int
    0 for a scalar label; else the number of float32 labels stored after the header.
label : float or array
    The label(s).
id : int
    Record id.
id2 : int
    Second id (unused by MXNet's iterators).
"""
_IR = struct.Struct("<IfQQ")


def pack(header, s):
    """Prepend an ``IRHeader`` (and a label vector, if any) to the byte string ``s``.

    Parameters
    ----------
    header : IRHeader
        A scalar ``label`` sets ``flag`` to 0; an array label is stored as float32 after
        the header and ``flag`` becomes its size.
    s : bytes
        The payload.

    Examples
    --------
    >>> import sparsym as mx
    >>> s = mx.recordio.pack(mx.recordio.IRHeader(0, [1, 2], 7, 0), b'abc')
    >>> header, payload = mx.recordio.unpack(s)
    >>> header.flag, header.label.tolist(), header.id, payload
    (2, [1.0, 2.0], 7, b'abc')
    """
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + s
    return _IR.pack(*header) + s


def unpack(s):
    """Split a packed record into ``(IRHeader, payload)``."""
    if len(s) < _IR.size:
        raise FormatError(f"recordio.unpack: a record needs a {_IR.size}-byte header, got "
                          f"{len(s)} bytes")
    header = IRHeader(*_IR.unpack(s[:_IR.size]))
    s = s[_IR.size:]
    if header.flag > 0:
        if len(s) < 4 * header.flag:
            raise FormatError(f"recordio.unpack: header announces {header.flag} float32 "
                              f"labels, only {len(s)} bytes follow")
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s


def _pil():
    try:
        from PIL import Image
    except ImportError:
        raise NotImplementedError("recordio.pack_img/unpack_img need an image codec: install "
                                  "Pillow (MXNet uses OpenCV)") from None
    return Image


def unpack_img(s, iscolor=-1):
    """Unpack a record holding an encoded image into ``(IRHeader, image)``.

    Parameters
    ----------
    s : bytes
        A record written by ``pack_img``.
    iscolor : int
        OpenCV's flag: 1 = 3-channel BGR, 0 = grayscale, -1 = as stored (gray images come
        back 2-D, color images BGR).

    Returns
    -------
    header : IRHeader
    img : numpy.ndarray
        uint8 image, ``(H, W)`` or ``(H, W, 3)`` in BGR order like OpenCV.
    """
    import io as _io

    header, s = unpack(s)
    Image = _pil()
    try:
        im = Image.open(_io.BytesIO(s))
        im.load()
    except Exception as err:  # noqa: BLE001  (Pillow raises several types)
        raise FormatError(f"recordio.unpack_img: cannot decode the image: {err}") from err
    if iscolor == 0:
        return header, np.asarray(im.convert("L"))
    if iscolor > 0 or im.mode not in ("L", "1", "I", "I;16"):
        return header, np.ascontiguousarray(np.asarray(im.convert("RGB"))[:, :, ::-1])
    return header, np.asarray(im.convert("L"))


def pack_img(header, img, quality=95, img_fmt=".jpg"):
    """Encode an image and pack it with ``header``.

    Parameters
    ----------
    header : IRHeader
    img : numpy.ndarray
        uint8 image, ``(H, W)`` or ``(H, W, 3)`` in BGR order (OpenCV's convention).
    quality : int
        JPEG quality (0-100) or PNG compression level (0-9).
    img_fmt : str
        ``'.jpg'``/``'.jpeg'`` or ``'.png'``.
    """
    import io as _io

    Image = _pil()
    fmt = img_fmt.upper()
    img = np.asarray(img)
    if img.dtype != np.uint8 or img.ndim not in (2, 3) or (img.ndim == 3 and img.shape[2] != 3):
        raise FormatError(f"recordio.pack_img: expected a uint8 (H, W) or (H, W, 3) image, got "
                          f"{img.dtype} {img.shape}")
    im = Image.fromarray(img if img.ndim == 2 else np.ascontiguousarray(img[:, :, ::-1]))
    out = _io.BytesIO()
    if fmt in (".JPG", ".JPEG"):
        im.save(out, format="JPEG", quality=int(quality))
    elif fmt == ".PNG":
        im.save(out, format="PNG", compress_level=min(max(int(quality), 0), 9))
    else:
        raise NotImplementedError(f"recordio.pack_img: image format {img_fmt!r} is not "
                                  "supported (use '.jpg' or '.png')")
    return pack(header, out.getvalue())
