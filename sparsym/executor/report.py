"""Readable views of a bound executor: debug_str and the storage report."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def _dense_bytes(shape, dtype):
    return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize


@dataclass(frozen=True)
class StorageRow:
    node: str
    op: str
    in_stypes: tuple
    out_stypes: tuple
    mode: str
    densified_bytes: int


class StorageReport:
    """Where sparsity is kept or lost: one row per node of a bound executor."""

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
            rows.append(StorageRow(s.name, s.op_name, s.in_stypes, s.out_stypes, s.mode, dens))
        return cls(rows)

    @property
    def fallbacks(self):
        return [r for r in self.rows if r.mode == "fallback"]

    def __str__(self):
        head = ("node", "op", "inputs", "outputs", "mode", "densified")
        body = [(r.node, r.op, ",".join(r.in_stypes), ",".join(r.out_stypes), r.mode,
                 f"{r.densified_bytes}") for r in self.rows]
        widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        return "\n".join([fmt.format(*head)] + [fmt.format(*b) for b in body])

    __repr__ = __str__


def debug_str(exe):
    """MXNet-like listing of the plan with the memory allocated by the executor."""
    plan = exe.plan
    lines = [f"Symbol Outputs:\n" + "\n".join(f"\toutput[{i}]={n}" for i, n in
                                              enumerate(plan.output_names))]
    for n in plan.graph.input_nodes:
        lines.append(f"Variable:{n.name}")
    for s in plan.forward_steps + plan.backward_steps:
        lines.append("-" * 40)
        lines.append(f"Op:{s.op_name}, Name={s.name}")
        lines.append(f"Dispatch:{s.mode}, inputs={list(s.in_stypes)}, outputs={list(s.out_stypes)}")
    total = 0
    for arrs in (exe.arg_arrays, exe.grad_arrays, exe.aux_arrays, exe.outputs):
        for a in arrs:
            if a is not None:
                from ..storage import nbytes
                total += nbytes(a._raw)
    lines.append(f"Total {total / (1 << 20):.4f} MB allocated")
    return "\n".join(lines)
