"""Every code block in docs/ runs as written (or is marked as not code to run), and the API
reference generator works."""
import doctest
import importlib.util
import os
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
# fenced blocks in docs/ say what they are: ```python runs (a ``>>>`` block as a doctest,
# any other as a script that prints what it shows); these languages are not run
NOT_RUN = {"sh", "text", "json"}
_FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.S | re.M)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _pages():
    return sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))


def _fences(page):
    text = (DOCS / page).read_text()
    return [(m.group(1).strip(), m.group(2), text.count("\n", 0, m.start()) + 1)
            for m in _FENCE.finditer(text)]


def _blocks(page):
    return [code for lang, code, _ in _fences(page) if lang == "python"]


def _doctest_pages():
    return [p for p in _pages() if any(">>>" in code for code in _blocks(p))]


SNIPPETS = [(page, i) for page in _pages() for i, code in enumerate(_blocks(page))
            if ">>>" not in code]
DOCTEST_PAGES = _doctest_pages()


def _doctest_pages():
    return [p for p in _pages() if any(">>>" in code for code in _blocks(p))]


SNIPPETS = [(page, i) for page in _pages() for i, code in enumerate(_blocks(page))
            if ">>>" not in code]
DOCTEST_PAGES = _doctest_pages()


def test_every_code_block_says_whether_it_runs():
    unmarked = [f"{page}:{line} ```{lang}" for page in _pages()
                for lang, _, line in _fences(page) if lang != "python" and lang not in NOT_RUN]
    assert not unmarked, f"mark these blocks ```python (run) or one of {sorted(NOT_RUN)}"
    blocks = sum(len(_blocks(p)) for p in _pages())
    assert blocks > 150 and len(SNIPPETS) + sum(
        sum(">>>" in c for c in _blocks(p)) for p in DOCTEST_PAGES) == blocks


def _skip_unless_available(code):
    if "sklearn" in code:
        pytest.importorskip("sklearn", reason="this snippet needs scikit-learn")
    if "onnx" in code:
        pytest.importorskip("onnxruntime", reason="this snippet needs onnx and onnxruntime")
        pytest.importorskip("onnx", reason="this snippet needs onnx and onnxruntime")


@pytest.mark.parametrize("page,index", SNIPPETS, ids=[f"{p}[{i}]" for p, i in SNIPPETS])
def test_doc_snippet_runs(page, index, monkeypatch, capsys):
    code = _blocks(page)[index]
    _skip_unless_available(code)
    monkeypatch.chdir(ROOT)                    # snippets use repository-relative paths
    monkeypatch.delitem(sys.modules, "mxnet", raising=False)   # one snippet aliases it
    monkeypatch.delenv("SPARSYM_STORAGE_FALLBACK", raising=False)
    exec(compile(code, f"{page}[{index}]", "exec"), {"__name__": "doc"})
    assert capsys.readouterr().out.strip(), "every snippet prints what it shows"


@pytest.mark.parametrize("page", DOCTEST_PAGES)
def test_api_page_examples_run(page, monkeypatch, tmp_path):
    """The ``>>>`` blocks of a page run in order in one namespace (a docstring's example
    may be split by its prose into several blocks), outputs checked as doctests."""
    import numpy as np

    import sparsym
    blocks = [c for c in _blocks(page) if ">>>" in c]
    _skip_unless_available("\n".join(blocks))
    monkeypatch.chdir(tmp_path)                # examples that save files write here
    monkeypatch.delenv("SPARSYM_STORAGE_FALLBACK", raising=False)
    globs = {"mx": sparsym, "np": np, "__name__": "doc"}
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    failed = []
    for i, code in enumerate(blocks):
        test = doctest.DocTestParser().get_doctest(code, globs, f"{page}[{i}]", page, 0)
        with sparsym.name.NameManager():       # generated names count from 0 per block
            runner.run(test, out=failed.append, clear_globs=False)
        globs.update(test.globs)               # (the test ran on a copy of the namespace)
    assert not failed, "".join(failed)


def test_guides_link_each_other():
    quick = (ROOT / "docs" / "quickstart.md").read_text()
    for target in ["storage_guide.md", "migrating_from_mxnet.md", "api/index.md",
                   "benchmarks.md"]:
        assert f"({target})" in quick
        assert (ROOT / "docs" / target).exists() or target.startswith("api/")


def _generator():
    spec = importlib.util.spec_from_file_location("gen_api_docs",
                                                  ROOT / "tools" / "gen_api_docs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_api_reference_generation(tmp_path):
    gen = _generator()
    files = gen.generate(tmp_path / "a")
    assert {"index.md", "operators.md", "symbol.md", "viz.md", "sklearn.md"} <= set(files)
    gluon = {"gluon.md", "gluon.nn.md", "gluon.rnn.md", "gluon.loss.md", "gluon.data.md",
             "gluon.model_zoo.vision.md", "gluon.contrib.estimator.md"}
    assert gluon | {"onnx.md", "contrib.onnx.md", "diagnose.md"} <= set(files)
    page = (tmp_path / "a" / "gluon.md").read_text()
    for part in ("### class `HybridBlock", "### class `Parameter", "### class `Trainer",
                 "sparse_grad=True", 'stype="row_sparse"', "lin.hybridize()"):
        assert part in page, part
    assert "### class `Embedding" in (tmp_path / "a" / "gluon.nn.md").read_text()
    index = (tmp_path / "a" / "index.md").read_text()
    assert "[`sparsym.viz`](viz.md)" in index
    symbol = (tmp_path / "a" / "symbol.md").read_text()
    assert "#### `Symbol.infer_storage_type(self, *args, **kwargs)`" in symbol
    viz = (tmp_path / "a" / "viz.md").read_text()
    assert "### `plot_network(symbol, title='plot'" in viz
    assert "- `hide_weights` : bool" in viz and "```python\n>>> import sparsym as mx" in viz
    ops = (tmp_path / "a" / "operators.md").read_text()
    dot = ops[ops.index("\n## dot\n"):]
    dot = dot[:dot.index("\n## ", 5)]
    assert "`csr, default` -> `row_sparse`" in dot         # dot(csr.T, dense) row
    assert "_backward_dot" not in ops.split("\n## ")[0]      # backward ops not listed
    # deterministic: no memory addresses, same bytes twice
    gen.generate(tmp_path / "b")
    for f in files:
        a, b = (tmp_path / "a" / f).read_text(), (tmp_path / "b" / f).read_text()
        assert a == b and " at 0x" not in a, f


def test_render_docstring_sections():
    gen = _generator()
    md = gen.render_docstring("""Summary.

    Parameters
    ----------
    x : int
        The x.

    Examples
    --------
    >>> 1 + 1
    2
    """)
    assert "**Parameters**" in md and "- `x` : int" in md and "  The x." in md
    assert "```python\n>>> 1 + 1\n2\n```" in md


def test_committed_reference_exists():
    api = ROOT / "docs" / "api"
    assert (api / "index.md").exists() and (api / "operators.md").exists()
    assert all(os.path.getsize(p) > 0 for p in api.glob("*.md"))
