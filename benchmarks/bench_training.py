"""Training-step benchmarks: the tutorial MLP and the deep CNN of static-vs-dynamic.

Cases (one per process, see ``run.py``):

* ``mlp_step``: one SGD step (forward, zero_grad, backward, weight decay, update) of
  the "NNabla by Examples" MLP (hidden layers 16, 32, 16; batch 64 of 8x8 digits), ms.
* ``deep_cnn_{static,dynamic}``: one Adam step of the "unnecessarily deep" CNN of the
  static-vs-dynamic tutorial, written exactly as the tutorial's loops, s.
* ``deep_cnn_{static,dynamic}_rss``: growth of the RSS high-water mark over those steps
  (parameters already created), MiB.
* ``deep_cnn_{static,dynamic}_traced``: tracemalloc peak over those steps, MiB (only
  meaningful for an engine whose arrays are numpy buffers).

Batches are prepared up front, so the data iterator is not part of the measurement.
The networks are in ``nets.py``.
"""
import _harness
import nnabla as nn
import nnabla.functions as F
import nnabla.solvers as S
from nets import deep_cnn, mlp


def mlp_step(quick):
    """ms per training step of the tutorial MLP."""
    nn.seed(0)
    batches = [_harness.digits_batch(64, i) for i in range(8)]
    x = nn.Variable((64, 1, 8, 8))
    t = nn.Variable((64, 1))
    loss = F.mean(F.softmax_cross_entropy(mlp(x), t))
    solver = S.Sgd(1e-2)
    solver.set_parameters(nn.get_parameters())
    state = {"i": 0}

    def step():
        x.d, t.d = batches[state["i"] % len(batches)]
        state["i"] += 1
        loss.forward()
        solver.zero_grad()
        loss.backward()
        solver.weight_decay(1e-5)
        solver.update()

    seconds = _harness.seconds_per_call(step, 200 if quick else 2000, warmup=20)
    _harness.emit(seconds * 1e3, "ms/iter")


def _deep_cnn_setup(dynamic):
    """Parameters, solver, input variables and the tutorial's step function."""
    nn.seed(0)
    images, labels = _harness.digits_batch(64)
    x = nn.Variable(images.shape)
    t = nn.Variable(labels.shape)
    static_loss = F.mean(F.softmax_cross_entropy(deep_cnn(x), t))  # creates the parameters
    solver = S.Adam(alpha=1e-3)
    solver.set_parameters(nn.get_parameters())
    if dynamic:
        del static_loss

        def step():
            x.d, t.d = images, labels
            with nn.auto_forward():
                loss = F.mean(F.softmax_cross_entropy(deep_cnn(x), t))
            solver.set_parameters(nn.get_parameters(), reset=False, retain_state=True)
            solver.zero_grad()
            loss.backward(clear_buffer=True)
            solver.update()
    else:
        def step():
            x.d, t.d = images, labels
            static_loss.forward(clear_no_need_grad=True)
            solver.zero_grad()
            static_loss.backward(clear_buffer=True)
            solver.update()
    return step


def _deep_cnn_time(dynamic, quick):
    step = _deep_cnn_setup(dynamic)
    times = _harness.seconds_per_call_each(step, 1 if quick else 3, warmup=1)
    seconds = sum(times) / len(times)
    _harness.emit(seconds, "s/iter", per_iteration=times, ms=seconds * 1e3)


def _deep_cnn_rss(dynamic, quick):
    step = _deep_cnn_setup(dynamic)
    _harness.emit(_harness.rss_delta_mb(step, 2 if quick else 3), "MiB")


def _deep_cnn_traced(dynamic, quick):
    step = _deep_cnn_setup(dynamic)
    _harness.emit(_harness.traced_peak_mb(step, 2 if quick else 3), "MiB")


CASES = {
    "mlp_step": mlp_step,
    "deep_cnn_static": lambda quick: _deep_cnn_time(False, quick),
    "deep_cnn_dynamic": lambda quick: _deep_cnn_time(True, quick),
    "deep_cnn_static_rss": lambda quick: _deep_cnn_rss(False, quick),
    "deep_cnn_dynamic_rss": lambda quick: _deep_cnn_rss(True, quick),
    "deep_cnn_static_traced": lambda quick: _deep_cnn_traced(False, quick),
    "deep_cnn_dynamic_traced": lambda quick: _deep_cnn_traced(True, quick),
}

if __name__ == "__main__":
    _harness.run_case(CASES)
