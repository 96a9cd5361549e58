"""Record tests/fixtures/mxnet/image_ops.npz: MXNet 1.9.1's outputs of the ``mx.nd.image``
operators, ``_cvimresize`` and ``_cvcopyMakeBorder`` on small images, for
tests/image/test_image_ops.py::

    python tests/image/make_mxnet_image_fixtures.py [--mxnet ~/mxref/bin/python]

Inputs are built here (NumPy, fixed seeds) and run by an MXNet child process (MXNet is never
imported here). Random operators are recorded with min_factor == max_factor (no draw).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "fixtures", "mxnet", "image_ops.npz")

CHILD = r"""
import json, sys
import numpy as np
import mxnet as mx
src, out = sys.argv[1], sys.argv[2]
data = np.load(src)
meta = json.loads(str(data["meta"]))
res = {}
for key, m in meta.items():
    x = data[key + "/in"]
    op = m["op"]
    if op.startswith("_image_"):
        fn = getattr(mx.nd.image, op[len("_image_"):])
    else:
        fn = getattr(mx.nd._internal, op)
    r = fn(mx.nd.array(x, dtype=x.dtype), **m["params"])
    res[key + "/out"] = r.asnumpy()
np.savez_compressed(out, **res)
"""


def cases():
    """(key, op, params, input) of every recorded case."""
    rng = np.random.RandomState(7)
    imgs = {"small": rng.randint(0, 256, (4, 5, 3)).astype(np.uint8),
            "odd": rng.randint(0, 256, (9, 13, 3)).astype(np.uint8),
            "gray": rng.randint(0, 256, (6, 7, 1)).astype(np.uint8),
            "wide": rng.randint(0, 256, (8, 24, 3)).astype(np.uint8)}
    sizes = {"small": [(7, 3), (2, 2), (10, 8), (3, 2), (2, 3), (16, 12)],
             "odd": [(6, 4), (20, 30), (4, 9), (13, 3)],
             "gray": [(3, 3), (14, 12)],
             "wide": [(12, 4), (6, 2), (30, 10), (8, 8)]}
    out = []
    for name, img in imgs.items():
        for dt in ("uint8", "float32"):
            x = img.astype(dt)
            for w, h in sizes[name]:
                for interp in range(5):
                    out.append((f"resize/{name}/{dt}/{w}x{h}/{interp}", "_image_resize",
                                {"size": [w, h], "interp": interp}, x))
                    out.append((f"cvimresize/{name}/{dt}/{w}x{h}/{interp}", "_cvimresize",
                                {"w": w, "h": h, "interp": interp}, x))
    x = imgs["odd"]
    out.append(("resize/keep", "_image_resize", {"size": [5], "keep_ratio": True}, x))
    out.append(("resize/square", "_image_resize", {"size": [5]}, x))
    out.append(("resize/batch", "_image_resize", {"size": [7, 5]}, np.stack([x, x[::-1]])))
    for dt in ("uint8", "float32"):
        x = imgs["odd"].astype(dt)
        for f in (0.4, 1.7):
            for op in ("random_brightness", "random_contrast", "random_saturation",
                       "random_hue"):
                out.append((f"{op}/{dt}/{f}", "_image_" + op,
                            {"min_factor": f, "max_factor": f}, x))
        out.append((f"lighting/{dt}", "_image_adjust_lighting", {"alpha": [0.3, -0.2, 0.5]}, x))
        out.append((f"to_tensor/{dt}", "_image_to_tensor", {}, x))
        out.append((f"crop/{dt}", "_image_crop", {"x": 2, "y": 1, "width": 5, "height": 7}, x))
        out.append((f"flip_lr/{dt}", "_image_flip_left_right", {}, x))
        out.append((f"flip_tb/{dt}", "_image_flip_top_bottom", {}, x))
    for dt in ("uint8", "float32"):
        x = imgs["small"].astype(dt)
        for kind in range(5):
            out.append((f"border/{dt}/{kind}", "_cvcopyMakeBorder",
                        {"top": 1, "bot": 3, "left": 2, "right": 0, "type": kind,
                         "value": 9.5}, x))
        out.append((f"border/{dt}/values", "_cvcopyMakeBorder",
                    {"top": 2, "bot": 0, "left": 0, "right": 1, "values": [7, 8, 9]}, x))
    t = (imgs["odd"].transpose(2, 0, 1) / 255.0).astype(np.float32)
    out.append(("normalize/3", "_image_normalize",
                {"mean": [0.4, 0.5, 0.6], "std": [0.2, 0.25, 0.3]}, t))
    out.append(("normalize/1", "_image_normalize", {"mean": [0.4], "std": [0.2]}, t))
    out.append(("normalize/batch", "_image_normalize", {"mean": [0.4, 0.5, 0.6],
                                                        "std": [0.2, 0.25, 0.3]},
                np.stack([t, t * 0.5])))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mxnet", default=os.path.expanduser("~/mxref/bin/python"))
    args = ap.parse_args()
    meta, arrays = {}, {}
    for key, op, params, x in cases():
        meta[key] = {"op": op, "params": params}
        arrays[key + "/in"] = x
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "in.npz"), os.path.join(tmp, "out.npz")
        np.savez(src, meta=json.dumps(meta), **arrays)
        subprocess.run([args.mxnet, "-c", CHILD, src, dst], check=True)
        got = np.load(dst)
        outs = {k: got[k] for k in got.files}
    np.savez_compressed(OUT, meta=json.dumps(meta), **arrays, **outs)
    print(f"wrote {OUT}: {len(meta)} cases")


if __name__ == "__main__":
    main()
