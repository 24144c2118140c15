"""Kernel-level checks: each CPU kernel against its reference, without the engine."""
import itertools

import nnabla as nn
import nnabla.functions as F
import numpy as np
import pytest

from nnabla.testing.function_cases import ALL_CASES
from nnabla_ext.cpu.kernels import CPU_KERNELS, GENERIC, native
from kernel_harness import check_backward, check_forward


@pytest.mark.parametrize("case", [c for c in ALL_CASES if c.ref is not None], ids=str)
def test_kernel_forward_matches_reference(case):
    check_forward(case)


@pytest.mark.parametrize("case", [c for c in ALL_CASES if c.grad], ids=str)
def test_kernel_backward_matches_central_differences(case):
    check_backward(case)


# The CPU table runs these functions on C++ kernels; the generic numpy kernels they override
# are still what numpy-like backends reuse, so they meet the same references.
OVERRIDDEN = [c for c in ALL_CASES if c.name in native.KERNELS]


@pytest.mark.parametrize("case", [c for c in OVERRIDDEN if c.ref is not None], ids=str)
def test_generic_kernel_forward_matches_reference(case):
    check_forward(case, table=GENERIC)


@pytest.mark.parametrize("case", [c for c in OVERRIDDEN if c.grad], ids=str)
def test_generic_kernel_backward_matches_central_differences(case):
    check_backward(case, table=GENERIC)


def test_the_native_kernels_override_generic_ones():
    assert OVERRIDDEN and all(CPU_KERNELS[c.name] is not GENERIC[c.name] for c in OVERRIDDEN)


def _direct_convolution(x, w, pad, stride, dilation, group):
    """One scalar sum per output element, straight from the definition (no tap slicing)."""
    n, channels, height, width = x.shape
    out_channels, per_group, kh, kw = w.shape
    oh = (height + 2 * pad[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (width + 2 * pad[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, out_channels, oh, ow))
    for b, o, i, j in itertools.product(range(n), range(out_channels), range(oh), range(ow)):
        g = o // (out_channels // group)
        for c, p, q in itertools.product(range(per_group), range(kh), range(kw)):
            r = i * stride[0] - pad[0] + p * dilation[0]
            s = j * stride[1] - pad[1] + q * dilation[1]
            if 0 <= r < height and 0 <= s < width:
                y[b, o, i, j] += float(w[o, c, p, q]) * float(x[b, g * per_group + c, r, s])
    return y


def _direct_deconvolution(x, w, pad, stride, dilation, group):
    """Each input element scattered through the kernel, one scalar at a time."""
    n, channels, height, width = x.shape
    _, per_group, kh, kw = w.shape
    oh = (height - 1) * stride[0] - 2 * pad[0] + dilation[0] * (kh - 1) + 1
    ow = (width - 1) * stride[1] - 2 * pad[1] + dilation[1] * (kw - 1) + 1
    y = np.zeros((n, per_group * group, oh, ow))
    for b, c, i, j in itertools.product(range(n), range(channels), range(height), range(width)):
        g = c // (channels // group)
        for o, p, q in itertools.product(range(per_group), range(kh), range(kw)):
            r = i * stride[0] - pad[0] + p * dilation[0]
            s = j * stride[1] - pad[1] + q * dilation[1]
            if 0 <= r < oh and 0 <= s < ow:
                y[b, g * per_group + o, r, s] += float(w[c, o, p, q]) * float(x[b, c, i, j])
    return y


GEOMETRY = dict(pad=(1, 2), stride=(2, 1), dilation=(1, 2), group=2)


def test_convolution_matches_a_direct_sum_per_output_element():
    rng = np.random.RandomState(5)
    x, w = rng.randn(2, 4, 6, 7).astype(np.float32), rng.randn(6, 2, 3, 2).astype(np.float32)
    y = F.convolution(nn.Variable.from_numpy_array(x), nn.Variable.from_numpy_array(w),
                      **GEOMETRY)
    y.forward()
    np.testing.assert_allclose(y.d, _direct_convolution(x, w, **GEOMETRY), rtol=1e-5, atol=1e-5)


def test_deconvolution_matches_a_direct_scatter_per_input_element():
    rng = np.random.RandomState(6)
    x, w = rng.randn(2, 4, 4, 3).astype(np.float32), rng.randn(4, 3, 3, 2).astype(np.float32)
    y = F.deconvolution(nn.Variable.from_numpy_array(x), nn.Variable.from_numpy_array(w),
                        **GEOMETRY)
    y.forward()
    np.testing.assert_allclose(y.d, _direct_deconvolution(x, w, **GEOMETRY), rtol=1e-5,
                               atol=1e-5)
