"""Shape inference and bad-input errors of the composite and sampling layers."""
import nnabla as nn
import nnabla.functions as F
import numpy as np
import pytest
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer


def _shapes(name, shapes, **args):
    spec = SPECS[name]
    return infer(spec, [None if s is None else tuple(s) for s in shapes],
                 bind_args(spec, args))[1]


def _fused(bias=None, stats=(None,) * 4, z=None, **args):
    return _shapes("FusedConvolution", [(2, 4, 5, 5), (6, 4, 3, 3), bias, *stats, z], **args)


def test_fused_convolution_pads_before_convolving():
    assert _fused(pad=(1, 2)) == ((2, 6, 5, 7),)
    assert _fused(pad=(2, 1, 0, 0)) == ((2, 6, 6, 3),)


@pytest.mark.parametrize("kwargs, message", [
    ({"pad": (1, 1, 1)}, "'pad'"),
    ({"stats": [(1, 6, 1, 1), None, None, None]}, "all given"),
    ({"stats": [(1, 5, 1, 1)] * 4}, "'beta' has shape"),
    ({"bias": (6,), "stats": [(1, 6, 1, 1)] * 4}, "'bias'"),
    ({"z": (2, 6, 3, 4)}, "'z' has shape"),
    ({"nonlinearity": "gelu"}, "'nonlinearity'"),
    ({"nonlinearity": "elu"}, "'nonlinearity_args'"),
    ({"pad_mode": "wrap"}, "'pad_mode'"),
])
def test_fused_convolution_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        _fused(**kwargs)


def test_deformable_convolution_checks_offset_and_mask():
    x, w = (2, 4, 6, 6), (4, 2, 3, 3)
    assert _shapes("DeformableConvolution", [x, w, (2, 36, 6, 6), None, None],
                   group=2, deformable_group=2) == ((2, 4, 4, 4),)
    w = (4, 4, 3, 3)
    with pytest.raises(ValueError, match="'offset' has shape"):
        _shapes("DeformableConvolution", [x, w, (2, 18, 4, 4), None, None])
    with pytest.raises(ValueError, match="'mask' has shape"):
        _shapes("DeformableConvolution", [x, w, (2, 18, 6, 6), (2, 18, 6, 6), None])
    with pytest.raises(ValueError, match="channel_last"):
        _shapes("DeformableConvolution", [x, w, (2, 18, 6, 6), None, None], channel_last=True)


def test_adaptive_separable_convolution_needs_one_kernel_per_output_pixel():
    assert _shapes("AdaptiveSeparableConvolution",
                   [(2, 3, 8, 8), (2, 4, 5, 7), (2, 2, 5, 7)]) == ((2, 3, 5, 7),)
    with pytest.raises(ValueError, match="'vertical_kernel' has shape"):
        _shapes("AdaptiveSeparableConvolution", [(2, 3, 8, 8), (2, 4, 5, 5), (2, 2, 5, 7)])


def test_roi_align_shapes_and_bad_boxes():
    assert _shapes("RoiAlign", [(2, 3, 9, 9), (4, 5)], output_size=(2, 3)) == ((4, 3, 2, 3),)
    assert _shapes("RoiAlign", [(2, 9, 9, 3), (4, 5)], output_size=(2, 3),
                   channel_last=True) == ((4, 2, 3, 3),)
    with pytest.raises(ValueError, match="'boxes' has shape"):
        _shapes("RoiAlign", [(2, 3, 9, 9), (4, 4)], output_size=(2, 3))


def test_roi_align_rejects_out_of_range_batch_index():
    x = nn.NdArray.from_numpy_array(np.ones((1, 1, 4, 4), np.float32))
    boxes = nn.NdArray.from_numpy_array(np.array([[3, 0, 0, 2, 2]], np.float32))
    with pytest.raises(ValueError, match="batch index 3"):
        F.roi_align(x, boxes, (2, 2))


@pytest.mark.parametrize("params, expected", [
    ({}, (1, 1, 1, 5, 5)), ({"shift": 2, "shift_step": 2}, (1, 3, 3, 5, 5)),
    ({"patch": 4, "patch_step": 2, "padding": 2}, (1, 1, 1, 3, 3)),
])
def test_patch_correlation_output_shape(params, expected):
    x = nn.Variable((1, 2, 5, 5))
    assert F.patch_correlation(x, x, **params).shape == expected


def test_patch_correlation_rejects_mismatched_inputs():
    with pytest.raises(ValueError, match="'x2' has shape"):
        F.patch_correlation(nn.Variable((1, 2, 5, 5)), nn.Variable((1, 2, 5, 4)))
    with pytest.raises(ValueError, match="'patch'"):
        _shapes("PatchCorrelation", [(1, 3, 3, 2), (1, 3, 3, 2)], patch=(4, 4))


def test_max_pooling_backward_needs_dy_of_the_pooled_shape():
    assert _shapes("MaxPoolingBackward", [(2, 3, 2, 2), (2, 3, 4, 5)],
                   kernel=(2, 2)) == ((2, 3, 4, 5),)
    with pytest.raises(ValueError, match="'dy' has shape"):
        _shapes("MaxPoolingBackward", [(2, 3, 3, 2), (2, 3, 4, 5)], kernel=(2, 2))
