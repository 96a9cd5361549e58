"""MXNet modules sparsym does not implement import, and then say so at first use."""
import pytest

import sparsym as mx
from sparsym.base import UnsupportedFeatureError


def test_quantization_imports_and_refuses_clearly():
    from sparsym.contrib import quantization
    with pytest.raises(UnsupportedFeatureError, match="quantize_model: INT8 quantization"):
        quantization.quantize_model(None)
    assert mx.contrib.quantization is quantization


def test_hasattr_probes_answer_false():
    # scripts probe features with hasattr(): an AttributeError too, so this is False
    assert not hasattr(mx.contrib.quantization, "quantize_net")
