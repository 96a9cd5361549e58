"""Contributed layers: Concurrent, HybridConcurrent, Identity, SparseEmbedding, PixelShuffle."""
from __future__ import annotations

import numbers

from .... import ndarray as nd
from ...block import Block, HybridBlock
from ...nn import BatchNorm, HybridSequential, Sequential

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "SparseEmbedding", "PixelShuffle1D",
           "PixelShuffle2D", "PixelShuffle3D", "SyncBatchNorm"]


class Concurrent(Sequential):
    """Run every child on the same input and concatenate the outputs along ``axis``."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):
        return nd.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class HybridConcurrent(HybridSequential):
    """Hybridizable :class:`Concurrent`."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class Identity(HybridBlock):
    """Return the input unchanged (a placeholder branch in Concurrent blocks)."""

    def hybrid_forward(self, F, x):
        return x


class SparseEmbedding(Block):
    """Embedding whose weight is row_sparse and pulled per batch from the Trainer's store:
    only the looked-up rows are fetched and updated (the gradient is row_sparse)."""

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": True}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      grad_stype="row_sparse", stype="row_sparse")

    def forward(self, x):
        weight = self.weight.row_sparse_data(x)
        return nd.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return (f"{self.__class__.__name__}({k['input_dim']} -> {k['output_dim']}, "
                f"{k['dtype']})")


def _factors(factor, n):
    if isinstance(factor, numbers.Integral):
        return (int(factor),) * n
    factors = tuple(int(f) for f in factor)
    assert len(factors) == n, f"wrong length {len(factors)}"
    return factors


class PixelShuffle1D(HybridBlock):
    """(N, C*f, W) -> (N, C, W*f)."""

    def __init__(self, factor):
        super().__init__()
        self._factor = int(factor)

    def hybrid_forward(self, F, x):
        f = self._factor
        x = F.reshape(x, (0, -4, -1, f, 0))
        x = F.transpose(x, (0, 1, 3, 2))
        return F.reshape(x, (0, 0, -3))

    def __repr__(self):
        return f"{self.__class__.__name__}({self._factor})"


class PixelShuffle2D(HybridBlock):
    """(N, C*f1*f2, H, W) -> (N, C, H*f1, W*f2)."""

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors(factor, 2)

    def hybrid_forward(self, F, x):
        f1, f2 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2, 0, 0))
        x = F.reshape(x, (0, 0, -4, f1, f2, 0, 0))
        x = F.transpose(x, (0, 1, 4, 2, 5, 3))
        return F.reshape(x, (0, 0, -3, -3))

    def __repr__(self):
        return f"{self.__class__.__name__}({self._factors})"


class PixelShuffle3D(HybridBlock):
    """(N, C*f1*f2*f3, D, H, W) -> (N, C, D*f1, H*f2, W*f3)."""

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors(factor, 3)

    def hybrid_forward(self, F, x):
        f1, f2, f3 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2 * f3, 0, 0, 0))
        x = F.swapaxes(x, 2, 3)
        x = F.reshape(x, (0, 0, 0, -4, f1, f2 * f3, 0, 0))
        x = F.reshape(x, (0, 0, -3, 0, 0, 0))
        x = F.swapaxes(x, 3, 4)
        x = F.reshape(x, (0, 0, 0, 0, -4, f2, f3, 0))
        x = F.reshape(x, (0, 0, 0, -3, 0, 0))
        x = F.swapaxes(x, 4, 5)
        return F.reshape(x, (0, 0, 0, 0, -3))

    def __repr__(self):
        return f"{self.__class__.__name__}({self._factors})"


class SyncBatchNorm(BatchNorm):
    """Batch normalization over the channel axis 1 with statistics shared by
    ``num_devices`` devices (MXNet's contrib ``SyncBatchNorm``).

    On one device it is :class:`~sparsym.gluon.nn.BatchNorm`; ``num_devices > 1`` raises
    NotImplementedError at the first forward (sparsym has no cross-device barrier).

    Parameters
    ----------
    in_channels : int
    num_devices : int or None
        None means one (MXNet counts the GPUs, and there are none).
    momentum, epsilon, center, scale, use_global_stats, beta_initializer,
    gamma_initializer, running_mean_initializer, running_variance_initializer :
        As for BatchNorm.
    """

    def __init__(self, in_channels=0, num_devices=None, momentum=0.9, epsilon=1e-5,
                 center=True, scale=True, use_global_stats=False, beta_initializer="zeros",
                 gamma_initializer="ones", running_mean_initializer="zeros",
                 running_variance_initializer="ones", **kwargs):
        super().__init__(axis=1, momentum=momentum, epsilon=epsilon, center=center,
                         scale=scale, use_global_stats=use_global_stats,
                         beta_initializer=beta_initializer,
                         gamma_initializer=gamma_initializer,
                         running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer,
                         in_channels=in_channels, **kwargs)
        self._kwargs = {"eps": epsilon, "momentum": momentum, "fix_gamma": not scale,
                        "use_global_stats": use_global_stats,
                        "ndev": 1 if num_devices is None else num_devices,
                        "key": self.prefix}

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.contrib.SyncBatchNorm(x, gamma, beta, running_mean, running_var, name="fwd",
                                       **self._kwargs)
