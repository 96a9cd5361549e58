"""Parameter initializers (mx.init / mx.initializer)."""
from __future__ import annotations

import json

import numpy as np

from . import ndarray, random  # noqa: F401  (mx.initializer exposes them, as MXNet's)
from .base import MXNetError, ParamAssertionError, string_types  # noqa: F401
from .ndarray import NDArray, load  # noqa: F401
from .random import rng
from .util import is_np_array  # noqa: F401

__all__ = ["InitDesc", "Initializer", "register", "create", "Zero", "One", "Constant", "Uniform",
           "Normal", "Orthogonal", "Xavier", "MSRAPrelu", "Bilinear", "LSTMBias", "Load",
           "Mixed", "FusedRNN"]

_REGISTRY: dict = {}


def register(klass):
    """Register an initializer class under its lower-case name (and ``alias``)."""
    _REGISTRY[klass.__name__.lower()] = klass
    for a in getattr(klass, "_aliases", ()):
        _REGISTRY[a] = klass
    return klass


def alias(*aliases):
    """Class decorator registering an initializer under extra names (MXNet's ``alias``)."""
    def deco(klass):
        klass._aliases = tuple(getattr(klass, "_aliases", ())) + tuple(a.lower() for a in aliases)
        return register(klass)
    return deco


def create(name, **kwargs):
    """Create an initializer from a name ('normal', 'xavier', ...), from ``dumps()``'s JSON
    (``'["xavier", {"magnitude": 2}]'``, as variables' ``__init__`` attributes hold), or
    return an instance."""
    if isinstance(name, Initializer):
        return name
    if isinstance(name, str) and name.lstrip().startswith("["):
        try:
            klass, params = json.loads(name)
        except (ValueError, TypeError):
            raise MXNetError(f"initializer.create: cannot parse {name!r} (expected dumps() "
                             "output: [name, {params}])") from None
        return create(klass, **dict(params, **kwargs))
    key = str(name).lower()
    if key not in _REGISTRY:
        # MXNet asserts here: an AssertionError (and a ValueError)
        raise ParamAssertionError(f"{name} is not registered. Please register with "
                                  f"initializer.register first (registered: {sorted(_REGISTRY)})")
    return _REGISTRY[key](**kwargs)


class InitDesc(str):
    """A parameter name carrying its symbol attributes (``__init__`` takes priority)."""

    def __new__(cls, name, attrs=None, global_init=None):
        obj = super().__new__(cls, name)
        obj.attrs = attrs or {}
        obj.global_init = global_init
        return obj


class Initializer:
    """Base initializer: dispatches on the parameter name's suffix like MXNet.

    weight -> ``_init_weight``; bias, beta, moving_mean, moving_inv_var... -> 0;
    gamma, moving_var -> 1. A variable's ``init`` attribute overrides this.
    """

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def __eq__(self, other):
        # MXNet 1.9.1: same class and same constructor arguments (so a shared Parameter
        # can be fetched again with an equal, not identical, initializer)
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = None  # equal initializers would need equal hashes; MXNet's are unhashable

    def set_verbosity(self, verbose=False, print_func=None):
        self._verbose = verbose
        self._print_func = print_func
        return self

    def dumps(self):
        """JSON ``[name, kwargs]`` as stored in the ``__init__`` attribute."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, desc, arr):
        legacy = not isinstance(desc, InitDesc)
        if legacy:
            desc = InitDesc(str(desc))
        init = desc.attrs.get("__init__", "") if desc.attrs else ""
        if isinstance(init, Initializer):  # a Gluon Parameter's own initializer
            init._init_dispatch(desc, arr, explicit=True)
            return
        if isinstance(init, (Load, Mixed)):
            init(desc, arr)
            return
        if init:
            if init.lstrip().startswith("["):
                klass, kwargs = json.loads(init)
            else:  # a bare registered name, as Gluon's init='xavier'
                klass, kwargs = init, {}
            create(klass, **kwargs)._init_dispatch(desc, arr, explicit=True)
            return
        self._init_dispatch(desc, arr, legacy=legacy)

    def _init_dispatch(self, desc, arr, explicit=False, legacy=False):
        name = str(desc)
        if explicit:
            self._fill(arr, self._init_weight, name)
        elif legacy and name.startswith("upsampling"):
            # only MXNet's legacy init(str, arr) call; with an InitDesc the bilinear init
            # comes from the variable's __init__ attribute (UpSampling sets it)
            self._fill(arr, self._init_bilinear, name)
        elif name.endswith("bias"):
            self._fill(arr, self._init_bias, name)
        elif name.endswith("gamma"):
            self._fill(arr, self._init_gamma, name)
        elif name.endswith("beta"):
            self._fill(arr, self._init_beta, name)
        elif name.endswith("weight"):
            self._fill(arr, self._init_weight, name)
        elif name.endswith("moving_mean") or name.endswith("moving_inv_var") \
                or name.endswith("moving_avg") or name.endswith("min"):
            self._fill(arr, self._init_zero, name)
        elif name.endswith("moving_var") or name.endswith("max"):
            self._fill(arr, self._init_one, name)
        else:
            self._fill(arr, self._init_default, name)

    @staticmethod
    def _fill(arr, fn, name):
        if not getattr(fn, "__module__", __name__).startswith("sparsym."):
            # a user's initializer method works on NDArrays, as in MXNet (nd ops, out=arr)
            from .ndarray.ndarray import array
            buf = array(np.zeros(arr.shape, dtype=np.dtype(arr.dtype)))
        else:
            buf = np.zeros(arr.shape, dtype=np.dtype(arr.dtype))
        fn(name, buf)
        arr[:] = buf  # casts to the array's storage type (row_sparse keeps non-zero rows)

    def _init_bias(self, name, a):
        a[...] = 0.0

    def _init_gamma(self, name, a):
        a[...] = 1.0

    def _init_beta(self, name, a):
        a[...] = 0.0

    def _init_zero(self, name, a):
        a[...] = 0.0

    def _init_one(self, name, a):
        a[...] = 1.0

    def _init_bilinear(self, name, a):
        weight = np.zeros(a.size, dtype=np.float32)
        shape = a.shape
        f = np.ceil(shape[3] / 2.0)
        c = (2 * f - 1 - f % 2) / (2.0 * f)
        for i in range(a.size):
            x = i % shape[3]
            y = (i // shape[3]) % shape[2]
            weight[i] = (1 - abs(x / f - c)) * (1 - abs(y / f - c))
        a[...] = weight.reshape(shape)

    def _init_weight(self, name, a):
        raise NotImplementedError(f"{type(self).__name__} must override _init_weight")

    def _init_default(self, name, a):
        raise MXNetError(f"Unknown initialization pattern for {name}. Default initialization is "
                         "now limited to \"weight\", \"bias\", \"gamma\" (1.0), and \"beta\" "
                         "(0.0). Please use mx.sym.Variable(init=mx.init.*) to set initialization "
                         "pattern")


@register
class Zero(Initializer):
    """Fill with 0."""

    _aliases = ("zeros",)

    def _init_weight(self, name, a):
        a[...] = 0

    _init_default = _init_weight


@register
class One(Initializer):
    """Fill with 1."""

    _aliases = ("ones",)

    def _init_weight(self, name, a):
        a[...] = 1

    _init_default = _init_weight


@register
class Constant(Initializer):
    """Fill with ``value``."""

    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, name, a):
        a[...] = np.asarray(self.value)

    _init_default = _init_weight

    def dumps(self):
        """JSON ``["constant", {"value": ...}]``; an array value is stored as nested lists
        (MXNet's custom-layer tutorial initializes with ``Constant(ndarray.asnumpy())``)."""
        value = self._kwargs["value"]
        if not np.isscalar(value):
            value = (value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)).tolist()
        return json.dumps([type(self).__name__.lower(), dict(self._kwargs, value=value)])


@register
class Uniform(Initializer):
    """Weights from U(-scale, scale)."""

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, name, a):
        a[...] = rng().uniform(-self.scale, self.scale, a.shape)


@register
class Normal(Initializer):
    """Weights from N(0, sigma^2)."""

    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, name, a):
        a[...] = rng().normal(0, self.sigma, a.shape)


@register
class Orthogonal(Initializer):
    """Orthogonal weights (Saxe et al.), scaled."""

    def __init__(self, scale=1.414, rand_type="uniform"):
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale, self.rand_type = scale, rand_type

    def _init_weight(self, name, a):
        nout = a.shape[0]
        nin = int(np.prod(a.shape[1:]))
        tmp = (rng().uniform(-1, 1, (nout, nin)) if self.rand_type == "uniform"
               else rng().normal(0, 1, (nout, nin)))
        u, _, v = np.linalg.svd(tmp, full_matrices=False)
        q = u if u.shape == tmp.shape else v
        a[...] = (self.scale * q).reshape(a.shape)


@register
class Xavier(Initializer):
    """Xavier/Glorot: scale = sqrt(magnitude / factor) over fan-in/out/avg."""

    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type, self.factor_type, self.magnitude = rnd_type, factor_type, float(magnitude)

    def _init_weight(self, name, a):
        shape = a.shape
        hw = int(np.prod(shape[2:])) if len(shape) > 2 else 1
        if len(shape) < 2:
            raise MXNetError(f"Xavier initializer cannot be applied to vector {name}. It requires "
                             "at least 2D.")
        fan_in, fan_out = shape[1] * hw, shape[0] * hw
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}.get(
            self.factor_type)
        if factor is None:
            raise MXNetError("Incorrect factor type")
        scale = np.sqrt(self.magnitude / factor)
        if self.rnd_type == "uniform":
            a[...] = rng().uniform(-scale, scale, shape)
        elif self.rnd_type == "gaussian":
            a[...] = rng().normal(0, scale, shape)
        else:
            raise MXNetError("Unknown random type")


@register
class MSRAPrelu(Xavier):
    """He initialization for PReLU networks."""

    def __init__(self, factor_type="avg", slope=0.25):
        magnitude = 2.0 / (1 + slope ** 2)
        super().__init__("gaussian", factor_type, magnitude)
        self._kwargs = {"factor_type": factor_type, "slope": slope}


@register
class Bilinear(Initializer):
    """Bilinear upsampling weights."""

    def _init_weight(self, name, a):
        self._init_bilinear(name, a)


@register
class LSTMBias(Initializer):
    """Zero biases except the forget gate's, set to ``forget_bias``.

    Meant as a variable's ``init`` (as the LSTM cells use it); applied by name, a ``*_bias``
    array is zeroed like any bias (MXNet's behaviour).
    """

    def __init__(self, forget_bias=1.0):
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name, a):
        a[...] = 0
        n = a.shape[0] // 4
        a[n:2 * n] = self.forget_bias


@register
class FusedRNN(Initializer):
    """Initialise a fused RNN parameter vector with ``init`` (weights) and zeros (biases)."""

    def __init__(self, init=None, num_hidden=0, num_layers=1, mode="lstm", bidirectional=False,
                 forget_bias=1.0):
        super().__init__(init=init.dumps() if isinstance(init, Initializer) else init,
                         num_hidden=num_hidden, num_layers=num_layers, mode=mode,
                         bidirectional=bidirectional, forget_bias=forget_bias)
        self._init = init if isinstance(init, Initializer) else (
            create(*json.loads(init)[:1], **json.loads(init)[1]) if init else Uniform(0.07))

    def _init_weight(self, name, a):
        self._init._init_weight(name, a)


class Load:
    """Initialize from a dict of arrays (or a .params file), falling back to ``default_init``."""

    def __init__(self, param, default_init=None, verbose=False):
        if isinstance(param, str):
            from .ndarray import load
            param = load(param)
        self.param = {}
        for k, v in param.items():
            self.param[k[4:] if k.startswith(("arg:", "aux:")) else k] = v
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name, arr):
        if name in self.param:
            if arr.shape != self.param[name].shape:
                raise MXNetError(f"Parameter {name} cannot be initialized from loading. Shape "
                                 f"mismatch, target {arr.shape} vs loaded "
                                 f"{self.param[name].shape}")
            arr[:] = self.param[name]
        else:
            if self.default_init is None:
                raise MXNetError(f"Cannot Initialize {name}. Not found in loaded param and no "
                                 "default Initializer is provided.")
            self.default_init(name, arr)


class Mixed:
    """Pick an initializer by the first regex pattern matching the parameter name."""

    def __init__(self, patterns, initializers):
        import re
        if len(patterns) != len(initializers):
            raise MXNetError("patterns and initializers must have the same length")
        self.map = list(zip([re.compile(p) for p in patterns], initializers))

    def __call__(self, name, arr):
        for prog, init in self.map:
            if prog.match(str(name)):
                init(name, arr)
                return
        raise MXNetError(f"Parameter name {name} did not match any pattern. Consider adding a "
                         "\".*\" pattern at the and with default Initializer.")
