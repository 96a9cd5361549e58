"""``mx.registry``: name -> class registries with MXNet's register / alias / create functions
(what ``mx.optimizer.register`` and ``mx.init.register`` style factories are made of)."""
from __future__ import annotations

import json
import warnings

from .base import ParamAssertionError, ParamError

__all__ = ["get_registry", "get_register_func", "get_alias_func", "get_create_func"]

string_types = (str,)
_REGISTRY: dict = {}


def _table(base_class):
    return _REGISTRY.setdefault(base_class, {})


def get_registry(base_class):
    """A copy of the name -> class table of ``base_class``."""
    return dict(_table(base_class))


def get_register_func(base_class, nickname):
    """A ``register(klass, name=None)`` function for subclasses of ``base_class`` (names are
    lower-cased; re-registering a name warns and replaces it).

    Examples
    --------
    >>> import sparsym as mx
    >>> class Shape: pass
    >>> register = mx.registry.get_register_func(Shape, "shape")
    >>> @register
    ... class Square(Shape): pass
    >>> sorted(mx.registry.get_registry(Shape))
    ['square']
    """
    table = _table(base_class)

    def register(klass, name=None):
        if not (isinstance(klass, type) and issubclass(klass, base_class)):
            raise ParamError(f"Can only register subclass of {base_class.__name__}, got "
                             f"{klass!r}")
        key = (name or klass.__name__).lower()
        old = table.get(key)
        if old is not None and old is not klass:
            warnings.warn(f"New {nickname} {klass.__module__}.{klass.__name__} registered with "
                          f"name {key} is overriding existing {nickname} "
                          f"{old.__module__}.{old.__name__}", UserWarning, stacklevel=2)
        table[key] = klass
        return klass

    register.__doc__ = f"Register {nickname} to the {nickname} factory"
    return register


def get_alias_func(base_class, nickname):
    """An ``alias(*names)`` class decorator registering a class under extra names."""
    register = get_register_func(base_class, nickname)

    def alias(*aliases):
        def reg(klass):
            for name in aliases:
                register(klass, name)
            return klass
        return reg
    return alias


def get_create_func(base_class, nickname):
    """A ``create(name_or_instance_or_config, *args, **kwargs)`` factory.

    The first argument (or keyword ``nickname``) is an instance (returned as is), a
    registered name (case-insensitive), a dict of keyword arguments holding the name, or
    such a config as JSON (``'["name", {...}]'`` or ``'{"nickname": ...}'``).
    """
    table = _table(base_class)

    def create(*args, **kwargs):
        if args:
            name, args = args[0], args[1:]
        elif nickname in kwargs:
            name = kwargs.pop(nickname)
        else:
            raise ParamError(f"create: expected the {nickname} name as first argument or "
                             f"keyword '{nickname}'")
        if isinstance(name, base_class):
            if args or kwargs:
                raise ParamError(f"{nickname} is already an instance. Additional arguments "
                                 "are invalid")
            return name
        if isinstance(name, dict):
            return create(**name)
        if not isinstance(name, str):
            raise ParamError(f"{nickname} must be of string type, got {type(name).__name__}")
        if name.startswith(("[", "{")):
            if args or kwargs:
                raise ParamError(f"create: a JSON {nickname} config takes no other arguments")
            config = json.loads(name)
            return create(config[0], **config[1]) if name.startswith("[") else create(**config)
        key = name.lower()
        if key not in table:
            # MXNet asserts here: an AssertionError (and a ValueError)
            raise ParamAssertionError(f"{key} is not registered. Please register with "
                                      f"{nickname}.register first")
        return table[key](*args, **kwargs)

    create.__doc__ = (f"Create a {nickname} instance from a name, an instance or a config "
                      f"(see get_create_func).")
    return create
