"""Generate the Markdown API reference (docs/api/) from sparsym's docstrings and op registry.

    python tools/gen_api_docs.py [--out docs/api]

One page per public module (classes with their public methods, functions, with signatures
and numpydoc docstrings rendered as Markdown), an operator page built from the registry
(parameters, aliases and the storage dispatch table of every operator) and an index.
The output is deterministic: running it twice gives identical files.
"""
from __future__ import annotations

import argparse
import inspect
import os
import re
import sys

# (page name, module path, one-line description)
MODULES = [
    ("sparsym", "sparsym", "package surface: contexts, errors"),
    ("symbol", "sparsym.symbol", "Symbol, Variable, Group, JSON load/save"),
    ("ndarray", "sparsym.ndarray", "NDArray and creation functions"),
    ("ndarray.sparse", "sparsym.ndarray.sparse", "CSRNDArray, RowSparseNDArray, sparse creation"),
    ("autograd", "sparsym.autograd", "record, backward, grad, Function (imperative gradients)"),
    ("contrib.autograd", "sparsym.contrib.autograd", "MXNet's earlier autograd API"),
    ("executor", "sparsym.executor", "Executor and its storage report"),
    ("module", "sparsym.module", "Module, BucketingModule, SequentialModule"),
    ("io", "sparsym.io", "data iterators"),
    ("optimizer", "sparsym.optimizer", "optimizers and updaters"),
    ("lr_scheduler", "sparsym.lr_scheduler", "learning-rate schedules"),
    ("kvstore", "sparsym.kvstore", "key-value stores"),
    ("metric", "sparsym.metric", "evaluation metrics"),
    ("initializer", "sparsym.initializer", "parameter initializers"),
    ("callback", "sparsym.callback", "training callbacks"),
    ("plotting", "sparsym.plotting", "training curves (mx.callback.TrainingCurve)"),
    ("model", "sparsym.model", "checkpoints"),
    ("viz", "sparsym.viz", "plot_network, print_summary"),
    ("sklearn", "sparsym.sklearn", "scikit-learn estimators"),
    ("gluon", "sparsym.gluon", "Gluon: Block, HybridBlock, SymbolBlock, Parameter, Trainer; "
     "sparse gradients, row_sparse parameters and csr inputs as worked examples"),
    ("gluon.nn", "sparsym.gluon.nn", "Gluon layers (Dense, Conv2D, Embedding, BatchNorm...)"),
    ("gluon.rnn", "sparsym.gluon.rnn", "Gluon recurrent layers and cells"),
    ("gluon.loss", "sparsym.gluon.loss", "Gluon losses"),
    ("gluon.data", "sparsym.gluon.data", "datasets, samplers, DataLoader"),
    ("gluon.model_zoo.vision", "sparsym.gluon.model_zoo.vision", "model zoo architectures"),
    ("gluon.contrib.estimator", "sparsym.gluon.contrib.estimator",
     "the fit API: Estimator and its event handlers"),
    ("gluon.utils", "sparsym.gluon.utils", "split_and_load, clip_global_norm, download"),
    ("onnx", "sparsym.onnx", "ONNX export (export_model)"),
    ("contrib.onnx", "sparsym.contrib.onnx", "ONNX import (import_model, import_to_gluon)"),
    ("diagnose", "sparsym.diagnose", "python -m sparsym: the installation report"),
    ("rnn", "sparsym.rnn", "recurrent cells"),
    ("monitor", "sparsym.monitor", "Monitor"),
    ("test_utils", "sparsym.test_utils", "testing helpers"),
    ("random", "sparsym.random", "random state"),
    ("storage", "sparsym.storage", "raw storage containers"),
    ("base", "sparsym.base", "errors and environment flags"),
]

_ADDR = re.compile(r" at 0x[0-9a-fA-F]+")
_SECTION_RULE = re.compile(r"^-{3,}\s*$")
_LIST_SECTIONS = {"Parameters", "Returns", "Yields", "Attributes", "Raises", "Other Parameters"}


# ---------------------------------------------------------------------- docstring rendering
def render_docstring(doc: str) -> str:
    """numpydoc -> Markdown: section headings bold, parameter lists bulleted, doctests fenced."""
    if not doc:
        return "*(no docstring)*\n"
    lines = inspect.cleandoc(doc).splitlines()
    out, section, i, in_code = [], None, 0, False
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and _SECTION_RULE.match(nxt) and len(nxt.strip()) >= len(line.strip()):
            if in_code:
                out.append("```")
                in_code = False
            section = line.strip()
            out += ["", f"**{section}**", ""]
            i += 2
            continue
        stripped = line.strip()
        if stripped.startswith(">>>") or (in_code and stripped.startswith("...")):
            if not in_code:
                out += ["```python"]
                in_code = True
            out.append(stripped)
        elif in_code and stripped and not stripped.startswith(">>>"):
            out.append(stripped)             # doctest output
        elif in_code:
            out.append("```")
            in_code = False
            out.append("")
        elif section in _LIST_SECTIONS and stripped and not line.startswith((" ", "\t")):
            name, sep, typ = stripped.partition(" : ")
            out.append(f"- `{name}`" + (f" : {typ}" if sep else ""))
        elif section in _LIST_SECTIONS and stripped:
            out.append(f"  {stripped}")
        elif line.startswith("    ") and section is None and stripped:
            out.append(f"    {line.strip()}" if not out or out[-1].startswith("    ")
                       or out[-1] == "" else line)
        else:
            out.append(line)
        i += 1
    if in_code:
        out.append("```")
    return "\n".join(out).strip() + "\n"


def signature(obj) -> str:
    """A printable signature without memory addresses (stable across runs)."""
    try:
        sig = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"
    return _ADDR.sub("", sig)


# ---------------------------------------------------------------------- module pages
def _is_op_frontend(name) -> bool:
    from sparsym.ops.core.registry import has_op
    return has_op(name)


def public_members(module):
    """(name, object) pairs documented for ``module``: its __all__, else what it defines."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")]
    # names a module re-exports only because MXNet's does (documented on their own pages)
    names = set(names) - set(getattr(module, "__reexported__", ()))
    out = []
    for n in sorted(names):
        try:
            obj = getattr(module, n)
        except AttributeError:
            continue
        if inspect.ismodule(obj) or not (inspect.isclass(obj) or callable(obj)):
            continue
        mod = getattr(obj, "__module__", "") or ""
        if not mod.startswith("sparsym"):
            continue
        if _is_op_frontend(n) and not inspect.isclass(obj):
            continue               # operator front ends are on the operators page
        out.append((n, obj))
    return out


def _methods(cls):
    for name, member in sorted(vars(cls).items()):
        if name.startswith("_") and name not in ("__init__", "__call__"):
            continue
        fn = member.fget if isinstance(member, property) else member
        if isinstance(member, (staticmethod, classmethod)):
            fn = member.__func__
        if not callable(fn) and not isinstance(member, property):
            continue
        yield name, member, fn


def render_class(name, cls) -> str:
    parts = [f"### class `{name}{signature(cls)}`", "", render_docstring(cls.__doc__ or "")]
    for mname, member, fn in _methods(cls):
        if mname == "__init__":
            continue
        if isinstance(member, property):
            parts += [f"#### property `{mname}`", "", render_docstring(fn.__doc__ or "")]
        else:
            parts += [f"#### `{name}.{mname}{signature(fn)}`", "",
                      render_docstring(fn.__doc__ or "")]
    return "\n".join(parts)


def render_module(title, module, blurb) -> str:
    parts = [f"# `{module.__name__}`", "", f"*{blurb}*", ""]
    if module.__doc__:
        parts += [render_docstring(module.__doc__), ""]
    members = public_members(module)
    classes = [(n, o) for n, o in members if inspect.isclass(o)]
    funcs = [(n, o) for n, o in members if not inspect.isclass(o)]
    if classes:
        parts += ["## Classes", ""]
        parts += [render_class(n, o) for n, o in classes]
    if funcs:
        parts += ["## Functions", ""]
        for n, f in funcs:
            parts += [f"### `{n}{signature(f)}`", "", render_docstring(f.__doc__ or "")]
    return "\n".join(parts).rstrip() + "\n"


# ---------------------------------------------------------------------- operators page
def _fmt_row(row):
    outs = [f"in{o}" if isinstance(o, int) else o for o in row.outs]
    cond = " *(when its parameters allow)*" if row.when is not None else ""
    return f"`{', '.join(row.ins)}` -> `{', '.join(outs)}`{cond}"


def render_operators() -> str:
    from sparsym.ops.core.registry import all_ops
    ops = {}
    for op in all_ops().values():
        ops[op.name] = op
    public = sorted(n for n in ops if not n.startswith("_backward"))
    parts = ["# Operators", "",
             "Every operator is available as `mx.sym.<name>` and `mx.nd.<name>` (and under "
             "its aliases). The *storage* list is the operator's dispatch table: the first "
             "row matching the input storage types runs; when none matches, the inputs are "
             "densified and the first (dense) row runs (the fallback, see the storage "
             "guide). `inK` means \"the storage type of input K\". Backward operators "
             "(`_backward_*`) are used by the gradient pass and are not listed.", "",
             "| operator | aliases |", "|---|---|"]
    for n in public:
        al = ", ".join(f"`{a}`" for a in sorted(ops[n].aliases))
        parts.append(f"| [`{n}`](#{n.lower()}) | {al} |")
    parts.append("")
    for n in public:
        op = ops[n]
        parts += [f"## {n}", ""]
        if op.doc:
            parts += [render_docstring(op.doc), ""]
        inputs = op.inputs if not callable(op.inputs) else ("(variadic)",)
        parts.append(f"- inputs: {', '.join(f'`{x}`' for x in inputs) or 'none'}")
        if callable(op.aux):
            parts.append("- auxiliary states: (defined by the operator's parameters)")
        elif op.aux:
            parts.append(f"- auxiliary states: {', '.join(f'`{x}`' for x in op.aux)}")
        if op.params.fields:
            parts.append("- parameters:")
            for k, f in op.params.fields.items():
                default = "required" if f.required else f"default `{f.default!r}`"
                doc = f" — {f.doc}" if f.doc else ""
                parts.append(f"  - `{k}` ({f.kind}, {default}){doc}")
        parts.append("- storage:")
        parts += [f"  {i}. {_fmt_row(r)}" for i, r in enumerate(op.dispatch, 1)]
        if op.gradient is None:
            parts.append("- no gradient")
        parts.append("")
    return "\n".join(parts).rstrip() + "\n"


# ---------------------------------------------------------------------- driver
def generate(out_dir) -> list:
    """Write every page into ``out_dir``; return the written file names."""
    import importlib
    os.makedirs(out_dir, exist_ok=True)
    written = []
    index = ["# sparsym API reference", "",
             "Generated from the docstrings by `python tools/gen_api_docs.py`; do not edit.",
             "", "- [Operators](operators.md): every registered operator, its parameters "
             "and storage dispatch table"]
    for title, path, blurb in MODULES:
        try:
            module = importlib.import_module(path)
            if path == "sparsym.sklearn":
                module._build()     # scikit-learn estimators are created on first use
        except ImportError as err:
            print(f"skipping {path}: {err}", file=sys.stderr)
            continue
        fname = f"{title}.md"
        _write(os.path.join(out_dir, fname), render_module(title, module, blurb))
        written.append(fname)
        index.append(f"- [`{path}`]({fname}): {blurb}")
    _write(os.path.join(out_dir, "operators.md"), render_operators())
    written.append("operators.md")
    _write(os.path.join(out_dir, "index.md"), "\n".join(index) + "\n")
    written.append("index.md")
    return written


def _write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--out", default=os.path.join(here, "..", "docs", "api"),
                   help="output directory")
    args = p.parse_args(argv)
    files = generate(args.out)
    print(f"wrote {len(files)} pages to {os.path.normpath(args.out)}")


if __name__ == "__main__":
    main()
