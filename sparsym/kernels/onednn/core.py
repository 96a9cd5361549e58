"""Memory descriptors, attributes, primitives, the primitive cache, reorders, blocked tensors.

See the package docstring for how an operator uses these.
"""
from __future__ import annotations

import collections
import ctypes
import threading
import time

import numpy as np

from ... import storage
from . import _lib
from ._lib import E, check

__all__ = ["MemoryDesc", "md_plain", "md_tag", "Attr", "Primitive", "primitive",
           "Tensor", "one_layout", "reorder_md", "to_plain", "from_plain", "threads_for", "dims",
           "DTYPES", "cache_info", "cache_clear", "SMALL_WORK", "reordered", "impl_name",
           "prefer_impl"]

_MAXD = _lib._enums.DEFINES["DNNL_MAX_NDIMS"]
DimsT = ctypes.c_int64 * _MAXD

# NumPy dtype -> oneDNN data type (bfloat16 has no NumPy dtype; callers pass E.bf16)
DTYPES = {np.dtype(np.float32): E.f32, np.dtype(np.float16): E.f16,
          np.dtype(np.int8): E.s8, np.dtype(np.uint8): E.u8, np.dtype(np.int32): E.s32,
          np.dtype(np.float64): E.f64}
_NP = {v: k for k, v in DTYPES.items()}

# Below this many multiply-adds (or element visits) a primitive runs on one thread: waking a
# passive OpenMP worker costs 20-50 us, more than such a call saves on 2 cores.
SMALL_WORK = 1 << 21


def dims(seq):
    """A ``dnnl_dims_t`` holding ``seq`` (for strides, paddings, dilations)."""
    d = DimsT()
    for i, v in enumerate(seq):
        d[i] = int(v)
    return d


def threads_for(work):
    """OpenMP team size for a primitive of ``work`` multiply-adds: one for small work, else
    as many of oneDNN's threads as other processes leave cores free (rounded): a worker
    sharing a core with another process stalls the whole region."""
    n = _lib.max_threads()
    if n <= 1 or work < SMALL_WORK:
        return 1
    from ..blas import idle_cores
    return max(1, min(n, int(idle_cores() + 0.5)))


class MemoryDesc:
    """A oneDNN memory descriptor: owned (destroyed with this object) or borrowed from a
    primitive descriptor (``owner`` keeps it alive)."""

    __slots__ = ("ptr", "owner", "_key", "_size", "__weakref__")

    def __init__(self, ptr, owner=None):
        self.ptr, self.owner, self._key, self._size = ptr, owner, None, None

    def __del__(self):
        if self.owner is None and self.ptr:
            lib = _lib._state["lib"] if _lib is not None else None  # None at exit
            if lib is not None:
                lib.dnnl_memory_desc_destroy(self.ptr)
            self.ptr = None

    def _q(self, what, ctype):
        out = ctype()
        check(_lib.lib().dnnl_memory_desc_query(self.ptr, what, ctypes.byref(out)),
              "memory_desc_query")
        return out.value

    def _qdims(self, what, n):
        out = ctypes.POINTER(DimsT)()
        check(_lib.lib().dnnl_memory_desc_query(self.ptr, what, ctypes.byref(out)),
              "memory_desc_query")
        return tuple(out.contents[:n])

    @property
    def shape(self):
        """Logical dims (N, C, spatial... order, whatever the layout)."""
        return self.key[0]

    @property
    def dtype(self):
        """The oneDNN data type."""
        return self.key[1]

    @property
    def key(self):
        """Hashable full description: (dims, data type, format kind, strides, inner blocks,
        inner indices, padded dims)."""
        if self._key is None:
            nd = self._q(E.query_ndims_s32, ctypes.c_int32)
            fk = self._q(E.query_format_kind, ctypes.c_int)
            k = [self._qdims(E.query_dims, nd), self._q(E.query_data_type, ctypes.c_int), fk]
            if fk == E.blocked:
                nb = self._q(E.query_inner_nblks_s32, ctypes.c_int32)
                k += [self._qdims(E.query_strides, nd), self._qdims(E.query_inner_blks, nb),
                      self._qdims(E.query_inner_idxs, nb), self._qdims(E.query_padded_dims, nd)]
            else:  # an opaque layout (RNN-packed weights...): which one, told by oneDNN
                k.append(_opaque_class(self, tuple(k)))
            self._key = tuple(k)
        return self._key

    @property
    def size(self):
        """Bytes the layout needs (padding included)."""
        if self._size is None:
            self._size = _lib.lib().dnnl_memory_desc_get_size(self.ptr)
        return self._size

    @property
    def is_plain(self):
        """Blocked without inner blocks and with C-contiguous strides (a NumPy array's
        layout)."""
        k = self.key
        if k[2] != E.blocked or k[4]:
            return False
        shape, strides = k[0], k[3]
        want, acc = [], 1
        for d in reversed(shape):
            want.append(acc)
            acc *= d
        return all(s == w or d == 1 for s, w, d in zip(strides, reversed(want), shape))

    def __eq__(self, other):
        return isinstance(other, MemoryDesc) and bool(
            _lib.lib().dnnl_memory_desc_equal(self.ptr, other.ptr))

    def __hash__(self):
        return hash(self.key)

    def __repr__(self):
        return f"MemoryDesc{self.key}"


# Layouts oneDNN does not describe by strides and blocks (format kinds other than blocked)
# have no queryable details: their keys carry the index of the first equal descriptor
# (``dnnl_memory_desc_equal``) met with the same dims, data type and kind, so two such
# layouts never share a key. The representatives are kept (descriptors are small).
_OPAQUE: dict = {}


def _opaque_class(md, head):
    reps = _OPAQUE.setdefault(head, [])
    lib = _lib.lib()
    for i, rep in enumerate(reps):
        if lib.dnnl_memory_desc_equal(md.ptr, rep.ptr):
            return ("opaque", i)
    out = ctypes.c_void_p()  # an owned copy: ``md`` may be borrowed from a primitive
    check(lib.dnnl_memory_desc_clone(ctypes.byref(out), md.ptr), "memory_desc_clone")
    reps.append(MemoryDesc(out))
    return ("opaque", len(reps) - 1)


_PLAIN: collections.OrderedDict = collections.OrderedDict()  # (shape, dt, strides) -> md


def md_plain(shape, dtype, strides=None):
    """Descriptor of a NumPy-laid tensor (``strides`` in elements; C order by default).
    Descriptors are immutable and cached (their keys are then queried once)."""
    dt = DTYPES[np.dtype(dtype)] if not isinstance(dtype, int) else dtype
    key = (tuple(shape), dt, None if strides is None else tuple(strides))
    md = _PLAIN.get(key)
    if md is not None:
        return md
    if strides is None:
        strides, acc = [], 1
        for d in reversed(shape):
            strides.append(acc)
            acc *= d
        strides = strides[::-1]
    out = ctypes.c_void_p()
    check(_lib.lib().dnnl_memory_desc_create_with_strides(
        ctypes.byref(out), len(shape), dims(shape), dt, dims(strides)), "memory_desc_create")
    md = _PLAIN[key] = MemoryDesc(out)
    if len(_PLAIN) > _CACHE_CAP:
        _PLAIN.popitem(last=False)
    return md


def md_tag(shape, dtype, tag=None):
    """Descriptor with a format tag (``E.format_tag_any`` by default: the primitive picks,
    usually a blocked layout such as nChw16c)."""
    dt = DTYPES[np.dtype(dtype)] if not isinstance(dtype, int) else dtype
    out = ctypes.c_void_p()
    check(_lib.lib().dnnl_memory_desc_create_with_tag(
        ctypes.byref(out), len(shape), dims(shape), dt,
        E.format_tag_any if tag is None else tag), "memory_desc_create")
    return MemoryDesc(out)


class Attr:
    """Primitive attributes: post-ops for fusion, applied in order.

    ``post_ops`` items: ``("eltwise", alg, alpha, beta)`` (e.g. ``E.eltwise_relu``) or
    ``("sum", scale)`` (accumulate into the existing dst: conv + residual add).
    ``key`` is hashable, for primitive cache keys."""

    __slots__ = ("post_ops", "key", "ptr")

    def __init__(self, post_ops=()):
        self.post_ops = tuple(tuple(p) for p in post_ops)
        self.key = self.post_ops
        self.ptr = None

    def build(self):
        """A fresh ``dnnl_primitive_attr_t`` (the caller owns and destroys it)."""
        lib = _lib.lib()
        attr = ctypes.c_void_p()
        check(lib.dnnl_primitive_attr_create(ctypes.byref(attr)), "primitive_attr_create")
        # each primitive gets its own scratchpad (Primitive.execute): oneDNN's library-owned
        # one is per thread, and a primitive created in one thread crashed in another
        check(lib.dnnl_primitive_attr_set_scratchpad_mode(attr, E.scratchpad_mode_user),
              "attr_set_scratchpad_mode")
        if self.post_ops:
            po = ctypes.c_void_p()
            check(lib.dnnl_post_ops_create(ctypes.byref(po)), "post_ops_create")
            try:
                for op in self.post_ops:
                    if op[0] == "eltwise":
                        check(lib.dnnl_post_ops_append_eltwise(po, op[1], op[2], op[3]),
                              "post_ops_append_eltwise")
                    elif op[0] == "sum":
                        check(lib.dnnl_post_ops_append_sum(po, op[1], 0, E.data_type_undef),
                              "post_ops_append_sum")
                    else:
                        raise ValueError(f"oneDNN post-op {op[0]!r}: expected eltwise or sum")
                check(lib.dnnl_primitive_attr_set_post_ops(attr, po), "attr_set_post_ops")
            finally:
                lib.dnnl_post_ops_destroy(po)
        return attr


class Primitive:
    """A primitive descriptor and its primitive, with one reusable memory object per
    argument (its data handle is set per call)."""

    def __init__(self, pd, what, threads):
        lib = _lib.lib()
        self.pd, self.what, self.threads = pd, what, threads
        prim = ctypes.c_void_p()
        check(lib.dnnl_primitive_create(ctypes.byref(prim), pd), f"{what} primitive_create")
        self.prim = prim
        self._mems = {}
        self._mds = {}
        self._scratch = None  # this primitive's scratchpad size in bytes (0: none)
        self._bound = {}  # _bind's answers by argument keys
        self._lock = threading.Lock()

    def __del__(self):
        # at interpreter exit the module globals may already be gone
        lib = _lib._state["lib"] if _lib is not None else None
        if lib is None:
            return
        for mem in self._mems.values():
            lib.dnnl_memory_destroy(mem)
        if getattr(self, "prim", None):
            lib.dnnl_primitive_destroy(self.prim)
        if getattr(self, "pd", None):
            lib.dnnl_primitive_desc_destroy(self.pd)

    def md(self, arg):
        """The descriptor the primitive expects for execution argument ``arg``
        (``E.ARG_SRC``...); its ``size`` is 0 when the primitive takes no such argument."""
        md = self._mds.get(arg)
        if md is None:  # one object per argument: its key is queried once
            ptr = _lib.lib().dnnl_primitive_desc_query_md(self.pd, E.query_exec_arg_md, arg)
            md = self._mds[arg] = MemoryDesc(ptr, owner=self)
        return md

    def impl(self):
        """oneDNN's implementation name (e.g. ``jit:avx512_core``)."""
        return impl_name(self.pd)

    def _mem(self, arg):
        mem = self._mems.get(arg)
        if mem is None:
            mem = ctypes.c_void_p()
            check(_lib.lib().dnnl_memory_create(ctypes.byref(mem), self.md(arg).ptr,
                                                _lib.engine(), None), "memory_create")
            self._mems[arg] = mem
        return mem

    def execute(self, args):
        """Run with ``args``: {E.ARG_*: NumPy array or Tensor laid out as :meth:`md` says},
        and wait for the stream. Arrays are referenced by pointer: the caller's ``args``
        keep them alive for the call."""
        lib = _lib.lib()
        set_handle = lib.dnnl_memory_set_data_handle
        with self._lock:
            bound = self._bound.get(tuple(args))
            if bound is None:
                bound = self._bind(tuple(args))
            ea, mems, scratch_mem = bound
            for mem, buf in zip(mems, args.values()):
                status = set_handle(mem, address(buf.data if type(buf) is Tensor else buf))
                if status:
                    check(status, "set_data_handle")
            if scratch_mem is not None:
                # a fresh buffer per call, not one kept per cached primitive: a pooling's
                # scratchpad can be its whole input, and cached ones added up to gigabytes
                scratch = np.empty(self._scratch, np.uint8)
                check(set_handle(scratch_mem, address(scratch)), "set_data_handle")
            _lib.set_threads(self.threads)
            stream = _lib.stream()
            status = lib.dnnl_primitive_execute(self.prim, stream, len(ea), ea)
            if status:  # the message only when it fails (formatting it costs every call)
                check(status, f"{self.what} execute")
            check(lib.dnnl_stream_wait(stream), "stream_wait")

    def _bind(self, keys):
        """(exec-arg array, memory objects in ``keys`` order, scratchpad memory or None) for
        calls with arguments ``keys``: built once per argument set, as only the data
        handles change from call to call."""
        if self._scratch is None:
            self._scratch = self.md(E.ARG_SCRATCHPAD).size
        mems = [self._mem(arg) for arg in keys]
        scratch_mem = self._mem(E.ARG_SCRATCHPAD) if self._scratch else None
        pairs = list(zip(keys, mems)) + ([(E.ARG_SCRATCHPAD, scratch_mem)] if self._scratch
                                         else [])
        ea = (_lib.ExecArg * len(pairs))()
        for i, (arg, mem) in enumerate(pairs):
            ea[i].arg, ea[i].memory = arg, mem
        bound = self._bound[keys] = (ea, mems, scratch_mem)
        return bound


def memo(table, key, make, cap=4096):
    """``table[key]``, made by ``make()`` on a miss; a table past ``cap`` entries starts
    over (the per-call lookups of a wrapper: a run sees a few keys, a sweep many)."""
    hit = table.get(key)
    if hit is None:
        if len(table) > cap:
            table.clear()
        hit = table[key] = make()
    return hit


def address(a):
    """The data address of NumPy array ``a``: through the buffer protocol where ``a``
    exports a writable contiguous buffer (under 1 us), else ``a.ctypes.data`` (2.7 us:
    it builds a ctypes helper object; a strided view, a read-only or empty array)."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(a))
    except (TypeError, ValueError, BufferError):
        return a.ctypes.data


_CACHE_CAP = 1024
_cache: collections.OrderedDict = collections.OrderedDict()
_cache_lock = threading.Lock()
_stats = {"hits": 0, "misses": 0, "create_s": 0.0}


def primitive(key, create, work=0, tune=False):
    """The cached :class:`Primitive` for ``key``, else one from ``create()`` -> pd handle
    (``create`` builds its descriptors itself, usually through :func:`create_pd`). ``key``
    must name everything the descriptor depends on: kind, shapes, dtypes, layouts,
    parameters, attributes. The thread count for ``work`` multiply-adds is added; with
    ``tune``, a primitive offered more than one thread runs on one where that measured
    faster (:func:`_parallel_pays`).

    A combination oneDNN does not implement raises :class:`OneDNNUnimplemented`; that
    answer is cached too (the caller falls back to its Numba kernel)."""
    threads = threads_for(work)
    if tune and threads > 1 and work < TUNE_MAX_WORK:
        pays = _PAYS.get(key)
        if pays is None:
            pays = _parallel_pays(key, create, threads)
        if not pays:
            threads = 1
    return _cached(key, create, threads)


def _cached(key, create, threads):
    """The cached primitive of ``key`` on ``threads`` threads, created on a miss."""
    full = (key, threads)
    hit = _cache.get(full)
    if hit is not None:
        _stats["hits"] += 1
        if isinstance(hit, Exception):
            raise hit
        return hit
    with _cache_lock:
        _stats["misses"] += 1
        _lib.set_threads(threads)
        t0 = time.perf_counter()
        try:
            pd = create()
            prim = Primitive(pd, str(key[0]), threads)
        except _lib.OneDNNUnimplemented as e:
            _cache[full] = e
            raise
        finally:
            _stats["create_s"] += time.perf_counter() - t0
        _cache[full] = prim
        if len(_cache) > _CACHE_CAP:
            _cache.popitem(last=False)
        return prim


# Whether a tuned primitive runs faster on its threads than on one (key -> bool). On the
# 2-core VM with passive OpenMP workers some small primitives lost on two threads: oneDNN
# 3.2's jit_1x1 weight gradient of ResNet-18's 1x1 stride-2 convolutions took 0.36-0.48 ms
# on two threads against 0.15-0.22 ms on one (worker waiting active or passive alike),
# LeNet's first-layer weight gradient 8.5 ms against 3.3, while others of as few
# multiply-adds gained; a count per primitive, measured, beats a threshold of work.
_PAYS: dict = {}
TUNE_MAX_WORK = 1 << 28  # above this (~8 ms a call on one core) more threads always paid
_TUNE_ROUNDS = 3  # timed runs of each thread count (after one untimed run of each)
_TUNE_ARGS = tuple(getattr(E, "ARG_" + n) for n in (
    "SRC", "SRC_1", "SRC_2", "DST", "DST_1", "DST_2", "WEIGHTS", "WEIGHTS_1", "BIAS",
    "MEAN", "VARIANCE", "SCALE", "SHIFT", "WORKSPACE", "DIFF_SRC", "DIFF_SRC_1",
    "DIFF_DST", "DIFF_DST_1", "DIFF_WEIGHTS", "DIFF_BIAS", "DIFF_SCALE", "DIFF_SHIFT"))


def _parallel_pays(key, create, threads):
    """Time the primitive of ``key`` on one thread and on ``threads`` (interleaved runs on
    zero-filled buffers of its own layouts: a convolution's time does not depend on the
    values) and record whether the parallel one was faster by the median."""
    try:
        cands = {t: _cached(key, create, t) for t in (1, threads)}
    except _lib.OneDNNUnimplemented:
        return True  # the caller's own call raises it
    bufs = {t: {a: np.zeros(p.md(a).size, np.uint8) for a in _TUNE_ARGS if p.md(a).size}
            for t, p in cands.items()}
    times = {t: [] for t in cands}
    for r in range(_TUNE_ROUNDS + 1):
        for t, p in cands.items():
            t0 = time.perf_counter()
            p.execute(bufs[t])
            if r:
                times[t].append(time.perf_counter() - t0)
    pays = bool(np.median(times[threads]) < np.median(times[1]))
    _PAYS[key] = pays
    return pays


def cache_info():
    """{hits, misses, create_s (seconds spent creating primitives: descriptors and JIT),
    size} of the primitive cache, and load_s (library load, engine and stream)."""
    return dict(_stats, size=len(_cache), load_s=_lib._state["load_s"])


def cache_clear():
    """Drop every cached primitive and reordered parameter."""
    with _cache_lock:
        _cache.clear()
        _PAYS.clear()
        _REORDERED.clear()
        _reordered_bytes[0] = 0


def create_pd(fn_name, *args, attr=None):
    """Call oneDNN's ``<fn_name>(&pd, engine, *args, attr)`` and return the pd handle;
    ``attr`` is an :class:`Attr` or None."""
    lib = _lib.lib()
    pd = ctypes.c_void_p()
    a = (attr or _NO_ATTR).build()
    try:
        check(getattr(lib, fn_name)(ctypes.byref(pd), _lib.engine(), *args, a), fn_name)
    finally:
        lib.dnnl_primitive_attr_destroy(a)
    return pd


_NO_ATTR = Attr()


def impl_name(pd):
    """oneDNN's implementation name of primitive descriptor ``pd`` (e.g. ``jit:avx2``)."""
    out = ctypes.c_char_p()
    check(_lib.lib().dnnl_primitive_desc_query(pd, E.query_impl_info_str, 0,
                                                ctypes.byref(out)), "query impl")
    return out.value.decode()


def prefer_impl(create, want):
    """The pd of ``create()`` moved on to the first of oneDNN's implementations whose name
    ``want(name)`` accepts, else the pd as ``create()`` gives it (oneDNN's first pick)."""
    lib = _lib.lib()
    pd = create()
    while not want(impl_name(pd)):
        if lib.dnnl_primitive_desc_next_impl(pd) != E.success:  # list exhausted: pd kept
            lib.dnnl_primitive_desc_destroy(pd)
            return create()
    return pd


class Tensor:
    """A tensor in a oneDNN layout (possibly blocked): ``data`` is a flat uint8 NumPy
    buffer of ``md.size`` bytes, ``md`` its descriptor. Produced and consumed by oneDNN
    primitives inside a plan; :func:`to_plain` gives the NumPy array users see."""

    __slots__ = ("data", "md")

    def __init__(self, md, data=None):
        self.md = md
        if data is None:
            # padded blocked layouts must hold zeros in the padding (oneDNN assumes it)
            data = np.zeros(md.size, np.uint8)
        self.data = data

    @property
    def shape(self):
        return self.md.shape

    @property
    def ndim(self):
        return len(self.md.shape)

    @property
    def dtype(self):
        return _NP.get(self.md.dtype)

    def values(self):
        """The buffer as a flat array of the element dtype (padding included)."""
        return self.data.view(_NP[self.md.dtype])


def one_layout(xs):
    """``(md, tensors)``: every one of ``xs`` as a Tensor of one layout, the first Tensor's
    (the others reordered into it: cheaper than taking all of them to NumPy when the next
    step is a oneDNN one again), when some x is a Tensor and all have its shape and dtype;
    else ``(None, xs)``. Elementwise ops with f(0) = 0 then run on the buffers, padding
    included. In the ``None`` case every Tensor comes back as its NumPy array."""
    md = next((x.md for x in xs if type(x) is Tensor), None)
    if md is None:
        return None, xs
    # a plain layout gains nothing here (from_plain hands plain arrays back unwrapped): its
    # Tensors are NumPy views (a 1x1-pixel map in NHWC, ResNet's last stage on 32x32 images)
    if md.is_plain:
        return None, [to_plain(x) for x in xs]
    key, shape, dt = md.key, md.shape, _NP.get(md.dtype)
    out = []
    for x in xs:
        if type(x) is Tensor and x.md.key == key:
            out.append(x)
        elif tuple(x.shape) == shape and x.dtype == dt:
            out.append(from_plain(x, md))
        else:
            return None, [to_plain(x) for x in xs]
    return md, out


def reorder_md(src_md, dst_md):
    """The cached reorder primitive from ``src_md`` to ``dst_md``."""
    def create():
        lib = _lib.lib()
        pd = ctypes.c_void_p()
        a = _NO_ATTR.build()
        try:
            check(lib.dnnl_reorder_primitive_desc_create(
                ctypes.byref(pd), src_md.ptr, _lib.engine(), dst_md.ptr, _lib.engine(), a),
                "reorder_primitive_desc_create")
        finally:
            lib.dnnl_primitive_attr_destroy(a)
        return pd
    return primitive(("reorder", src_md.key, dst_md.key), create, src_md.size // 4)


def to_plain(x, out=None):
    """The C-contiguous NumPy array of a :class:`Tensor` (``x`` itself if an array)."""
    if not isinstance(x, Tensor):
        return x
    if x.md.is_plain:
        arr = x.data.view(_NP[x.md.dtype]).reshape(x.md.shape)
        if out is not None:
            out[...] = arr
            return out
        return arr
    shape, dt = x.md.shape, _NP[x.md.dtype]
    if out is None or not out.flags.c_contiguous:
        out = np.empty(shape, dt)
    dst = md_plain(shape, dt)
    reorder_md(x.md, dst).execute({E.ARG_FROM: x.data, E.ARG_TO: out})
    return out


def from_plain(arr, md):
    """``arr`` (NumPy, any strides) in layout ``md``: the array itself when the layout is
    already that, else a reordered :class:`Tensor`."""
    if isinstance(arr, Tensor):
        if arr.md.key == md.key:
            return arr
        out = Tensor(md, np.empty(md.size, np.uint8))  # reorders zero the padding
        reorder_md(arr.md, md).execute({E.ARG_FROM: arr.data, E.ARG_TO: out.data})
        return out
    if md.is_plain and arr.flags.c_contiguous and DTYPES.get(arr.dtype) == md.dtype:
        return arr
    try:
        src = md_plain(arr.shape, arr.dtype, [s // arr.itemsize for s in arr.strides])
    except _lib.OneDNNError:  # strides oneDNN cannot describe (a view over a gap, negative)
        arr = np.ascontiguousarray(arr)
        src = md_plain(arr.shape, arr.dtype)
    out = Tensor(md, np.empty(md.size, np.uint8))
    reorder_md(src, md).execute({E.ARG_FROM: arr, E.ARG_TO: out.data})
    return out


def run_forward(prim, x, y):
    """Run a forward primitive from plain ``x`` into ``y``; returns ``(y, workspace or None)``."""
    args = {E.ARG_SRC: from_plain(x, prim.md(E.ARG_SRC)), E.ARG_DST: y}
    ws = None
    wmd = prim.md(E.ARG_WORKSPACE)
    if wmd.size:
        ws = Tensor(wmd, np.empty(wmd.size, np.uint8))  # written whole
        args[E.ARG_WORKSPACE] = ws.data
    prim.execute(args)
    return y, ws


# Reordered copies of parameters (a convolution's weight in its blocked layout), reused
# while the source buffer is unchanged: its write version (``storage.version``, bumped by
# every in-place write path) and, as a safety net for a write that bypassed those paths, a
# sample of its elements, are those the copy was made from. Least recently used first out
# past _REORDERED_CAP bytes.
_REORDERED: collections.OrderedDict = collections.OrderedDict()
_REORDERED_CAP = 512 << 20
_reordered_bytes = [0]
_SAMPLE = 61  # elements compared (spread over the buffer)


def _sample(arr):
    if arr.flags.c_contiguous:
        flat = arr.reshape(-1)
        return flat[::max(1, flat.size // _SAMPLE)].tobytes()
    idx = np.linspace(0, arr.size - 1, _SAMPLE).astype(np.intp)  # a view: no copy of it all
    return arr[np.unravel_index(idx, arr.shape)].tobytes()


def reordered(arr, src_md, dst_md, derive=None, key=()):
    """``arr`` (NumPy, laid out as ``src_md``) reordered into ``dst_md``, as a Tensor cached
    while ``arr`` is unchanged (see above). ``derive`` (optional) maps ``arr`` to the
    array actually reordered (a weight scaled by its BatchNorm); ``key`` then names every
    other input of it, each ``(array, ...)`` checked by value."""
    ck = (id(storage._root(arr)), address(arr), arr.strides, src_md.key, dst_md.key,
          tuple(k if not isinstance(k, np.ndarray) else None for k in key))
    ver = storage.version(arr)
    extra = tuple(k.tobytes() for k in key if isinstance(k, np.ndarray))
    hit = _REORDERED.get(ck)
    if hit is not None:
        if hit[0] == ver and hit[1] == extra and hit[2] == _sample(arr):
            _REORDERED.move_to_end(ck)
            return hit[3]
        _reordered_bytes[0] -= hit[3].data.nbytes
        del _REORDERED[ck]
    src = arr if derive is None else derive(arr)
    out = Tensor(dst_md, np.empty(dst_md.size, np.uint8))  # a reorder zero-pads
    reorder_md(src_md, dst_md).execute({E.ARG_FROM: src, E.ARG_TO: out.data})
    _REORDERED[ck] = (ver, extra, _sample(arr), out)
    _reordered_bytes[0] += out.data.nbytes
    while _reordered_bytes[0] > _REORDERED_CAP and len(_REORDERED) > 1:
        _, old = _REORDERED.popitem(last=False)
        _reordered_bytes[0] -= old[3].data.nbytes
    return out
