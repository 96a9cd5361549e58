"""NameManager / Prefix and AttrScope (MXNet's mx.name and mx.attribute)."""
from __future__ import annotations

import threading

from ..base import MXNetError

_local = threading.local()


class NameManager:
    """Give unnamed symbols names ``<hint><count>`` (``fullyconnected0``...).

    Examples
    --------
    >>> import sparsym as mx
    >>> with mx.name.Prefix('p_'):
    ...     print(mx.sym.Variable('x').name, mx.sym.FullyConnected(num_hidden=2).name)
    x p_fullyconnected0
    """

    def __init__(self):
        self._counter = {}
        self._old = None

    def get(self, name, hint):
        if name:
            return name
        hint = hint.lower()
        count = self._counter.get(hint, 0)
        self._counter[hint] = count + 1
        return f"{hint}{count}"

    def __enter__(self):
        self._old = current()
        _local.name_manager = self
        return self

    def __exit__(self, *exc):
        _local.name_manager = self._old


class Prefix(NameManager):
    """A NameManager that prepends ``prefix`` to every generated and given name."""

    def __init__(self, prefix):
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super().get(name, hint)


def current() -> NameManager:
    nm = getattr(_local, "name_manager", None)
    if nm is None:
        nm = _local.name_manager = NameManager()
    return nm


class AttrScope:
    """Attach string attributes (e.g. ``ctx_group``) to every symbol created inside.

    Examples
    --------
    >>> import sparsym as mx
    >>> with mx.AttrScope(ctx_group='dev1'):
    ...     x = mx.sym.Variable('x')
    >>> x.attr('ctx_group')
    'dev1'
    """

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            if not isinstance(v, str):
                raise MXNetError(f"Attributes need to be string, got {k}={v!r}")
        self._attr = kwargs
        self._old = None

    def get(self, attr):
        merged = dict(self._attr)
        if attr:
            merged.update(attr)
        return merged

    def __enter__(self):
        self._old = current_attr_scope()
        merged = dict(self._old._attr)
        merged.update(self._attr)
        self._attr = merged
        _local.attr_scope = self
        return self

    def __exit__(self, *exc):
        _local.attr_scope = self._old


def current_attr_scope() -> AttrScope:
    sc = getattr(_local, "attr_scope", None)
    if sc is None:
        sc = _local.attr_scope = AttrScope()
    return sc


def expand_attr(attr: dict) -> dict:
    """MXNet stores ``ctx_group`` also as ``__ctx_group__`` (both appear in attr_dict)."""
    out = {}
    for k, v in attr.items():
        out[k] = v
        if k in ("ctx_group", "lr_mult", "wd_mult", "force_mirroring") and not k.startswith("__"):
            out[f"__{k}__"] = v
    return out
