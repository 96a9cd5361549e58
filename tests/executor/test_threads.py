"""An executor shared by threads raises instead of reading freed buffers."""
import threading

import numpy as np

import sparsym as mx
from sparsym.base import MXNetError


def test_concurrent_forward_on_one_executor_raises_or_computes():
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(mx.sym.relu(data), num_hidden=64, name="fc")
    ex = net.simple_bind(mx.cpu(), data=(256, 128), grad_req="null")
    for a in ex.arg_arrays:
        a[:] = np.random.default_rng(0).random(a.shape).astype(np.float32)
    want = ex.forward()[0].asnumpy()
    results, errors = [], []

    def work():
        for _ in range(200):
            try:
                out = ex.forward()[0].asnumpy()
            except MXNetError as err:
                errors.append(str(err))
                continue
            results.append(out)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all("not thread-safe" in e for e in errors)
    for out in results:      # values or an error, never a freed buffer (an object array)
        assert out.dtype == np.float32 and out.shape == want.shape
    assert len(results) + len(errors) == 800


def test_sequential_use_from_two_threads_is_fine():
    x = mx.sym.Variable("x")
    ex = (x * 2).simple_bind(mx.cpu(), x=(3,), grad_req="null")
    ex.arg_arrays[0][:] = 1
    outs = []
    for _ in range(2):
        t = threading.Thread(target=lambda: outs.append(ex.forward()[0].asnumpy()))
        t.start()
        t.join()
    np.testing.assert_array_equal(outs[0], [2, 2, 2])
    np.testing.assert_array_equal(outs[1], [2, 2, 2])
