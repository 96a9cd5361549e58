"""Every public name of MXNet 1.9.1's modules (issue 16, scope 2) exists in sparsym.

The manifest, tests/fixtures/mxnet/api_manifest.json, is recorded from MXNet 1.9.1 by
tests/fixtures/make_mxnet_api.py. Names generated from MXNet's operator registry (kind
``op``) are checked by tests/ops/test_op_signatures.py and the operator issue, not here.
A name may be missing only when listed in EXCLUDED with its reason; an excluded name that
now exists fails the test too, so the list only shrinks.
"""
import importlib
import json
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "mxnet" / "api_manifest.json"
MANIFEST = json.loads(FIXTURE.read_text())

# reasons (docs/migrating_from_mxnet.md lists the unsupported parts)
OUT_OF_SCOPE = "out of scope (issue 16): mx.np / npx / tvm / torch / rtc"
IMAGE = "reads images: needs an image codec (mx.image decodes only with Pillow)"
PENDING = "pending: owned by another helper of issue 16, not landed yet"
TODO = "not implemented yet (issue 16 follow-up)"

EXCLUDED = {
    "mxnet": {
        **{n: OUT_OF_SCOPE for n in (
            "np", "npx", "numpy_extension", "numpy_dispatch_protocol",
            "numpy_op_fallback", "numpy_op_signature", "np_symbol", "tvmop", "th",
            "torch", "rtc", "library", "libinfo", "notebook", "api", "ndarray_doc",
            "symbol_doc")},
        "executor_manager": "MXNet's deprecated pre-Module executor manager (for FeedForward)",
    },
    "mxnet.ndarray": {
        **{n: OUT_OF_SCOPE for n in ("imdecode", "numpy", "numpy_extension")},
        **{n: TODO for n in ("get_indexing_dispatch_code", "get_oshape_of_gather_nd_op",
                             "indexing_key_expand_implicit_axes")}},
    "mxnet.symbol": {n: OUT_OF_SCOPE for n in ("numpy", "numpy_extension")},
}


def _module(modname):
    try:
        return importlib.import_module(modname.replace("mxnet", "sparsym", 1))
    except ImportError:
        return None


@pytest.mark.parametrize("modname", sorted(MANIFEST))
def test_module_has_mxnet_names(modname):
    excluded = EXCLUDED.get(modname, {})
    mod = _module(modname)
    if mod is None:
        assert "*" in excluded, f"{modname} does not import"
        return
    assert "*" not in excluded, f"{modname} imports now: drop its '*' exclusion"
    names = [n for n, kind in MANIFEST[modname].items() if kind != "op"]
    missing = sorted(n for n in names if not hasattr(mod, n) and n not in excluded)
    assert not missing, f"{modname} lacks MXNet names {missing}"
    stale = sorted(n for n in excluded if hasattr(mod, n))
    assert not stale, f"{modname}: {stale} exist now: remove them from EXCLUDED"


def test_exclusions_name_manifest_entries():
    for modname, names in EXCLUDED.items():
        assert modname in MANIFEST
        unknown = [n for n in names if n != "*" and n not in MANIFEST[modname]]
        assert not unknown, (modname, unknown)
