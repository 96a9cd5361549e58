"""SequenceMask / SequenceLast / SequenceReverse: values and gradients (MXNet 1.9.1 probed)."""
import numpy as np
import pytest

import sparsym as mx

X = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
LENS = [2, 3]


def _run(name, **kw):
    x = mx.nd.array(X)
    x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, name)(x, mx.nd.array(LENS), use_sequence_length=True, **kw)
    y.backward()
    return y.asnumpy(), x.grad.asnumpy()


def test_sequence_mask():
    y, g = _run("SequenceMask", value=-1)
    assert y[2, 0].tolist() == [-1, -1] and y[2, 1].tolist() == [10, 11]
    assert g.reshape(3, -1).tolist() == [[1] * 4, [1] * 4, [0, 0, 1, 1]]


def test_sequence_last():
    y, g = _run("SequenceLast")
    assert y.tolist() == [[4, 5], [10, 11]]
    assert g.reshape(3, -1).tolist() == [[0] * 4, [1, 1, 0, 0], [0, 0, 1, 1]]
    x = mx.nd.array(X)
    assert mx.nd.SequenceLast(x).asnumpy().tolist() == X[-1].tolist()


def test_sequence_reverse():
    y, g = _run("SequenceReverse")
    assert y[:, 0].tolist() == [[4, 5], [0, 1], [8, 9]]
    assert y[:, 1].tolist() == [[10, 11], [6, 7], [2, 3]]
    assert (g == 1).all()


def test_symbolic_shapes_and_errors():
    s = mx.sym.SequenceLast(mx.sym.var("x"), mx.sym.var("l"), use_sequence_length=True,
                            axis=1)
    _, out, _ = s.infer_shape(x=(4, 5, 3))
    assert out == [(4, 3)]
    with pytest.raises(mx.base.MXNetError, match="sequence_length entries"):
        mx.nd.SequenceMask(mx.nd.array(X), mx.nd.array([4, 1]), use_sequence_length=True)
