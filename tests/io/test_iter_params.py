"""Iterator parameters: a non-positive batch size or non-numeric data is a typed error."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import ParamError


@pytest.mark.parametrize("bs", [0, -1, 2.5, "4", True])
def test_bad_batch_sizes(tmp_path, bs):
    with pytest.raises(ParamError, match=f"NDArrayIter: batch_size must be a positive integer, "
                                         f"got {bs!r}"):
        mx.io.NDArrayIter(np.ones((5, 3)), batch_size=bs)
    path = tmp_path / "d.csv"
    path.write_text("1,2,3\n")
    with pytest.raises(ParamError, match="CSVIter: batch_size"):
        mx.io.CSVIter(data_csv=str(path), data_shape=(3,), batch_size=bs)
    with pytest.raises(ParamError, match="BatchSampler: batch_size"):
        mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(np.ones((4, 2))), batch_size=bs)
    assert issubclass(ParamError, ValueError)   # `except ValueError` keeps catching it


def test_bad_data_and_last_batch_handle():
    with pytest.raises(TypeError, match="dtype <U3.*numbers"):
        mx.io.NDArrayIter(np.array(["abc", "def"]), batch_size=1)
    with pytest.raises(ParamError, match="last_batch_handle must be"):
        mx.io.NDArrayIter(np.ones((5, 3)), batch_size=2, last_batch_handle="foo")
