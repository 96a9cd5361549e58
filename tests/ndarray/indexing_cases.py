"""A grid of NDArray indexing keys (basic, advanced, negative, out of range, empty and
reversed slices, Ellipsis/None, NumPy scalars) on 1-D to 3-D arrays: shared by
test_indexing_mxnet.py and make_mxnet_indexing_fixtures.py (run on MXNet 1.9.1). Each
case gives the result's shape and values, or the error's type name."""
import numpy as np

SHAPES = [(5,), (3, 4), (2, 3, 4), (1,), (4, 1)]


def keys_for(shape):
    n = len(shape)
    ks = [0, 1, -1, -shape[0], shape[0], -shape[0] - 1, slice(None), slice(1, 3),
          slice(None, None, -1), slice(5, 1), slice(0, 0), slice(1, 5, -1), slice(10, 20),
          slice(-10, 2), None, Ellipsis, (Ellipsis, 0), (0, Ellipsis), (None, 0), (0, None),
          (0,), [0], [0, 1], [-1], [0, 0], [[0, 1]], ("nd", [0, 1]), ("np", [0, 1]),
          ("nd", [1]), ("np", [1]), ("np_int64", 1), ("np_int32", 1), (slice(None), None),
          ("float", 1.0)]
    if n >= 2:
        ks += [(0, 0), (0, 1), (-1, -1), (0, shape[1]), (0, slice(None)), (slice(None), 0),
               (slice(None), -1), (1, slice(1, 3)), ([0, 1], 0), (0, [0, 1]), ([0, 1], [1, 2]),
               ([0, 1], slice(None)), (slice(None), [0, 1]), ([0], [1]),
               (("nd", [0, 1]), ("nd", [1, 2])), (0, None, 0), (Ellipsis, -1), (0, Ellipsis, 0),
               (None, 0, 0), (0, 0, 0), (slice(None), slice(3, 1)), (slice(2, 0), 0)]
    if n >= 3:
        ks += [(0, slice(None), 0), ([0, 1], slice(None), [0, 1]),
               (slice(None), [0, 1], [0, 1]), (0, [0, 1], slice(None)),
               (slice(None), 0, [0, 1]), (1, 2, 3), (-1, -1, -1), (0, 0, slice(None)),
               (Ellipsis, 0, 0), ([1], 0, 0)]
    return ks


def _conv(mx, k):
    if isinstance(k, tuple) and len(k) == 2 and isinstance(k[0], str):
        kind, v = k
        return {"nd": lambda: mx.nd.array(v, dtype="int64"), "np": lambda: np.array(v),
                "np_int64": lambda: np.int64(v), "np_int32": lambda: np.int32(v),
                "float": lambda: float(v)}[kind]()
    if isinstance(k, tuple):
        return tuple(_conv(mx, e) for e in k)
    return k


def run(mx):
    """{case name: {'shape', 'vals'} or {'err': exception type name}}."""
    res = {}
    for shape in SHAPES:
        x = mx.nd.array(np.arange(int(np.prod(shape))).reshape(shape))
        for k in keys_for(shape):
            name = "%s|%r" % (shape, k)
            try:
                y = x[_conv(mx, k)]
                res[name] = {"shape": list(y.shape), "vals": y.asnumpy().ravel().tolist()}
            except Exception as e:  # noqa: BLE001 - the type is the record
                res[name] = {"err": type(e).__name__}
    return res
