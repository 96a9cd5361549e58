"""Density-aware dispatch and block-size autotuning for the fused block-sparse ops.

Both decisions are measured on this machine, once, and kept in an in-memory cache (never
on disk):

- **dispatch**: per (op kind, shapes, dtype, geometry, layout, tile) the fused op times
  the dense path, the sparse path with every tile active and with one tile active, and
  interpolates the *block density* at which they cost the same (sparse cost is linear in
  the number of tiles).  Calls whose block density is above it run the dense path.
- **autotune**: per (op kind, shapes, ..., pixel-density bucket) the op times every
  candidate tile on the current mask and keeps the fastest.

Outputs do not depend on either choice (the ops are defined pixel-exactly), so turning
them off only changes speed.  Switches: :func:`set_dispatch`, :func:`set_autotune`, the
environment variables ``SPARSYM_SBNET_DISPATCH=0`` / ``SPARSYM_SBNET_AUTOTUNE=0``, and the
ops' own ``dispatch`` / ``autotune`` parameters.
"""
from __future__ import annotations

import logging
import threading
import time

import numpy as np

from ...base import getenv

logger = logging.getLogger("sparsym")

__all__ = ["set_dispatch", "set_autotune", "dispatch_enabled", "autotune_enabled",
           "clear_cache", "cache_info", "DEFAULT_TILE", "TILE_CANDIDATES"]

DEFAULT_TILE = (16, 16)
# run dense already below the measured break-even density: near it both paths cost the
# same, and a timing error there (measured up to ~25% on a shared machine) must not make
# the op slower than dense
MARGIN = 0.8
# Square output tiles plus two wide ones (long rows suit both layouts' inner loops).
TILE_CANDIDATES = ((4, 4), (8, 8), (12, 12), (16, 16), (24, 24), (32, 32), (8, 32), (16, 48))
# Pixel-density bucket edges of the output mask (the autotuner keeps one tile per bucket).
_BUCKETS = (0.015, 0.03, 0.07, 0.15, 0.25, 0.4, 0.6, 0.8, 0.95)

_lock = threading.Lock()
_flags = {"dispatch": None, "autotune": None}
_thresholds: dict = {}
_tiles: dict = {}
stats = {"threshold_measurements": 0, "autotune_runs": 0}


def _flag(name, env):
    v = _flags[name]
    if v is None:
        return (getenv(env, "1") or "1") not in ("0", "false", "False", "off")
    return v


def dispatch_enabled() -> bool:
    """Whether density-aware dense dispatch is on (default True)."""
    return _flag("dispatch", "SPARSYM_SBNET_DISPATCH")


def autotune_enabled() -> bool:
    """Whether the block-size autotuner is on (default True)."""
    return _flag("autotune", "SPARSYM_SBNET_AUTOTUNE")


def set_dispatch(flag):
    """Turn density-aware dispatch on/off for every fused op; None restores the env default.

    Returns the previous setting.
    """
    prev = _flags["dispatch"]
    _flags["dispatch"] = None if flag is None else bool(flag)
    return prev


def set_autotune(flag):
    """Turn the block-size autotuner on/off; None restores the env default.

    Returns the previous setting.
    """
    prev = _flags["autotune"]
    _flags["autotune"] = None if flag is None else bool(flag)
    return prev


def clear_cache():
    """Forget every measured threshold and tuned tile."""
    with _lock:
        _thresholds.clear()
        _tiles.clear()


def cache_info() -> dict:
    """Copies of the caches: {'thresholds': {key: density}, 'tiles': {key: tile}}."""
    with _lock:
        return {"thresholds": dict(_thresholds), "tiles": dict(_tiles)}


def bucket(pixel_density: float) -> int:
    """Index of the density bucket."""
    return int(np.searchsorted(_BUCKETS, pixel_density, side="right"))


def best_time(fn, repeat=3):
    """Minimum wall time of ``repeat`` calls (robust to bursts of load: ranks candidates)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def median_time(fns, repeat=3):
    """Median wall time of each callable over ``repeat`` interleaved rounds (the typical
    cost, which is what a dispatch decision must compare)."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - t)
    return [float(np.median(t)) for t in times]


def threshold(key, runners, n_tiles) -> float:
    """Block density above which the dense path is faster (cached per key).

    ``runners()`` returns (run_dense, run_sparse_all, run_sparse_one): the dense path and
    the sparse path with all tiles / one tile active; it is called only on a cache miss.
    Returns a value in [0, 1]; 1.0 means the sparse path always wins.
    """
    with _lock:
        v = _thresholds.get(key)
    if v is not None:
        return v
    run_dense, run_sparse_all, run_sparse_one = runners()
    for f in (run_dense, run_sparse_all, run_sparse_one):
        f()   # warm up (numba compilation, workspaces, page faults)
    t_dense, t_all, t_one = median_time((run_dense, run_sparse_all, run_sparse_one), 3)
    lo = 1.0 / max(n_tiles, 1)
    if t_all <= t_dense:
        v = 1.0
    elif t_one >= t_dense or t_all <= t_one:
        v = 0.0
    else:
        v = lo + (t_dense - t_one) / (t_all - t_one) * (1.0 - lo)
    v = float(min(max(v, 0.0), 1.0))
    with _lock:
        _thresholds[key] = v
        stats["threshold_measurements"] += 1
    logger.debug("sbnet dispatch %s: dense %.3g s, sparse all %.3g s, one %.3g s -> %.3f",
                 key, t_dense, t_all, t_one, v)
    return v


def tuned_tile(key, candidates, run_with_tile):
    """Fastest tile among candidates for this key (run_with_tile(tile) runs the sparse path)."""
    with _lock:
        v = _tiles.get(key)
    if v is not None:
        return v
    best, best_t = None, float("inf")
    run_with_tile(candidates[0])   # warm up (compilation, workspaces)
    for tile in candidates:
        t = best_time(lambda tile=tile: run_with_tile(tile), repeat=2)
        if t < best_t:
            best, best_t = tile, t
    with _lock:
        _tiles[key] = best
        stats["autotune_runs"] += 1
    logger.debug("sbnet autotune %s -> tile %s (%.3g s)", key, best, best_t)
    return best


def candidate_tiles(out_hw, stride=(1, 1), kernel=(1, 1)):
    """Distinct candidate tiles clamped to the output size."""
    seen = []
    for t in TILE_CANDIDATES:
        c = (max(1, min(t[0], out_hw[0])), max(1, min(t[1], out_hw[1])))
        if c not in seen:
            seen.append(c)
    return seen
