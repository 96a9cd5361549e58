"""Memory planning and the shared pool: release at last use, slot reuse, in-place, buckets
bound with shared_exec costing their largest bucket, and sharing never corrupting values."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.passes.plan_memory import plan_memory, schedule
from sparsym.symbol.op import call

B, H = 16, 128          # one entry = 8 KiB, above the pool's minimum size


@pytest.fixture(autouse=True)
def _fresh_names(pool_ops):
    with mx.name.NameManager():
        yield


def padd(a, b):
    return call("_ptest_add", [a, b], {})


def ptanh(a):
    return call("_ptest_tanh", [a], {})


def pview(a):
    return call("_ptest_view", [a], {})


# ---------------------------------------------------------------------- the pass itself
def test_plan_memory_reuses_slots_after_last_use_and_in_place():
    # e0 (arg) -> s0: e1 = f(e0) -> s1: e2 = f(e1) -> s2: e3 = f(e2) (head)
    steps = [((0,), (1,)), ((1,), (2,)), ((2,), (3,))]
    nbytes = [8192] * 4
    plan = plan_memory(steps, 3, keep={0, 3}, final=set(), nbytes=nbytes, poolable=[1, 2],
                       inplace=[(), (), ()])
    assert plan.slot_of == {1: 0, 2: 1} and plan.pooled_bytes == 16384
    assert plan.release_train == ((), (1,), (2,)) and plan.release_infer == ((), (1,), (2,))
    # a chain of three: the third entry reuses the first one's slot
    steps4 = steps + [((3,), (4,))]
    plan = plan_memory(steps4, 4, keep={0, 4}, final=set(), nbytes=[8192] * 5,
                       poolable=[1, 2, 3], inplace=[()] * 4)
    assert plan.slot_of[3] == plan.slot_of[1] and plan.num_slots == 2
    plan = plan_memory(steps4, 4, keep={0, 4}, final=set(), nbytes=[8192] * 5,
                       poolable=[1, 2, 3], inplace=[(), ((0, 0),), ((0, 0),), ()])
    assert plan.num_slots == 1 and plan.inplace_src == {2: 0, 3: 0}
    assert plan.naive_bytes == 3 * 8192 and plan.peak_bytes == 2 * 8192


def test_training_schedule_keeps_what_backward_reads():
    # forward s0: 1 = f(0); s1: 2 = f(1) (head); backward s2: 3 = g(2, 1) (gradient, final)
    steps = [((0,), (1,)), ((1,), (2,)), ((2, 1), (3,))]
    plan = plan_memory(steps, 2, keep={0, 2}, final={3}, nbytes=[8192] * 4, poolable=[1],
                       inplace=[(), ((0, 0),), ()])
    assert plan.release_infer == ((), (1,))          # forward only: 1 dies after s1
    assert plan.release_train == ((), (), (1,))      # training: 1 lives until backward
    assert plan.inplace_src == {}                    # 2 may not overwrite 1 (read later)


def test_schedule_adds_gradient_terms_as_soon_as_they_exist():
    # four producers p0..p3 of big terms, a chain of sums; DFS order runs producers first
    steps = [((0,), (1,)), ((0,), (2,)), ((0,), (3,)), ((0,), (4,)),
             ((1, 2), (5,)), ((5, 3), (6,)), ((6, 4), (7,))]
    nbytes = [0] + [1000] * 7
    order = schedule(steps, 0, nbytes, keep={0})
    assert order == [0, 1, 4, 2, 5, 3, 6]


# ---------------------------------------------------------------------- executor + pool
def test_pooled_chain_is_correct_reuses_buffers_and_goes_in_place():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    h = ptanh(padd(x, y))
    for _ in range(4):
        h = ptanh(padd(h, y))
    exe = h.simple_bind(mx.cpu(), grad_req="null", x=(B, H), y=(B, H))
    mem = exe.plan.memory
    assert mem.inplace_src and mem.num_slots <= 2 and len(mem.slot_of) == 9
    assert mem.pooled_bytes <= 2 * B * H * 4 < mem.naive_bytes
    rng = np.random.RandomState(0)
    xv, yv = rng.rand(B, H).astype(np.float32), rng.rand(B, H).astype(np.float32)
    ref = np.tanh(xv + yv)
    for _ in range(4):
        ref = np.tanh(ref + yv)
    for _ in range(2):   # twice: the second run reuses the same buffers
        out = exe.forward(x=xv, y=yv)[0].asnumpy()
        np.testing.assert_allclose(out, ref, rtol=1e-5)
    assert exe.pool.hits >= 2 and exe.pool.misses == 0
    assert exe.pool.nbytes == mem.pooled_bytes


def test_training_through_the_pool_matches_numpy_gradients():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    h = ptanh(padd(ptanh(padd(x, y)), y))
    exe = h.simple_bind(mx.cpu(), x=(B, H), y=(B, H))
    rng = np.random.RandomState(1)
    xv, yv = rng.rand(B, H).astype(np.float32), rng.rand(B, H).astype(np.float32)
    og = rng.rand(B, H).astype(np.float32)
    exe.forward(is_train=True, x=xv, y=yv)
    exe.backward(mx.nd.array(og))
    h1 = np.tanh(xv + yv)
    h2 = np.tanh(h1 + yv)
    d2 = og * (1 - h2 * h2)
    d1 = d2 * (1 - h1 * h1)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), h2, rtol=1e-5)
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), d1, rtol=1e-4)
    np.testing.assert_allclose(exe.grad_dict["y"].asnumpy(), d1 + d2, rtol=1e-4)


def test_views_returned_by_pure_kernels_keep_their_buffer_alive():
    # v is a view of a's pooled buffer and is read after a's last use: the slot the plan
    # frees after `pview` must not be overwritten while v lives
    x, y = mx.sym.var("x"), mx.sym.var("y")
    a = padd(x, y)
    v = pview(a)
    b = padd(x, x)
    c = padd(ptanh(b), v)
    exe = c.simple_bind(mx.cpu(), grad_req="null", x=(B, H), y=(B, H))
    rng = np.random.RandomState(2)
    xv, yv = rng.rand(B, H).astype(np.float32), rng.rand(B, H).astype(np.float32)
    out = exe.forward(x=xv, y=yv)[0].asnumpy()
    np.testing.assert_allclose(out, np.tanh(2 * xv) + xv + yv, rtol=1e-5)


def test_monitor_sees_values_that_are_not_overwritten_later():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    h = ptanh(padd(x, y))
    h = ptanh(padd(h, y))
    exe = h.simple_bind(mx.cpu(), grad_req="null", x=(B, H), y=(B, H))
    kept = []
    exe.set_monitor_callback(lambda name, arr: kept.append((name, arr)))
    rng = np.random.RandomState(3)
    xv, yv = rng.rand(B, H).astype(np.float32), rng.rand(B, H).astype(np.float32)
    exe.forward(x=xv, y=yv)
    a0 = xv + yv
    ref = [a0, np.tanh(a0), np.tanh(a0) + yv, np.tanh(np.tanh(a0) + yv)]
    assert len(kept) == 4
    for (name, arr), r in zip(kept, ref):
        np.testing.assert_allclose(arr.asnumpy(), r, rtol=1e-5, err_msg=name)


# ---------------------------------------------------------------------- buckets
def _bucket(L):
    """A recurrent chain over L steps; W and h0 are shared parameters."""
    data = mx.sym.var("data")
    xs = mx.sym.SliceChannel(data, num_outputs=L, axis=1, squeeze_axis=True, name="slice")
    h = mx.sym.var("h0")
    w = mx.sym.var("W")
    for t in range(L):
        x_t = xs[t] if L > 1 else xs
        z = mx.sym.FullyConnected(x_t, weight=w, num_hidden=H, no_bias=True, name=f"i2h{t}")
        h = ptanh(padd(z, h))
    return mx.sym.MakeLoss(mx.sym.sum(h), name="loss")


def _ref_bucket(dv, wv, hv, L):
    h = hv
    for t in range(L):
        h = np.tanh(dv[:, t] @ wv.T + h)
    return h


def test_buckets_sharing_a_pool_cost_the_largest_bucket():
    params = ["W", "h0"]
    buf = {}
    largest = _bucket(5).simple_bind(mx.cpu(), shared_buffer=buf, data=(B, 5, H), h0=(B, H))
    pool = largest.pool
    big_plan = largest.plan.memory.pooled_bytes
    assert pool.nbytes == big_plan > 0
    execs = {5: largest}
    for L in (1, 2, 3, 4):
        execs[L] = _bucket(L).simple_bind(mx.cpu(), shared_exec=largest, shared_buffer=buf,
                                          shared_arg_names=params, data=(B, L, H), h0=(B, H))
        assert execs[L].pool is pool
        assert execs[L].arg_dict["W"] is largest.arg_dict["W"]
        assert execs[L].grad_dict["W"] is largest.grad_dict["W"]
        assert np.shares_memory(execs[L].arg_dict["data"]._raw, largest.arg_dict["data"]._raw)
    per_bucket = {L: e.plan.memory.pooled_bytes for L, e in execs.items()}
    assert max(per_bucket.values()) == big_plan
    assert pool.nbytes == big_plan < sum(per_bucket.values())
    param_bytes = sum(largest.arg_dict[p].asnumpy().nbytes for p in params)
    rng = np.random.RandomState(4)
    wv = rng.uniform(-0.1, 0.1, (H, H)).astype(np.float32)
    hv = rng.uniform(-1, 1, (B, H)).astype(np.float32)
    largest.arg_dict["W"][:] = wv
    largest.arg_dict["h0"][:] = hv
    for L in (5, 3, 1, 4, 2, 5):
        e = execs[L]
        dv = rng.uniform(-1, 1, (B, L, H)).astype(np.float32)
        e.forward(is_train=True, data=dv)
        e.backward()
        ref = _ref_bucket(dv, wv, hv, L)
        np.testing.assert_allclose(e.outputs[0].asnumpy(), [ref.sum()], rtol=1e-4)
        # d(sum h_L)/d h0 through the chain
        g = np.ones_like(ref)
        h = [hv]
        for t in range(L):
            h.append(np.tanh(dv[:, t] @ wv.T + h[-1]))
        for t in reversed(range(L)):
            g = g * (1 - h[t + 1] ** 2)
        np.testing.assert_allclose(e.grad_dict["h0"].asnumpy(), g, rtol=1e-3, atol=1e-6)
    # running every bucket grew nothing: intermediates = largest bucket's pool (+ params)
    assert pool.nbytes == big_plan and pool.misses == 0 and pool.hits > 0
    total = pool.nbytes + param_bytes
    assert total == largest.memory_report()["pool"] + param_bytes


def test_interleaved_executors_on_one_pool_stay_correct():
    params = ["W", "h0"]
    a = _bucket(4).simple_bind(mx.cpu(), data=(B, 4, H), h0=(B, H))
    b = _bucket(3).simple_bind(mx.cpu(), shared_exec=a, shared_arg_names=params,
                               data=(B, 3, H), h0=(B, H))
    ref = _bucket(4).simple_bind(mx.cpu(), data=(B, 4, H), h0=(B, H))
    rng = np.random.RandomState(5)
    vals = {n: rng.uniform(-0.5, 0.5, arr.shape).astype(np.float32)
            for n, arr in a.arg_dict.items()}
    for n, v in vals.items():
        a.arg_dict[n][:] = v
        ref.arg_dict[n][:] = v
    b.arg_dict["data"][:] = rng.uniform(-0.5, 0.5, (B, 3, H)).astype(np.float32)
    a.forward(is_train=True)         # a keeps what its backward needs in pool buffers...
    b.forward(is_train=True)         # ...so b must not reuse them
    b.backward()
    a.backward()
    ref.forward(is_train=True)
    ref.backward()
    assert a.pool.misses > 0
    np.testing.assert_allclose(a.outputs[0].asnumpy(), ref.outputs[0].asnumpy(), rtol=1e-5)
    for n in ("W", "h0", "data"):
        np.testing.assert_allclose(a.grad_dict[n].asnumpy(), ref.grad_dict[n].asnumpy(),
                                   rtol=1e-4, atol=1e-6)


def test_rnn_gradient_sums_keep_the_peak_low():
    """Weight-gradient terms of an unrolled net are summed as they appear (schedule)."""
    e = _bucket(5).simple_bind(mx.cpu(), data=(B, 5, H), h0=(B, H))
    mem = e.plan.memory
    assert mem.peak_bytes < mem.naive_bytes / 2


def test_shared_buffer_alone_also_shares_the_pool():
    buf = {}
    a = _bucket(3).simple_bind(mx.cpu(), shared_buffer=buf, data=(B, 3, H), h0=(B, H))
    b = _bucket(2).simple_bind(mx.cpu(), shared_buffer=buf, data=(B, 2, H), h0=(B, H))
    c = _bucket(2).simple_bind(mx.cpu(), data=(B, 2, H), h0=(B, H))
    assert a.pool is b.pool and c.pool is not a.pool
    assert a.pool.nbytes == a.plan.memory.pooled_bytes


def _real_bucket(L):
    """The same recurrence from production operators only (no pooled kernels)."""
    data = mx.sym.var("data")
    xs = mx.sym.SliceChannel(data, num_outputs=L, axis=1, squeeze_axis=True, name="slice")
    h = mx.sym.var("h0")
    w = mx.sym.var("W")
    for t in range(L):
        x_t = xs[t] if L > 1 else xs
        z = mx.sym.FullyConnected(x_t, weight=w, num_hidden=H, no_bias=True, name=f"i2h{t}")
        h = mx.sym.Activation(z + h, act_type="tanh")
    return mx.sym.MakeLoss(mx.sym.sum(h), name="loss")


def test_buckets_run_in_the_memory_of_the_largest_bucket():
    """Measured with tracemalloc: executors keep no intermediate between runs, so running
    all five buckets (shared parameters) peaks where running the largest one alone does."""
    import tracemalloc
    params = ["W", "h0"]
    buf = {}
    largest = _real_bucket(5).simple_bind(mx.cpu(), shared_buffer=buf, data=(B, 5, H),
                                          h0=(B, H))
    execs = [largest] + [
        _real_bucket(L).simple_bind(mx.cpu(), shared_exec=largest, shared_buffer=buf,
                                    shared_arg_names=params, data=(B, L, H), h0=(B, H))
        for L in (1, 2, 3, 4)]
    for e in execs:   # warm up (lazy per-executor tables)
        e.forward(is_train=True)
        e.backward()
    tracemalloc.start()
    try:
        largest.forward(is_train=True)
        largest.backward()
        _, peak_largest = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        for e in execs:
            e.forward(is_train=True)
            e.backward()
        now, peak_all = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak_all <= peak_largest * 1.1 + 64 * 1024
    assert now - base <= 64 * 1024      # nothing intermediate is retained between runs
    assert all(all(v is None for v in e._env) for e in execs)


def test_gradient_write_keeps_views_and_adopts_only_unshared_buffers():
    # a 'write' may hand the kernel's fresh buffer to the gradient array, but never while
    # something else can see the old buffer (a view taken by the user)
    x = mx.nd.ones((3, 4))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.slice(x, begin=(0, 1), end=(2, 3)) * 2
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy()[:2, 1:3], 2.0)
    view = x.grad.reshape((12,))
    with mx.autograd.record():
        y = mx.nd.slice(x, begin=(1, 0), end=(3, 2)) * 3
    y.backward()
    expected = np.zeros((3, 4), np.float32)
    expected[1:3, 0:2] = 3
    np.testing.assert_array_equal(x.grad.asnumpy(), expected)
    np.testing.assert_array_equal(view.asnumpy(), expected.ravel())


def test_recorded_function_is_released_after_backward():
    # parameter memos must not keep an autograd.Function (and what it saved) alive
    import gc
    import weakref

    class Twice(mx.autograd.Function):
        def forward(self, x):
            return x * 2

        def backward(self, dy):
            return dy * 2

    x = mx.nd.ones((2,))
    x.attach_grad()
    f = Twice()
    ref = weakref.ref(f)
    with mx.autograd.record():
        y = f(x)
    y.backward()
    del f, y
    gc.collect()
    assert ref() is None
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 2.0])
