"""The fused RNN operator as ONNX LSTM / GRU / RNN nodes, one per layer.

MXNet packs every layer's weights into one vector (cuDNN's layout, ``kernels.rnn.layout``);
ONNX takes per-layer W (D, G*H, in), R (D, G*H, H) and B (D, 2*G*H) with its own gate
order: LSTM (i, o, f, c) where MXNet has (i, f, g, o), GRU (z, r, h) where MXNet has
(r, z, n), the reset gate applied after the recurrent product (``linear_before_reset=1``).
The packed vector must be a parameter (or fold to a constant); zero initial states (the
Gluon layers' ``begin_state``) are left out, ONNX's default.
"""
from __future__ import annotations

import numpy as np

from ..kernels.rnn import GATES, layout
from ._tables import ExportError, register

# MXNet gate blocks in ONNX order
ORDER = {"lstm": [0, 3, 1, 2], "gru": [1, 0, 2], "rnn_tanh": [0], "rnn_relu": [0]}
ONNX_OP = {"lstm": "LSTM", "gru": "GRU", "rnn_tanh": "RNN", "rnn_relu": "RNN"}


def reorder(w, mode):
    """Gate blocks (along axis 0) from MXNet's order into ONNX's."""
    blocks = np.split(w, GATES[mode], axis=0)
    return np.concatenate([blocks[i] for i in ORDER[mode]], axis=0)


def _state(c, entry, li, d, hint):
    """Layer ``li``'s slice (D, N, H) of a state input (L*D, N, H); None for zeros."""
    value = c.value(entry)
    if value is not None:
        if not value.any():
            return None
        return c.const(value[li * d:(li + 1) * d], hint)
    return c.add("Slice", [c.name(entry), c.ints([li * d], hint + "_start"),
                           c.ints([(li + 1) * d], hint + "_end"), c.ints([0], hint + "_axis")])[0]


@register("RNN")
def _rnn(c, node, a, ins, outs):
    mode, name = a["mode"], node["name"]
    if a.get("projection_size") not in (None, 0):
        raise ExportError(f"RNN '{name}': LSTM projections cannot be exported")
    if a.get("use_sequence_length", False):
        raise ExportError(f"RNN '{name}': use_sequence_length cannot be exported")
    params = c.value(ins[1])
    if params is None:
        raise ExportError(f"RNN '{name}': the packed parameters must be parameters (or "
                          "computed from parameters only) to be exported")
    L, H = int(a["num_layers"]), int(a["state_size"])
    D = 2 if a.get("bidirectional", False) else 1
    C = c.shape(ins[0])[2]
    table, _ = layout(mode, H, L, D == 2, C)

    def part(li, d, key):
        off, shape = table[(li, d, key)]
        return params[off:off + int(np.prod(shape))].reshape(shape)

    x = c.name(ins[0])
    hs, cs = [], []
    for li in range(L):
        W = np.stack([reorder(part(li, d, "i2h_weight"), mode) for d in range(D)])
        R = np.stack([reorder(part(li, d, "h2h_weight"), mode) for d in range(D)])
        B = np.stack([np.concatenate([reorder(part(li, d, "i2h_bias"), mode),
                                      reorder(part(li, d, "h2h_bias"), mode)])
                      for d in range(D)])
        inputs = [x, c.const(W, f"{name}_l{li}_W"), c.const(R, f"{name}_l{li}_R"),
                  c.const(B, f"{name}_l{li}_B"), ""]
        h0 = _state(c, ins[2], li, D, f"{name}_l{li}_h0")
        c0 = _state(c, ins[3], li, D, f"{name}_l{li}_c0") if mode == "lstm" else None
        inputs += [h0 or "", c0 or ""] if mode == "lstm" else [h0 or ""]
        while inputs and inputs[-1] == "":
            inputs.pop()
        kw = {"hidden_size": H, "direction": "bidirectional" if D == 2 else "forward"}
        if mode == "gru":
            kw["linear_before_reset"] = 1
        elif mode != "lstm":
            kw["activations"] = ["Relu" if mode == "rnn_relu" else "Tanh"] * D
        n_out = 3 if mode == "lstm" else 2
        ys = c.add(ONNX_OP[mode], inputs, [c.unique(f"{name}_l{li}_{s}")
                                           for s in ("Y", "Y_h", "Y_c")[:n_out]],
                   name=f"{name}_l{li}", **kw)
        hs.append(ys[1])
        if mode == "lstm":
            cs.append(ys[2])
        # (T, D, N, H) -> (T, N, D*H), the next layer's input
        y = c.add("Transpose", [ys[0]], perm=[0, 2, 1, 3])[0]
        last = li == L - 1
        x = c.add("Reshape", [y, c.ints([0, 0, -1], f"{name}_l{li}_yshape")],
                  outs[:1] if last else None)[0]
    for states, out in zip((hs, cs), outs[1:]):
        if len(states) == 1:
            c.add("Identity", states, [out])
        else:
            c.add("Concat", states, [out], axis=0)
