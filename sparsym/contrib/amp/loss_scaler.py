"""Dynamic loss scaling for AMP (MXNet 1.9.1's ``LossScaler``)."""
import logging

from ... import autograd
from ... import ndarray as nd


class LossScaler:
    """Dynamic loss scaler: starts at 2**16, halves after a step whose gradients overflow,
    doubles (up to 2**24) after 2000 steps without overflow.

    Attributes
    ----------
    loss_scale : float
        The current loss scale.
    """

    def __init__(self):
        self._loss_scale = 2.0 ** 16
        self._next_loss_scale = self._loss_scale
        self._max_loss_scale = 2.0 ** 24
        self._scale_seq_len = 2000
        self._unskipped = 0

    @property
    def loss_scale(self):
        """The loss scale the next ``scale_loss`` multiplies by."""
        return self._loss_scale

    def has_overflow(self, params):
        """Whether any gradient of ``params`` holds inf or nan; updates the scale.

        Parameters
        ----------
        params : list of Parameter
        """
        grads = [g for p in params if p.grad_req != "null" and p._grad is not None
                 for g in p.list_grad()[:1]]
        finite = True
        with autograd.pause():
            for start in range(0, len(grads), 200):   # MXNet's chunk of arrays per call
                chunk = grads[start:start + 200]
                flag = nd.multi_all_finite(*chunk, num_arrays=len(chunk))
                finite = finite and bool(flag.asnumpy()[0])
        overflow = not finite
        self._loss_scale = self._next_loss_scale
        if overflow:
            self._next_loss_scale = self._loss_scale / 2.0
            self._unskipped = 0
            logging.info("AMP: decreasing loss scale to %f", self._next_loss_scale)
        else:
            self._unskipped += 1
        if self._unskipped == self._scale_seq_len:
            self._unskipped = 0
            self._next_loss_scale = min(self._max_loss_scale, self._loss_scale * 2.0)
            logging.info("AMP: increasing loss scale to %f", self._next_loss_scale)
        return overflow
