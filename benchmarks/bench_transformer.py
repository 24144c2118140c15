"""Training step of a 2-layer Transformer encoder (d 256, 8 heads, feed-forward 1024, GELU,
post-norm) on a batch of 8 sequences of 128 steps; squared-error loss against a fixed
target, Adam.

Case (one per process, see ``run.py``): ``transformer_train``: a static graph,
``forward(clear_no_need_grad=True)``, ``zero_grad``, ``backward(clear_buffer=True)``,
``update``. Emits the median ms per step after one warm-up step (``value``), the RSS
high-water mark (``peak_mb``) and its growth over the steps (``rss_mb``). The network is
``nets.transformer_encoder``; ``torch_transformer.py`` is the PyTorch twin.
"""
import statistics

import _gpu
import _harness
import nnabla as nn
import nnabla.functions as F
import nnabla.solvers as S
import numpy as np
from nets import transformer_encoder

BATCH, TIME, DIM = 8, 128, 256


def data():
    """A fixed input (B, T, D) and target of the same shape (shared with the twin)."""
    rng = np.random.RandomState(0)
    return (rng.standard_normal((BATCH, TIME, DIM)).astype(np.float32),
            rng.standard_normal((BATCH, TIME, DIM)).astype(np.float32))


def transformer_train(quick):
    """ms per training step of the encoder."""
    nn.seed(0)
    inputs, targets = data()
    x = nn.Variable(inputs.shape)
    t = nn.Variable(targets.shape)
    loss = F.mean(F.squared_error(transformer_encoder(x), t))
    solver = S.Adam(alpha=1e-4)
    solver.set_parameters(nn.get_parameters())

    def step():
        x.d, t.d = inputs, targets
        loss.forward(clear_no_need_grad=True)
        solver.zero_grad()
        loss.backward(clear_buffer=True)
        solver.update()

    before = _harness.max_rss_mb()
    times = _harness.seconds_per_call_each(_harness.synchronized(step), 3 if quick else 10,
                                           warmup=1)
    if not np.isfinite(loss.d).all():
        raise RuntimeError("the Transformer encoder produced a non-finite loss")
    ms = statistics.median(times) * 1e3
    _harness.emit(ms, "ms/step", rss_mb=_harness.max_rss_mb() - before,
                  per_iteration=times)


CASES = {"transformer_train": transformer_train}

if __name__ == "__main__":
    _harness.run_case(CASES, device_setup=_gpu.use_nnabla)
