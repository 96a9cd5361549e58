"""DataParallelExecutorGroup: one executor per context, a batch split by workload."""
from __future__ import annotations

import logging

import numpy as np

from .. import storage as st
from ..base import MXNetError
from ..context import Context
from ..io.io import DataDesc
from ..ndarray.ndarray import NDArray, wrap
from ..ops.core.registry import run_raw

__all__ = ["DataParallelExecutorGroup", "split_slices"]


def split_slices(batch_size, workload):
    """Split ``batch_size`` rows into contiguous slices proportional to ``workload``."""
    total = float(sum(workload))
    counts = [int(round(batch_size * w / total)) for w in workload]
    counts[-1] = batch_size - sum(counts[:-1])
    slices, start = [], 0
    for c in counts:
        if c <= 0:
            raise MXNetError(f"Too many slices: batch size {batch_size} cannot be split over "
                             f"{len(workload)} devices with workload {workload}")
        slices.append(slice(start, start + c))
        start += c
    return slices


def _slice_raw(raw, sl, axis=0):
    """Rows ``sl`` of ``raw`` along the batch ``axis`` (a layout without N: no split)."""
    if axis < 0:
        return raw
    if isinstance(raw, st.CSR):
        return run_raw("slice", [raw], begin=(sl.start,), end=(sl.stop,))[0]
    if axis == 0:
        return raw[sl]
    return np.take(raw, np.arange(sl.start, sl.stop), axis=axis)


def _load(dst: NDArray, raw):
    """Point an input array at a batch value (zero-copy when layout matches)."""
    mine = dst._raw
    if type(mine) is type(raw) and tuple(mine.shape) == tuple(raw.shape) \
            and mine.dtype == raw.dtype:
        dst._raw = raw
    else:
        dst._assign(raw)


def _desc(x):
    return x if isinstance(x, DataDesc) else DataDesc(x[0], x[1])


def _per_device_group2ctxs(group2ctxs, n_dev):
    """One group -> context dict per device, from MXNet's accepted forms: None, a list
    (one dict per device), or a dict whose values are a context or a list of them (one
    shared by every device, or one per device)."""
    if group2ctxs is None:
        return [None] * n_dev
    if isinstance(group2ctxs, (list, tuple)):
        if len(group2ctxs) != n_dev:
            raise ValueError(f"length of group2ctxs should be {n_dev}, got {len(group2ctxs)}")
        return list(group2ctxs)
    if not isinstance(group2ctxs, dict):
        raise TypeError(f"group2ctxs must be a dict or a list of dicts, got "
                        f"{type(group2ctxs).__name__}")
    out = [{} for _ in range(n_dev)]
    for group, ctxs in group2ctxs.items():
        ctxs = [ctxs] if isinstance(ctxs, Context) else list(ctxs)
        if len(ctxs) == 1:
            ctxs = ctxs * n_dev
        if len(ctxs) != n_dev:
            raise ValueError(f"length of group2ctxs[{group}] should be {n_dev} or 1, got "
                             f"{len(ctxs)}")
        for i, c in enumerate(ctxs):
            out[i][group] = c
    return out


class PulledRows:
    """Which rows the executors' row_sparse weights hold when a kvstore updates them.

    After an update on the store they hold stale values; ``Module.prepare`` pulls the rows
    one batch needs (``pulled_for[name] is batch``); ``complete`` names the weights that hold
    every current row. Shared by the groups of a bucketing module (their arrays are shared).
    """

    def __init__(self):
        self.complete = set()
        self.pulled_for = {}

    def holds(self, name, batch):
        """True when ``name``'s arrays hold every row ``batch`` can read."""
        return name in self.complete or self.pulled_for.get(name) is batch

    def stale(self, names):
        """The store updated ``names``: no batch's rows are current any more."""
        for n in names:
            self.complete.discard(n)
            self.pulled_for.pop(n, None)


class DataParallelExecutorGroup:
    """Executors for ``contexts`` that share parameters with ``shared_group`` (buckets).

    Parameters
    ----------
    symbol, contexts, workload, data_shapes, label_shapes, param_names, for_training,
    inputs_need_grad, shared_group, logger, fixed_param_names, grad_req, state_names,
    group2ctxs : as in MXNet 1.9.
    """

    def __init__(self, symbol, contexts, workload, data_shapes, label_shapes, param_names,
                 for_training, inputs_need_grad, shared_group=None, logger=logging,
                 fixed_param_names=None, grad_req="write", state_names=None, group2ctxs=None):
        self.param_names = list(param_names)
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.symbol = symbol
        self.contexts = list(contexts)
        self.workload = list(workload) if workload is not None else [1] * len(self.contexts)
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.logger = logger
        self.fixed_param_names = set(fixed_param_names or [])
        self.state_names = list(state_names or [])
        self.group2ctxs = _per_device_group2ctxs(group2ctxs, len(self.contexts))
        self.shared_data_arrays = (shared_group.shared_data_arrays if shared_group is not None
                                   else [{} for _ in self.contexts])
        self.pulled_rows = (shared_group.pulled_rows if shared_group is not None
                            else PulledRows())
        self.batch_size = None
        self.slices = None
        self.execs = []
        self._default_execs = None
        self.data_shapes = self.label_shapes = None
        self.data_names = self.label_names = None
        self.grad_req = self._grad_req_dict(grad_req, [_desc(d).name for d in data_shapes])
        self.bind_exec(data_shapes, label_shapes, shared_group)

    def _grad_req_dict(self, grad_req, data_names):
        """Per-argument grad_req as MXNet's executor group builds it: parameters get
        ``grad_req`` (fixed ones 'null'), data inputs only with inputs_need_grad, labels and
        states 'null'."""
        if not self.for_training:
            return {n: "null" for n in self.arg_names}
        if isinstance(grad_req, str):
            reqs = {}
            for name in self.arg_names:
                if name in self.param_names:
                    reqs[name] = "null" if name in self.fixed_param_names else grad_req
                elif name in data_names:
                    reqs[name] = grad_req if self.inputs_need_grad else "null"
                else:
                    reqs[name] = "null"
            return reqs
        if isinstance(grad_req, (list, tuple)):
            if len(grad_req) != len(self.arg_names):
                raise ValueError(f"grad_req list has {len(grad_req)} entries for "
                                 f"{len(self.arg_names)} arguments")
            return dict(zip(self.arg_names, grad_req))
        if isinstance(grad_req, dict):
            return {n: grad_req.get(n, "null") for n in self.arg_names}
        raise ValueError("grad_req must be one of str, list, tuple, or dict.")

    def decide_slices(self, data_shapes):
        bs = None
        for d in data_shapes:
            axis = DataDesc.get_batch_axis(getattr(d, "layout", "NCHW"))
            b = d.shape[axis]
            if bs is not None and b != bs:
                raise MXNetError(f"all data must have the same batch size: batch_size = {bs}, "
                                 f"but {d.name} has shape {d.shape}")
            bs = b
        self.batch_size = bs
        self.slices = split_slices(bs, self.workload)
        return [DataDesc.get_batch_axis(getattr(d, "layout", "NCHW")) for d in data_shapes]

    def _sliced_shape(self, shapes, i, axes):
        out = []
        for d, ax in zip(shapes, axes):
            shape = list(d.shape)
            if ax >= 0:
                shape[ax] = self.slices[i].stop - self.slices[i].start
            out.append(DataDesc(d.name, tuple(shape), d.dtype, d.layout))
        return out

    def bind_exec(self, data_shapes, label_shapes, shared_group=None, reshape=False):
        data_shapes = [_desc(d) for d in data_shapes]
        label_shapes = [_desc(d) for d in label_shapes] if label_shapes else []
        self.data_axes = self.decide_slices(data_shapes)
        self.label_axes = [DataDesc.get_batch_axis(getattr(d, "layout", "NCHW"))
                           for d in label_shapes]
        self.data_shapes, self.label_shapes = data_shapes, label_shapes
        self.data_names = [d.name for d in data_shapes]
        self.label_names = [d.name for d in label_shapes]
        # MXNet: an output's batch axis comes from its symbol's __layout__ attribute
        self.output_layouts = [DataDesc.get_batch_axis(self.symbol[i].attr("__layout__"))
                               for i in range(len(self.symbol.list_outputs()))]
        old = self.execs
        self.execs = []
        for i, ctx in enumerate(self.contexts):
            shapes = {d.name: d.shape for d in self._sliced_shape(data_shapes, i, self.data_axes)}
            shapes.update({d.name: d.shape for d in
                           self._sliced_shape(label_shapes, i, self.label_axes)})
            type_dict = {d.name: d.dtype for d in data_shapes + label_shapes}
            shared_exec = None
            if shared_group is not None:
                shared_exec = shared_group.execs[i]
            elif reshape and old:
                shared_exec = old[i]
            exe = self.symbol.simple_bind(
                ctx, grad_req=self.grad_req, type_dict=type_dict,
                shared_arg_names=self.param_names, shared_exec=shared_exec,
                shared_buffer=self.shared_data_arrays[i],
                group2ctx=self.group2ctxs[i], **shapes)
            if reshape and old and old[i]._monitor is not None:  # MXNet's reshape keeps it
                exe.set_monitor_callback(old[i]._monitor, old[i]._monitor_all)
            self.execs.append(exe)
        # each executor's dicts once (the properties build a new dict per access)
        args = [e.arg_dict for e in self.execs]
        grads = [e.grad_dict for e in self.execs]
        auxs = [e.aux_dict for e in self.execs]
        self.data_arrays = [[(self.slices[i], a[n]) for i, a in enumerate(args)]
                            for n in self.data_names]
        self.label_arrays = [[(self.slices[i], a[n]) for i, a in enumerate(args)]
                             for n in self.label_names]
        self.param_arrays = [[a[n] for a in args] for n in self.param_names]
        self.grad_arrays = ([[g.get(n) for g in grads] for n in self.param_names]
                            if self.for_training else [])
        self.aux_arrays = [[x[n] for x in auxs] for n in self.aux_names]
        self.state_arrays = [[a[n] for a in args] for n in self.state_names]
        self.input_grad_arrays = ([[g.get(n) for g in grads] for n in self.data_names]
                                  if self.inputs_need_grad else [])

    def reshape(self, data_shapes, label_shapes):
        """Rebind for new input shapes, sharing parameters and memory with the old executors."""
        data_shapes = [_desc(d) for d in data_shapes]
        if [tuple(d.shape) for d in data_shapes] == [tuple(d.shape) for d in self.data_shapes] \
                and [tuple(_desc(d).shape) for d in (label_shapes or [])] == \
                [tuple(d.shape) for d in self.label_shapes]:
            return
        self.bind_exec(data_shapes, label_shapes, None, reshape=True)

    def set_params(self, arg_params, aux_params, allow_extra=False):
        for exe in self.execs:
            exe.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)
        given = [n for n in self.param_names if n in (arg_params or {})]
        self.pulled_rows.stale(given)
        self.pulled_rows.complete.update(given)

    def get_params(self, arg_params, aux_params):
        """Average parameters over devices into ``arg_params`` / ``aux_params``."""
        for name, blocks in zip(self.param_names, self.param_arrays):
            arg_params[name]._assign(_average(blocks))
        for name, blocks in zip(self.aux_names, self.aux_arrays):
            aux_params[name]._assign(_average(blocks))

    def forward(self, data_batch, is_train=None):
        """Load the batch into each executor (split by slices) and run forward."""
        if is_train is None:
            is_train = self.for_training
        one = len(self.execs) == 1
        for arrays, value, ax in zip(self.data_arrays, data_batch.data, self.data_axes):
            for sl, dst in arrays:
                _load(dst, value._raw if one else _slice_raw(value._raw, sl, ax))
        if self.label_arrays and getattr(data_batch, "label", None):
            for arrays, value, ax in zip(self.label_arrays, data_batch.label, self.label_axes):
                for sl, dst in arrays:
                    _load(dst, value._raw if one else _slice_raw(value._raw, sl, ax))
        for exe in self.execs:
            exe.forward(is_train=is_train)

    def get_output_shapes(self):
        shapes = []
        exe = self.execs[0]
        for name, out, ax in zip(self.symbol.list_outputs(), exe.outputs,
                                 self.output_layouts):
            shape = list(out.shape)
            if shape and ax >= 0:
                shape[ax] = self.batch_size
            shapes.append((name, tuple(shape)))
        return shapes

    def get_outputs(self, merge_multi_context=True, begin=0, end=None):
        end = end if end is not None else len(self.execs[0].outputs)
        outs = [[e.outputs[i] for e in self.execs] for i in range(begin, end)]
        if merge_multi_context:
            return [_merge(o, self.output_layouts[begin + k]) for k, o in enumerate(outs)]
        return outs

    def get_states(self, merge_multi_context=True):
        """State arrays ([state][device]); merged along the batch axis when asked."""
        if merge_multi_context:
            return [_merge(s) for s in self.state_arrays]
        return self.state_arrays

    def set_states(self, states=None, value=None):
        """Set states from arrays (merged, or one list per device) or fill with ``value``."""
        if states is not None:
            if value is not None:
                raise MXNetError("Only one of states & value can be specified.")
            if len(states) != len(self.state_arrays):
                raise MXNetError(f"set_states: got {len(states)} states, the module has "
                                 f"{len(self.state_arrays)} ({self.state_names})")
            for src, dsts in zip(states, self.state_arrays):
                if isinstance(src, (list, tuple)):
                    for s_, d in zip(src, dsts):
                        d._assign(s_._raw if isinstance(s_, NDArray) else np.asarray(s_))
                else:
                    raw = src._raw if isinstance(src, NDArray) else np.asarray(src)
                    for k, d in enumerate(dsts):
                        d._assign(raw if len(dsts) == 1 else _slice_raw(raw, self.slices[k]))
            return
        if value is None:
            raise MXNetError("set_states: give states or value")
        for dsts in self.state_arrays:
            for d in dsts:
                d[:] = value

    def get_input_grads(self, merge_multi_context=True):
        if not self.inputs_need_grad:
            raise MXNetError("get_input_grads requires inputs_need_grad=True at bind")
        if merge_multi_context:
            return [_merge(g, ax) for g, ax in zip(self.input_grad_arrays, self.data_axes)]
        return self.input_grad_arrays

    def backward(self, out_grads=None):
        if not self.for_training:
            raise MXNetError("re-bind with for_training=True to run backward")
        for i, exe in enumerate(self.execs):
            og = None
            if out_grads is not None:
                og = [wrap(_slice_raw(g._raw, self.slices[i], ax)) if len(self.execs) > 1
                      else g for g, ax in zip(out_grads, self.output_layouts)]
            exe.backward(out_grads=og)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        if len(self.execs) == 1:
            eval_metric.update(labels, self.execs[0].outputs)
            return
        for i, exe in enumerate(self.execs):
            if pre_sliced:
                labs = labels[i]
            else:
                labs = [wrap(_slice_raw(lab._raw, self.slices[i], ax))
                        for lab, ax in zip(labels, self.label_axes or [0] * len(labels))]
            eval_metric.update(labs, exe.outputs)

    def install_monitor(self, mon):
        for exe in self.execs:
            mon.install(exe)


def _average(blocks):
    if len(blocks) == 1:
        return blocks[0]._raw
    raws = [b._raw for b in blocks]
    acc = st.todense(raws[0]).astype(np.float64)
    for r in raws[1:]:
        acc += st.todense(r)
    return (acc / len(raws)).astype(raws[0].dtype)


def _merge(arrays, axis=0):
    """One array from per-device blocks, concatenated along the batch ``axis``."""
    if len(arrays) == 1:
        return arrays[0]
    raws = [a._raw for a in arrays]
    if axis == 0 and all(isinstance(r, st.CSR) for r in raws):
        return wrap(run_raw("Concat", raws, dim=0, num_args=len(raws))[0], arrays[0].context)
    return wrap(np.concatenate([st.todense(r) for r in raws], axis=max(axis, 0)),
                arrays[0].context)
