"""gluon.Trainer over the stores it accepts (KVStoreBase subclasses included)."""
import numpy as np
import pytest

import sparsym as mx
from sparsym import autograd, gluon


def test_trainer_with_teststore_reduces_over_contexts():
    x = gluon.Parameter("x", shape=(3,))
    x.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init="ones")
    kv = mx.kv.create("teststore")
    trainer = gluon.Trainer([x], "sgd", {"learning_rate": 0.5}, kvstore=kv)
    with autograd.record():
        for w in x.list_data():
            (w * 2).backward()
    trainer.step(1)
    # teststore cannot run the optimizer: gradients are summed there (2 + 2), updates
    # run on the workers, as in MXNet 1.9.1
    assert trainer._update_on_kvstore is False
    assert trainer._kvstore is kv
    for ctx in (mx.cpu(0), mx.cpu(1)):
        np.testing.assert_array_equal(x.data(ctx).asnumpy(), [-1.0, -1.0, -1.0])


def test_step_with_batch_size_0_is_a_clear_error():
    # MXNet 1.9.1 raises a bare ZeroDivisionError ("float division by zero"); the error here
    # names the argument and stays a ZeroDivisionError for code that catches that
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    with mx.autograd.record():
        loss = net(mx.nd.ones((2, 3))).sum()
    loss.backward()
    for call in (trainer.step, trainer.update):
        with pytest.raises(ZeroDivisionError, match=r"batch_size=0"):
            call(0)
