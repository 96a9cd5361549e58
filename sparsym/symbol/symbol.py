"""Symbol: a declarative graph handle (MXNet 1.x's Symbol API)."""
from __future__ import annotations

import warnings

import numpy as np

from ..base import MXNetError, ShapeError, getenv, open_for_load
from ..graph import (
    IndexedGraph,
    Node,
    bump_epoch,
    current_epoch,
    entry_name,
    node_lines,
    storage_key,
    topo_order,
)
from ..storage import STYPE_ID, check_stype
from ..util import is_np_shape
from .arith import NotImplementedForSymbol, SymbolOps
from .json_io import load_heads, to_json
from .naming import current_attr_scope, expand_attr, list_form

__all__ = ["Symbol", "Variable", "var", "Group", "load", "load_json",
           "NotImplementedForSymbol"]


# MXNet 1.9.1's CPU subgraph backends: operator fusions for speed, the same numbers unfused
SUBGRAPH_BACKENDS = ("MKLDNN", "MKLDNN_QUANTIZE")


def _check_backend(backend, msg):
    if backend not in SUBGRAPH_BACKENDS:
        raise MXNetError(f"{msg} (sparsym accepts {list(SUBGRAPH_BACKENDS)}, whose fusions "
                         "only change speed)")


class Symbol(SymbolOps):
    """A list of graph output entries; compose symbols with ``mx.sym.*`` operators.

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.sym.Variable('x')
    >>> y = mx.sym.FullyConnected(x, num_hidden=4, name='fc')
    >>> y.list_arguments()
    ['x', 'fc_weight', 'fc_bias']
    >>> y.infer_shape(x=(2, 3))[0]
    [(2, 3), (4, 3), (4,)]
    """

    __slots__ = ("_outputs", "_cache", "__weakref__")

    def __init__(self, outputs):
        self._outputs = list(outputs)
        self._cache = None

    def _graph(self) -> IndexedGraph:
        """The indexed graph of this symbol (cached until any node is mutated)."""
        c = self._cache
        epoch = current_epoch()
        if c is not None and c[0] == epoch:
            return c[1]
        g = IndexedGraph(self._outputs)
        self._cache = (epoch, g)
        return g

    # ------------------------------------------------------------------ naming & listing
    def _single_node(self):
        nodes = {id(n) for n, _ in self._outputs}
        return self._outputs[0][0] if len(nodes) == 1 else None

    @property
    def name(self):
        """The node name; None for a group of several nodes."""
        node = self._single_node()
        return None if node is None else node.name

    def __repr__(self):
        name = self.name
        if name is None:
            return "<Symbol group [" + ", ".join(s.name for s in self) + "]>"
        return f"<Symbol {name}>"

    __str__ = __repr__

    def __len__(self):
        return len(self._outputs)

    def __iter__(self):
        return (Symbol([e]) for e in self._outputs)

    def list_arguments(self):
        """Names of the arguments (non-auxiliary variables) in graph order."""
        return [n.name for n in self._graph().arg_nodes]

    def list_outputs(self):
        """Output names (``<node>_output`` for ops, the name for variables)."""
        return [entry_name(e) for e in self._outputs]

    def list_auxiliary_states(self):
        """Names of auxiliary states (e.g. BatchNorm's moving_mean)."""
        return [n.name for n in self._graph().aux_nodes]

    def list_inputs(self):
        """All variable names, arguments and auxiliary states, in graph order."""
        return [n.name for n in self._graph().input_nodes]

    def __getitem__(self, index):
        """Output ``index`` (int, output name, or slice -> Group)."""
        if isinstance(index, slice):
            return Group([self[i] for i in range(*index.indices(len(self._outputs)))])
        if isinstance(index, str):
            idx = None
            for i, name in enumerate(self.list_outputs()):
                if name == index:
                    if idx is not None:
                        raise ValueError(f'There are multiple outputs with name "{index}"')
                    idx = i
            if idx is None:
                raise ValueError(f'Cannot find output that matches name "{index}"')
            index = idx
        if not isinstance(index, (int, np.integer)) or isinstance(index, bool):
            raise TypeError("Symbol only support integer index to fetch i-th output")
        index = int(index)
        n = len(self._outputs)
        if not -n <= index < n:
            raise IndexError(f"Symbol index {index} out of range ({n} outputs)")
        return Symbol([self._outputs[index]])

    def get_internals(self):
        """A group of every visible entry in the graph: variables and op outputs."""
        g = self._graph()
        return Symbol([(n, i) for n in g.nodes for i in range(n.num_visible())])

    def get_children(self):
        """The inputs of this symbol's output nodes as a group, or None when there are none.

        Examples
        --------
        >>> import sparsym as mx
        >>> x, y, z = mx.sym.var('x'), mx.sym.var('y'), mx.sym.var('z')
        >>> (z + (x + y)).get_children().list_outputs()[0]
        'z'
        """
        seen, entries = set(), []
        for node, _ in self._outputs:
            if id(node) in seen:
                continue
            seen.add(id(node))
            entries.extend(node.inputs)
        return Symbol(entries) if entries else None

    # ------------------------------------------------------------------ attributes
    def attr(self, key):
        """A string attribute of this symbol's node (None when absent).

        Hidden keys may be asked for under either spelling (``lr_mult``/``__lr_mult__``);
        operator parameters are found when the user gave them.
        """
        node = self._single_node()
        if node is None:
            return None
        if key == "name":
            return node.name
        key = storage_key(key)
        if key in node.attr:
            return node.attr[key]
        return node.given.get(key)

    def list_attr(self, recursive=False):
        """The attributes of this symbol's (first) output node, as MXNet lists them."""
        if recursive:
            raise DeprecationWarning("Symbol.list_attr with recursive=True has been deprecated. "
                                     "Please use attr_dict instead.")
        return list_form(self._outputs[0][0].all_attrs())

    def attr_dict(self):
        """{node name: {attr: value}} for every node of the graph that has attributes.

        Examples
        --------
        >>> import sparsym as mx
        >>> with mx.AttrScope(ctx_group='dev1'):
        ...     w = mx.sym.var('w', lr_mult=2)
        >>> w.attr_dict()['w'] == {'__ctx_group__': 'dev1', 'ctx_group': 'dev1',
        ...                        '__lr_mult__': '2', 'lr_mult': '2'}
        True
        """
        out = {}
        for n in self._graph().nodes:
            a = n.all_attrs()
            if a:
                out[n.name] = list_form(a)
        return out

    def _set_attr(self, **kwargs):
        """Set string attributes on the output nodes; operator parameters are re-parsed."""
        for value in kwargs.values():
            if not isinstance(value, str):
                raise ValueError("Set Attr only accepts string values")
        seen = set()
        for node, _ in self._outputs:
            if id(node) in seen:
                continue
            seen.add(id(node))
            for key, value in kwargs.items():
                if node.op is not None and node.op.params.accepts(key):
                    given = dict(node.given)
                    given[key] = value
                    node.params = node.op.params.parse(node.op.name, given)
                    node.given = given
                    node.nout = node.op.n_outputs(node.params)
                else:
                    node.attr[storage_key(key)] = value
        bump_epoch()

    # ------------------------------------------------------------------ composition
    def __call__(self, *args, **kwargs):
        """A copy of this symbol with variables replaced: ``net(data=other, name='x')``.

        Examples
        --------
        >>> import sparsym as mx
        >>> net1 = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=10, name='fc1')
        >>> net2 = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=5, name='fc2')
        >>> net2(data=net1, name='composed').list_arguments()
        ['data', 'fc1_weight', 'fc1_bias', 'fc2_weight', 'fc2_bias']
        """
        s = self.__copy__()
        s._compose(*args, **kwargs)
        return s

    def _compose(self, *args, **kwargs):
        """Replace this graph's variables named by ``kwargs`` in place (MXNet's compose)."""
        name = kwargs.pop("name", None)
        if args and kwargs:
            raise TypeError("compose only accept input Symbols either as positional or "
                            "keyword arguments, not both")
        for a in list(args) + list(kwargs.values()):
            if not isinstance(a, Symbol):
                raise TypeError("Compose expect `Symbol` as arguments")
        for i, a in enumerate(args):
            if len(a._outputs) != 1:
                raise MXNetError(f"Argument {i} is a tuple, single value is required")
        for k, a in kwargs.items():
            if len(a._outputs) != 1:
                raise MXNetError(f"Keyword Argument {k} is a tuple, single value is required")
        if name:
            self._outputs[0][0].name = name
        if args:
            raise MXNetError(f"General composition only support kwargs for now (got "
                             f"{len(args)} positional arguments); name the variables to "
                             "replace, e.g. net(data=other)")
        if kwargs:
            order = topo_order(self._outputs)
            found = {n.name for n in order if n.op is None and n.name in kwargs}
            missing = [k for k in kwargs if k not in found]
            if missing:
                cands = "".join(f"\t[{i}]{n}\n" for i, n in enumerate(self.list_inputs()))
                raise MXNetError(f"Symbol.ComposeKeyword argument name {missing[0]} not found."
                                 f"\nCandidate arguments:\n{cands}")
            repl = {k: v._outputs[0] for k, v in kwargs.items()}

            def swap(entry):
                n, i = entry
                return repl[n.name] if n.op is None and n.name in repl else entry

            for n in order:
                if n.inputs:
                    n.inputs = [swap(e) for e in n.inputs]
            self._outputs = [swap(e) for e in self._outputs]
        bump_epoch()
        self._cache = None

    def _gen_atomic_symbol(self):
        """The head node's operator alone, with its attributes and no inputs (MXNet's
        atomic symbol, used to rebuild a node)."""
        node = self._outputs[0][0]
        if node.op is None:
            raise MXNetError(f"_gen_atomic_symbol: {node.name!r} is a variable, not an operator")
        atom = Node(node.op, "", node.params, dict(node.attr), [], node.given)
        return Symbol([(atom, i) for i in range(node.op.n_visible(node.params))])

    # ------------------------------------------------------------------ inference
    def _known(self, what, args, kwargs, convert):
        """Map positional or keyword inputs to eids; MXNet's errors for misuse."""
        if args and kwargs:
            raise ValueError(f"Can only specify known argument {what} either by positional or "
                             "kwargs way.")
        g = self._graph()
        known = {}
        if args:
            if len(args) > len(g.arg_nodes):
                raise MXNetError(f"Infer{what.capitalize()[:-1]}: {len(args)} positional "
                                 f"{what} for {len(g.arg_nodes)} arguments "
                                 f"{[n.name for n in g.arg_nodes]}")
            for i, (n, v) in enumerate(zip(g.arg_nodes, args)):
                if v is not None:
                    known[g.eid(n)] = convert(v, f"argument {i}")
            return g, known
        by_name = {n.name: n for n in g.input_nodes}
        for k, v in kwargs.items():
            if k not in by_name:
                cands = "".join(f"\t[{i}]{n.name}\n" for i, n in enumerate(g.input_nodes))
                kind = "InferShape" if what == "shapes" else "InferType"
                raise MXNetError(f"{kind}Keyword argument name {k} not found.\n"
                                 f"Candidate arguments:\n{cands}")
            if v is not None:
                known[g.eid(by_name[k])] = convert(v, f"'{k}'")
        return g, known

    def infer_shape(self, *args, **kwargs):
        """Infer (arg_shapes, out_shapes, aux_shapes) from known argument shapes.

        Shapes are given positionally (in list_arguments order, None for unknown) or by
        name; 0 dims are unknown. When some shapes cannot be decided a UserWarning lists
        the undecided arguments and (None, None, None) is returned. Inconsistent shapes
        raise ShapeError naming the node, the input and both shapes.

        Examples
        --------
        >>> import sparsym as mx
        >>> x, y = mx.sym.var('x'), mx.sym.var('y')
        >>> (x + y).infer_shape(x=(2, 3))
        ([(2, 3), (2, 3)], [(2, 3)], [])
        """
        (arg, out, aux), complete = self._infer_shape(args, kwargs)
        if complete:
            return arg, out, aux
        unknown = [f"{n}: {s}" for n, s in zip(self.list_arguments(), arg) if _shape_unknown(s)]
        listing = unknown[:10] + (["..."] if len(unknown) > 10 else [])
        warnings.warn("Cannot decide shape for the following arguments (0s in shape means "
                      "unknown dimensions). Consider providing them as input:\n\t"
                      + "\n\t".join(listing), stacklevel=2)
        return None, None, None

    def infer_shape_partial(self, *args, **kwargs):
        """Like :meth:`infer_shape` but returns what is known: unknown shapes are ``()``,
        unknown dims 0.

        Examples
        --------
        >>> import sparsym as mx
        >>> x, y = mx.sym.var('x'), mx.sym.var('y')
        >>> (x + y).infer_shape_partial(x=(2, 0))
        ([(2, 0), (2, 0)], [(2, 0)], [])
        """
        return self._infer_shape(args, kwargs)[0]

    def _infer_shape(self, args, kwargs):
        """((arg, out, aux) in MXNet's form, complete?)."""
        from ..passes.infer_shape import infer_shape
        np_shape = is_np_shape()
        unknown_dim = -1 if np_shape else 0  # MXNet: -1 under NumPy shapes, else 0

        def conv_in(v, where):
            if not isinstance(v, (tuple, list)):
                raise TypeError(f"Arguments need to be shapes (tuple), but {where} is "
                                f"{type(v)}.")
            bad = [d for d in v if d is not None
                   and (not isinstance(d, (int, np.integer)) or d < -1)]
            if bad:  # MXNet's check
                raise ShapeError(f"infer_shape: {where} has shape {tuple(v)}: shape dim size "
                                 f"must be >= -1, while received {bad[0]}")
            return tuple(None if d == unknown_dim or d == -1 else int(d) for d in v)

        g, known = self._known("shapes", args, kwargs, conv_in)
        try:
            shapes = infer_shape(g, known)
        except MXNetError as err:
            given = args if args else kwargs
            listing = "".join(f"\n  #{i}: {v}" for i, v in enumerate(given)) if args else \
                "".join(f"\n  {k}: {v}" for k, v in given.items())
            print(f"infer_shape error. Arguments:{listing}")  # MXNet prints it on stdout too
            raise _rewrap(err, f"infer_shape error. Arguments:{listing}\n{err}") from None

        from ..ops.core.rules import known as _known_shape

        def conv(s):
            if s is None:  # an unknown shape: None under NumPy shapes, else ()
                return None if np_shape else ()
            return tuple(unknown_dim if d is None else d for d in s)
        eids = ([g.eid(n) for n in g.arg_nodes], [g.eid(n, i) for n, i in self._outputs],
                [g.eid(n) for n in g.aux_nodes])
        complete = all(_known_shape(shapes[e]) for part in eids for e in part)
        return tuple([conv(shapes[e]) for e in part] for part in eids), complete

    def infer_type(self, *args, **kwargs):
        """Infer (arg_types, out_types, aux_types) as numpy scalar types.

        Returns (None, None, None) with a UserWarning when some types cannot be decided.

        Examples
        --------
        >>> import sparsym as mx
        >>> x, y = mx.sym.var('x'), mx.sym.var('y')
        >>> (x + y).infer_type(x='float64')[1]
        [<class 'numpy.float64'>]
        """
        arg, out, aux = self._infer_type(args, kwargs)
        if all(t is not None for t in arg + out + aux):
            return arg, out, aux
        unknown = [f"{n}: None" for n, t in zip(self.list_arguments(), arg) if t is None]
        listing = unknown[:10] + (["..."] if len(unknown) > 10 else [])
        warnings.warn("Cannot decide type for the following arguments. Consider providing them "
                      "as input:\n\t" + "\n\t".join(listing), stacklevel=2)
        return None, None, None

    def infer_type_partial(self, *args, **kwargs):
        """Like :meth:`infer_type`; unknown types come back as None."""
        return self._infer_type(args, kwargs)

    def _infer_type(self, args, kwargs):
        from ..passes.infer_type import infer_type

        def conv_in(v, where):
            try:
                return np.dtype(v)
            except TypeError:
                raise TypeError(f"{where}: {v!r} is not a dtype") from None

        g, known = self._known("types", args, kwargs, conv_in)
        try:
            types = infer_type(g, known, default=None)
        except MXNetError as err:
            listing = "".join(f"\n  {k}: {np.dtype(v).name}" for k, v in kwargs.items())
            raise _rewrap(err, f"infer_type error. Arguments:{listing}\n{err}") from None

        def conv(t):
            return None if t is None else t.type
        return ([conv(types[g.eid(n)]) for n in g.arg_nodes],
                [conv(types[g.eid(n, i)]) for n, i in self._outputs],
                [conv(types[g.eid(n)]) for n in g.aux_nodes])

    def infer_storage_type(self, *args, **kwargs):
        """Infer (arg_stypes, out_stypes, aux_stypes); MXNet has no public equivalent.

        Storage types are given by name (or positionally); variables' own ``stype`` is
        used otherwise and everything else is 'default'.

        Examples
        --------
        >>> import sparsym as mx
        >>> x = mx.sym.Variable('x', stype='csr'); w = mx.sym.Variable('w')
        >>> mx.sym.dot(x, w, transpose_a=True).infer_storage_type()[1]
        ['row_sparse']
        """
        from ..passes.infer_storage import infer_storage
        g, known = self._known("stypes", args, kwargs,
                               lambda v, where: check_stype(v, f"infer_storage_type: {where}: "))
        stypes, _ = infer_storage(g, known, report=False)
        return ([stypes[g.eid(n)] for n in g.arg_nodes],
                [stypes[g.eid(n, i)] for n, i in self._outputs],
                [stypes[g.eid(n)] for n in g.aux_nodes])

    # ------------------------------------------------------------------ binding
    def simple_bind(self, ctx=None, grad_req="write", type_dict=None, stype_dict=None,
                    group2ctx=None, shared_arg_names=None, shared_exec=None,
                    shared_buffer=None, **kwargs):
        """Infer shapes, types and stypes from ``kwargs`` (name=shape), allocate the arrays
        and return an :class:`~sparsym.executor.Executor` (MXNet 1.9's simple_bind).

        Parameters
        ----------
        ctx : Context
        grad_req : str, list or dict ('write', 'add', 'null'); names missing from a dict
            get 'null'.
        type_dict, stype_dict : dict of name -> dtype / stype, optional
        group2ctx : dict of ctx_group -> Context, optional
        shared_arg_names : list of str, optional
            Arguments (parameters) shared with ``shared_exec``.
        shared_exec : Executor, optional
            Share parameters, gradients and the intermediate memory pool with it (buckets).
        shared_buffer : dict of name -> NDArray, optional
            Data arrays reused (viewed) when big enough, otherwise added; updated in place.
        **kwargs : name=shape

        Examples
        --------
        >>> import sparsym as mx
        >>> x = mx.sym.var('x')
        >>> exe = (x * 2).simple_bind(mx.cpu(), x=(2, 3))
        >>> exe.forward(x=mx.nd.ones((2, 3)))[0].asnumpy().tolist()
        [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]
        """
        from ..executor.executor import simple_bind
        sym = self._bound_form()
        return simple_bind(sym._graph(), ctx, grad_req, type_dict, stype_dict, group2ctx,
                           shared_arg_names, shared_exec, shared_buffer, kwargs, sym)

    def bind(self, ctx, args, args_grad=None, grad_req="write", aux_states=None,
             group2ctx=None, shared_exec=None):
        """Bind given arrays (list in list_arguments order, or dict) into an Executor."""
        from ..executor.executor import bind
        sym = self._bound_form()
        return bind(sym._graph(), ctx, args, args_grad, grad_req, aux_states, group2ctx,
                    shared_exec, sym)

    def _bound_form(self):
        """This symbol with common subexpressions merged when ``MXNET_ELIMINATE_COMMON_EXPR=1``
        (MXNet's switch; sparsym binds graphs as written unless it is set)."""
        if getenv("MXNET_ELIMINATE_COMMON_EXPR", "0") != "1":
            return self
        from ..passes.cse import eliminate_common_expr
        heads, merged = eliminate_common_expr(self._outputs)
        return Symbol(heads) if merged else self

    def eval(self, ctx=None, **kwargs):
        """Bind ``kwargs`` arrays, run forward and return the list of outputs.

        Examples
        --------
        >>> import sparsym as mx
        >>> x, y = mx.sym.var('x'), mx.sym.var('y')
        >>> (x + y).eval(x=mx.nd.ones(2), y=mx.nd.ones(2))[0].asnumpy().tolist()
        [2.0, 2.0]
        """
        return self.bind(ctx, kwargs).forward()

    # ------------------------------------------------------------------ serialisation
    def tojson(self):
        """MXNet 1.x's JSON graph format (loads in MXNet 1.9.1)."""
        return to_json(self)

    def save(self, fname, remove_amp_cast=True):
        """Write :meth:`tojson` to ``fname`` (temp file + rename)."""
        from ..utils import atomic_write
        atomic_write(fname, self.tojson().encode())

    def __getstate__(self):
        return {"handle": self.tojson()}

    def __setstate__(self, state):
        handle = state.get("handle")
        self._outputs = load_heads(handle) if handle is not None else []
        self._cache = None

    def __copy__(self):
        """A deep copy of the graph (MXNet's Symbol copy): mutating it never leaks back."""
        old = topo_order(self._outputs)
        new = {}
        for n in old:
            c = Node(n.op, n.name, n.params, n.attr, [(new[id(p)], i) for p, i in n.inputs],
                     dict(n.given))
            new[id(n)] = c
        return Symbol([(new[id(n)], i) for n, i in self._outputs])

    def __deepcopy__(self, memo):
        return self.__copy__()

    def optimize_for(self, backend, args=None, aux=None, ctx=None, shape_dict=None,
                     type_dict=None, stype_dict=None, skip_infer=False, **kwargs):
        """Partition the graph for a subgraph backend (MXNet's ``Symbol.optimize_for``).

        MXNet 1.9.1's CPU backends (``MKLDNN``, ``MKLDNN_QUANTIZE``) fuse operators for
        speed only; sparsym has no such backends, so for those names the graph comes back
        unchanged, as a copy. The other arguments are accepted as MXNet's.

        Parameters
        ----------
        backend : str
            A subgraph backend name.

        Returns
        -------
        Symbol
            A copy of this graph.

        Raises
        ------
        MXNetError
            For a backend MXNet 1.9.1's CPU build does not register (MXNet logs and goes
            on; a misspelt name is an error here).
        """
        _check_backend(backend, f"Error optimizing for backend '{backend}' cannot be found")
        return self.__copy__()

    def get_backend_symbol(self, backend):
        """The graph as partitioned by subgraph ``backend`` (a copy: see
        :meth:`optimize_for`)."""
        _check_backend(backend, f"SubgraphProperty {backend} is not found in "
                                "SubgraphBackendRegistry")
        return self.__copy__()

    def debug_str(self):
        """MXNet's listing of the graph: outputs, variables and every op with its inputs
        and attributes."""
        lines = ["Symbol Outputs:"]
        lines += [f"\toutput[{i}]={n.name}({j})" for i, (n, j) in enumerate(self._outputs)]
        for n in self._graph().nodes:
            lines += node_lines(n)
        return "\n".join(lines) + "\n"

    # ------------------------------------------------------------------ misc
    def __hash__(self):
        return id(self)

    def __bool__(self):
        raise NotImplementedForSymbol("__bool__", "bool")


def _shape_unknown(s):
    """Whether an infer_shape result (legacy or NumPy-shape form) is not fully known."""
    if s is None:
        return True
    return -1 in s if is_np_shape() else (len(s) == 0 or 0 in s)


def _rewrap(err, msg):
    """The same error type with a new message (context prepended)."""
    new = type(err)(msg)
    return new


# ---------------------------------------------------------------------- variables
def Variable(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None, init=None,
             stype=None, **kwargs):
    """Create a symbolic variable.

    Parameters
    ----------
    name : str
    attr : dict of str -> str, optional
    shape : tuple, optional (0 dims are unknown)
    lr_mult, wd_mult : float, optional
    dtype : str or numpy dtype, optional
    init : Initializer or str, optional (takes priority over the global initializer)
    stype : {'default', 'csr', 'row_sparse'}, optional
    **kwargs : additional ``__dunder__`` attributes

    Returns
    -------
    Symbol

    Examples
    --------
    >>> import sparsym as mx
    >>> v = mx.sym.Variable('w', stype='row_sparse', shape=(10, 2), dtype='float64')
    >>> v.attr('__storage_type__'), v.attr('__shape__'), v.attr('__dtype__')
    ('1', '(10, 2)', '1')
    """
    if not isinstance(name, str):
        raise TypeError("Expect a string for variable `name`")
    a = current_attr_scope().get(attr)
    if shape is not None:
        a["__shape__"] = str(shape)
    if lr_mult is not None:
        a["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        a["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        from ..base import dtype_of
        from ..dtype_flags import dtype_to_flag
        a["__dtype__"] = str(dtype_to_flag(dtype_of(dtype)))
    if init is not None:
        a["__init__"] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        a["__storage_type__"] = str(STYPE_ID[check_stype(stype, f"Variable {name}: ")])
    for k, v in kwargs.items():
        if not (k.startswith("__") and k.endswith("__")):
            raise ValueError(f"Attribute name={k} is not supported. Additional attributes must "
                             "start and end with double underscores, e.g, __yourattr__")
        a[k] = str(v)
    return Symbol([(Node(None, name, None, expand_attr(a)), 0)])


var = Variable


def Group(symbols):
    """Group symbols into one with all their outputs.

    Examples
    --------
    >>> import sparsym as mx
    >>> a, b = mx.sym.var('a'), mx.sym.var('b')
    >>> mx.sym.Group([a, a + b]).list_outputs()
    ['a', '_plus0_output']
    """
    if not symbols or any(not isinstance(s, Symbol) for s in symbols):
        raise TypeError("Expected a list of symbols as input")
    return Symbol([e for s in symbols for e in s._outputs])


def load_json(json_str):
    """Rebuild a Symbol from MXNet 1.x JSON (files written by MXNet load here)."""
    return Symbol(load_heads(json_str))


def load(fname):
    """Load a symbol JSON file (``prefix-symbol.json``)."""
    with open_for_load(fname, "r", encoding="utf-8") as f:
        return load_json(f.read())

