"""NameManager / Prefix and AttrScope (MXNet's mx.name and mx.attribute)."""
from __future__ import annotations

import threading
import warnings
from collections import defaultdict

from ..graph import HIDDEN_KEYS, storage_key

__all__ = ["NameManager", "Prefix", "AttrScope", "current", "current_attr_scope",
           "expand_attr", "list_form"]


class _ClassProperty:
    """A property on the class (MXNet's ``classproperty``); assignable on the class when the
    class uses :class:`_ClassPropertyMeta`."""

    def __init__(self, fget, fset=None):
        self.fget = fget
        self.fset = fset

    def __get__(self, obj, cls):
        return self.fget(cls)

    def setter(self, fset):
        return _ClassProperty(self.fget, fset)


class _ClassPropertyMeta(type):
    """Route ``Cls.prop = value`` to a class property's setter (MXNet: thread-local scopes
    are set this way, e.g. ``AttrScope.current = AttrScope(...)``)."""

    def __setattr__(cls, key, value):
        for klass in cls.__mro__:
            prop = klass.__dict__.get(key)
            if isinstance(prop, _ClassProperty) and prop.fset is not None:
                prop.fset(cls, value)
                return
        super().__setattr__(key, value)


class NameManager(metaclass=_ClassPropertyMeta):
    """Give unnamed symbols names ``<hint><count>`` (``fullyconnected0``, ``_plus1``...).

    The hint is the lower-cased name of the front-end function that created the symbol;
    counters are per manager, so ``with mx.name.NameManager():`` starts from 0 again.

    Examples
    --------
    >>> import sparsym as mx
    >>> with mx.name.NameManager():
    ...     x = mx.sym.Variable('x')
    ...     print((x + x).name, mx.sym.FullyConnected(x, num_hidden=2).name)
    _plus0 fullyconnected0
    """

    _current = threading.local()

    def __init__(self):
        self._counter = {}
        self._old_manager = None

    def get(self, name, hint):
        """The user's ``name`` if given, else ``<hint><count>``."""
        if name:
            return name
        count = self._counter.get(hint, 0)
        self._counter[hint] = count + 1
        return f"{hint}{count}"

    def __enter__(self):
        self._old_manager = current()
        NameManager._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        NameManager._current.value = self._old_manager

    @_ClassProperty
    def current(cls):  # noqa: N805
        warnings.warn("NameManager.current has been deprecated. It is advised to use the "
                      "`with` statement with NameManager.", DeprecationWarning, stacklevel=2)
        return current()

    @current.setter
    def current(cls, value):  # noqa: N805
        warnings.warn("NameManager.current has been deprecated. It is advised to use the "
                      "`with` statement with NameManager.", DeprecationWarning, stacklevel=2)
        NameManager._current.value = value


class Prefix(NameManager):
    """A NameManager that prepends ``prefix`` to every name, given or generated.

    Examples
    --------
    >>> import sparsym as mx
    >>> data = mx.sym.Variable('data')
    >>> with mx.name.Prefix('mynet_'):
    ...     net = mx.sym.FullyConnected(data, num_hidden=10, name='fc1')
    >>> net.list_arguments()
    ['data', 'mynet_fc1_weight', 'mynet_fc1_bias']
    """

    def __init__(self, prefix):
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super().get(name, hint)


def current() -> NameManager:
    """The active NameManager of this thread."""
    nm = getattr(NameManager._current, "value", None)
    if nm is None:
        nm = NameManager._current.value = NameManager()
    return nm


class AttrScope(metaclass=_ClassPropertyMeta):
    """Attach string attributes (``ctx_group``, ``lr_mult``, ``__dunder__`` keys) to every
    symbol created inside the scope.

    Hidden keys (``ctx_group``, ``lr_mult``, ``wd_mult``...) are stored as ``__key__``;
    operators reject other plain keys, as in MXNet (they reach the parameter parser).

    Examples
    --------
    >>> import sparsym as mx
    >>> with mx.AttrScope(ctx_group='dev1'):
    ...     x = mx.sym.Variable('x')
    >>> x.attr('ctx_group'), x.attr('__ctx_group__')
    ('dev1', 'dev1')
    """

    _current = threading.local()
    # control-flow subgraph name -> times used (unique subgraph names, as MXNet's)
    _subgraph_names = defaultdict(int)

    def __init__(self, **kwargs):
        self._old_scope = None
        for value in kwargs.values():
            if not isinstance(value, str):
                raise ValueError("Attributes need to be string")
        self._attr = kwargs

    def get(self, attr):
        """The scope's attributes updated with ``attr`` (the ones given at creation)."""
        if self._attr:
            ret = self._attr.copy()
            if attr:
                ret.update(attr)
            return ret
        return dict(attr) if attr else {}

    def __enter__(self):
        old = current_attr_scope()
        self._old_scope = old
        attr = old._attr.copy()
        attr.update(self._attr)
        self._attr = attr
        AttrScope._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        AttrScope._current.value = self._old_scope

    @_ClassProperty
    def current(cls):  # noqa: N805
        warnings.warn("AttrScope.current has been deprecated. It is advised to use the "
                      "`with` statement with AttrScope.", DeprecationWarning, stacklevel=2)
        return current_attr_scope()

    @current.setter
    def current(cls, value):  # noqa: N805
        warnings.warn("AttrScope.current has been deprecated. It is advised to use the "
                      "`with` statement with AttrScope.", DeprecationWarning, stacklevel=2)
        AttrScope._current.value = value


def current_attr_scope() -> AttrScope:
    """The active AttrScope of this thread."""
    sc = getattr(AttrScope._current, "value", None)
    if sc is None:
        sc = AttrScope._current.value = AttrScope()
    return sc


def expand_attr(attr: dict) -> dict:
    """Attributes as stored on a node: hidden keys become ``__key__``; values must be str."""
    out = {}
    for k, v in attr.items():
        if not isinstance(v, str):
            raise ValueError("Set Attr only accepts string values")
        out[storage_key(k)] = v
    return out


def list_form(attrs: dict) -> dict:
    """MXNet's listing of stored attributes: ``__lr_mult__`` also appears as ``lr_mult``."""
    out = {}
    for k, v in attrs.items():
        out[k] = v
        if k.startswith("__") and k.endswith("__") and k[2:-2] in HIDDEN_KEYS:
            out[k[2:-2]] = v
    return out
