"""KVStoreBase: the key-value store interface, its registry, and ``create``.

As in MXNet 1.9, a class registered with ``KVStoreBase.register`` is created by
``mx.kv.create(<lower-case class name>)``; other names give the built-in stores ('local',
'device', and 'dist_*' on Ray).
"""
from __future__ import annotations

import warnings
from collections.abc import Callable

from ..base import MXNetError

__all__ = ["KVStoreBase", "TestStore", "create"]


class KVStoreBase:
    """An abstract key-value store for data-parallel training.

    Subclasses implement ``broadcast``, ``pushpull``, ``is_capable``, ``set_optimizer``,
    ``save_optimizer_states``, ``load_optimizer_states`` and the ``type``, ``rank`` and
    ``num_workers`` properties.
    """

    OPTIMIZER = "optimizer"
    kv_registry: dict = {}

    def broadcast(self, key, value, out, priority=0):
        """Broadcast ``value`` (rank 0's) to ``out`` on every worker."""
        raise NotImplementedError()

    def pushpull(self, key, value, out=None, priority=0):
        """Sum ``value`` over workers and devices into ``out`` (or back into ``value``)."""
        raise NotImplementedError()

    def set_optimizer(self, optimizer):
        """Run ``optimizer`` in the store (when ``is_capable('optimizer')``)."""
        raise NotImplementedError()

    def is_capable(self, capability):
        """Whether the store supports ``capability`` (e.g. ``KVStoreBase.OPTIMIZER``)."""
        raise NotImplementedError()

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Save the optimizer states of the store's updater."""
        raise NotImplementedError()

    def load_optimizer_states(self, fname, resume_update_counts=False):
        """Load optimizer states saved by ``save_optimizer_states`` (update counts restart
        unless the file holds the optimizer or ``resume_update_counts``)."""
        raise NotImplementedError()

    @property
    def type(self):
        """The store's type name."""
        raise NotImplementedError()

    @property
    def rank(self):
        """This worker's rank."""
        raise NotImplementedError()

    @property
    def num_workers(self):
        """The number of workers."""
        raise NotImplementedError()

    @staticmethod
    def register(klass):
        """Register ``klass`` so that ``mx.kv.create(klass.__name__.lower())`` makes one.

        Examples
        --------
        >>> import sparsym as mx
        >>> @mx.kv.KVStoreBase.register
        ... class MyStore(mx.kv.base.TestStore):
        ...     pass
        >>> type(mx.kv.create('mystore')).__name__
        'MyStore'
        """
        name = klass.__name__.lower()
        if name in KVStoreBase.kv_registry:
            old = KVStoreBase.kv_registry[name]
            warnings.warn(f"WARNING: New kvstore {klass.__module__}.{klass.__name__} is "
                          f"overriding existing kvstore {old.__module__}.{old.__name__}",
                          stacklevel=2)
        KVStoreBase.kv_registry[name] = klass
        return klass


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


class SingleWorker:
    """Mixin for stores of one process: rank 0 of 1 worker."""

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1


@KVStoreBase.register
class TestStore(SingleWorker, KVStoreBase):
    """A single-worker store for tests: ``pushpull`` sums the values of one key,
    ``broadcast`` copies; no optimizer (MXNet's ``teststore``)."""

    def broadcast(self, key, value, out, priority=0):
        for o in _as_list(out):
            o[:] = value

    def pushpull(self, key, value, out=None, priority=0):
        values = _as_list(value)
        total = values[0].copy()
        for v in values[1:]:
            total += v.as_in_context(total.context)
        for o in _as_list(value if out is None else out):
            o[:] = total

    @staticmethod
    def is_capable(capability):
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise ValueError(f"Unknown capability: {capability}")

    @property
    def type(self):
        return "teststore"

    def set_optimizer(self, optimizer):
        raise NotImplementedError("teststore has no optimizer (is_capable('optimizer') is "
                                  "False)")

    def save_optimizer_states(self, fname, dump_optimizer=False):
        raise NotImplementedError("teststore has no optimizer states")

    def load_optimizer_states(self, fname, resume_update_counts=False):
        raise NotImplementedError("teststore has no optimizer states")


# The stores this package defines install their builders here when their modules are
# imported (local.py: "local"; dist.py: "dist" and "dist_worker"; kvstore/__init__.py
# imports both), so ``create`` never imports the modules built on this one.
_BUILDERS: dict = {}


def install_store(kind: str, builder: Callable) -> None:
    """Make ``builder`` the constructor ``create`` uses for stores of ``kind``."""
    _BUILDERS[kind] = builder


def store_builder(kind: str) -> Callable:
    """The installed constructor of ``kind`` stores ('local', 'dist', 'dist_worker')."""
    try:
        return _BUILDERS[kind]
    except KeyError:
        raise MXNetError(f"no {kind!r} kvstore is installed: import sparsym.kvstore") from None


_BUILTIN = ("local", "device", "local_allreduce_cpu", "local_allreduce_device", "nccl")


def create(name: str = "local") -> KVStoreBase:
    """Create a key-value store.

    Parameters
    ----------
    name : str
        A registered store (``KVStoreBase.register``; 'teststore' is built in), 'local',
        'device' (the same on CPU), or 'dist_sync' / 'dist_async' / 'dist_sync_device'
        (Ray, see ``sparsym.kvstore.dist``). Case-insensitive.

    Examples
    --------
    >>> import sparsym as mx
    >>> kv = mx.kv.create('local')
    >>> kv.init(3, mx.nd.ones((2,)))
    >>> kv.push(3, [mx.nd.ones((2,)), mx.nd.ones((2,))])
    >>> out = mx.nd.zeros((2,))
    >>> kv.pull(3, out=out)
    >>> out.asnumpy().tolist()
    [2.0, 2.0]
    """
    if not isinstance(name, str):
        raise TypeError("name must be a string")
    name = name.lower()
    if name in KVStoreBase.kv_registry:
        return KVStoreBase.kv_registry[name]()
    if "dist" in name:
        return store_builder("dist")(name)
    if name in _BUILTIN:
        return store_builder("local")(name)
    raise MXNetError(f"Unknown KVStore type {name!r}; expected local, device, dist_*, or one "
                     f"registered with KVStoreBase.register ({sorted(KVStoreBase.kv_registry)})")
