"""mx.error, mx.log and mx.registry (MXNet 1.9.1's modules, behaviour probed on it)."""
import logging

import pytest

import sparsym as mx
from sparsym.base import MXNetError, ParamError, error_types


def test_error_module_registers_classes():
    err = mx.error.InternalError("bad state")
    assert isinstance(err, MXNetError) and "MXNet hint:" in str(err)
    assert error_types["InternalError"] is mx.error.InternalError

    @mx.error.register
    class MyError(MXNetError):
        pass
    assert error_types["MyError"] is MyError


def test_get_logger_writes_mxnet_lines(tmp_path):
    f = tmp_path / "log.txt"
    logger = mx.log.get_logger("sparsym.test.log", filename=str(f), level=logging.INFO)
    assert mx.log.get_logger("sparsym.test.log") is logger and len(logger.handlers) == 1
    logger.setLevel(logging.INFO)
    logger.info("hello")
    for h in logger.handlers:
        h.flush()
    line = f.read_text()
    assert line.startswith("\x1b[32mI") and line.rstrip().endswith("]\x1b[0m hello")
    assert "test_error_log_registry.py:test_get_logger_writes_mxnet_lines" in line
    with pytest.warns(DeprecationWarning, match="getLogger is deprecated"):
        mx.log.getLogger("sparsym.test.log")


def test_registry_register_alias_create():
    class Base:
        def __init__(self, k=1):
            self.k = k

    register = mx.registry.get_register_func(Base, "thing")
    alias = mx.registry.get_alias_func(Base, "thing")
    create = mx.registry.get_create_func(Base, "thing")

    @alias("other")
    @register
    class Thing(Base):
        pass

    assert sorted(mx.registry.get_registry(Base)) == ["other", "thing"]
    assert create("THING", k=3).k == 3 and isinstance(create("other"), Thing)
    assert create('["thing", {"k": 5}]').k == 5 and create('{"thing": "thing", "k": 6}').k == 6
    assert create({"thing": "thing", "k": 7}).k == 7
    inst = Thing()
    assert create(inst) is inst
    with pytest.raises(ParamError, match="already an instance"):
        create(inst, k=2)
    with pytest.raises(MXNetError, match="nope is not registered"):
        create("nope")
    with pytest.raises(ParamError, match="Can only register subclass of Base"):
        register(int)
    with pytest.warns(UserWarning, match="overriding existing thing"):
        register(type("Thing2", (Base,), {}), "thing")
