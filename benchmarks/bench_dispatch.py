"""Per-function dispatch overhead on a tiny array (16 floats), in microseconds per op.

Cases (one per process, see ``run.py``):

* ``dispatch_imperative``: ``F.add_scalar`` called on an ``NdArray`` (runs at once).
* ``dispatch_auto_forward``: ``F.add_scalar`` on a ``Variable`` inside
  ``nn.auto_forward()`` (builds a graph node and runs it).
* ``dispatch_static_chain``: ``forward()`` of a static graph of 1,000 chained
  ``add_scalar`` functions, divided by 1,000.

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


def dispatch_static_chain(quick):
    """us per function in forward() of a static chain of 1,000 add_scalar."""
    length = 1000
    x = nn.Variable.from_numpy_array(np.zeros(SHAPE, dtype=np.float32))
    h = x
    for _ in range(length):
        h = F.add_scalar(h, 1.0)
    seconds = _harness.seconds_per_call(h.forward, 5 if quick else 50, warmup=2)
    if not np.allclose(h.d, length):
        raise RuntimeError(f"static chain computed {h.d[0]}, expected {length}")
    _harness.emit(seconds / length * 1e6, "us/op")


CASES = {
    "dispatch_imperative": dispatch_imperative,
    "dispatch_auto_forward": dispatch_auto_forward,
    "dispatch_static_chain": dispatch_static_chain,
}

if __name__ == "__main__":
    _harness.run_case(CASES)
