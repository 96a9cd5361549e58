"""bind() with a gradient array under grad_req 'null': MXNet keeps it in grad_dict,
untouched by backward."""
from __future__ import annotations

import numpy as np

import sparsym as mx


def test_null_request_keeps_the_given_array_untouched():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    ga, gb = mx.nd.ones(2) * 5, mx.nd.ones(2) * 7
    exe = (a * b).bind(mx.cpu(), {"a": mx.nd.array([1.0, 2.0]), "b": mx.nd.array([3.0, 4.0])},
                       args_grad={"a": ga, "b": gb}, grad_req={"a": "write", "b": "null"})
    assert exe.grad_dict["b"] is gb
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones(2))
    np.testing.assert_array_equal(ga.asnumpy(), [3.0, 4.0])
    np.testing.assert_array_equal(gb.asnumpy(), [7.0, 7.0])
    exe = (a * b).bind(mx.cpu(), {"a": mx.nd.ones(2), "b": mx.nd.ones(2)},
                       args_grad={"a": mx.nd.zeros(2)}, grad_req={"a": "write", "b": "null"})
    assert exe.grad_dict["b"] is None
