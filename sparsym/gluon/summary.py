"""Block.summary: one forward with hooks on every layer, printed as MXNet 1.9.1 prints it."""
from __future__ import annotations

from ..ndarray.ndarray import NDArray
from .block import HybridBlock
from .nn import HybridSequential, Sequential

_ROW = "{:>20}  {:>42} {:>15}"


def _shapes(value):
    """Shapes of the arrays in a nested list/tuple, nested the same way."""
    if isinstance(value, (list, tuple)):
        return [_shapes(v) for v in value]
    return value.shape if isinstance(value, NDArray) else value


def _shape_str(value):
    """MXNet's rendering: a list's brackets dropped, a single shape as is."""
    shapes = _shapes(value)
    return str(shapes)[1:-1] if isinstance(shapes, list) else str(shapes)


def summary(block, *inputs):
    """Run ``block(*inputs)`` and print each layer's output shape and parameter counts.

    Sequential containers are not rows of their own (their children are). A hybridized
    HybridBlock cannot be summarised: its layers do not run one by one (AssertionError,
    as in MXNet).
    """
    rows = [("Input", _shape_str(inputs), 0, 0, 0)]
    seen = set()
    handles = []

    def record(layer, _inputs, outputs):
        total = trainable = shared = 0
        for p in layer.params.values():
            size = p.data().size
            total += size
            trainable += 0 if p.grad_req == "null" else size
            if id(p) in seen:
                shared += size
            seen.add(id(p))
        rows.append((f"{type(layer).__name__}-{len(rows)}", _shape_str(outputs), total,
                     trainable, shared))

    def attach(layer):
        if isinstance(layer, HybridBlock) and layer._active:
            raise AssertionError(f'"{layer.name}" must not be hybridized to print summary.')
        if not isinstance(layer, (Sequential, HybridSequential)):
            handles.append(layer.register_forward_hook(record))

    try:
        block.apply(attach)
        block(*inputs)
    finally:
        for h in handles:
            h.detach()
    total = sum(r[2] for r in rows)
    trainable = sum(r[3] for r in rows)
    shared = sum(r[4] for r in rows)
    lines = ["-" * 80, _ROW.format("Layer (type)", "Output Shape", "Param #"), "=" * 80]
    lines += [_ROW.format(name, shape, n) for name, shape, n, _, _ in rows]
    lines += ["=" * 80,
              "Parameters in forward computation graph, duplicate included",
              f"   Total params: {total}",
              f"   Trainable params: {trainable}",
              f"   Non-trainable params: {total - trainable}",
              f"Shared params in forward computation graph: {shared}",
              f"Unique parameters in model: {total - shared}",
              "-" * 80]
    print("\n".join(lines))
