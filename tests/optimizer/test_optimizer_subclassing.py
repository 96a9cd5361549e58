"""Optimizer subclasses in client code: mixins keep MXNet's method resolution."""
import numpy as np

import sparsym as mx


def test_a_mixin_base_does_not_hide_the_optimizers_update():
    # Keras-MXNet: class RMSprop(MXOptimizer, mx.optimizer.RMSProp), with
    # MXOptimizer(keras.Optimizer, mx.optimizer.Optimizer) defining no update
    class Mixin(mx.optimizer.Optimizer):
        pass

    class MyRMSProp(Mixin, mx.optimizer.RMSProp):
        pass

    opt = MyRMSProp(learning_rate=0.1)
    w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
    opt.update(0, w, g, opt.create_state(0, w))
    ref = mx.optimizer.RMSProp(learning_rate=0.1)
    w2 = mx.nd.ones((2,))
    ref.update(0, w2, g, ref.create_state(0, w2))
    np.testing.assert_allclose(w.asnumpy(), w2.asnumpy())
    assert not np.allclose(w.asnumpy(), 1.0)
