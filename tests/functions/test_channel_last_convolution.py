"""Channel-last (de)convolutions of the CPU kernels equal the channel-first ones on
transposed data: an independent check of the channel-last GEMM orientation (pixel-major
products written straight into the columns and maps), forward and every gradient."""
import numpy as np
import pytest
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer
from nnabla_ext.cpu.kernels import CPU_KERNELS


def _run(name, shapes, args, xs, dys=None):
    spec = SPECS[name]
    bound, out_shapes = infer(spec, shapes, bind_args(spec, args))
    kernel = CPU_KERNELS[name](spec, bound, shapes, out_shapes)
    (y,) = kernel.forward(xs)
    if dys is None:
        return y, None
    return y, kernel.backward(xs, [y], dys, [True] * len(xs))


FIRST = (0, 3, 1, 2)     # (N, H, W, C) -> (N, C, H, W)
LAST = (0, 2, 3, 1)


@pytest.mark.parametrize("name, x_last, w_last, args", [
    ("Convolution", (3, 7, 6, 8), (6, 3, 3, 8), {"pad": (1, 1)}),
    ("Convolution", (2, 9, 8, 6), (4, 3, 2, 3), {"pad": (1, 0), "stride": (2, 1), "group": 2}),
    ("Convolution", (2, 8, 8, 4), (8, 3, 3, 1), {"pad": (2, 2), "dilation": (2, 2), "group": 4}),
    ("Deconvolution", (2, 5, 4, 6), (6, 3, 3, 4), {"pad": (1, 1), "stride": (2, 2)}),
    ("Deconvolution", (2, 5, 5, 4), (4, 2, 2, 3), {"stride": (2, 1), "group": 2}),
])
def test_channel_last_equals_transposed_channel_first(name, x_last, w_last, args):
    rng = np.random.RandomState(0)
    x = rng.randn(*x_last)
    w = rng.randn(*w_last)
    b = rng.randn(w_last[0] if name == "Convolution" else w_last[-1] * args.get("group", 1))
    y_last, _ = _run(name, [x_last, w_last, b.shape], dict(args, channel_last=True), [x, w, b])
    dy = rng.randn(*y_last.shape)
    y_last, grads_last = _run(name, [x_last, w_last, b.shape], dict(args, channel_last=True),
                              [x, w, b], [dy])
    xf, wf = x.transpose(FIRST), w.transpose(FIRST)
    shapes = [xf.shape, wf.shape, b.shape]
    y_first, grads_first = _run(name, shapes, args,
                                [np.ascontiguousarray(xf), np.ascontiguousarray(wf), b],
                                [np.ascontiguousarray(dy.transpose(FIRST))])
    np.testing.assert_allclose(y_last, y_first.transpose(LAST), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(grads_last[0], grads_first[0].transpose(LAST), rtol=1e-10,
                               atol=1e-10)
    np.testing.assert_allclose(grads_last[1], grads_first[1].transpose(LAST), rtol=1e-10,
                               atol=1e-10)
    np.testing.assert_allclose(grads_last[2], grads_first[2], rtol=1e-10, atol=1e-10)
