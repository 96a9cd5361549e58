"""Correlation, ROIPooling, PSROIPooling, BilinearResize2D and bilinear UpSampling through
the public API: shapes and errors as MXNet 1.9.1 gives them (values: the registry sweep,
tests/ops/sweep_cases_spatial.py, and MXNet's records in sweep_ops.npz)."""
from __future__ import annotations

import numpy as np
import pytest

import sparsym as mx


def test_correlation_shapes_and_geometry_errors():
    s = mx.sym.Correlation(mx.sym.var("a"), mx.sym.var("b"), kernel_size=3, max_displacement=1,
                           stride1=2, stride2=1, pad_size=1)
    assert s.infer_shape(a=(1, 1, 5, 7))[1] == [(1, 9, 2, 3)]   # ceil-sized, as MXNet
    x = mx.nd.ones((1, 1, 28, 28))
    assert mx.nd.Correlation(x, x, kernel_size=9).shape == (1, 9, 18, 18)
    with pytest.raises(mx.MXNetError, match="don't fit"):
        mx.nd.Correlation(x, x, kernel_size=27)
    with pytest.raises(mx.MXNetError, match="odd"):
        mx.nd.Correlation(x, x, kernel_size=2)


def test_correlation_of_a_map_with_itself_peaks_at_zero_displacement():
    x = mx.nd.array(np.random.RandomState(0).rand(1, 4, 6, 6) + 0.5)
    y = mx.nd.Correlation(x, x, max_displacement=1, pad_size=1).asnumpy()
    centre = (x.asnumpy() ** 2).mean(axis=1)
    np.testing.assert_allclose(y[0, 4], centre[0], rtol=1e-6)
    d = mx.nd.Correlation(x, x, max_displacement=1, pad_size=1, is_multiply=False).asnumpy()
    assert np.all(d[0, 4] == 0)


def test_roi_pooling_takes_bin_maxima_and_routes_the_gradient_to_them():
    x = mx.nd.arange(16).reshape((1, 1, 4, 4))
    x.attach_grad()
    rois = mx.nd.array([[0, 0, 0, 3, 3], [0, 2, 2, 2, 2]])
    with mx.autograd.record():
        y = mx.nd.ROIPooling(x, rois, pooled_size=(2, 2), spatial_scale=1)
    assert y[0].asnumpy().ravel().tolist() == [5, 7, 13, 15]
    assert y[1].asnumpy().ravel().tolist() == [10] * 4       # a one-pixel ROI
    y.backward(mx.nd.ones(y.shape))
    g = x.grad.asnumpy()[0, 0]
    assert g[1, 1] == g[1, 3] == g[3, 1] == g[3, 3] == 1 and g[2, 2] == 4 and g.sum() == 8


def test_roi_pooling_rejects_a_roi_of_a_missing_image():
    with pytest.raises(IndexError, match="batch index"):
        mx.nd.ROIPooling(mx.nd.ones((1, 1, 4, 4)), mx.nd.array([[2, 0, 0, 1, 1]]),
                         pooled_size=(1, 1), spatial_scale=1)


def test_psroi_pooling_reads_one_channel_per_bin():
    x = mx.nd.array(np.arange(8).reshape(1, 8, 1, 1) * np.ones((1, 8, 4, 4)))
    rois = mx.nd.array([[0, 0, 0, 3, 3]])
    y = mx.nd.contrib.PSROIPooling(x, rois, spatial_scale=1, output_dim=2, pooled_size=2)
    assert y.asnumpy().ravel().tolist() == list(range(8))
    with pytest.raises(mx.MXNetError, match="output_dim"):
        mx.sym.contrib.PSROIPooling(mx.sym.var("d"), mx.sym.var("r"), spatial_scale=1,
                                    output_dim=3, pooled_size=2).infer_shape(
            d=(1, 8, 4, 4), r=(1, 5))


@pytest.mark.parametrize("kw,want", [
    ({"height": 3, "width": 4}, (3, 4)),
    ({"scale_height": 1.5, "scale_width": 0.5}, (7, 3)),
    ({"scale_height": 2.0, "scale_width": 2.0, "mode": "odd_scale"}, (9, 13)),
    ({"mode": "to_even_down"}, (4, 6)), ({"mode": "to_even_up"}, (6, 8)),
    ({"mode": "to_odd_down"}, (5, 7)), ({"mode": "to_odd_up"}, (5, 7))])
def test_bilinear_resize_output_sizes(kw, want):
    y = mx.nd.contrib.BilinearResize2D(mx.nd.ones((2, 3, 5, 7)), **kw)
    assert y.shape == (2, 3) + want
    np.testing.assert_allclose(y.asnumpy(), 1.0, rtol=1e-6)


def test_bilinear_resize_like_and_none_input_slot():
    s = mx.sym.contrib.BilinearResize2D(mx.sym.var("a"), mx.sym.var("b"), mode="like")
    assert s.list_arguments() == ["a", "b"]
    assert s.infer_shape(a=(1, 2, 3, 4), b=(5, 6, 7, 8))[1] == [(1, 2, 7, 8)]
    # MXNet's generated signature (data, like, height, ...): None skips the like input
    t = mx.sym.contrib.BilinearResize2D(mx.sym.var("a"), None, scale_height=2.0,
                                        scale_width=2.0)
    assert t.list_arguments() == ["a"]
    assert t.infer_shape(a=(1, 1, 3, 4))[1] == [(1, 1, 6, 8)]
    with pytest.raises(mx.MXNetError, match="scale_width"):
        mx.nd.contrib.BilinearResize2D(mx.nd.ones((1, 1, 2, 2)), scale_height=2.0)


def test_bilinear_upsampling_creates_its_weight_and_reproduces_bilinear_interpolation():
    up = mx.sym.UpSampling(mx.sym.var("data"), sample_type="bilinear", scale=2, num_filter=2,
                           name="u")
    assert up.list_arguments() == ["data", "u_weight"]
    args, outs, _ = up.infer_shape(data=(1, 2, 3, 3))
    assert args[1] == (2, 1, 4, 4) and outs == [(1, 2, 6, 6)]
    w = mx.nd.zeros((2, 1, 4, 4))
    mx.init.Bilinear()._init_weight("u_weight", w)
    x = mx.nd.ones((1, 2, 3, 3))
    y = mx.nd.UpSampling(x, w, sample_type="bilinear", scale=2, num_filter=2).asnumpy()
    np.testing.assert_allclose(y[0, :, 1:-1, 1:-1], 1.0, rtol=1e-6)  # away from the border


def test_crop_to_a_size_or_like_another_input():
    x = mx.nd.arange(2 * 3 * 6 * 7).reshape((2, 3, 6, 7))
    y = mx.nd.Crop(x, h_w=(3, 4), offset=(1, 2), num_args=1)
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy()[:, :, 1:4, 2:6])
    s = mx.sym.Crop(mx.sym.var("a"), mx.sym.var("b"), num_args=2, center_crop=True)
    assert s.list_arguments() == ["a", "b"]
    assert s.infer_shape(a=(2, 3, 6, 7), b=(1, 1, 2, 5))[1] == [(2, 3, 2, 5)]
    with pytest.raises(mx.MXNetError, match="offset"):
        mx.nd.Crop(x, h_w=(3, 4), offset=(4, 0), num_args=1)


def test_deformable_psroi_pooling_inputs_and_a_constant_map():
    s = mx.sym.contrib.DeformablePSROIPooling(mx.sym.var("d"), mx.sym.var("r"), mx.sym.var("t"),
                                              spatial_scale=0.5, output_dim=2, group_size=3,
                                              pooled_size=3, name="p")
    assert s.list_arguments() == ["d", "r", "t"]
    assert s.infer_shape(d=(2, 18, 8, 9), r=(4, 5), t=(4, 4, 2, 2))[1] == [(4, 2, 3, 3)]
    x = mx.nd.ones((1, 18, 8, 9)) * 3
    y = mx.nd.contrib.DeformablePSROIPooling(x, mx.nd.array([[0, 2, 2, 12, 12]]),
                                             spatial_scale=0.5, output_dim=2, group_size=3,
                                             pooled_size=3, sample_per_part=2, no_trans=True)
    np.testing.assert_allclose(y.asnumpy(), 3.0, rtol=1e-6)   # every sample reads 3
