"""Generate Avazu-shaped LibSVM data: CTR-like binary labels over one-hot categorical fields.

Each row has ``nnz_per_row`` features, one per categorical field, all with value 1. Fields
partition the feature ids (after a random permutation), their cardinalities span several
orders of magnitude (like Avazu's hour/site/device_ip fields), and the values inside a field
are drawn from a Zipf-like law ``p(rank) ~ rank**-alpha``, so feature frequencies follow a
power law. Labels come from a hidden sparse logistic model, so a linear classifier can learn
them (the ``--check`` flag prints its AUC-free accuracy ceiling on the generated rows).

Usage::

    python benchmarks/gen_avazu.py --rows 200000 --features 1000000 --out /tmp/avazu.libsvm
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np


def _field_sizes(num_features: int, nfields: int) -> np.ndarray:
    """Field cardinalities growing geometrically, summing to num_features."""
    if nfields > num_features:
        raise ValueError(f"nnz_per_row={nfields} must be <= num_features={num_features}")
    w = np.geomspace(1.0, 4096.0, nfields)
    sizes = np.maximum(1, np.floor(w / w.sum() * num_features)).astype(np.int64)
    sizes[-1] += num_features - sizes.sum()
    while sizes[-1] < 1:  # tiny num_features: borrow from the largest fields
        k = int(np.argmax(sizes[:-1]))
        sizes[k] -= 1
        sizes[-1] += 1
    return sizes


class AvazuModel:
    """The hidden generator: field layout, Zipf CDFs and the true sparse linear model."""

    def __init__(self, num_features=1_000_000, nnz_per_row=15, seed=0, alpha=1.1,
                 density=0.2, bias=-1.6):
        rng = np.random.default_rng(seed)
        self.num_features = int(num_features)
        self.nfields = int(nnz_per_row)
        self.sizes = _field_sizes(self.num_features, self.nfields)
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]])
        self.perm = rng.permutation(self.num_features).astype(np.int64)
        self.cdfs = []
        for s in self.sizes:
            p = np.arange(1, s + 1, dtype=np.float64) ** -alpha
            c = np.cumsum(p)
            self.cdfs.append(c / c[-1])
        mask = rng.random(self.num_features) < density
        self.w = np.where(mask, rng.normal(0.0, 1.5, self.num_features), 0.0)
        self.bias = bias

    def sample(self, rows: int, rng) -> tuple[np.ndarray, np.ndarray]:
        """(labels uint8 [rows], indices int64 [rows, nfields] sorted per row)."""
        idx = np.empty((rows, self.nfields), dtype=np.int64)
        for f in range(self.nfields):
            r = np.searchsorted(self.cdfs[f], rng.random(rows), side="right")
            np.minimum(r, self.sizes[f] - 1, out=r)
            idx[:, f] = self.perm[self.starts[f] + r]
        idx.sort(axis=1)
        logit = self.w[idx].sum(axis=1) + self.bias
        prob = 1.0 / (1.0 + np.exp(-logit))
        labels = (rng.random(rows) < prob).astype(np.uint8)
        return labels, idx


def _format_block(labels: np.ndarray, idx: np.ndarray) -> bytes:
    """Render rows as '<label> <i>:1 <i>:1 ...\\n' with vectorized digit scattering."""
    rows, k = idx.shape
    flat = idx.ravel()
    ndig = np.ones(flat.shape, dtype=np.int64)
    t = flat // 10
    while np.any(t):
        ndig += t > 0
        t //= 10
    tok_len = ndig + 3  # ' ' + digits + ':1'
    row_len = 1 + tok_len.reshape(rows, k).sum(axis=1) + 1  # label ... '\n'
    row_off = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(row_len, out=row_off[1:])
    out = np.empty(int(row_off[-1]), dtype=np.uint8)
    out[row_off[:-1]] = labels + ord("0")
    out[row_off[1:] - 1] = ord("\n")
    # token start offsets: row start + 1 + cumulative lengths of earlier tokens in the row
    cum = np.cumsum(tok_len.reshape(rows, k), axis=1) - tok_len.reshape(rows, k)
    tok_off = (row_off[:-1, None] + 1 + cum).ravel()
    out[tok_off] = ord(" ")
    end = tok_off + 1 + ndig  # one past the last digit
    out[end] = ord(":")
    out[end + 1] = ord("1")
    v = flat.copy()
    for j in range(int(ndig.max())):
        m = ndig > j
        out[end[m] - 1 - j] = (v[m] % 10) + ord("0")
        v //= 10
    return out.tobytes()


def generate(path, rows, num_features=1_000_000, nnz_per_row=15, seed=0, alpha=1.1,
             block_rows=200_000):
    """Write ``rows`` Avazu-shaped LibSVM lines to ``path``; return the bytes written."""
    model = AvazuModel(num_features, nnz_per_row, seed, alpha)
    rng = np.random.default_rng(seed + 1)
    written = 0
    with open(path, "wb") as f:
        for start in range(0, rows, block_rows):
            n = min(block_rows, rows - start)
            labels, idx = model.sample(n, rng)
            buf = _format_block(labels, idx)
            f.write(buf)
            written += len(buf)
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--features", type=int, default=1_000_000)
    ap.add_argument("--nnz", type=int, default=15)
    ap.add_argument("--alpha", type=float, default=1.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="avazu.libsvm")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    nbytes = generate(args.out, args.rows, args.features, args.nnz, args.seed, args.alpha)
    dt = time.perf_counter() - t0
    print(json.dumps({"bench": "gen_avazu", "rows": args.rows, "features": args.features,
                      "bytes": nbytes, "seconds": round(dt, 3),
                      "MB_per_s": round(nbytes / dt / 1e6, 1),
                      "path": os.path.abspath(args.out)}))


if __name__ == "__main__":
    main()
