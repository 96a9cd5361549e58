"""MXNet's Reshape shape codes (0, -1, -2, -3, -4, reverse)."""
from __future__ import annotations

import math

from ...base import ShapeError


def reshape_target(src, spec, reverse=False):
    """Resolve a Reshape ``shape`` spec against the source shape ``src``."""
    src, spec = tuple(src), tuple(spec)
    try:
        return _resolve(src, spec, reverse)
    except IndexError:
        raise ShapeError(f"Reshape: shape codes {spec} read more dims than the source shape "
                         f"{src} has") from None


def _resolve(src, spec, reverse):
    """reshape_target's body (an IndexError means the codes ran past the source dims)."""
    if reverse:
        # MXNet reverses the code list as it is: (16, 4, -4) reads as (-4, 4, 16)
        res = _resolve(src[::-1], spec[::-1], False)
        return res[::-1]
    out, i, j, infer = [], 0, 0, -1
    while j < len(spec):
        c = spec[j]
        if c == 0:
            out.append(src[i])
            i += 1
        elif c == -1:
            if infer >= 0:
                raise ShapeError(f"Reshape: one and only one dim can be inferred, got {spec}")
            infer = len(out)
            out.append(1)
            i += 1
        elif c == -2:
            out.extend(src[i:])
            i = len(src)
        elif c == -3:
            out.append(src[i] * src[i + 1])
            i += 2
        elif c == -4:
            if j + 2 >= len(spec):
                raise ShapeError(f"Reshape: -4 in {spec} needs two values after it (the split "
                                 "factors)")
            d1, d2 = spec[j + 1], spec[j + 2]
            if d1 == -1:
                d1 = src[i] // d2
            if d2 == -1:
                d2 = src[i] // d1
            if d1 * d2 != src[i]:
                raise ShapeError(f"Reshape: -4 split {spec[j + 1]}x{spec[j + 2]} does not match "
                                 f"dim {src[i]}")
            out.extend([d1, d2])
            i += 1
            j += 2
        elif c > 0:
            out.append(int(c))
            i += 1
        else:
            raise ShapeError(f"Reshape: invalid shape code {c} in {spec}")
        j += 1
    total = int(math.prod(src))
    if infer >= 0:
        rest = int(math.prod(d for k, d in enumerate(out) if k != infer))
        if rest == 0 or total % rest:
            raise ShapeError(f"Reshape: cannot reshape {src} into {spec}")
        out[infer] = total // rest
    if math.prod(out) != total:
        raise ShapeError(f"Reshape: target shape {tuple(out)} (from {spec}) has a different size "
                         f"than source shape {src}")
    return tuple(out)

