"""The registry against MXNet 1.9.1's operator list (recorded from the oracle).

``tests/fixtures/mxnet/op_signatures.json`` holds every operator MXNet 1.9.1 registers
(recorded by tests/fixtures/make_mxnet_api.py). Families that are out of scope are left
out here, each with its reason (docs/migrating_from_mxnet.md lists them for users); of
the rest, the registry must hold at least ``FLOOR``, and the test names what is missing.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from sparsym.ops.core.registry import all_ops

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "mxnet" / "op_signatures.json"

# Prefix -> why the family is out of scope.
OUT_OF_SCOPE = {
    "_np": "the numpy interface (mx.np / mx.npx) is not provided",
    "_npi": "the numpy interface (mx.np / mx.npx) is not provided",
    "_npx": "the numpy interface (mx.np / mx.npx) is not provided",
    "_backward_": "gradient nodes: gradients come from each op's own gradient rule, and "
                  "MXNet's _backward_* ops are not callable from Python with meaning",
    "_contrib_quantize": "quantization and calibration are not provided",
    "_contrib_quantized": "quantization and calibration are not provided",
    "_contrib_requantize": "quantization and calibration are not provided",
    "_contrib_dequantize": "quantization and calibration are not provided",
    "_contrib_calibrate": "quantization and calibration are not provided",
    "_sg_": "MKL-DNN subgraph fusions are backend-specific",
    "_cvimdecode": "image decoding (OpenCV) is not provided (mx.image decodes with Pillow)",
    "_cvimread": "image decoding (OpenCV) is not provided (mx.image decodes with Pillow)",
    "_imdecode": "image decoding (OpenCV) is not provided",
    "_random_pdf_": "the random_pdf_* family is registered but only reachable through mx.np",
    # MXNet's engine internals, not operators a user calls
    "_CachedOp": "engine internal (sparsym's CachedOp is a Python class)",
    "_NDArray": "the legacy NDArray-callback operator is engine internal",
    "_Native": "the legacy native-callback operator is engine internal",
    "_NoGradient": "engine internal",
    "_broadcast_backward": "the broadcast ops' gradient node: MXNet's front end for it takes "
                           "no inputs, so it is not callable from Python",
    "_CrossDeviceCopy": "engine internal (one device)",
}
FLOOR = 1.0   # every in-scope operator: the list can only stay complete
_OUT = re.compile("^(" + "|".join(re.escape(p) for p in OUT_OF_SCOPE) + ")")


def in_scope():
    return sorted(n for n in json.loads(FIXTURE.read_text()) if not _OUT.match(n))


def test_registry_covers_mxnet_operators():
    names = in_scope()
    have = all_ops()
    missing = [n for n in names if n not in have]
    share = 1 - len(missing) / len(names)
    assert share >= FLOOR, (f"registry covers {share:.1%} of MXNet 1.9.1's {len(names)} "
                            f"in-scope operators (floor {FLOOR:.0%}); missing: "
                            + " ".join(missing))


def test_out_of_scope_prefixes_match_something():
    """Every excluded family names operators MXNet has (no stale entries)."""
    names = json.loads(FIXTURE.read_text())
    for prefix in OUT_OF_SCOPE:
        assert any(n.startswith(prefix) for n in names), prefix
