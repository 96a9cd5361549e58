"""Readable views of a bound executor: debug_str, memory totals and the storage report."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import storage as st
from ..graph import node_lines

_MODE_NAMES = {"dense": "fcompute", "sparse": "fcompute_ex", "fallback": "fcompute_fallback"}


def _dense_bytes(shape, dtype):
    return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize


@dataclass(frozen=True)
class StorageRow:
    """One node of the storage report."""

    node: str
    op: str
    in_stypes: tuple
    out_stypes: tuple
    mode: str
    densified_bytes: int


class StorageReport:
    """Where sparsity is kept or lost: one row per node of a bound executor.

    ``str(report)`` is an aligned table; ``report.fallbacks`` lists the nodes that
    densified their inputs and ``report.densified_bytes`` what that cost per run.
    """

    HEADER = ("node", "op", "inputs", "outputs", "dispatch", "densified_bytes")

    def __init__(self, rows):
        self.rows = list(rows)

    @classmethod
    def from_executor(cls, exe):
        plan = exe.plan
        rows = []
        for s in plan.forward_steps + plan.backward_steps:
            dens = 0
            if s.mode == "fallback":
                dens = sum(_dense_bytes(plan.shapes[e], plan.dtypes[e])
                           for e, t in zip(s.in_eids, s.in_stypes) if t != "default")
            rows.append(StorageRow(exe.node_name(s.name), s.op_name, s.in_stypes, s.out_stypes,
                                   s.mode, dens))
        return cls(rows)

    @property
    def fallbacks(self):
        return [r for r in self.rows if r.mode == "fallback"]

    @property
    def densified_bytes(self) -> int:
        return sum(r.densified_bytes for r in self.rows)

    def as_dicts(self):
        return [dict(zip(self.HEADER, (r.node, r.op, list(r.in_stypes), list(r.out_stypes),
                                       r.mode, r.densified_bytes))) for r in self.rows]

    def __str__(self):
        body = [(r.node, r.op, ",".join(r.in_stypes), ",".join(r.out_stypes), r.mode,
                 str(r.densified_bytes)) for r in self.rows]
        widths = [max(len(str(x)) for x in col) for col in zip(self.HEADER, *body)]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        lines = [fmt.format(*self.HEADER), fmt.format(*("-" * w for w in widths))]
        lines += [fmt.format(*b).rstrip() for b in body]
        lines.append(f"{len(self.fallbacks)} fallback node(s), {self.densified_bytes} bytes "
                     "densified per run")
        return "\n".join(lines)

    __repr__ = __str__


def _sum_bytes(arrays):
    return sum(st.nbytes(a._raw) for a in arrays if a is not None)


def memory_totals(exe) -> dict:
    """Bytes of the executor's arrays and of its intermediate plan and pool."""
    mem = exe.plan.memory
    out = {"arguments": _sum_bytes(exe.arg_arrays),
           "gradients": _sum_bytes(exe.grad_arrays),
           "aux_states": _sum_bytes(exe.aux_arrays),
           "outputs": _sum_bytes(exe.outputs),
           "intermediate_pooled": mem.pooled_bytes,
           "intermediate_peak": mem.peak_bytes,
           "intermediate_naive": mem.naive_bytes,
           "pool": exe.pool.nbytes}
    out["total"] = (out["arguments"] + out["gradients"] + out["aux_states"] + out["outputs"]
                    + out["pool"])
    return out


def debug_str(exe):
    """MXNet's executor listing (outputs incl. gradients, every node) with each op's
    dispatch mode and storage types, then the memory totals."""
    plan = exe.plan
    g = plan.graph
    steps = {s.index: s for s in plan.forward_steps + plan.backward_steps}
    lines = ["Symbol Outputs:"]
    lines += [f"\toutput[{i}]={exe.node_name(n.name)}({j})" for i, (n, j) in enumerate(g.heads)]
    for k, n in enumerate(g.nodes):
        lines += node_lines(n, exe.node_name)
        s = steps.get(k)
        if s is not None:
            lines.append(f"Dispatch:{_MODE_NAMES[s.mode]}, inputs={list(s.in_stypes)}, "
                         f"outputs={list(s.out_stypes)}")
    m = memory_totals(exe)
    # MXNet's line counts the graph's own storage (intermediates, outputs and gradients
    # computed inside the plan), not the arrays bound to it: the plan's peak live bytes
    lines.append(f"Total {m['intermediate_peak'] >> 20} MB allocated")
    lines.append(f"Total {m['total']} bytes allocated: arguments {m['arguments']}, gradients "
                 f"{m['gradients']}, aux states {m['aux_states']}, outputs {m['outputs']}, "
                 f"intermediate pool {m['pool']}")
    lines.append(f"Intermediate plan: {plan.memory.num_slots} pooled slots "
                 f"{m['intermediate_pooled']} bytes, peak live {m['intermediate_peak']} bytes, "
                 f"without reuse {m['intermediate_naive']} bytes")
    return "\n".join(lines) + "\n"
