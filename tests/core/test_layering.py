"""The package's layering, read from the source: every import (module level or inside a
function) of each module under sparsym/ is resolved and checked against its layer's allowed
dependencies. ops/ builds graph nodes through ops.node and never reaches up into passes,
executor, symbol, module, rnn or contrib."""
import ast
from pathlib import Path

import sparsym

ROOT = Path(sparsym.__file__).resolve().parent

# layer (first component under sparsym) -> the layers it may import besides itself
ALLOWED = {
    "base": set(),
    "_threading_env": set(),
    "_compile_notice": set(),
    "kernels": {"base", "storage", "_threading_env", "_compile_notice"},
    "ops": {"base", "storage", "kernels", "random", "_threading_env", "_compile_notice"},
}

def _module_name(path, root=ROOT):
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts), parts[-1] == "__init__"


def imports_of(path, root=ROOT):
    """Absolute names of every sparsym module ``path`` imports, with their line numbers."""
    mod, is_pkg = _module_name(path, root)
    package = mod if is_pkg else mod.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if node.module:
                found.append((target, node.lineno))
            else:  # ``from .. import storage``: the names are modules
                found += [(f"{target}.{a.name}", node.lineno) for a in node.names]
    return [(t, line) for t, line in found if t == "sparsym" or t.startswith("sparsym.")]


def _layer(name):
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


def upward_imports(root=ROOT):
    """(module, line, imported module) for every import that breaks ``ALLOWED``."""
    bad = []
    for path in sorted(root.rglob("*.py")):
        mod, _ = _module_name(path, root)
        layer = _layer(mod)
        if layer not in ALLOWED:
            continue
        for target, line in imports_of(path, root):
            dep = _layer(target)
            if dep != layer and dep not in ALLOWED[layer]:
                bad.append((mod, line, target))
    return bad


def test_lower_layers_never_import_upper_ones():
    bad = upward_imports()
    assert not bad, "upward imports:\n" + "\n".join(f"  {m}:{ln} imports {t}" for m, ln, t in bad)


def test_the_walk_sees_function_level_and_relative_imports(tmp_path):
    pkg = tmp_path / "sparsym"
    (pkg / "ops" / "nn").mkdir(parents=True)
    for d in (pkg, pkg / "ops", pkg / "ops" / "nn"):
        (d / "__init__.py").write_text("")
    (pkg / "ops" / "nn" / "bad.py").write_text(
        "from .. import rules\n"
        "def f():\n"
        "    from ...passes.gradient import gradient\n"
        "    from ... import symbol\n")
    got = upward_imports(pkg)
    assert [(m, t) for m, _, t in got] == [("sparsym.ops.nn.bad", "sparsym.passes.gradient"),
                                           ("sparsym.ops.nn.bad", "sparsym.symbol")]
