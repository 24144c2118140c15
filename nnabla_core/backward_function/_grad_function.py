"""Gradient functions that nnabla publishes by name (``ConvolutionDataGrad`` ...).

A linear layer ``y = L(x, w)`` has two gradient maps: the data gradient
``dx = L(., w)^T dy`` and the filter gradient ``dw = L(x, .)^T dy``. nnabla exposes
them as functions (``nnabla.backward_function.convolution.ConvolutionDataGrad``)
taking ``(dy, w)`` and ``(dy, x)``. Here one class, :class:`KernelTranspose`,
computes every such map with the forward function's own kernel backward, so no
layer needs a second implementation of its transpose.

Every gradient function gets its graph backward (second and higher order) from
the registry entry of its name, written with ``nnabla.functions``; its explicit
``backward`` (used by the engine and by ``Function.backward`` calls) runs that
same entry on the current values, so both agree by construction.
"""
from __future__ import annotations

from .. import _execute
from .._array import F32
from ..function import PythonFunction


def kernel_for(type_name, in_shapes, args, ctx):
    """An execution call of ``type_name`` for ``in_shapes`` (None: omitted input).

    Returns:
        (:class:`nnabla._execute.Call`, output shapes).
    """
    from .._dispatch import _setup
    from .._spec import SPECS
    spec = SPECS[type_name]
    in_shapes = tuple(None if s is None else tuple(s) for s in in_shapes)
    resolved, out_shapes, binding, plan, kernel = _setup(spec, in_shapes, dict(args), ctx, -1)[:5]
    if kernel is None:
        kernel = _execute.new_kernel(binding, spec, resolved, in_shapes, out_shapes)
    return _execute.Call(spec, kernel, binding.family, plan), out_shapes


def data(v, call, dtype=F32):
    """The data of Variable ``v`` in ``call``'s family (``dtype`` None: as stored)."""
    return _execute.read(v._node.data, dtype, call.family)


def copy_of_data(v, call):
    """A float32 copy of ``v``'s data in ``call``'s family (kernels may update it)."""
    return call.family.copy(data(v, call))


def store(call, out, g):
    """Store gradient ``g`` as the float32 data of Variable ``out``."""
    _execute.store(call, out._node.data, g, F32)


def _leaf(v, need_grad):
    """A leaf Variable sharing ``v``'s data (no copy, no conversion)."""
    import nnabla as nn
    leaf = nn.Variable(v.shape, need_grad=need_grad)
    leaf._node.data = v._node.data.view(v.shape)
    return leaf


def bind_positional(type_name, positional, keywords):
    """nnabla's constructor arguments (positional, then keywords) as a dict of the spec's
    argument names, with the spec's defaults for those not given."""
    from .._spec import SPECS
    spec = SPECS[type_name]
    names = list(spec.arg_names)
    if len(positional) > len(names):
        raise TypeError(f"{type_name} gradient: {len(positional)} positional arguments given; "
                        f"the arguments are {names}")
    args = {a.name: a.default for a in spec.args}
    args.update(zip(names, positional))
    unknown = set(keywords) - set(names)
    if unknown:
        raise TypeError(f"{type_name} gradient: unexpected argument(s) {sorted(unknown)}; "
                        f"the arguments are {names}")
    args.update(keywords)
    return args


class GradFunction(PythonFunction):
    """Base of named gradient functions whose graph backward is a registry entry.

    Args:
        ctx (Context): the context (as nnabla's classes take it).
        **args: the arguments reported by ``args`` (and passed to the registry entry).
    """

    def __init__(self, ctx=None, **args):
        super().__init__(ctx)
        self._args = args

    @property
    def name(self):
        return type(self).__name__

    @property
    def args(self):
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self._args.items()}

    def grad_depends_output_data(self, i, o):
        return False

    def grad_depends_input_data(self, i, j):
        return True

    def backward_impl(self, inputs, outputs, propagate_down, accum):
        """Run this function's registered backward function on the current values."""
        import nnabla as nn
        from ..backward_functions import registry
        backward = registry[self.name]
        with nn.auto_forward():
            ins = [_leaf(v, pd) for v, pd in zip(inputs, propagate_down)]
            gys = [nn.Variable(o.shape) for o in outputs]
            for gy, o in zip(gys, outputs):
                gy._node.data = o._node.grad.view(o.shape)
            outs = [_leaf(o, False) for o in outputs]
            grads = backward(gys, ins, [v.shape for v in ins], outs,
                             [o.shape for o in outs], **self.args)
        for v, g, pd, add in zip(inputs, grads, propagate_down, accum):
            if pd and g is not None:
                _execute.accumulate_from(v._node.grad, g._node.data.view(v.shape), add)


class KernelTranspose(GradFunction):
    """``d input[wrt] = kernel backward of type_name`` for ``dy`` and the other inputs.

    The forward function must be linear in input ``wrt``; the other inputs, taken
    in order from this function's inputs after ``dy``, fill the positions
    ``others``. The shape of the computed gradient is ``target_shape``
    (subclasses name it ``xshape``, ``wshape`` or ``yshape`` as nnabla does).

    Class attributes of subclasses:
        type_name (str): the forward function.
        n_inputs (int): how many inputs the forward function is given (None for the
            positions not in ``(wrt,) + others``).
        wrt (int), others (tuple of int): see above.
    """

    type_name = None
    n_inputs = 1
    wrt = 0
    others = ()

    def __init__(self, ctx=None, *args, **kwargs):
        super().__init__(ctx, **bind_positional(self.type_name, args, kwargs))
        self.target_shape = None

    def min_inputs(self):
        return 1 + len(self.others)

    def min_outputs(self):
        return 1

    def _forward_shapes(self, inputs):
        shapes = [None] * self.n_inputs
        shapes[self.wrt] = self.target_shape
        for pos, v in zip(self.others, inputs[1:]):
            shapes[pos] = tuple(v.shape)
        return shapes

    def setup_impl(self, inputs, outputs):
        if self.target_shape is None:
            raise ValueError(f"{self.name}: set the shape of the gradient it computes "
                             "(xshape, wshape or yshape) before calling it")
        outputs[0].reset_shape(tuple(self.target_shape), True)

    def forward_impl(self, inputs, outputs):
        shapes = self._forward_shapes(inputs)
        call, out_shapes = kernel_for(self.type_name, shapes, self._args, self.ctx)
        fam = call.family
        xs = [None] * self.n_inputs
        xs[self.wrt] = _execute.zeros(fam, self.target_shape)
        for pos, v in zip(self.others, inputs[1:]):
            xs[pos] = data(v, call, call.in_dtypes[pos])
        dys = [fam.reshape(data(inputs[0], call), out_shapes[0])]
        dys += [_execute.zeros(fam, s) for s in out_shapes[1:]]
        propagate_down = [i == self.wrt for i in range(self.n_inputs)]
        grads = _execute.backward(call, xs, [None] * len(out_shapes), dys, propagate_down)
        store(call, outputs[0], grads[self.wrt])


class DataGrad(KernelTranspose):
    """``dx`` of a layer, from ``(dy, *others)``; set ``xshape`` before calling it."""

    @property
    def xshape(self):
        """The shape of the forward function's data input."""
        return self.target_shape

    @xshape.setter
    def xshape(self, shape):
        self.target_shape = tuple(shape)


class FilterGrad(KernelTranspose):
    """``dw`` of a layer, from ``(dy, x)``; set ``wshape`` before calling it."""

    wrt = 1
    others = (0,)

    @property
    def wshape(self):
        """The shape of the forward function's weight."""
        return self.target_shape

    @wshape.setter
    def wshape(self, shape):
        self.target_shape = tuple(shape)
