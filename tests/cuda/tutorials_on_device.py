"""The tutorials' MLP and CNN training (``tests/tutorials``) on a device context, against
the CPU: ``python tests/cuda/tutorials_on_device.py cudnn`` (run by the ``gpu`` test in
``test_cuda_gpu.py``; with ``NNABLA_CUDA_EMULATE=1`` it runs on the emulation). Prints
``ok`` when both train (the loss falls as the tutorial shows) and follow the CPU run."""
import contextlib
import io
import pathlib
import sys

import numpy as np

TESTS = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS / "tutorials"), str(TESTS / "tutorial_data")]

import nnabla as nn  # noqa: E402
import test_nnabla_by_examples as tutorial  # noqa: E402
import tiny_digits  # noqa: E402
from nnabla.ext_utils import get_extension_context  # noqa: E402


def train(backend, build, steps, learning_rate):
    """The tutorial's training loop of ``build`` on ``backend``: (printed losses, parameters)."""
    nn.clear_parameters()
    np.random.seed(0)
    nn.random.seed(0)                  # parameter initializers draw from nnabla.random.prng
    nn.set_default_context(get_extension_context(backend))
    digits = tiny_digits.load_digits(n_class=10)
    data = tiny_digits.data_iterator_tiny_digits(digits, batch_size=64, shuffle=True,
                                                 rng=np.random.RandomState(0))
    img, label = data.next()
    x, t = nn.Variable(img.shape), nn.Variable(label.shape)
    y, _ = build(x)
    loss = tutorial.logreg_loss(y, t)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        tutorial.make_training(x, t, loss, data)(steps, learning_rate)
    params = {k: v.d.copy() for k, v in nn.get_parameters(grad_only=False).items()}
    return tutorial.printed_losses(out.getvalue()), params


def main(backend):
    for build, steps, learning_rate in ((tutorial.mlp, 1000, 1e-2), (tutorial.cnn, 200, 1e-1)):
        losses, params = train(backend, build, steps, learning_rate)
        ref_losses, ref_params = train("cpu", build, steps, learning_rate)
        assert losses[0] > 2.0 and losses[-1] < 1.5, (build.__name__, losses)
        np.testing.assert_allclose(losses[0], ref_losses[0], rtol=1e-4)
        np.testing.assert_allclose(losses, ref_losses, rtol=0.1, atol=0.05)
        assert params.keys() == ref_params.keys()
        print(build.__name__, "losses", losses, "cpu", ref_losses)
    print("ok")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "cudnn")
