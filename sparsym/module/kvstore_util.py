"""How Module moves gradients and weights: local replicas, or a (dist) KVStore."""
from __future__ import annotations

import numpy as np

from .. import storage as st
from ..base import getenv
from ..kvstore.gradsum import sum_raw


def create_kvstore(kvstore, num_device, arg_params):
    """(kvstore or None, update_on_kvstore) as MXNet's ``model._create_kvstore``.

    A kvstore name with one device and no 'dist' needs no store; several devices get one
    that sums their gradients and, for 'local', runs the optimizer too unless a parameter
    has more than 16M entries (then each device updates). ``MXNET_UPDATE_ON_KVSTORE=0``
    keeps the updates on the devices.
    """
    from ..kvstore.base import KVStoreBase, create
    update_on_kvstore = getenv("MXNET_UPDATE_ON_KVSTORE", "1") != "0"
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, KVStoreBase) or hasattr(kvstore, "row_sparse_pull"):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore:
            kv = None
        else:
            kv = create(kvstore)
            if kvstore == "local" and arg_params:
                biggest = max(int(np.prod(p.shape)) for p in arg_params.values())
                if biggest > 1024 * 1024 * 16:
                    update_on_kvstore = False
    else:
        raise TypeError("kvstore must be KVStore, str or None")
    if kv is None:
        return None, False
    return kv, update_on_kvstore and kv.is_capable(KVStoreBase.OPTIMIZER)


def initialize_kvstore(kv, param_arrays, arg_params, param_names, update_on_kvstore):
    """Init every parameter on the store; rank 0's value wins."""
    for idx, name in enumerate(param_names):
        kv.init(name, arg_params[name])
        if update_on_kvstore:
            if arg_params[name].stype == "row_sparse":
                continue  # MXNet: row_sparse weights arrive through prepare()/row_sparse_pull
            kv.pull(name, param_arrays[idx], priority=-idx)


def _sum_grads(grads):
    return sum_raw([g._raw for g in grads])


def update_params(param_arrays, grad_arrays, updater, num_device, kvstore=None,
                  param_names=None):
    """Local update: one replica -> updater directly; several -> sum, update, broadcast.

    With a kvstore (dist, update_on_kvstore off) gradients are first aggregated through it.
    The updater index is ``i * num_device`` (MXNet's index of parameter i on device 0, which
    is what the optimizer's idx2name maps).
    """
    if kvstore:
        for i, (ws, gs) in enumerate(zip(param_arrays, grad_arrays)):
            if gs[0] is None:
                continue
            name = param_names[i]
            if gs[0].stype == "default" and ws[0].stype == "default":
                kvstore.pushpull(name, gs, priority=-i)
            else:
                kvstore.push(name, gs, priority=-i)
                kvstore.pull(name, gs, ignore_sparse=False, priority=-i)
    if num_device == 1:
        # one updater call with every (index, grad, weight), as MXNet's _update_params
        # makes: an aggregating optimizer (SGD) updates them in groups of aggregate_num
        idx = [i for i, g in enumerate(grad_arrays) if g[0] is not None]
        if idx:
            updater(idx, [grad_arrays[i][0] for i in idx], [param_arrays[i][0] for i in idx])
        return
    from ..ndarray.ndarray import wrap
    for i, (ws, gs) in enumerate(zip(param_arrays, grad_arrays)):
        if gs[0] is None:
            continue
        total = gs[0] if kvstore else wrap(_sum_grads(gs), gs[0].context)
        updater(i * num_device, total, ws[0])
        for w in ws[1:]:
            src = ws[0]._raw
            if isinstance(src, np.ndarray):
                np.copyto(w._raw, src)
                st.bump(w._raw)
            else:
                w._raw = src.copy()


def update_params_on_kvstore(param_arrays, grad_arrays, kvstore, param_names):
    """Push gradients; pull dense weights back (row_sparse ones come through prepare())."""
    for idx, (ws, gs) in enumerate(zip(param_arrays, grad_arrays)):
        if gs[0] is None:
            continue
        name = param_names[idx]
        kvstore.push(name, gs, priority=-idx)
        if ws[0].stype == "row_sparse":
            continue
        kvstore.pull(name, ws, priority=-idx)
