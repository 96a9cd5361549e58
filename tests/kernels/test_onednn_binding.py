"""The oneDNN binding: generated constants agree with the library, memory descriptors,
reorders, post-ops, the primitive cache, selection and a missing library."""
import ctypes
import os
import subprocess
import sys

import numpy as np
import pytest

from sparsym.kernels import onednn as dnn
from sparsym.kernels.onednn import E, _enums

needs_dnnl = pytest.mark.skipif(not dnn.available(), reason="oneDNN wheel not installed")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@needs_dnnl
@pytest.mark.parametrize("enum,fn", [
    ("dnnl_format_tag_t", "dnnl_fmt_tag2str"), ("dnnl_alg_kind_t", "dnnl_alg_kind2str"),
    ("dnnl_prop_kind_t", "dnnl_prop_kind2str"), ("dnnl_data_type_t", "dnnl_dt2str"),
    ("dnnl_status_t", "dnnl_status2str"), ("dnnl_primitive_kind_t", "dnnl_prim_kind2str")])
def test_generated_values_match_library_names(enum, fn):
    # the library names every value it knows: each generated value must carry that name
    to_str = getattr(dnn.load(), fn)
    by_value = {}
    for name, v in _enums.ENUMS[enum].items():
        by_value.setdefault(v, []).append(name[5:])
    for v, names in by_value.items():
        got = ctypes.cast(to_str(v), ctypes.c_char_p).value.decode()
        if got in ("undef", "any"):  # the library's short names of *_undef / *_any
            assert any(n.endswith(got) or n == "undefined_primitive" for n in names)
        else:
            assert got in names, (enum, v, names, got)


def test_generated_module_states_its_source():
    assert _enums.VERSION[:2] == (3, 2) and "onednn-devel-cpu" in _enums.SOURCE
    assert _enums.FUNCTIONS["dnnl_post_ops_append_eltwise"] == ("i", "piff")
    assert E.ARG_SRC == _enums.DEFINES["DNNL_ARG_SRC"] and E.forward_training == 64


@needs_dnnl
def test_memory_desc_and_reorder_round_trip():
    x = np.random.rand(2, 19, 5, 7).astype(np.float32)
    plain = dnn.md_plain(x.shape, x.dtype)
    assert plain.is_plain and plain.shape == x.shape and plain.size == x.nbytes
    blocked = dnn.md_tag(x.shape, np.float32, E.nChw16c)
    assert not blocked.is_plain and blocked.size == 2 * 32 * 5 * 7 * 4  # C padded to 32
    t = dnn.from_plain(x, blocked)
    assert isinstance(t, dnn.Tensor) and t.shape == x.shape
    # a reorder writes the padding's zeros itself (destinations are not zero-filled first)
    g = dnn.Tensor(blocked, np.full(blocked.size, 255, np.uint8))
    dnn.reorder_md(plain, blocked).execute({E.ARG_FROM: x, E.ARG_TO: g.data})
    assert np.all(g.values().reshape(2, 2, 5, 7, 16)[:, 1, :, :, 3:] == 0)
    np.testing.assert_array_equal(dnn.to_plain(t), x)
    assert dnn.from_plain(x, plain) is x  # nothing to do: the array itself
    # a strided view reorders from its own strides
    v = x[:, ::2]
    np.testing.assert_array_equal(dnn.to_plain(dnn.from_plain(v, dnn.md_tag(
        v.shape, np.float32, E.nChw8c))), v)
    assert plain == dnn.md_plain(x.shape, np.float32) and hash(plain) == hash(
        dnn.md_plain(x.shape, np.float32))


def _conv_ref(x, w, b, pad):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    ref = np.zeros((n, o, oh, ow))
    for i in range(kh):
        for j in range(kw):
            ref += np.einsum("nchw,oc->nohw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return ref + b[None, :, None, None]


@needs_dnnl
@pytest.mark.parametrize("post", [(), (("eltwise", "relu"),), (("sum", 1.0),
                                                                ("eltwise", "relu"))])
def test_primitive_with_post_ops_and_cache(post):
    x = np.random.randn(2, 3, 9, 9).astype(np.float32)
    w = np.random.randn(8, 3, 3, 3).astype(np.float32)
    b = np.random.randn(8).astype(np.float32)
    prev = np.random.randn(2, 8, 9, 9).astype(np.float32)
    ops = [("eltwise", E.eltwise_relu, 0.0, 0.0) if p[0] == "eltwise" else p for p in post]
    attr = dnn.Attr(ops)

    def create():
        src, wei = dnn.md_tag(x.shape, np.float32), dnn.md_tag(w.shape, np.float32)
        dst, bia = dnn.md_plain(prev.shape, np.float32), dnn.md_plain(b.shape, np.float32)
        return dnn.create_pd("dnnl_convolution_forward_primitive_desc_create",
                             E.forward_inference, E.convolution_direct, src.ptr, wei.ptr,
                             bia.ptr, dst.ptr, dnn.dims((1, 1)), dnn.dims((0, 0)),
                             dnn.dims((1, 1)), dnn.dims((1, 1)), attr=attr)
    key = ("test_conv", x.shape, w.shape, attr.key)
    before = dnn.cache_info()
    prim = dnn.primitive(key, create)
    assert dnn.primitive(key, create) is prim
    assert dnn.cache_info()["hits"] == before["hits"] + 1
    out = prev.copy()
    prim.execute({E.ARG_SRC: dnn.from_plain(x, prim.md(E.ARG_SRC)),
                  E.ARG_WEIGHTS: dnn.from_plain(w, prim.md(E.ARG_WEIGHTS)),
                  E.ARG_BIAS: b, E.ARG_DST: out})
    ref = _conv_ref(x, w, b, 1)
    if post and post[0][0] == "sum":
        ref = ref + prev
    if post:
        ref = np.maximum(ref, 0)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


@needs_dnnl
def test_unimplemented_is_typed_and_cached():
    def create():
        src = dnn.md_tag((1, 3, 4, 4), np.float32)
        wei = dnn.md_tag((8, 5, 3, 3), np.float32)  # channel mismatch
        dst = dnn.md_tag((1, 8, 2, 2), np.float32)
        return dnn.create_pd("dnnl_convolution_forward_primitive_desc_create",
                             E.forward_inference, E.convolution_direct, src.ptr, wei.ptr,
                             None, dst.ptr, dnn.dims((1, 1)), dnn.dims((0, 0)),
                             dnn.dims((0, 0)), dnn.dims((0, 0)))
    with pytest.raises(dnn.OneDNNError):
        dnn.primitive(("bad_conv",), create)
    with pytest.raises(dnn.OneDNNError):
        dnn.primitive(("bad_conv",), create)


def test_use_switches_selection():
    with dnn.use(False):
        assert not dnn.enabled() and dnn.mode() == "off"
        with dnn.use(None):
            assert dnn.mode() in ("auto", "on", "off")
    if dnn.available():
        with dnn.use(True):
            assert dnn.enabled()


def _run(code, **env):
    e = dict(os.environ, PYTHONPATH=ROOT, **env)
    r = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_env_var_and_missing_library_in_features():
    code = ("import sparsym as mx; from sparsym.kernels import onednn as d; "
            "f = mx.runtime.Features(); print(d.available(), d.enabled(), "
            "f.is_enabled('MKLDNN'), f.is_enabled('ONEDNN'))")
    off = _run(code, SPARSYM_ONEDNN="0")
    assert off.endswith("False False False")
    missing = _run(code, SPARSYM_ONEDNN_LIBRARY="/nonexistent/libdnnl.so.3")
    assert missing == "False False False False"
    if dnn.available():
        assert _run(code, SPARSYM_ONEDNN="1") == "True True True True"
    forced = _run("from sparsym.kernels import onednn as d\ntry:\n d.enabled()\n"
                  "except d.OneDNNUnavailable as e:\n print('raised', 'pip install' in str(e))",
                  SPARSYM_ONEDNN="1", SPARSYM_ONEDNN_LIBRARY="/nonexistent/libdnnl.so.3")
    assert forced == "raised True"


@needs_dnnl
def test_layouts_without_strides_are_keyed_by_equality():
    """Descriptors oneDNN does not describe by strides (opaque kinds, such as packed RNN
    weights on some CPUs) are told apart by ``dnnl_memory_desc_equal``: their keys carry
    the index of the first equal descriptor seen with the same dims, type and kind, so two
    packings never share a key (and a cached reorder). Checked here on descriptors whose
    equality is known."""
    from sparsym.kernels.onednn import core
    shape = (4, 32, 3, 3)
    a1, a2 = dnn.md_tag(shape, np.float32, E.abcd), dnn.md_tag(shape, np.float32, E.abcd)
    b = dnn.md_tag(shape, np.float32, E.aBcd16b)
    head = ("test-head", shape)
    ka, kb, ka2 = (core._opaque_class(m, head) for m in (a1, b, a2))
    assert ka == ka2 and ka != kb
    del core._OPAQUE[head]
