"""The package's layers, lowest first, and the import graph they are checked against.

``LAYERS`` is the one statement of which module may import which: a module may import
modules of its own layer and of the layers below it, at module level or inside a
function. ``tests/core/test_layering.py`` derives the allowed edges from this table and
fails on any other; ``tools/layers.py`` prints the graph's upward edges and cycles and
renders the table into docs/architecture.md. Edges that still point upward are listed,
each with its reason, in ``ALLOWED_UPWARD``; the test fails when one of them is no
longer used, so the list only shrinks.

This module imports nothing from the package (it reads the source with ``ast``).
"""
from __future__ import annotations

import ast
from pathlib import Path

# (layer, what it holds, module prefixes); lowest first.
LAYERS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("base", "errors, env flags, attr parsing, contexts, the RNG state, raw CSR/RSP "
     "containers, profiler",
     ("sparsym.base", "sparsym.error", "sparsym._threading_env", "sparsym._malloc",
      "sparsym._compile_notice",
      "sparsym._layers", "sparsym.log", "sparsym.context", "sparsym.util", "sparsym.utils",
      "sparsym.engine", "sparsym.profiler", "sparsym.registry",
      "sparsym._rng", "sparsym.dtype_flags", "sparsym.storage")),
    ("kernels", "pure functions on raw storage (NumPy, Numba loops; oneDNN primitives in "
     "kernels/onednn)",
     ("sparsym.kernels",)),
    ("ops", "operator records: ops/core (OpDef, registry, dispatch, params, rules, grad) "
     "and one folder per family",
     ("sparsym.ops",)),
    ("graph", "the graph IR and the passes over it",
     ("sparsym.graph", "sparsym.passes")),
    ("ndarray", "NDArray and its sparse kinds; nd.* generated from the registry",
     ("sparsym.ndarray", "sparsym._contrib_optim")),
    ("executor", "plans and the executor that runs a graph",
     ("sparsym.executor",)),
    ("symbol", "Symbol, autograd, the cached op, Python custom ops",
     ("sparsym.symbol", "sparsym.autograd", "sparsym.cached_op", "sparsym.operator",
      "sparsym.attribute", "sparsym.name", "sparsym.random")),
    ("services", "optimizer, kvstore, initializers, metrics, schedules, checkpoints, "
     "record I/O, visualisation, runtime features, MXNet's C API names",
     ("sparsym.optimizer", "sparsym.kvstore", "sparsym.checkpoint",
      "sparsym.initializer", "sparsym.lr_scheduler", "sparsym.metric", "sparsym.monitor",
      "sparsym.recordio", "sparsym.callback", "sparsym.viz", "sparsym.visualization",
      "sparsym.plotting", "sparsym.runtime", "sparsym.c_api")),
    ("frontends", "module, model/feedforward, gluon, io, image, rnn, contrib, ONNX export",
     ("sparsym.module", "sparsym.model", "sparsym.feedforward", "sparsym.gluon",
      "sparsym.io", "sparsym.image", "sparsym.rnn", "sparsym.contrib", "sparsym.sklearn",
      "sparsym.numpy", "sparsym.onnx")),
    # test_utils, diagnose (python -m sparsym) and the mxnet alias drive the public API as
    # user code does (``import sparsym as mx``); "sparsym" itself matches only the package
    ("package", "the top-level package (re-exports only), test_utils, diagnose, the mxnet "
     "alias",
     ("sparsym", "sparsym.test_utils", "sparsym.diagnose", "sparsym.__main__",
      "sparsym.mxnet_alias")),
)

# Modules above ops that reach kernels only through registered operators or one service
# function of the ops layer per need (ops/core/registry.py run_raw, ops/optim/service.py,
# ops/sparse/sparse.py row_ids): an import of sparsym.kernels from them is an error.
THROUGH_OPS: tuple[str, ...] = ("sparsym.optimizer", "sparsym.module", "sparsym.kvstore")

# Upward edges not yet removed: (importer prefix, imported prefix, why). An entry that
# matches no edge of the current graph is an error, so this list only shrinks.
ALLOWED_UPWARD: tuple[tuple[str, str, str], ...] = ()

# Import cycles between modules not yet broken: (sorted modules, why). A listed cycle
# that no longer exists is an error too.
ALLOWED_CYCLES: tuple[tuple[tuple[str, ...], str], ...] = ()


def layer_of(module: str) -> int:
    """Index in ``LAYERS`` of the layer holding ``module`` (longest prefix wins)."""
    best, best_len = -1, -1
    for i, (_, _, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            hit = module == p if p == "sparsym" else _within(module, p)
            if hit and len(p) > best_len:
                best, best_len = i, len(p)
    if best < 0:
        raise KeyError(f"module {module!r} is in no layer of sparsym._layers.LAYERS")
    return best


def _modules(root: Path) -> dict[str, tuple[Path, bool]]:
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        is_pkg = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return found


def import_graph(root: Path) -> dict[str, dict[str, tuple[int, bool]]]:
    """importer -> {imported module: (line, lazy)} for every import inside the package.

    Imports inside functions count (``lazy`` is True for them); ``from pkg import name``
    points at ``pkg.name`` when that is a module, else at ``pkg``.
    """
    mods = _modules(root)

    def resolve(target: str) -> str:
        while target and target not in mods:
            target = target.rsplit(".", 1)[0] if "." in target else ""
        return target

    graph: dict[str, dict[str, tuple[int, bool]]] = {}
    for mod, (path, is_pkg) in mods.items():
        package = mod if is_pkg else mod.rsplit(".", 1)[0]
        tree = ast.parse(path.read_text(), str(path))
        lazy = {id(n) for f in ast.walk(tree)
                if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                for n in ast.walk(f)}
        out = graph.setdefault(mod, {})
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    parts = parts[:len(parts) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                targets = [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for t in targets:
                if t != "sparsym" and not t.startswith("sparsym."):
                    continue
                dep = resolve(t)
                if dep and dep != mod:
                    is_lazy = id(node) in lazy
                    if dep not in out or (out[dep][1] and not is_lazy):
                        out[dep] = (node.lineno, is_lazy)
    return graph


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _allowed(importer: str, dep: str) -> int | None:
    """Index of the first ``ALLOWED_UPWARD`` entry covering the edge, or None."""
    for i, (a, b, _) in enumerate(ALLOWED_UPWARD):
        if _within(importer, a) and _within(dep, b):
            return i
    return None


def upward_edges(graph: dict) -> list[tuple[str, int, bool, str]]:
    """(importer, line, lazy, imported) for every edge to a higher layer."""
    return [(m, line, lazy, dep) for m, deps in sorted(graph.items())
            for dep, (line, lazy) in sorted(deps.items()) if layer_of(dep) > layer_of(m)]


def kernel_bypasses(graph: dict) -> list[tuple[str, int, str]]:
    """(importer, line, imported) for every import of ``sparsym.kernels`` from a module
    under ``THROUGH_OPS``."""
    return [(m, line, dep) for m, deps in sorted(graph.items())
            if any(_within(m, p) for p in THROUGH_OPS)
            for dep, (line, _) in sorted(deps.items()) if _within(dep, "sparsym.kernels")]


def module_cycles(graph: dict) -> list[tuple[str, ...]]:
    """Strongly connected sets of two or more modules, found with Tarjan's algorithm.

    An edge between a module and a package it sits in is left out: a package's
    ``__init__`` re-exporting its children is not a cycle between rooms.
    """
    def related(a: str, b: str) -> bool:
        return a.startswith(b + ".") or b.startswith(a + ".")

    edges = {m: sorted(d for d in deps if not related(m, d)) for m, deps in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[tuple[str, ...]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(tuple(sorted(comp)))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def problems(root: Path) -> list[str]:
    """Every upward edge and room cycle not in the allow-lists, every kernel import from
    ``THROUGH_OPS``, and stale allow-list entries."""
    graph = import_graph(root)
    found, used = [], set()
    for m, line, lazy, dep in upward_edges(graph):
        entry = _allowed(m, dep)
        if entry is None:
            kind = "lazy import" if lazy else "import"
            found.append(f"{m}:{line} {kind} of {dep} ({LAYERS[layer_of(dep)][0]}) from "
                         f"layer {LAYERS[layer_of(m)][0]}")
        else:
            used.add(entry)
    found += [f"{m}:{line} import of {dep}: {m.split('.')[1]} reaches kernels through "
              "registered operators or the ops layer's service functions (THROUGH_OPS)"
              for m, line, dep in kernel_bypasses(graph)]
    found += [f"allow-list entry matches no upward edge: {a} -> {b}"
              for i, (a, b, _) in enumerate(ALLOWED_UPWARD) if i not in used]
    cycles = module_cycles(graph)
    allowed_cycles = {rooms for rooms, _ in ALLOWED_CYCLES}
    found += [f"import cycle between {', '.join(c)}" for c in cycles if c not in allowed_cycles]
    found += [f"allowed cycle no longer exists: {', '.join(c)}"
              for c in sorted(allowed_cycles - set(cycles))]
    return found


def render_markdown() -> str:
    """The layer table as a Markdown table (top layer first), for docs/architecture.md."""
    rows = ["| layer | holds | modules |", "|---|---|---|"]
    for name, holds, prefixes in reversed(LAYERS):
        mods = ", ".join(f"`{p.replace('sparsym.', '', 1) if p != 'sparsym' else 'sparsym'}`"
                         for p in prefixes)
        rows.append(f"| {name} | {holds} | {mods} |")
    return "\n".join(rows)
