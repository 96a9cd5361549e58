"""Basic Gluon layers: containers, Dense, Dropout, normalization, Embedding, Lambda."""
from __future__ import annotations

import warnings

import numpy as np

from ... import ndarray
from ...base import MXNetError
from ..block import Block, HybridBlock
from ..parameter import _indent
from .activations import Activation

__all__ = ["Sequential", "HybridSequential", "Dense", "Dropout", "Embedding", "BatchNorm",
           "BatchNormReLU", "InstanceNorm", "LayerNorm", "GroupNorm", "Flatten", "Lambda",
           "HybridLambda"]


def _container_repr(block):
    modstr = "\n".join([f"  ({key}): {_indent(repr(b), 2)}"
                        for key, b in block._children.items()])
    return f"{block.__class__.__name__}(\n{modstr}\n)"


class _Container:
    """Methods Sequential and HybridSequential share: add, indexing, length, repr."""

    def add(self, *blocks):
        """Append Blocks."""
        for block in blocks:
            self.register_child(block)

    def __repr__(self):
        return _container_repr(self)

    def __getitem__(self, key):
        layers = list(self._children.values())[key]
        if isinstance(layers, list):
            net = type(self)(prefix=self._prefix)
            with net.name_scope():
                net.add(*layers)
            return net
        return layers

    def __len__(self):
        return len(self._children)


class Sequential(_Container, Block):
    """Stack Blocks one after another.

    Examples
    --------
    >>> import sparsym as mx
    >>> net = mx.gluon.nn.Sequential()
    >>> with net.name_scope():
    ...     net.add(mx.gluon.nn.Dense(4, in_units=3), mx.gluon.nn.Dense(2, in_units=4))
    >>> net.initialize()
    >>> net(mx.nd.ones((5, 3))).shape
    (5, 2)
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def forward(self, x):
        for block in self._children.values():
            x = block(x)
        return x

    def hybridize(self, active=True, **kwargs):
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn(f"All children of this Sequential layer '{self.prefix}' are "
                          "HybridBlocks. Consider using HybridSequential for the best "
                          "performance.", stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(_Container, HybridBlock):
    """Stack HybridBlocks one after another (hybridizable as a whole)."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x):
        for block in self._children.values():
            x = block(x)
        return x


class Dense(HybridBlock):
    """A fully connected layer: ``activation(dot(x, weight.T) + bias)``.

    Parameters
    ----------
    units : int
    activation : str, optional
    use_bias : bool
    flatten : bool
        Flatten all but the first input axis (else apply to the last axis).
    dtype : str
    weight_initializer, bias_initializer : Initializer or str
    in_units : int
        Input size; 0 infers it at the first forward.
    """

    def __init__(self, units, activation=None, use_bias=True, flatten=True, dtype="float32",
                 weight_initializer=None, bias_initializer="zeros", in_units=0, **kwargs):
        super().__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get("weight", shape=(units, in_units),
                                          init=weight_initializer, dtype=dtype,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=(units,), init=bias_initializer,
                                            dtype=dtype, allow_deferred_init=True)
            else:
                self.bias = None
            if activation is not None:
                self.act = Activation(activation, prefix=activation + "_")
            else:
                self.act = None

    def hybrid_forward(self, F, x, weight, bias=None):
        if bias is None:
            act = F.FullyConnected(x, weight, no_bias=True, num_hidden=self._units,
                                   flatten=self._flatten, name="fwd")
        else:
            act = F.FullyConnected(x, weight, bias, num_hidden=self._units,
                                   flatten=self._flatten, name="fwd")
        if self.act is not None:
            act = self.act(act)
        return act

    def __repr__(self):
        shape = self.weight.shape
        layout = f"{shape[1] if shape[1] else None} -> {shape[0]}"
        return f"{self.__class__.__name__}({layout}, {self.act if self.act else 'linear'})"


class Dropout(HybridBlock):
    """Zero inputs with probability ``rate`` in training (scaled by 1/(1-rate)).

    Parameters
    ----------
    rate : float
    axes : tuple of int
        Axes along which one mask is shared.
    """

    def __init__(self, rate, axes=(), **kwargs):
        super().__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F, x):
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, name="fwd", cudnn_off=False)
        return F.identity(x)

    def __repr__(self):
        return f"{self.__class__.__name__}(p = {self._rate}, axes={self._axes})"


class BatchNorm(HybridBlock):
    """Batch normalization over axis ``axis`` with running statistics.

    Parameters
    ----------
    axis : int
    momentum : float
    epsilon : float
    center, scale : bool
        Learn beta / gamma.
    use_global_stats : bool
    beta_initializer, gamma_initializer, running_mean_initializer,
    running_variance_initializer : Initializer or str
    in_channels : int
    """

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, beta_initializer="zeros", gamma_initializer="ones",
                 running_mean_initializer="zeros", running_variance_initializer="ones",
                 in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"axis": axis, "eps": epsilon, "momentum": momentum,
                        "fix_gamma": not scale, "use_global_stats": use_global_stats}
        self._axis = axis
        if in_channels != 0:
            self.in_channels = in_channels
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                     shape=(in_channels,), init=gamma_initializer,
                                     allow_deferred_init=True, differentiable=scale)
        self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                    shape=(in_channels,), init=beta_initializer,
                                    allow_deferred_init=True, differentiable=center)
        self.running_mean = self.params.get("running_mean", grad_req="null",
                                            shape=(in_channels,),
                                            init=running_mean_initializer,
                                            allow_deferred_init=True, differentiable=False)
        self.running_var = self.params.get("running_var", grad_req="null",
                                           shape=(in_channels,),
                                           init=running_variance_initializer,
                                           allow_deferred_init=True, differentiable=False)

    def cast(self, dtype):
        if np.dtype(dtype).name == "float16":
            dtype = "float32"  # BatchNorm keeps float32 statistics (MXNet's rule)
        super().cast(dtype)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.BatchNorm(x, gamma, beta, running_mean, running_var, name="fwd",
                           **self._kwargs)

    def __repr__(self):
        # MXNet's BatchNorm shows in_channels=None until the first forward infers it
        in_channels = self.gamma.shape[0]
        content = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return (f"{self.__class__.__name__}({content}, "
                f"in_channels={in_channels if in_channels else None})")


class BatchNormReLU(BatchNorm):
    """Batch normalization followed by ReLU, as one operator
    (``contrib.BatchNormWithReLU``; MXNet runs it with MKL-DNN only, sparsym everywhere).

    Parameters
    ----------
    As :class:`BatchNorm`'s.
    """

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.contrib.BatchNormWithReLU(x, gamma, beta, running_mean, running_var,
                                           name="fwd", **self._kwargs)

class Embedding(HybridBlock):
    """Look up rows of a (input_dim, output_dim) weight by index.

    Parameters
    ----------
    input_dim, output_dim : int
    dtype : str
    weight_initializer : Initializer or str
    sparse_grad : bool
        The weight's gradient is row_sparse (only the looked-up rows).
    """

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 sparse_grad=False, **kwargs):
        super().__init__(**kwargs)
        grad_stype = "row_sparse" if sparse_grad else "default"
        dtype = np.dtype(dtype).name  # the operator takes the dtype's name (np.float64 too)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": sparse_grad}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      allow_deferred_init=True, grad_stype=grad_stype)

    def hybrid_forward(self, F, x, weight):
        return F.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return (f"{self.__class__.__name__}({k['input_dim']} -> {k['output_dim']}, "
                f"{k['dtype']})")


class Flatten(HybridBlock):
    """Reshape to (batch, everything else)."""

    def hybrid_forward(self, F, x):
        return F.Flatten(x)

    def __repr__(self):
        return self.__class__.__name__


class _Norm(HybridBlock):
    """Shared gamma/beta parameters of the instance, layer and group norms."""

    def __init__(self, center, scale, beta_initializer, gamma_initializer, in_channels,
                 **kwargs):
        super().__init__(**kwargs)
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                     shape=(in_channels,), init=gamma_initializer,
                                     allow_deferred_init=True)
        self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                    shape=(in_channels,), init=beta_initializer,
                                    allow_deferred_init=True)

    def __repr__(self):
        # MXNet shows in_channels=0 until the first forward infers it
        content = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{self.__class__.__name__}({content}, in_channels={self.gamma.shape[0]})"


class InstanceNorm(_Norm):
    """Normalize each sample's channel over its spatial axes (``axis`` is the channel)."""

    def __init__(self, axis=1, epsilon=1e-5, center=True, scale=False,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0, **kwargs):
        super().__init__(center, scale, beta_initializer, gamma_initializer, in_channels,
                         **kwargs)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon

    def hybrid_forward(self, F, x, gamma, beta):
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, name="fwd", eps=self._epsilon)
        x = x.swapaxes(1, self._axis)
        return F.InstanceNorm(x, gamma, beta, name="fwd",
                              eps=self._epsilon).swapaxes(1, self._axis)


class LayerNorm(_Norm):
    """Normalize over axis ``axis`` of each sample."""

    def __init__(self, axis=-1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0, **kwargs):
        super().__init__(center, scale, beta_initializer, gamma_initializer, in_channels,
                         **kwargs)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon

    def hybrid_forward(self, F, data, gamma, beta):
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)


class GroupNorm(_Norm):
    """Normalize each sample over groups of ``num_groups`` channels."""

    def __init__(self, num_groups=1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0, **kwargs):
        super().__init__(center, scale, beta_initializer, gamma_initializer, in_channels,
                         **kwargs)
        self._kwargs = {"eps": epsilon, "num_groups": num_groups, "center": center,
                        "scale": scale}
        self._num_groups = num_groups
        self._epsilon = epsilon

    def __repr__(self):
        # MXNet's GroupNorm does not show in_channels
        content = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{self.__class__.__name__}({content})"

    def hybrid_forward(self, F, data, gamma, beta):
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups,
                           eps=self._epsilon)


class Lambda(Block):
    """Wrap a function (or the name of an ``mx.nd`` operator) as a Block."""

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            if not hasattr(ndarray, function):
                raise MXNetError(f"Function name {function} is not found in ndarray.")
            self._func_impl = getattr(ndarray, function)
        elif callable(function):
            self._func_impl = function
        else:
            raise ValueError(f"Unrecognized function in lambda: {function} of type "
                             f"{type(function)}")

    def forward(self, *args):
        return self._func_impl(*args)

    def __repr__(self):
        return f"{self.__class__.__name__}({self._func_impl.__name__})"


class HybridLambda(HybridBlock):
    """Wrap ``function(F, *args)`` (or an operator name) as a HybridBlock."""

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            from ... import symbol
            if not (hasattr(ndarray, function) and hasattr(symbol, function)):
                raise MXNetError(f"Function name {function} is not found in symbol/ndarray.")
            self._func = lambda F, *args: getattr(F, function)(*args)
            self._func_name = function
        elif callable(function):
            self._func = function
            self._func_name = function.__name__
        else:
            raise ValueError(f"Unrecognized function in lambda: {function} of type "
                             f"{type(function)}")

    def hybrid_forward(self, F, x, *args):
        return self._func(F, x, *args)

    def __repr__(self):
        return f"{self.__class__.__name__}({self._func_name})"

