"""Every ``>>>`` example in the package's docstrings runs as written: module, class and
function docstrings of every module under sparsym/, and the operators' docs (which become
the generated front ends' docstrings)."""
import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import sparsym

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules():
    names = [sparsym.__name__]
    for info in pkgutil.walk_packages(sparsym.__path__, sparsym.__name__ + "."):
        names.append(info.name)
    return sorted(names)


def _globs():
    return {"mx": sparsym, "np": np}


def _run(tests):
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    failed = []
    for t in tests:
        t.globs.update(_globs())
        with sparsym.name.NameManager():   # generated names count from 0 in each docstring
            res = runner.run(t, out=failed.append)
        assert res.failed == 0 or failed
    assert not failed, "".join(failed)


MODULES = [m for m in _modules() if not m.endswith("__main__")]


@pytest.mark.parametrize("name", MODULES)
def test_module_examples_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)   # examples that save files write here
    mod = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    _run([t for t in finder.find(mod, name) if t.examples and t.name.startswith(name)])


def _op_docs():
    seen, out = set(), []
    for _, op in sorted(sparsym.ops.all_ops().items()):
        if id(op) not in seen and ">>>" in (op.doc or ""):
            seen.add(id(op))
            out.append(op)
    return out


@pytest.mark.parametrize("op", _op_docs(), ids=lambda op: op.name)
def test_operator_examples_run(op):
    parser = doctest.DocTestParser()
    _run([parser.get_doctest(op.doc, {}, op.name, None, 0)])
