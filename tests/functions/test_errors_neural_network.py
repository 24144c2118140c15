"""Shape inference, defaults and bad-input errors of the neural network layers."""
import numpy as np
import pytest
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer


def _infer(name, shapes, **args):
    spec = SPECS[name]
    return infer(spec, [None if s is None else tuple(s) for s in shapes], bind_args(spec, args))


def _shape(name, shapes, **args):
    return _infer(name, shapes, **args)[1][0]


def test_convolution_defaults_are_resolved_per_spatial_axis():
    args, (y,) = _infer("Convolution", [(2, 3, 8, 8), (4, 3, 3, 3), None])
    assert (args["pad"], args["stride"], args["dilation"]) == ((0, 0), (1, 1), (1, 1))
    assert y == (2, 4, 6, 6)


def test_pooling_stride_defaults_to_kernel_and_pad_to_zeros():
    args, (y,) = _infer("MaxPooling", [(2, 3, 8, 7)], kernel=(2, 3))
    assert (args["stride"], args["pad"]) == ((2, 3), (0, 0))
    assert y == (2, 3, 4, 2)


@pytest.mark.parametrize("shapes, args, expected", [
    ([(2, 3, 9, 9), (4, 3, 3, 3), None], {"pad": (1, 1), "stride": (2, 2)}, (2, 4, 5, 5)),
    ([(2, 3, 9), (4, 3, 3), None], {"dilation": (3,)}, (2, 4, 3)),
    ([(2, 9, 9, 3), (4, 3, 3, 3), None], {"channel_last": True}, (2, 7, 7, 4)),
    ([(2, 3, 2), (4, 3, 3), None], {"stride": (2,)}, (2, 4, 1)),   # C-style truncation
])
def test_convolution_output_size_follows_nnabla(shapes, args, expected):
    assert _shape("Convolution", shapes, **args) == expected


def test_deconvolution_output_size_includes_output_padding():
    y = _shape("Deconvolution", [(2, 4, 5, 5), (4, 3, 3, 3), None], pad=(1, 1), stride=(2, 2),
               output_padding=(1, 0), group=1)
    assert y == (2, 3, 10, 9)


@pytest.mark.parametrize("ignore_border, expected", [(True, (2, 3, 4, 2)), (False, (2, 3, 4, 3))])
def test_pooling_output_size_follows_nnabla(ignore_border, expected):
    y = _shape("AveragePooling", [(2, 3, 7, 5)], kernel=(3, 2), stride=(2, 2), pad=(1, 0),
               ignore_border=ignore_border)
    assert y == expected


def test_mismatched_convolution_weight_names_weight():
    with pytest.raises(ValueError, match=r"F\.convolution: argument 'weight'"):
        _infer("Convolution", [(2, 3, 8, 8), (4, 2, 3, 3), None])
    with pytest.raises(ValueError, match="'weight'"):
        _infer("Convolution", [(2, 3, 8, 8), (4, 3, 3), None])


def test_mismatched_affine_weight_names_weight_and_expected_size():
    with pytest.raises(ValueError, match=r"'weight' has shape \(10, 5\); expected \(12, \.\.\.\)"):
        _infer("Affine", [(2, 3, 4), (10, 5), None])


@pytest.mark.parametrize("name, shapes, args, argname", [
    ("Convolution", [(2, 3, 8, 8), (4, 3, 3, 3), None], {"stride": (0, 1)}, "stride"),
    ("Convolution", [(2, 3, 8, 8), (4, 3, 3, 3), None], {"dilation": (1, -1)}, "dilation"),
    ("Convolution", [(2, 3, 8, 8), (4, 3, 3, 3), None], {"pad": (-1, 0)}, "pad"),
    ("Convolution", [(2, 3, 8, 8), (4, 3, 0, 3), None], {}, "weight"),
    ("Convolution", [(2, 3, 8, 8), (4, 3, 3, 3), None], {"pad": (1,)}, "pad"),
    ("Convolution", [(2, 4, 8, 8), (4, 2, 3, 3), None], {"group": 3}, "group"),
    ("Convolution", [(2, 4, 8, 8), (4, 2, 3, 3), None], {"group": 0}, "group"),
    ("Convolution", [(2, 3, 8, 8), (4, 3, 3, 3), (5,)], {}, "bias"),
    ("Convolution", [(2, 3, 8, 8), (4, 3, 3, 3), None], {"base_axis": 3}, "base_axis"),
    ("Convolution", [(2, 3, 2, 2), (4, 3, 5, 5), None], {}, "pad"),
    ("Deconvolution", [(2, 4, 5, 5), (4, 3, 3, 3), None],
     {"stride": (2, 2), "output_padding": (2, 0)}, "output_padding"),
    ("Deconvolution", [(2, 5, 5, 5), (4, 3, 3, 3), None], {}, "weight"),
    ("DepthwiseConvolution", [(2, 3, 8, 8), (4, 3, 3), None], {}, "weight"),
    ("DepthwiseDeconvolution", [(2, 3, 8, 8), (3, 3, 3), None], {"divisor": 2}, "divisor"),
    ("MaxPooling", [(2, 3, 8, 8)], {"kernel": (0, 2)}, "kernel"),
    ("MaxPooling", [(2, 3, 8, 8)], {"kernel": (2, 2), "stride": (2, 0)}, "stride"),
    ("MaxPooling", [(2, 3, 8, 8)], {"kernel": (2, 2), "pad": (2, 0)}, "pad"),
    ("MaxPooling", [(2, 3, 8, 8)], {"kernel": (2, 2), "pad": (1,)}, "pad"),
    ("MaxPooling", [(8,)], {"kernel": (2, 2)}, "x"),
    ("AveragePooling", [(2, 3, 8, 8)], {"kernel": (2, 2), "pad": (-1, 0)}, "pad"),
    ("SumPooling", [(2, 3, 2, 8)], {"kernel": (5, 2), "stride": (1, 2)}, "kernel"),
    ("Unpooling", [(2, 3, 4, 4)], {"kernel": (2, 0)}, "kernel"),
    ("GlobalAveragePooling", [(5,)], {}, "x"),
])
def test_bad_layer_arguments_raise_naming_the_argument(name, shapes, args, argname):
    with pytest.raises(ValueError, match=f"{SPECS[name].api_name}: argument '{argname}'"):
        _infer(name, shapes, **args)


def test_pooling_kernel_must_be_a_sequence_of_ints():
    with pytest.raises(TypeError, match="'kernel'"):
        _infer("MaxPooling", [(2, 3, 8, 8)], kernel="2x2")


@pytest.mark.parametrize("index", [5, -1])
def test_embed_index_out_of_range_raises_instead_of_reading_garbage(index):
    from nnabla_ext.cpu.kernels import CPU_KERNELS
    spec = SPECS["Embed"]
    args, outs = _infer("Embed", [(3,), (5, 2)])
    kernel = CPU_KERNELS["Embed"](spec, args, [(3,), (5, 2)], outs)
    x0 = np.array([0, index, 1], dtype=np.int64)
    with pytest.raises(ValueError, match=r"F\.embed: argument 'x0' holds index"):
        kernel.forward([x0, np.zeros((5, 2), np.float32)])
