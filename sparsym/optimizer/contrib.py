"""Contributed optimizers (MXNet's ``mxnet.optimizer.contrib``): GroupAdaGrad."""
from __future__ import annotations

import numpy as np

from .. import storage as st
from ..base import ParamError, ShapeError
from ..ndarray.ndarray import wrap
from .optimizer import Optimizer, _real, full_rows, grad_parts, register

__all__ = ["GroupAdaGrad"]


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad with one accumulator per row (Duchi et al.), for 2-D weights.

    ``G = clip(rescale_grad*g)``; ``h[i] += mean(G[i]**2)``;
    ``w[i] -= lr * G[i] / sqrt(h[i] + eps)``. A row_sparse gradient updates only its rows.
    Weight decay is not supported (MXNet asserts ``wd == 0``).

    Parameters
    ----------
    eps : float, default 1e-5
        Added to the history under the square root.

    Examples
    --------
    >>> import sparsym as mx
    >>> opt = mx.optimizer.contrib.GroupAdaGrad(learning_rate=0.5, eps=0)
    >>> w = mx.nd.ones((2, 2))
    >>> opt.update(0, w, mx.nd.ones((2, 2)) * 2, opt.create_state(0, w))
    >>> print(w.asnumpy())    # 1 - 0.5 * 2 / sqrt(4)
    [[0.5 0.5]
     [0.5 0.5]]
    """

    def __init__(self, eps=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = _real("eps", eps)

    def create_state(self, index, weight):
        if len(weight.shape) != 2:
            raise ShapeError(f"GroupAdaGrad: weights must be 2-D, got shape {weight.shape}")
        hist = np.zeros((weight.shape[0], 1), np.dtype(weight.dtype))
        if weight.stype == "row_sparse":
            n = weight.shape[0]
            return wrap(st.RSP(hist, np.arange(n, dtype=np.int64), (n, 1)), weight.context)
        if weight.stype == "csr":
            return wrap(st.zeros_raw("csr", hist.shape, hist.dtype), weight.context)
        return wrap(hist, weight.context)

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        if wd != 0:
            raise ParamError("Weight decay is not supported for GroupAdaGrad (got wd="
                             f"{wd} for parameter {index!r})")
        is_rsp, g = grad_parts(grad)
        w, h = full_rows(weight), full_rows(state)
        rows = g.indices if is_rsp else slice(None)
        g = (g.data if is_rsp else g) * w.dtype.type(self.rescale_grad)
        if self.clip_gradient:
            np.clip(g, -self.clip_gradient, self.clip_gradient, out=g)
        h[rows] += np.mean(g * g, axis=1, keepdims=True)
        w[rows] -= (lr * g / np.sqrt(h[rows] + self.float_stable_eps)).astype(w.dtype)
