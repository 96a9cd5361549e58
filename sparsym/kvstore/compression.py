"""2-bit gradient compression with residual feedback (MXNet's ``{'type': '2bit'}``).

A worker adds each dense gradient to its residual, sends +threshold / -threshold / 0 per
element (2 bits each, four to a byte) and keeps what was not sent in the residual, so the
error of one push is carried into the next (MXNet ``quantize_2bit``):

- ``residual += grad``;
- ``residual >= threshold``: send +threshold, ``residual -= threshold``;
- ``residual <= -threshold``: send -threshold, ``residual += threshold``;
- otherwise send 0.

Row-sparse gradients are never compressed (as in MXNet).
"""
from __future__ import annotations

import numpy as np

from ..base import MXNetError

__all__ = ["TwoBitCompressor", "create_compressor", "quantize_2bit", "dequantize_2bit"]

_POS, _NEG = 3, 2  # MXNet's codes: 0b11 = +threshold, 0b10 = -threshold, 0b00 = 0


def quantize_2bit(grad: np.ndarray, residual: np.ndarray, threshold: float) -> np.ndarray:
    """Quantize ``grad`` (+ ``residual``, updated in place) into a packed uint8 array.

    Element i occupies bits ``2*(i % 4)`` of byte ``i // 4``.
    """
    g = np.asarray(grad).reshape(-1)
    r = residual.reshape(-1)
    if g.size != r.size:
        raise MXNetError(f"2bit compression: gradient has {g.size} elements, residual {r.size}")
    r += g
    pos = r >= threshold
    neg = r <= -threshold
    r[pos] -= threshold
    r[neg] += threshold
    codes = np.zeros(-(-g.size // 4) * 4, dtype=np.uint8)
    codes[:g.size][pos] = _POS
    codes[:g.size][neg] = _NEG
    c = codes.reshape(-1, 4)
    return (c[:, 0] | (c[:, 1] << 2) | (c[:, 2] << 4) | (c[:, 3] << 6)).astype(np.uint8)


def dequantize_2bit(packed: np.ndarray, size: int, threshold: float,
                    dtype=np.float32) -> np.ndarray:
    """Inverse of :func:`quantize_2bit`: a flat array of ``size`` values in {-t, 0, +t}."""
    packed = np.asarray(packed, dtype=np.uint8)
    if packed.size * 4 < size:
        raise MXNetError(f"2bit compression: {packed.size} bytes cannot hold {size} values")
    codes = np.stack([(packed >> s) & 3 for s in (0, 2, 4, 6)], axis=1).reshape(-1)[:size]
    out = np.zeros(size, dtype=dtype)
    out[codes == _POS] = threshold
    out[codes == _NEG] = -threshold
    return out


class TwoBitCompressor:
    """Per-(key, part) residuals for one worker.

    Parameters
    ----------
    threshold : float
        Magnitude sent for an element whose accumulated value reaches it (> 0).
    """

    type = "2bit"

    def __init__(self, threshold=0.5):
        threshold = float(threshold)
        if not threshold > 0:
            raise MXNetError(f"2bit compression: threshold must be > 0, got {threshold}")
        self.threshold = threshold
        self._residuals: dict = {}

    def compress(self, slot, grad: np.ndarray):
        """Return the wire payload ``('2bit', packed, shape, threshold, dtype)`` for ``grad``."""
        grad = np.asarray(grad)
        res = self._residuals.get(slot)
        if res is None or res.shape != grad.shape:
            res = self._residuals[slot] = np.zeros(grad.shape, dtype=np.float32)
        packed = quantize_2bit(grad, res, self.threshold)
        return ("2bit", packed, grad.shape, self.threshold, grad.dtype.str)

    def get_params(self):
        return {"type": self.type, "threshold": self.threshold}


def decode_payload(payload) -> np.ndarray:
    """Dense array from a ``'2bit'`` payload (server side)."""
    _, packed, shape, threshold, dtype = payload
    size = int(np.prod(shape)) if len(shape) else 1
    return dequantize_2bit(packed, size, threshold, np.dtype(dtype)).reshape(shape)


def create_compressor(params):
    """Build a compressor from MXNet's ``compression_params`` dict."""
    if not isinstance(params, dict):
        raise TypeError("compression_params must be a dict, e.g. {'type': '2bit', "
                        "'threshold': 0.5}")
    kind = params.get("type")
    if kind is None:
        raise MXNetError("compression_params requires 'type'")
    if kind == "none":
        return None
    if kind != "2bit":
        raise MXNetError(f"Unknown type for gradient compression {kind}")
    extra = set(params) - {"type", "threshold"}
    if extra:
        raise MXNetError(f"2bit compression: unknown parameter(s) {sorted(extra)}")
    return TwoBitCompressor(params.get("threshold", 0.5))
