"""reset_arrays: set several arrays to zero in place (MXNet 1.9.1's gradient reset)."""
from __future__ import annotations

from ..core.helpers import DNS, Checked, require
from ..core.params import Field
from ..core.registry import Dispatch, OpDef, register


def _check(op, a):
    require(a.num_arrays >= 1, op, f"num_arrays must be positive, got {a.num_arrays}")


def _reset(a, xs):
    for x in xs:
        x[...] = 0  # in place: the arrays themselves are the result (no outputs)
    return ()


register(OpDef(
    "reset_arrays", params=Checked(_check, num_arrays=Field("int", doc="number of arrays")),
    inputs=lambda a: tuple(f"array{i}" for i in range(a.num_arrays)),
    key_var_num_args="num_arrays", num_outputs=0,

    dispatch=(Dispatch((DNS, "..."), (), _reset),),
    infer_shape=lambda a, i, o: (i, o), infer_type=lambda a, i, o: (i, o),
    doc="""Set every input array to zero, in place.

    Parameters
    ----------
    *data : NDArrays (dense)
    num_arrays : int (set automatically)

    Examples
    --------
    >>> import sparsym as mx
    >>> a, b = mx.nd.ones((2,)), mx.nd.ones((3,))
    >>> _ = mx.nd.reset_arrays(a, b, num_arrays=2)
    >>> a.asnumpy().tolist(), b.asnumpy().tolist()
    ([0.0, 0.0], [0.0, 0.0, 0.0])
    """))
