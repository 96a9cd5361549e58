"""The package's layering, read from the source: every import (module level or inside a
function) of every module under sparsym/ is checked against the one layer table,
``sparsym/_layers.py``: no import of a higher layer and no import cycle between modules,
except the commented entries of its allow-lists, which must all still be needed."""
from pathlib import Path

import pytest

import sparsym
from sparsym import _layers

ROOT = Path(sparsym.__file__).resolve().parent
DOCS = ROOT.parent / "docs" / "architecture.md"


def test_no_upward_import_and_no_cycle_outside_the_allow_lists():
    found = _layers.problems(ROOT)
    assert not found, "layering problems:\n" + "\n".join(f"  {p}" for p in found)


def test_every_module_sits_in_a_layer():
    for mod in _layers.import_graph(ROOT):
        _layers.layer_of(mod)


def test_allow_lists_give_a_reason_for_every_entry():
    for importer, dep, why in _layers.ALLOWED_UPWARD:
        assert _layers.layer_of(dep) > _layers.layer_of(importer) and why.strip()
    for mods, why in _layers.ALLOWED_CYCLES:
        assert list(mods) == sorted(mods) and why.strip()


@pytest.mark.skipif(not DOCS.exists(), reason="docs are not shipped with the package")
def test_architecture_doc_draws_the_table():
    text = DOCS.read_text()
    assert _layers.render_markdown() in text, (
        "docs/architecture.md's layer table differs from sparsym/_layers.py: "
        "run python tools/layers.py --docs")


def _fake_package(tmp_path, files):
    pkg = tmp_path / "sparsym"
    for rel, text in files.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pkg


def test_the_walk_sees_function_level_and_relative_imports(tmp_path):
    pkg = _fake_package(tmp_path, {
        "__init__.py": "", "ops/__init__.py": "", "ops/nn/__init__.py": "",
        "ops/rules.py": "", "passes/__init__.py": "", "passes/gradient.py": "",
        "symbol/__init__.py": "",
        "ops/nn/bad.py": ("from .. import rules\n"
                          "def f():\n"
                          "    from ...passes.gradient import gradient\n"
                          "    from ... import symbol\n")})
    got = _layers.upward_edges(_layers.import_graph(pkg))
    assert [(m, lazy, t) for m, _, lazy, t in got] == [
        ("sparsym.ops.nn.bad", True, "sparsym.passes.gradient"),
        ("sparsym.ops.nn.bad", True, "sparsym.symbol")]


def test_a_cycle_between_two_modules_is_found(tmp_path):
    pkg = _fake_package(tmp_path, {
        "__init__.py": "", "kvstore/__init__.py": "",
        "kvstore/base.py": "def create():\n    from .dist import Dist\n",
        "kvstore/dist.py": "from .base import create\n"})
    assert _layers.module_cycles(_layers.import_graph(pkg)) == [
        ("sparsym.kvstore.base", "sparsym.kvstore.dist")]


def test_optimizer_module_and_kvstore_do_not_import_kernels(tmp_path):
    pkg = _fake_package(tmp_path, {
        "__init__.py": "", "kernels/__init__.py": "", "kernels/rsp.py": "",
        "ops/__init__.py": "", "kvstore/__init__.py": "", "module/__init__.py": "",
        "kvstore/local.py": "def f():\n    from ..kernels import rsp\n",
        "module/group.py": "from .. import ops\n",
        "ops/sparse.py": "from ..kernels import rsp\n"})
    graph = _layers.import_graph(pkg)
    assert _layers.kernel_bypasses(graph) == [
        ("sparsym.kvstore.local", 2, "sparsym.kernels.rsp")]
    assert _layers.kernel_bypasses(_layers.import_graph(ROOT)) == []


def test_lower_layers_reach_upper_ones_through_installed_hooks(monkeypatch):
    import sparsym as mx
    from sparsym import autograd, storage
    from sparsym.base import MXNetError, StorageError
    from sparsym.kernels import csr as kcsr
    from sparsym.ndarray import tape

    assert tape.AUTOGRAD.backward is autograd.backward
    from sparsym.ndarray import ndarray, op, sparse
    assert ndarray.LATE.invoke is op.invoke and ndarray.LATE.CSRNDArray is sparse.CSRNDArray
    assert storage._CSR_KERNELS["to_dense"] is kcsr.csr_to_dense
    x = mx.nd.ones(2)
    x.attach_grad()
    monkeypatch.setattr(tape.AUTOGRAD, "backward", tape._autograd_missing)
    with pytest.raises(MXNetError, match="autograd is not installed"):
        x.backward()
    monkeypatch.setattr(storage, "_CSR_KERNELS", {})
    with pytest.raises(StorageError, match="csr conversions need"):
        storage.dense_to_csr(x.asnumpy().reshape(1, 2))
