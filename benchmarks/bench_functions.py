"""Per-function micro benchmarks: forward + backward of one function in a static graph, ms.

Shapes are those of the deep CNN of the static-vs-dynamic tutorial (batch 64,
128 channels, 8x8 maps). Cases (one per process, see ``run.py``): ``fn_convolution``,
``fn_max_pooling``, ``fn_average_pooling``, ``fn_batch_normalization``, ``fn_affine``,
``fn_tanh``.
"""
import _harness
import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import numpy as np

MAPS = (64, 128, 8, 8)


def _time_forward_backward(build, shape, quick):
    """Build ``y = build(x)`` for a random x of ``shape``; time forward + backward in ms."""
    nn.seed(0)
    x = nn.Variable.from_numpy_array(
        np.random.RandomState(0).randn(*shape).astype(np.float32), need_grad=True)
    y = build(x)

    def step():
        y.forward()
        y.backward()

    _harness.emit(_harness.seconds_per_call(step, 5 if quick else 30, warmup=2) * 1e3, "ms")


CASES = {
    "fn_convolution": lambda quick: _time_forward_backward(
        lambda x: PF.convolution(x, 128, (3, 3), pad=(1, 1)), MAPS, quick),
    "fn_max_pooling": lambda quick: _time_forward_backward(
        lambda x: F.max_pooling(x, (2, 2)), MAPS, quick),
    "fn_average_pooling": lambda quick: _time_forward_backward(
        lambda x: F.average_pooling(x, (2, 2)), MAPS, quick),
    "fn_batch_normalization": lambda quick: _time_forward_backward(
        lambda x: PF.batch_normalization(x), MAPS, quick),
    "fn_affine": lambda quick: _time_forward_backward(
        lambda x: PF.affine(x, 1024), (64, 512, 2, 2), quick),
    "fn_tanh": lambda quick: _time_forward_backward(F.tanh, MAPS, quick),
}

if __name__ == "__main__":
    _harness.run_case(CASES)
