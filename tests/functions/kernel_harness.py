"""Run a Case directly against a CPU kernel class, without the graph engine.

``check_forward(case)`` checks forward against the case's numpy reference;
``check_backward(case)`` checks the kernel's float64 backward against float64 central
differences of its forward, at the case's ``fd_atol``/``fd_rtol`` (1e-6 by default).
``check_forked_child(setup, compute)`` checks a computation in a forked child.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np

from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer


def kernel_class(name, table=None):
    """The kernel class of ``name`` in ``table`` (default: the CPU plugin's table)."""
    if table is None:
        from nnabla_ext.cpu.kernels import CPU_KERNELS as table
    return table[name]


def flat_inputs(case, arrays):
    spec = SPECS[case.name]
    if spec.variadic_input:
        return list(arrays[0])
    return list(arrays)


def make_kernel(case, arrays, dtype=np.float64, table=None):
    spec = SPECS[case.name]
    xs = flat_inputs(case, arrays)
    args = bind_args(spec, case.args)
    in_shapes = [None if x is None else tuple(x.shape) for x in xs]
    args, out_shapes = infer(spec, in_shapes, args)
    kernel = kernel_class(case.name, table)(spec, args, in_shapes, out_shapes)
    # Copies: kernels update some inputs in place (running statistics, counts).
    xs = [None if x is None else (x.copy() if x.dtype.kind in "iu" else x.astype(dtype))
          for x in xs]
    return kernel, xs, out_shapes


def check_forward(case, table=None):
    arrays = case.make_inputs()
    kernel, xs, out_shapes = make_kernel(case, arrays, np.float32, table)
    ys = kernel.forward(xs)
    if not SPECS[case.name].dynamic_shape:   # data-sized outputs: shapes come from the kernel
        assert [tuple(y.shape) for y in ys] == [tuple(s) for s in out_shapes]
    if case.ref is None:
        return ys
    ref_in = [None if a is None else (a if not isinstance(a, list) else a) for a in arrays]
    ref = case.ref(*ref_in, **case.args)
    refs = ref if isinstance(ref, tuple) else (ref,)
    for i, (y, r) in enumerate(zip(ys, refs)):
        if case.check_outputs is None or i in case.check_outputs:
            np.testing.assert_allclose(y, r, atol=case.atol, rtol=case.rtol)
    return ys


def check_backward(case, eps=1e-4, table=None):
    arrays = case.make_inputs()
    kernel, xs, _ = make_kernel(case, arrays, np.float64, table)
    ys = kernel.forward(xs)
    rng = np.random.RandomState(0)
    dys = [rng.randn(*y.shape) for y in ys]
    grad_inputs = case.grad_inputs
    if grad_inputs is None:
        grad_inputs = [i for i, x in enumerate(xs) if x is not None and x.dtype.kind == "f"]
    pd = [i in grad_inputs for i in range(len(xs))]
    spec = SPECS[case.name]
    # Backward sees only the data its spec declares, as under the engine.
    need_in, need_out = spec.needed_inputs(len(xs)), spec.needed_outputs(len(ys))
    seen_xs = [x if i in need_in else None for i, x in enumerate(xs)]
    seen_ys = [y if i in need_out else None for i, y in enumerate(ys)]
    grads = kernel.backward(seen_xs, seen_ys, dys, pd)

    def objective():
        k2, _, _ = make_kernel(case, arrays, np.float64, table)
        out = k2.forward(xs)
        return sum(float((np.asarray(y, np.float64) * d).sum()) for y, d in zip(out, dys))

    for i in grad_inputs:
        numeric = np.zeros_like(xs[i])
        flat, nflat = xs[i].reshape(-1), numeric.reshape(-1)
        for j in range(flat.size):
            orig = flat[j]
            flat[j] = orig + eps
            fp = objective()
            flat[j] = orig - eps
            fm = objective()
            flat[j] = orig
            nflat[j] = (fp - fm) / (2 * eps)
        np.testing.assert_allclose(grads[i], numeric, atol=case.fd_atol, rtol=case.fd_rtol,
                                   err_msg=f"gradient of input {i} (float64 central "
                                           f"differences, step {eps})")


_FORK_TAIL = """
ref = {compute}
pid = os.fork()
if pid == 0:
    os._exit(0 if np.allclose({compute}, ref, atol=1e-5) else 3)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def check_forked_child(setup, compute):
    """In a fresh interpreter: run ``setup`` (a script, after ``import os, sys`` and ``import
    numpy as np``), evaluate ``compute`` (an expression), then fork; the child evaluates it
    again and must get the same values (to 1e-5) within 120 s, not hang (GNU OpenMP's team
    does not survive fork())."""
    script = "import os, sys\nimport numpy as np\n" + setup + _FORK_TAIL.format(
        compute=compute)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
