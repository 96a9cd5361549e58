"""Storage-type inference: pick a dispatch row per node (the same row runs the kernel)."""
from __future__ import annotations

import logging

from ..base import StorageError, getenv
from ..ops.core.registry import report_fallback, resolve_dispatch
from ..storage import ID_STYPE, STYPES

logger = logging.getLogger("sparsym")


def var_stype(node) -> str:
    """A variable's declared stype: MXNet stores ``__storage_type__`` as the id ('0', '1',
    '2'; -1 undefined); names are accepted too."""
    raw = node.attr.get("__storage_type__")
    if raw is None:
        return "default"
    if raw in STYPES:
        return raw
    try:
        sid = int(raw)
    except ValueError:
        sid = None
    if sid == -1:
        return "default"
    if sid not in ID_STYPE:
        raise StorageError(f"variable {node.name}: __storage_type__={raw!r} is not a storage "
                           f"type (expected 0/1/2 or one of {list(STYPES)})")
    return ID_STYPE[sid]


def infer_storage(graph, known, report=True, ties=()):
    """Return (per-entry stypes, per-node (row, mode)) for variables' ``__storage_type__``
    and ``known`` (eid -> stype). Fallback nodes are reported by the policy when ``report``.

    ties: (head eid, head-gradient eid) pairs; a head gradient takes its head's stype, as
    MXNet's simple_bind does (so abs(row_sparse) gets a row_sparse gradient)."""
    tied = {}
    for h, g in ties:
        if g is not None and g not in known:
            tied.setdefault(h, []).append(g)
    stypes = ["default"] * graph.num_entries
    for n in graph.input_nodes:
        stypes[graph.eid(n)] = var_stype(n)
    for e, s in known.items():
        if s is not None:
            stypes[e] = s
    choice = [None] * len(graph.nodes)
    verbose = getenv("MXNET_INFER_STORAGE_TYPE_VERBOSE_LOGGING", "0") not in ("0", "")
    for k, node in enumerate(graph.nodes):
        if node.op is None:
            if verbose:
                logger.info("node %d %s: variable", k, node.name)
            continue
        ins = tuple(stypes[e] for e in graph.in_eids(k))
        row, outs, mode = resolve_dispatch(node.op, node.params, ins, len(graph.out_eids(k)))
        if mode == "fallback" and report:
            report_fallback(node.op.name, node.params.to_strings(), ins, outs)
        for e, s in zip(graph.out_eids(k), outs):
            stypes[e] = s
            for g in tied.get(e, ()):
                stypes[g] = s
        choice[k] = (row, mode)
        if verbose:
            lines = [f"node {k} {node.op.name}: {_MODE_NAMES[mode]}"]
            lines += [f"\t\tinput {e}: {stypes[e]}" for e in graph.in_eids(k)]
            lines += [f"\t\toutput {e}: {stypes[e]}" for e in graph.out_eids(k)]
            logger.info("\n".join(lines))
    return stypes, choice


# MXNet's dispatch-mode names in the verbose log
_MODE_NAMES = {"dense": "fcompute", "sparse": "fcompute_ex", "fallback": "fcompute_fallback"}
