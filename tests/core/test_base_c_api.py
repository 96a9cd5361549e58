"""mx.base's C API names: the ctypes helpers work as MXNet's, ``_LIB`` answers the calls
sparsym can honour and names any other in a typed error."""
import ctypes

import numpy as np
import pytest

import sparsym as mx
from sparsym import base


def test_ctypes_helpers():
    assert base.c_str("abc").value == b"abc"
    arr = base.c_str_array(["a", "bc"])
    assert [arr[0], arr[1]] == [b"a", b"bc"]
    ints = base.c_array(base.mx_uint, [1, 2, 3])
    assert list(ints) == [1, 2, 3] and ctypes.sizeof(ints) == 3 * ctypes.sizeof(ctypes.c_uint)
    buf = bytearray(b"\x01\x00\x00\x00\x02\x00\x00\x00")
    assert list(base.c_array_buf(ctypes.c_int, memoryview(buf).cast("i"))) == [1, 2]
    raw = ctypes.create_string_buffer(b"hello")
    assert base.ctypes2buffer(ctypes.cast(raw, ctypes.POINTER(ctypes.c_char)), 5) == b"hello"
    floats = (base.mx_float * 6)(*range(6))
    shared = base.ctypes2numpy_shared(ctypes.cast(floats, base.mx_float_p), (2, 3))
    np.testing.assert_array_equal(shared, np.arange(6, dtype=np.float32).reshape(2, 3))
    floats[0] = 7.0
    assert shared[0, 0] == 7.0  # shared, not copied
    x = mx.nd.ones((2,))
    handles = base.c_handle_array([x])
    assert mx.nd.NDArray(base.NDArrayHandle(handles[0])).asnumpy().tolist() == [1.0, 1.0]
    assert base.SymbolHandle is ctypes.c_void_p and base.py_str(b"x") == "x"
    assert base.c2pyerror("ValueError: bad\nStack trace:\n  [bt] (0) f\n") == (
        "Traceback (most recent call last):\n  [bt] (0) f\nValueError: bad", "ValueError")


def test_lib_calls_and_check_call():
    v = ctypes.c_int()
    base.check_call(base._LIB.MXGetVersion(ctypes.byref(v)))
    assert v.value == 10901
    base.check_call(base._LIB.MXGetGPUCount(ctypes.byref(v)))
    assert v.value == mx.context.num_gpus() == 0
    base.check_call(base._LIB.MXRandomSeed(ctypes.c_int(7)))
    a = mx.nd.random.uniform(shape=(3,)).asnumpy()
    mx.random.seed(7)
    np.testing.assert_array_equal(a, mx.nd.random.uniform(shape=(3,)).asnumpy())
    prev = ctypes.c_int()
    base.check_call(base._LIB.MXSetIsNumpyShape(ctypes.c_int(1), ctypes.byref(prev)))
    try:
        assert prev.value == 0 and mx.util.is_np_shape()
        base.check_call(base._LIB.MXIsNumpyShape(ctypes.byref(v)))
        assert v.value == 1
    finally:
        mx.util.set_np_shape(False)
    assert base._LIB.omp_get_max_threads() >= 1


def test_failed_call_raises_its_error_and_unknown_calls_are_named():
    assert base._LIB.MXGetVersion(None) == -1  # a C failure: -1 and the text kept
    with pytest.raises(AttributeError, match="'NoneType' object has no attribute"):
        base.check_call(-1)  # the class the error text names, as MXNet's error table
    assert base._LIB.MXGetLastError().startswith(b"AttributeError")
    with pytest.raises(mx.base.UnsupportedFeatureError,
                       match=r"_LIB.MXBuildSubgraphByOpNames: sparsym has no C library"):
        base._LIB.MXBuildSubgraphByOpNames()
    assert not hasattr(base._LIB, "MXNDArrayCreate")
