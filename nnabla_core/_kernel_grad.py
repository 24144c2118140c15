"""First-order gradient nodes for functions without a registered backward function.

:class:`KernelGrad` is a graph function whose forward runs the forward
function's kernel backward on the data of ``(dy..., x..., y...)``. It makes
``nn.grad`` work for every function; differentiating it again raises, naming
the function whose backward function is missing.
"""
from __future__ import annotations

from . import _execute
from ._array import F32
from .function import PythonFunction


class KernelGrad(PythonFunction):
    """Gradients of ``forward_function`` w.r.t. its inputs at positions ``wrt``."""

    def __init__(self, forward_function, wrt):
        super().__init__(forward_function.ctx)
        self.forward_function = forward_function
        self.wrt = list(wrt)
        self.present = [i for i, n in enumerate(forward_function.in_nodes) if n is not None]

    @property
    def name(self):
        return f"{self.forward_function.spec.name}KernelGrad"

    def min_outputs(self):
        return len(self.wrt)

    def setup_impl(self, inputs, outputs):
        f = self.forward_function
        for out, i in zip(outputs, self.wrt):
            out.reset_shape(f.in_nodes[i].data.shape, True)

    def forward_impl(self, inputs, outputs):
        f = self.forward_function
        fam, n_out = f.family, len(f.out_refs)
        dys = [_execute.read(v._node.data, F32, fam) for v in inputs[:n_out]]
        xs = [None] * len(f.in_nodes)
        for v, i in zip(inputs[n_out:n_out + len(self.present)], self.present):
            xs[i] = _execute.read(v._node.data, f.in_dtypes[i], fam)
        ys = [_execute.read(v._node.data, None, fam)
              for v in inputs[n_out + len(self.present):]]
        pd = [i in self.wrt for i in range(len(xs))]
        grads = _execute.backward(f, xs, ys, dys, pd)
        for out, i in zip(outputs, self.wrt):
            g = grads[i]
            _execute.store(f, out._node.data, fam.copy(g) if any(g is d for d in dys) else g,
                           F32)

    def backward_impl(self, inputs, outputs, propagate_down, accum):
        raise NotImplementedError(
            f"{self.forward_function.spec.api_name}: no backward function is registered in "
            "nnabla.backward_functions, so its gradient cannot be differentiated again")

    def grad_depends_output_data(self, i, o):
        return False

    def grad_depends_input_data(self, i, j):
        return True


def kernel_grads(f, wrt, grad_outputs, inputs, outputs):
    """Variables holding the gradients of ``f`` w.r.t. inputs ``wrt`` (first order)."""
    present = [v for v in inputs if v is not None]
    result = KernelGrad(f, wrt)(*grad_outputs, *present, *outputs, n_outputs=len(wrt))
    result = list(result) if isinstance(result, tuple) else [result]
    grads = [None] * len(inputs)
    for i, g in zip(wrt, result):
        grads[i] = g
    return grads
