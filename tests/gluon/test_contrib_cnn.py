"""gluon.contrib.cnn deformable convolution blocks (values probed on MXNet 1.9.1)."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.gluon import nn
from sparsym.gluon.contrib.cnn import DeformableConvolution, ModulatedDeformableConvolution


def test_deformable_convolution_starts_as_a_convolution():
    # zero-initialised offsets sample the regular grid: the output is a Convolution's
    x = mx.nd.array(np.random.default_rng(0).uniform(size=(2, 4, 7, 6)))
    dcn = DeformableConvolution(6, kernel_size=(3, 3), padding=1, num_deformable_group=2)
    conv = nn.Conv2D(6, (3, 3), padding=1, in_channels=4)
    dcn.initialize()
    conv.initialize()
    dcn(x)
    dcn.deformable_conv_weight.set_data(conv.weight.data())
    dcn.deformable_conv_bias.set_data(mx.nd.array(np.arange(6.0)))
    conv.bias.set_data(mx.nd.array(np.arange(6.0)))
    assert sorted(dcn.collect_params().keys()) == [
        "deformable_conv0_deformable_conv_bias", "deformable_conv0_deformable_conv_weight",
        "deformable_conv0_offset_bias", "deformable_conv0_offset_weight"]
    assert dcn.offset_weight.shape == (36, 4, 3, 3)
    dcn.hybridize()
    np.testing.assert_allclose(dcn(x).asnumpy(), conv(x).asnumpy(), rtol=1e-5, atol=1e-5)
    assert repr(dcn) == ("DeformableConvolution(4 -> 6, kernel_size=(3, 3), stride=(1, 1), "
                         "padding=(1, 1))")


def test_modulated_block_splits_offsets_and_masks():
    net = ModulatedDeformableConvolution(3, kernel_size=(3, 2), use_bias=False,
                                         offset_use_bias=False)
    net.initialize()
    x = mx.nd.ones((1, 2, 5, 5))
    y = net(x)
    assert y.shape == (1, 3, 3, 4)
    assert net.offset_weight.shape == (18, 2, 3, 2)  # 3 channels (dy, dx, mask) per tap
    assert net.offset_bias is None and net.deformable_conv_bias is None
    with pytest.raises(ValueError, match="NCHW"):
        DeformableConvolution(3, layout="NHWC")
