"""docs/sparse.md is generated from the registry: it must match a fresh render."""
import json
from pathlib import Path

from sparsym.ops.core.table import render

ROOT = Path(__file__).resolve().parents[2]


def test_docs_sparse_md_is_up_to_date():
    cases = json.loads((ROOT / "tests" / "ops" / "mxnet_stypes.json").read_text())["cases"]
    want = render(cases)
    got = (ROOT / "docs" / "sparse.md").read_text()
    assert got == want, "docs/sparse.md is stale: run `python -m sparsym.ops.core.table`"
