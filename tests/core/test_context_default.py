"""Context.default_ctx: assignable on the class, per thread (MXNet 1.x's class property)."""
from __future__ import annotations

import threading

import sparsym as mx
from sparsym.context import Context


def test_default_ctx_assignment_is_thread_local():
    seen = []

    def other():
        Context.default_ctx = mx.cpu(3)
        seen.append(Context.default_ctx)

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen == [mx.cpu(3)]
    assert Context.default_ctx == mx.cpu(0)
    old = Context.default_ctx
    try:
        Context.default_ctx = mx.cpu(2)
        assert mx.nd.zeros(2).context == mx.cpu(2)
        with mx.cpu(5):
            assert Context.default_ctx == mx.cpu(5)
        assert Context.default_ctx == mx.cpu(2)
    finally:
        Context.default_ctx = old
