"""MXNet modules sparsym does not implement import, and then say so at first use."""
import pytest

import sparsym as mx
from sparsym.base import UnsupportedFeatureError


def test_onnx_and_quantization_import_and_refuse_clearly():
    import sparsym.contrib.onnx as onnx_mxnet
    from sparsym.contrib import quantization
    with pytest.raises(NotImplementedError, match="ONNX import/export is not implemented"):
        onnx_mxnet.export_model(None, None, None)
    with pytest.raises(UnsupportedFeatureError, match="quantize_model: INT8 quantization"):
        quantization.quantize_model(None)
    assert mx.contrib.onnx is onnx_mxnet



def test_hasattr_probes_answer_false():
    # scripts probe features with hasattr(): an AttributeError too, so this is False
    assert not hasattr(mx.contrib.onnx, "import_model")
    assert not hasattr(mx.contrib.quantization, "quantize_net")
