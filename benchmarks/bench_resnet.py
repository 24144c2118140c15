"""Peak memory (and step time) of ResNet-18 at batch 32 on CIFAR-sized input (3x32x32).

Cases (one per process, see ``run.py``):

* ``resnet18_train``: static graph, one Momentum SGD step (``forward(clear_no_need_grad=
  True)``, ``zero_grad``, ``backward(clear_buffer=True)``, ``update``).
* ``resnet18_dynamic``: the same step written for dynamic mode: the graph is built under
  ``nn.auto_forward()`` every step, then ``backward(clear_buffer=True)`` and ``update``.
* ``resnet18_infer``: static inference graph (running BN statistics), input without
  gradient, ``forward(clear_buffer=True)``.
* ``resnet18_infer_b1``: the same at batch 1 (latency), 30 measured steps (10 quick).

Each case emits, from a fresh process, the growth of the RSS high-water mark
(``ru_maxrss``) over one warm-up step and the measured steps, counted from after the
parameters, the solver state, the static graph and the batch were created (``value``,
MiB); the absolute high-water mark at the end (``peak_mb``, MiB); and the median time of
the steps after the warm-up (``seconds``, s/iter; ``ms``, the same in ms/step). The
network is in ``nets.py``; ``torch_resnet.py`` is the PyTorch twin.
"""
import statistics
import time

import _gpu
import _harness
import nnabla as nn
import nnabla.functions as F
import nnabla.solvers as S
import numpy as np
from nets import resnet18

BATCH = 32
SHAPE = (BATCH, 3, 32, 32)
CLASSES = 10


def _batch(batch=BATCH):
    """A fixed random batch: images (B, 3, 32, 32) and labels (B, 1)."""
    rng = np.random.RandomState(0)
    images = rng.standard_normal((batch,) + SHAPE[1:]).astype(np.float32)
    labels = rng.randint(0, CLASSES, size=(batch, 1)).astype(np.int32)
    return images, labels


def _training_setup(dynamic):
    """Parameters, solver and the step function of the static or dynamic training loop."""
    images, labels = _batch()
    x = nn.Variable(SHAPE)
    t = nn.Variable((BATCH, 1))
    static_loss = F.mean(F.softmax_cross_entropy(resnet18(x, CLASSES), t))  # parameters
    solver = S.Momentum(lr=0.1, momentum=0.9)
    solver.set_parameters(nn.get_parameters())
    if dynamic:
        del static_loss

        def step():
            x.d, t.d = images, labels
            with nn.auto_forward():
                loss = F.mean(F.softmax_cross_entropy(resnet18(x, CLASSES), t))
            solver.zero_grad()
            loss.backward(clear_buffer=True)
            solver.update()
            return loss
    else:
        def step():
            x.d, t.d = images, labels
            static_loss.forward(clear_no_need_grad=True)
            solver.zero_grad()
            static_loss.backward(clear_buffer=True)
            solver.update()
            return static_loss
    return step


def _inference_setup(batch=BATCH):
    """Parameters, the static inference graph and its step function."""
    images, _ = _batch(batch)
    x = nn.Variable(images.shape, need_grad=False)
    y = resnet18(x, CLASSES, test=True)

    def step():
        x.d = images
        y.forward(clear_buffer=True)
        return y

    return step


def _measure(step, quick, steps=3):
    """Emit RSS growth, absolute peak RSS and step time of one warm-up and the steps."""
    steps = max(2, steps // 3) if quick else steps
    step = _harness.synchronized(step)      # the step itself on the CPU
    before = _harness.max_rss_mb()
    result = step()  # warm-up: allocates the buffers, counted in the high-water mark
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        result = step()
        times.append(time.perf_counter() - start)
    if not np.all(np.isfinite(result.d)):
        raise RuntimeError("ResNet-18 produced non-finite values")
    peak = _harness.max_rss_mb()
    seconds = statistics.median(times)
    _harness.emit(peak - before, "MiB", peak_mb=peak, start_mb=before,
                  seconds=seconds, ms=seconds * 1e3, per_iteration=times)


def _case(setup, steps=3):
    def run(quick):
        nn.seed(0)
        _measure(setup(), quick, steps)
    return run


CASES = {
    "resnet18_train": _case(lambda: _training_setup(False)),
    "resnet18_dynamic": _case(lambda: _training_setup(True)),
    "resnet18_infer": _case(_inference_setup),
    "resnet18_infer_b1": _case(lambda: _inference_setup(1), steps=30),
}

if __name__ == "__main__":
    _harness.run_case(CASES, device_setup=_gpu.use_nnabla)
