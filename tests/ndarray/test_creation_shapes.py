"""nd.zeros / nd.ones / nd.sparse.zeros and tile refuse the shape () and zero-size shapes
unless NumPy shapes are on, as MXNet 1.9.1 does; nd.empty and nd.array accept them."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import MXNetError

nd = mx.nd


@pytest.mark.parametrize("make,shape", [
    (nd.zeros, ()), (nd.zeros, (0, 3)), (nd.ones, ()), (nd.ones, (2, 0)),
    (lambda s: nd.sparse.zeros("csr", s), (0, 3))])
def test_scalar_and_zero_size_creation_needs_np_shape(make, shape):
    with pytest.raises(MXNetError, match="inferring shapes failed"):
        make(shape)
    with mx.np_shape():
        assert make(shape).shape == shape


def test_empty_and_array_give_zero_size_arrays():
    assert nd.empty((0, 3)).shape == (0, 3)
    assert nd.array(np.zeros((0, 3))).shape == (0, 3)


def test_tile_with_a_zero_rep():
    x = nd.ones((2, 2))
    with pytest.raises(MXNetError, match="tile inferring shapes failed"):
        nd.tile(x, reps=(1, 0))
    with mx.np_shape():
        assert nd.tile(x, reps=(1, 0)).shape == (2, 0)
