"""Symbolic RNN cells (MXNet 1.x's ``mx.rnn``): RNNCell, LSTMCell, GRUCell, FusedRNNCell,
SequentialRNNCell, BidirectionalCell, DropoutCell (modifier cells live in modifier.py).

Parameter and node names follow MXNet exactly (``lstm_l0_i2h_weight``, ``lstm_t3_i2h``...),
so checkpoints and symbol JSON written by MXNet's cells line up with these."""
from __future__ import annotations

import warnings

from .. import symbol
from ..base import MXNetError
from ..initializer import FusedRNN, LSTMBias
from ..symbol import Symbol

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "FusedRNNCell",
           "SequentialRNNCell", "BidirectionalCell", "DropoutCell"]


class RNNParams:
    """A container of shared parameter Variables, created on first use under ``prefix``.

    Parameters
    ----------
    prefix : str
        Prefix of every parameter name.
    """

    def __init__(self, prefix=""):
        self._prefix = prefix
        self._params = {}

    def get(self, name, **kwargs):
        """The Variable ``prefix + name`` (created with ``kwargs`` the first time)."""
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = symbol.Variable(name, **kwargs)
        return self._params[name]


def _normalize_sequence(length, inputs, layout, merge, in_layout=None):
    """Turn ``inputs`` into a list of per-step symbols or one merged symbol (``merge``)."""
    if inputs is None:
        raise MXNetError("unroll(inputs=None) has been deprecated. Please create input "
                         "variables outside unroll.")
    axis = layout.find("T")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise MXNetError("unroll doesn't allow grouped symbol as input. Please convert "
                                 "to list with list(inputs) first or let unroll handle splitting.")
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length,
                                       squeeze_axis=1))
    else:
        if length is not None and len(inputs) != length:
            raise MXNetError(f"unroll: got {len(inputs)} inputs for length {length}")
        if merge is True:
            inputs = [symbol.expand_dims(i, axis=axis) for i in inputs]
            inputs = symbol.Concat(*inputs, dim=axis)
            in_axis = axis
    if isinstance(inputs, Symbol) and axis != in_axis:
        inputs = symbol.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis


class BaseRNNCell:
    """Abstract base class for RNN cells.

    Parameters
    ----------
    prefix : str
        Prefix for the names of the cell's parameters and nodes.
    params : RNNParams, optional
        Share parameters with another cell.
    """

    def __init__(self, prefix="", params=None):
        if params is None:
            params = RNNParams(prefix)
            self._own_params = True
        else:
            self._own_params = False
        self._prefix = prefix
        self._params = params
        self._modified = False
        self.reset()

    def reset(self):
        """Reset the step and begin-state counters before a new unroll."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, "_cells", ()):
            cell.reset()

    def __call__(self, inputs, states):
        """One step: ``(output, new_states)`` from ``inputs`` and ``states``."""
        raise NotImplementedError()

    @property
    def params(self):
        """The cell's RNNParams (no longer exclusively owned once read)."""
        self._own_params = False
        return self._params

    @property
    def state_info(self):
        """Shape/layout of each state: a list of dicts (``{'shape': (0, h), ...}``)."""
        raise NotImplementedError()

    @property
    def state_shape(self):
        return [ele["shape"] for ele in self.state_info]

    @property
    def _gate_names(self):
        return ()

    def begin_state(self, func=symbol.zeros, **kwargs):
        """Initial states made by ``func`` (zeros with unknown batch dim by default).

        Parameters
        ----------
        func : callable, default mx.sym.zeros
            Called as ``func(name=..., shape=..., __layout__=..., **kwargs)``; e.g.
            ``mx.sym.Variable`` makes the states inputs of the graph.
        """
        if self._modified:
            raise MXNetError("After applying modifier cells (e.g. DropoutCell) the base cell "
                             "cannot be called directly. Call the modifier cell instead.")
        states = []
        for info in self.state_info:
            self._init_counter += 1
            if info is None:
                state = func(name=f"{self._prefix}begin_state_{self._init_counter}", **kwargs)
            else:
                kw = dict(kwargs)
                kw.update(info)
                state = func(name=f"{self._prefix}begin_state_{self._init_counter}", **kw)
            states.append(state)
        return states

    def unpack_weights(self, args):
        """Split fused gate weights (``i2h_weight``) into per-gate arrays (``i2h_i_weight``)."""
        args = args.copy()
        if not self._gate_names:
            return args
        h = self._num_hidden
        for group in ("i2h", "h2h"):
            weight = args.pop(f"{self._prefix}{group}_weight")
            bias = args.pop(f"{self._prefix}{group}_bias")
            for j, gate in enumerate(self._gate_names):
                args[f"{self._prefix}{group}{gate}_weight"] = weight[j * h:(j + 1) * h].copy()
                args[f"{self._prefix}{group}{gate}_bias"] = bias[j * h:(j + 1) * h].copy()
        return args

    def pack_weights(self, args):
        """Inverse of :meth:`unpack_weights`."""
        from ..ndarray import concatenate
        args = args.copy()
        if not self._gate_names:
            return args
        for group in ("i2h", "h2h"):
            ws, bs = [], []
            for gate in self._gate_names:
                ws.append(args.pop(f"{self._prefix}{group}{gate}_weight"))
                bs.append(args.pop(f"{self._prefix}{group}{gate}_bias"))
            args[f"{self._prefix}{group}_weight"] = concatenate(ws)
            args[f"{self._prefix}{group}_bias"] = concatenate(bs)
        return args

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """Unroll the cell over ``length`` steps.

        Parameters
        ----------
        length : int
        inputs : Symbol (layout ``layout``) or list of ``length`` (N, C) symbols
        begin_state : list of Symbol, optional (default :meth:`begin_state`)
        layout : {'NTC', 'TNC'}
        merge_outputs : bool or None
            True: one merged output symbol; False: a list; None: whatever is natural.

        Returns
        -------
        (outputs, states)
        """
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, False)
        if begin_state is None:
            begin_state = self.begin_state()
        states = begin_state
        outputs = []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, inputs, activation, **kwargs):
        if isinstance(activation, str):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)


def _fc(data, weight, bias, num_hidden, name):
    return symbol.FullyConnected(data=data, weight=weight, bias=bias, num_hidden=num_hidden,
                                 name=name)


class RNNCell(BaseRNNCell):
    """Elman RNN cell: ``h' = act(W_i x + b_i + W_h h + b_h)``.

    Parameters
    ----------
    num_hidden : int
    activation : str or callable, default 'tanh'
    prefix : str, default 'rnn_'
    params : RNNParams, optional
    """

    def __init__(self, num_hidden, activation="tanh", prefix="rnn_", params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._activation = activation
        self._iW = self.params.get("i2h_weight")
        self._iB = self.params.get("i2h_bias")
        self._hW = self.params.get("h2h_weight")
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}]

    @property
    def _gate_names(self):
        return ("",)

    def __call__(self, inputs, states):
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        i2h = _fc(inputs, self._iW, self._iB, self._num_hidden, name + "i2h")
        h2h = _fc(states[0], self._hW, self._hB, self._num_hidden, name + "h2h")
        output = self._get_activation(i2h + h2h, self._activation, name=name + "out")
        return output, [output]


class LSTMCell(BaseRNNCell):
    """Long short-term memory cell (gates in MXNet's order i, f, c, o).

    Parameters
    ----------
    num_hidden : int
    prefix : str, default 'lstm_'
    params : RNNParams, optional
    forget_bias : float, default 1.0 (initial forget-gate bias, via LSTMBias)
    """

    def __init__(self, num_hidden, prefix="lstm_", params=None, forget_bias=1.0):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get("i2h_weight")
        self._hW = self.params.get("h2h_weight")
        self._iB = self.params.get("i2h_bias", init=LSTMBias(forget_bias=forget_bias))
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"},
                {"shape": (0, self._num_hidden), "__layout__": "NC"}]

    @property
    def _gate_names(self):
        return ("_i", "_f", "_c", "_o")

    def __call__(self, inputs, states):
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        h = self._num_hidden
        i2h = _fc(inputs, self._iW, self._iB, h * 4, name + "i2h")
        h2h = _fc(states[0], self._hW, self._hB, h * 4, name + "h2h")
        gates = i2h + h2h
        sl = symbol.SliceChannel(gates, num_outputs=4, name=name + "slice")
        in_gate = symbol.Activation(sl[0], act_type="sigmoid", name=name + "i")
        forget_gate = symbol.Activation(sl[1], act_type="sigmoid", name=name + "f")
        in_transform = symbol.Activation(sl[2], act_type="tanh", name=name + "c")
        out_gate = symbol.Activation(sl[3], act_type="sigmoid", name=name + "o")
        next_c = symbol.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                     name=name + "state")
        next_h = symbol.elemwise_mul(out_gate, symbol.Activation(next_c, act_type="tanh"),
                                     name=name + "out")
        return next_h, [next_h, next_c]


class GRUCell(BaseRNNCell):
    """Gated recurrent unit cell (gates r, z, then the candidate), as MXNet.

    Parameters
    ----------
    num_hidden : int
    prefix : str, default 'gru_'
    params : RNNParams, optional
    """

    def __init__(self, num_hidden, prefix="gru_", params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get("i2h_weight")
        self._iB = self.params.get("i2h_bias")
        self._hW = self.params.get("h2h_weight")
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}]

    @property
    def _gate_names(self):
        return ("_r", "_z", "_o")

    def __call__(self, inputs, states):
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        h = self._num_hidden
        prev = states[0]
        i2h = _fc(inputs, self._iW, self._iB, h * 3, name + "i2h")
        h2h = _fc(prev, self._hW, self._hB, h * 3, name + "h2h")
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name=name + "i2h_slice")
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name=name + "h2h_slice")
        reset_gate = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name=name + "r_act")
        update_gate = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid", name=name + "z_act")
        next_h_tmp = symbol.Activation(i2h + reset_gate * h2h, act_type="tanh",
                                       name=name + "h_act")
        next_h = symbol.elemwise_add((1. - update_gate) * next_h_tmp, update_gate * prev,
                                     name=name + "out")
        return next_h, [next_h]


class FusedRNNCell(BaseRNNCell):
    """A multi-layer (optionally bidirectional) RNN with one fused ``parameters`` vector.

    The vector uses MXNet's (cuDNN) layout; :meth:`unpack_weights` / :meth:`pack_weights`
    convert to and from the per-gate arrays of :meth:`unfuse`'s cells. Unrolling builds the
    same computation as the unfused stack, reading its weights out of the fused vector.

    Parameters
    ----------
    num_hidden : int
    num_layers : int, default 1
    mode : {'lstm', 'gru', 'rnn_relu', 'rnn_tanh'}, default 'lstm'
    bidirectional : bool, default False
    dropout : float, default 0 (between layers)
    get_next_state : bool, default False
    forget_bias : float, default 1.0
    prefix : str, default ``mode + '_'``
    params : RNNParams, optional
    """

    def __init__(self, num_hidden, num_layers=1, mode="lstm", bidirectional=False,
                 dropout=0., get_next_state=False, forget_bias=1.0, prefix=None, params=None):
        if mode not in ("lstm", "gru", "rnn_relu", "rnn_tanh"):
            from ..base import ParamError
            raise ParamError(f"FusedRNNCell: unknown mode {mode!r}; expected lstm, gru, "
                             "rnn_relu or rnn_tanh")
        if prefix is None:
            prefix = f"{mode}_"
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._directions = ["l", "r"] if bidirectional else ["l"]
        initializer = FusedRNN(None, num_hidden, num_layers, mode, bidirectional, forget_bias)
        self._parameter = self.params.get("parameters", init=initializer)

    @property
    def state_info(self):
        b = self._bidirectional + 1
        n = (self._mode == "lstm") + 1
        return [{"shape": (b * self._num_layers, 0, self._num_hidden), "__layout__": "LNC"}
                for _ in range(n)]

    @property
    def _gate_names(self):
        return {"rnn_relu": [""], "rnn_tanh": [""], "lstm": ["_i", "_f", "_c", "_o"],
                "gru": ["_r", "_z", "_o"]}[self._mode]

    @property
    def _num_gates(self):
        return len(self._gate_names)

    def _slice_weights(self, arr, li, lh):
        """Per-gate views of the fused vector ``arr`` (NDArray) keyed by unfused names."""
        from ..kernels.rnn import layout
        table, total = layout(self._mode, lh, self._num_layers, self._bidirectional, li)
        if arr.size != total:
            raise MXNetError(f"FusedRNNCell: parameter vector has {arr.size} entries, "
                             f"expected {total}")
        args = {}
        for (layer, d, part), (off, shape) in table.items():
            group, kind = part.split("_")
            rows = shape[0] // self._num_gates
            block = arr[off:off + int(_prod(shape))].reshape(shape)
            for j, gate in enumerate(self._gate_names):
                name = f"{self._prefix}{self._directions[d]}{layer}_{group}{gate}_{kind}"
                args[name] = block[j * rows:(j + 1) * rows]
        return args

    def _num_input(self, total):
        b, m, h, n = len(self._directions), self._num_gates, self._num_hidden, self._num_layers
        return total // b // h // m - (n - 1) * (h + b * h + 2) - h - 2

    def unpack_weights(self, args):
        args = args.copy()
        arr = args.pop(self._parameter.name)
        views = self._slice_weights(arr, self._num_input(arr.size), self._num_hidden)
        args.update({name: v.copy() for name, v in views.items()})
        return args

    def pack_weights(self, args):
        from ..ndarray import zeros
        args = args.copy()
        w0 = args[f"{self._prefix}l0_i2h{self._gate_names[0]}_weight"]
        num_input = w0.shape[1]
        b, m, h, n = len(self._directions), self._num_gates, self._num_hidden, self._num_layers
        total = (num_input + h + 2) * h * m * b + (n - 1) * m * h * (h + b * h + 2) * b
        arr = zeros((total,), dtype=w0.dtype)
        for name, view in self._slice_weights(arr, num_input, h).items():
            view[:] = args.pop(name)
        args[self._parameter.name] = arr
        return args

    def __call__(self, inputs, states):
        raise NotImplementedError("FusedRNNCell cannot be stepped. Please use unroll")

    def _cell(self, prefix, params=None):
        h = self._num_hidden
        if self._mode == "lstm":
            return LSTMCell(h, prefix=prefix, params=params)
        if self._mode == "gru":
            return GRUCell(h, prefix=prefix, params=params)
        act = "relu" if self._mode == "rnn_relu" else "tanh"
        return RNNCell(h, activation=act, prefix=prefix, params=params)

    def unfuse(self):
        """An equivalent SequentialRNNCell of per-layer cells (names ``<prefix>l0_...``)."""
        stack = SequentialRNNCell()
        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(self._cell(f"{self._prefix}l{i}_"),
                                            self._cell(f"{self._prefix}r{i}_"),
                                            output_prefix=f"{self._prefix}bi_l{i}_"))
            else:
                stack.add(self._cell(f"{self._prefix}l{i}_"))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix=f"{self._prefix}_dropout{i}_"))
        return stack

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, True)
        if axis == 1:
            warnings.warn("NTC layout detected. Consider using TNC for FusedRNNCell for faster "
                          "speed", stacklevel=2)
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        if begin_state is None:
            begin_state = self.begin_state()
        states = {"state": begin_state[0]}
        if self._mode == "lstm":
            states["state_cell"] = begin_state[1]
        # one fused RNN node, as MXNet's FusedRNNCell (named <prefix>rnn)
        rnn = symbol.RNN(data=inputs, parameters=self._parameter,
                         state_size=self._num_hidden, num_layers=self._num_layers,
                         bidirectional=self._bidirectional, p=self._dropout,
                         state_outputs=self._get_next_state, mode=self._mode,
                         name=self._prefix + "rnn", **states)
        if self._get_next_state:
            outputs = rnn[0]
            states = [rnn[i] for i in range(1, len(begin_state) + 1)]
            for s in states:
                s._set_attr(__layout__="LNC")
        else:
            outputs, states = rnn, []
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states


def _prod(shape):
    out = 1
    for d in shape:
        out *= d
    return out


class SequentialRNNCell(BaseRNNCell):
    """A stack of cells applied one after another.

    Parameters
    ----------
    params : RNNParams, optional (shared with every added cell)
    """

    def __init__(self, params=None):
        super().__init__(prefix="", params=params)
        self._override_cell_params = params is not None
        self._cells = []

    def add(self, cell):
        """Append a cell to the stack."""
        self._cells.append(cell)
        if self._override_cell_params:
            if not cell._own_params:
                raise MXNetError("Either specify params for SequentialRNNCell or child cells, "
                                 "not both.")
            cell.params._params.update(self.params._params)
        self.params._params.update(cell.params._params)

    @property
    def state_info(self):
        return [info for c in self._cells for info in c.state_info]

    def begin_state(self, **kwargs):
        if self._modified:
            raise MXNetError("After applying modifier cells (e.g. ZoneoutCell) the base cell "
                             "cannot be called directly. Call the modifier cell instead.")
        return [s for c in self._cells for s in c.begin_state(**kwargs)]

    def unpack_weights(self, args):
        for cell in self._cells:
            args = cell.unpack_weights(args)
        return args

    def pack_weights(self, args):
        for cell in self._cells:
            args = cell.pack_weights(args)
        return args

    def __call__(self, inputs, states):
        self._counter += 1
        next_states, p = [], 0
        for cell in self._cells:
            if isinstance(cell, BidirectionalCell):
                raise MXNetError("BidirectionalCell cannot be stepped; use unroll")
            n = len(cell.state_info)
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states += state
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        num_cells = len(self._cells)
        if begin_state is None:
            begin_state = self.begin_state()
        p, next_states = 0, []
        for i, cell in enumerate(self._cells):
            n = len(cell.state_info)
            states = begin_state[p:p + n]
            p += n
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=states,
                                         layout=layout,
                                         merge_outputs=None if i < num_cells - 1
                                         else merge_outputs)
            next_states.extend(states)
        return inputs, next_states


class DropoutCell(BaseRNNCell):
    """Apply Dropout to the inputs (no state).

    Parameters
    ----------
    dropout : float
    prefix : str, default 'dropout_'
    params : RNNParams, optional
    """

    def __init__(self, dropout, prefix="dropout_", params=None):
        super().__init__(prefix, params)
        if not isinstance(dropout, (int, float)):
            raise MXNetError("dropout probability must be a number")
        self.dropout = dropout

    @property
    def state_info(self):
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, Symbol):
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs)


class BidirectionalCell(BaseRNNCell):
    """Run one cell forward and another backward in time; outputs are concatenated.

    Parameters
    ----------
    l_cell, r_cell : BaseRNNCell
    params : RNNParams, optional
    output_prefix : str, default 'bi_'
    """

    def __init__(self, l_cell, r_cell, params=None, output_prefix="bi_"):
        super().__init__("", params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        if self._override_cell_params:
            if not (l_cell._own_params and r_cell._own_params):
                raise MXNetError("Either specify params for BidirectionalCell or child cells, "
                                 "not both.")
            l_cell.params._params.update(self.params._params)
            r_cell.params._params.update(self.params._params)
        self.params._params.update(l_cell.params._params)
        self.params._params.update(r_cell.params._params)
        self._cells = [l_cell, r_cell]

    def unpack_weights(self, args):
        return self._cells[1].unpack_weights(self._cells[0].unpack_weights(args))

    def pack_weights(self, args):
        return self._cells[1].pack_weights(self._cells[0].pack_weights(args))

    def __call__(self, inputs, states):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    @property
    def state_info(self):
        return self._cells[0].state_info + self._cells[1].state_info

    def begin_state(self, **kwargs):
        if self._modified:
            raise MXNetError("After applying modifier cells the base cell cannot be called "
                             "directly. Call the modifier cell instead.")
        return self._cells[0].begin_state(**kwargs) + self._cells[1].begin_state(**kwargs)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, False)
        if begin_state is None:
            begin_state = self.begin_state()
        states = begin_state
        l_cell, r_cell = self._cells
        nl = len(l_cell.state_info)
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:nl],
                                            layout=layout, merge_outputs=merge_outputs)
        r_outputs, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)),
                                            begin_state=states[nl:], layout=layout,
                                            merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, Symbol) and isinstance(r_outputs, Symbol)
            if not merge_outputs:
                if isinstance(l_outputs, Symbol):
                    l_outputs = list(symbol.SliceChannel(l_outputs, axis=axis,
                                                         num_outputs=length, squeeze_axis=1))
                if isinstance(r_outputs, Symbol):
                    r_outputs = list(symbol.SliceChannel(r_outputs, axis=axis,
                                                         num_outputs=length, squeeze_axis=1))
        if merge_outputs:
            l_outputs = [l_outputs]
            r_outputs = [symbol.reverse(r_outputs, axis=axis)]
        else:
            r_outputs = list(reversed(r_outputs))
        outputs = [symbol.Concat(lo, ro, dim=1 + merge_outputs,
                                 name=(f"{self._output_prefix}out" if merge_outputs
                                       else f"{self._output_prefix}t{i}"))
                   for i, (lo, ro) in enumerate(zip(l_outputs, r_outputs))]
        if merge_outputs:
            outputs = outputs[0]
        return outputs, l_states + r_states
