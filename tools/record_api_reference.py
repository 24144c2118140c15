"""Record nnabla 1.39's answers for the core-API tests (tests/api) into tests/data.

Run once with an interpreter that has nnabla 1.39 installed:

    "$NNABLA_REFERENCE_PYTHON" tools/record_api_reference.py

It writes ``tests/data/nnabla_1.39_api_reference.npz`` (written to a temporary name, then
renamed). The cases are small and seeded; the tests rebuild the same inputs.
"""
from __future__ import annotations

import os
import pathlib

import numpy as np

import nnabla as nn
import nnabla.functions as F

OUT = pathlib.Path(__file__).resolve().parents[1] / "tests" / "data" / \
    "nnabla_1.39_api_reference.npz"

MATMUL_SHAPES = [((5,), (5,)), ((3,), (5, 3, 2)), ((4, 1, 2, 3), (1, 5, 3, 2)),
                 ((2, 3, 4), (4,)), ((6, 2, 3, 4), (4, 5))]
SETITEM_KEYS = {"rows": ([[2, 2], [3, 3], [4, 4]], [[3, 4], [3, 4], [3, 4]]),
                "slices": (slice(2, 5), slice(3, 5))}


def inputs(seed, *shapes):
    rng = np.random.RandomState(seed)
    return [np.asarray(rng.randn(*s), dtype=np.float32) for s in shapes]


def record_matmul(out):
    """Values and gradients of ``a @ b`` for shapes numpy broadcasts."""
    for i, (sa, sb) in enumerate(MATMUL_SHAPES):
        a, b = inputs(i, sa, sb)
        va = nn.Variable.from_numpy_array(a, need_grad=True)
        vb = nn.Variable.from_numpy_array(b, need_grad=True)
        y = va @ vb
        y.forward()
        dy = inputs(100 + i, y.shape)[0]
        va.grad.zero()
        vb.grad.zero()
        y.backward(dy)
        out[f"matmul{i}_y"], out[f"matmul{i}_ga"], out[f"matmul{i}_gb"] = y.d, va.g, vb.g


def record_setitem(out):
    """``y[key] = u`` inside a graph: the values after and the gradients of x and u."""
    for name, key in SETITEM_KEYS.items():
        x = nn.Variable.from_numpy_array(np.arange(56, dtype=np.float32).reshape(8, 7),
                                         need_grad=True)
        u = nn.Variable.from_numpy_array(-np.arange(1, 7, dtype=np.float32).reshape(3, 2),
                                         need_grad=True)
        y = F.mul_scalar(x, 2)
        y[key] = u
        z = F.sin(y)
        z.forward()
        x.grad.zero()
        u.grad.zero()
        z.backward(np.arange(56, dtype=np.float32).reshape(8, 7) / 10)
        out[f"setitem_{name}_z"], out[f"setitem_{name}_gx"] = z.d, x.g
        out[f"setitem_{name}_gu"] = u.g


def record_grad(out):
    """nn.grad of a parameter used twice through ``get_parameters().values()``."""
    import nnabla.parametric_functions as PF
    nn.clear_parameters()
    (xv,) = inputs(7, (2, 3))
    x = nn.Variable.from_numpy_array(xv)
    h = PF.affine(x, 3, name="shared")
    h = PF.affine(F.tanh(h), 3, name="shared")
    y = F.sum(h ** 2)
    for j, param in enumerate(nn.get_parameters().values()):
        param.d = inputs(50 + j, param.shape)[0]       # initial values are random
    grads = nn.grad([y], nn.get_parameters().values())
    for g in grads:
        g.forward()
    out["grad_W"], out["grad_b"] = grads[0].d, grads[1].d
    nn.clear_parameters()


def main():
    out = {}
    record_matmul(out)
    record_setitem(out)
    record_grad(out)
    tmp = OUT.with_name(OUT.name + ".tmp.npz")
    np.savez(tmp, nnabla_version=np.array(nn.__version__), **out)
    os.replace(tmp, OUT)
    print(f"wrote {OUT} ({len(out)} arrays)")


if __name__ == "__main__":
    main()
