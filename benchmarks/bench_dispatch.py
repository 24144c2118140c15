"""Per-function dispatch overhead on a tiny array (16 floats), in microseconds per op.

Cases (one per process, see ``run.py``):

* ``dispatch_imperative``: ``F.add_scalar`` called on an ``NdArray`` (runs at once).
* ``dispatch_auto_forward``: ``F.add_scalar`` on a ``Variable`` inside
  ``nn.auto_forward()`` (builds a graph node and runs it).
* ``dispatch_auto_forward_chain``: building a chain of 1,000 ``add_scalar`` under
  ``nn.auto_forward()`` (each call takes the previous output, so the graph grows),
  divided by 1,000.
* ``dispatch_static_chain``: ``forward()`` of a static graph of 1,000 chained
  ``add_scalar`` functions, divided by 1,000.
* ``dispatch_static_chain_fwd_bwd``: ``forward()`` then ``backward()`` of that chain
  with an input that needs its gradient, divided by 1,000.

The imperative and auto-forward calls all take the same input, so no graph grows.
"""
import _harness
import nnabla as nn
import nnabla.functions as F
import numpy as np

SHAPE = (16,)


def dispatch_imperative(quick):
    """us per F.add_scalar on an NdArray."""
    x = nn.NdArray.from_numpy_array(np.zeros(SHAPE, dtype=np.float32))
    calls = 2000 if quick else 10000

    def run():
        for _ in range(calls):
            F.add_scalar(x, 1.0)

    _harness.emit(_harness.seconds_per_call(run, 1, warmup=1) / calls * 1e6, "us/op")


def dispatch_auto_forward(quick):
    """us per F.add_scalar on a Variable under nn.auto_forward()."""
    x = nn.Variable.from_numpy_array(np.zeros(SHAPE, dtype=np.float32))
    calls = 2000 if quick else 10000

    def run():
        with nn.auto_forward():
            for _ in range(calls):
                F.add_scalar(x, 1.0)

    _harness.emit(_harness.seconds_per_call(run, 1, warmup=1) / calls * 1e6, "us/op")


def dispatch_auto_forward_chain(quick):
    """us per F.add_scalar while building a 1,000-op chain under nn.auto_forward()."""
    length = 1000
    x = nn.Variable.from_numpy_array(np.zeros(SHAPE, dtype=np.float32))
    result = {}

    def run():
        with nn.auto_forward():
            h = x
            for _ in range(length):
                h = F.add_scalar(h, 1.0)
        result["h"] = h.d.copy()

    seconds = _harness.seconds_per_call(run, 2 if quick else 10, warmup=1)
    if not np.allclose(result["h"], length):
        raise RuntimeError(f"auto-forward chain computed {result['h'][0]}, expected {length}")
    _harness.emit(seconds / length * 1e6, "us/op")


def _static_chain(length, need_grad):
    """A static graph of ``length`` chained add_scalar on 16 zeros: (input, output)."""
    x = nn.Variable.from_numpy_array(np.zeros(SHAPE, dtype=np.float32), need_grad=need_grad)
    h = x
    for _ in range(length):
        h = F.add_scalar(h, 1.0)
    return x, h


def dispatch_static_chain(quick):
    """us per function in forward() of a static chain of 1,000 add_scalar."""
    length = 1000
    _, h = _static_chain(length, need_grad=False)
    seconds = _harness.seconds_per_call(h.forward, 5 if quick else 50, warmup=2)
    if not np.allclose(h.d, length):
        raise RuntimeError(f"static chain computed {h.d[0]}, expected {length}")
    _harness.emit(seconds / length * 1e6, "us/op")


def dispatch_static_chain_fwd_bwd(quick):
    """us per function in forward() + backward() of a static chain of 1,000 add_scalar."""
    length = 1000
    x, h = _static_chain(length, need_grad=True)

    def step():
        x.grad.zero()  # leaf gradients accumulate across backward() calls
        h.forward()
        h.backward()

    seconds = _harness.seconds_per_call(step, 5 if quick else 50, warmup=2)
    if not (np.allclose(h.d, length) and np.allclose(x.g, 1.0)):
        raise RuntimeError(f"static chain computed {h.d[0]} and gradient {x.g[0]}, "
                           f"expected {length} and 1")
    _harness.emit(seconds / length * 1e6, "us/op")


CASES = {
    "dispatch_imperative": dispatch_imperative,
    "dispatch_auto_forward": dispatch_auto_forward,
    "dispatch_auto_forward_chain": dispatch_auto_forward_chain,
    "dispatch_static_chain": dispatch_static_chain,
    "dispatch_static_chain_fwd_bwd": dispatch_static_chain_fwd_bwd,
}

if __name__ == "__main__":
    _harness.run_case(CASES)
