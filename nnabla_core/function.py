"""Function: a node of the computation graph bound to one kernel.

``Function`` objects are what ``Variable.parent`` returns. ``PythonFunction``
lets users write functions in Python (see the reference's Mul2 example). The module also
offers nnabla's low-level constructors, ``nnabla.function.Split(ctx, axis)`` and so on for
every function type (:mod:`nnabla._function_instance`).
"""
from __future__ import annotations

import weakref

from . import _execute, _graph, _native_graph, _python_function
from ._array import SyncedArray
from ._spec.binding import infer
from ._variable import variable_of
from .context import get_current_context


class FunctionInfo:
    """``type_name`` and ``args`` of a function, as nnabla's ``Function.info``."""

    def __init__(self, type_name, args):
        self.type_name = type_name
        self.args = args

    def __repr__(self):
        return f"FunctionInfo(type_name={self.type_name!r}, args={self.args!r})"


class Function:
    """A function instance in a graph (created by ``nnabla.functions``).

    Attributes:
        inputs (list of Variable), outputs (list of Variable), info (FunctionInfo),
        name (str), args (dict), tags (dict).
    """

    python = False
    # in_nodes: the input VarNodes (None for an absent optional input) and out_refs: weak
    # references to the output VarNodes, each a list or a tuple (the auto-forward builder,
    # nnabla._native_graph, makes tuples); neither is changed in place
    __slots__ = ("spec", "_args", "ctx", "binding", "kernel", "family", "in_nodes", "out_refs",
                 "_tags", "_name", "in_dtypes", "out_dtypes", "grad_dtype", "_before_forward",
                 "__weakref__")

    def __init__(self, spec, args, ctx, binding, kernel, in_nodes, out_nodes, plan=None):
        self.spec = spec
        self._args = args
        self.ctx = ctx
        self.binding = binding
        self.kernel = kernel
        self.family = binding.family
        self.in_nodes = in_nodes
        self.out_refs = [weakref.ref(n) for n in out_nodes]
        self._tags = None
        self._name = None
        self._before_forward = None     # mutated inputs saved by setup_recompute
        if plan is None:
            plan = _execute.dtype_plan(spec, len(in_nodes), len(out_nodes), binding.type_config)
        self.in_dtypes, self.out_dtypes, self.grad_dtype = plan

    # -- the public surface ---------------------------------------------------------------
    @property
    def info(self):
        return FunctionInfo(self.spec.name, self.args)

    @property
    def arguments(self):
        """The arguments (as :attr:`args`; nnabla names them both ways)."""
        return self.args

    @property
    def args(self):
        # nnabla hands repeated arguments (pad, axes, ...) out as lists
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self._args.items()}

    @property
    def context(self):
        """The :class:`~nnabla.Context` the function was created in."""
        return self.ctx

    @property
    def need_grad(self):
        """Whether any input needs a gradient (and the function is differentiable)."""
        return self.spec.differentiable and any(
            n is not None and n.need_grad for n in self.in_nodes)

    @property
    def name(self):
        return self.spec.name if self._name is None else self._name

    @name.setter
    def name(self, value):
        self._name = str(value)

    @property
    def tags(self):
        if self._tags is None:
            # user objects may now close a cycle through this function: the collector must
            # see it and everything below it (see "Loose graphs" in _native_graph.c)
            _native_graph.track_graph(self)
            self._tags = {}
        return self._tags

    @property
    def inputs(self):
        return [variable_of(n) for n in self.in_nodes if n is not None]

    @property
    def outputs(self):
        return [variable_of(n) for n in (r() for r in self.out_refs) if n is not None]

    def min_outputs(self):
        return len(self.out_refs)

    # -- nnabla's explicit-call API (used by function testers) -----------------------------
    # ``inputs`` of these calls list the present inputs only, as nnabla's do: absent optional
    # inputs (a convolution without bias) are left out, not passed as None.
    def setup(self, inputs, outputs):
        """Check ``inputs`` against this function, rebind the kernel to their shapes and shape
        ``outputs`` accordingly."""
        full = self._expand(inputs)
        shapes = [None if v is None else v.shape for v in full]
        args, out_shapes = infer(self.spec, shapes, dict(self._args), len(outputs))
        if shapes != list(self.kernel.in_shapes):
            self.kernel = _execute.new_kernel(self.binding, self.spec, args, shapes, out_shapes)
            _graph.bump()         # plans bound the old kernel
        for v, shape in zip(outputs, out_shapes):
            if v.shape != shape:
                v.reset_shape(shape, force=True)
        if self.spec.dynamic_shape and _execute.sizes_known(self.spec, _data_of(full)):
            # as nnabla's setup: data-dependent sizes from the inputs' data
            resized = _execute.forward(self, _data_of(full), _data_of(outputs))
            for i in resized or ():
                outputs[i]._node.grad = SyncedArray(outputs[i].shape,
                                                    outputs[i]._node.grad.dtype)

    def _expand(self, inputs):
        """``inputs`` placed at their positions, with None where this function has none."""
        if len(inputs) == len(self.in_nodes):
            return list(inputs)
        present = [i for i, n in enumerate(self.in_nodes) if n is not None]
        if len(inputs) != len(present):
            raise ValueError(f"{self.spec.api_name}: got {len(inputs)} inputs; this function "
                             f"instance has {len(present)}")
        full = [None] * len(self.in_nodes)
        for i, v in zip(present, inputs):
            full[i] = v
        return full

    def forward(self, inputs, outputs):
        """Run the kernel on the data of ``inputs``, writing the data of ``outputs``."""
        _execute.forward(self, _data_of(self._expand(inputs)), _data_of(outputs))

    def backward(self, inputs, outputs, accum=None):
        """Back-propagate ``outputs``' grads into ``inputs``' grads.

        ``accum[i]`` adds to input ``i``'s grad instead of overwriting it; without
        ``accum`` every input accumulates, as in nnabla.
        """
        fam = self.family
        accum = [True] * len(inputs) if accum is None else list(accum)
        full = self._expand(inputs)
        arrays = _data_of(full)
        xs = _execute.writable_inputs(self, arrays, _execute.gather(self, arrays))
        ys = [_execute.read(v._node.data, None, fam) for v in outputs]
        dys = [v._node.grad.get(_execute.F32, fam) for v in outputs]
        pd = [v is not None and v.need_grad for v in full]
        grads = _execute.backward(self, xs, ys, dys, pd)
        _execute.keep_written_inputs(self, arrays, xs)
        given = [(v, g) for v, g in zip(full, grads) if v is not None]
        for (v, g), add in zip(given, accum):
            if g is not None and v.need_grad:
                _execute.accumulate(fam, v._node.grad, g, add, self.grad_dtype, dys + xs)

    def grad_depends_output_data(self, i, o):
        return o in self.spec.needed_outputs(len(self.out_refs))

    def grad_depends_input_data(self, i, j):
        return j in self.spec.needed_inputs(len(self.in_nodes))

    def inplace_data(self, i):
        """nnabla's in-place level of input ``i``'s data: 0 not in place, 1 shared but not
        modified (``F.reshape(inplace=True)``; nnabla 1.39 ignores the other functions'
        obsolete ``inplace`` flags), 2 shared and overwritten."""
        return int(i == 0 and self.spec.name == "Reshape" and bool(self._args.get("inplace")))

    def inplace_data_with(self, i):
        """The output sharing input ``i``'s data when :meth:`inplace_data` is not 0."""
        return 0 if self.inplace_data(i) else -1

    def need_setup_recompute(self, o):
        """Whether ``setup_recompute`` must precede ``forward`` for a faithful ``recompute``.

        True for stochastic functions, whose recomputation replays the forward draws, and
        for functions whose forward updates an input (spectral_norm's ``u``).
        """
        return self.spec.stochastic or bool(self.spec._mutated)

    def setup_recompute(self, inputs, outputs):
        """Save the inputs the coming forward updates, for ``recompute`` to start from.

        (Stochastic kernels keep their last draws themselves.)
        """
        fam = self.family
        xs = _execute.gather(self, _data_of(self._expand(inputs)))
        self._before_forward = {i: fam.copy(xs[i]) for i in self.spec._mutated
                                if xs[i] is not None}

    def recompute(self, inputs, outputs):
        """Run the forward pass again, replaying a stochastic kernel's last draws.

        Inputs a forward pass updates (running statistics) are left as they are: a
        recomputation reproduces outputs, it is not a second training step; it starts
        from their values saved by ``setup_recompute``, when that was called.
        """
        fam = self.family
        ins = _data_of(self._expand(inputs))
        xs = [None if a is None else _execute.read(a, dt, fam)
              for a, dt in zip(ins, self.in_dtypes)]
        if self.grad_dtype is _execute.F16:
            xs = _execute.through_half(fam, xs)
        saved = self._before_forward or {}
        for i in self.spec._mutated:
            if xs[i] is not None:
                xs[i] = fam.copy(saved[i] if i in saved else xs[i])
        ins = [None if i in self.spec._mutated else a for i, a in enumerate(ins)]
        _execute.forward(self, ins, _data_of(outputs), replay=True, xs=xs)

    def set_active_input_mask(self, mask):
        """Leave out the inputs whose ``mask`` entry is false, in forward and backward.

        The function then behaves as if built from the active inputs only (nnabla uses
        this for variadic functions such as ``add_n`` and ``mul_n``); inactive inputs
        get no gradient.
        """
        mask = [bool(m) for m in mask]
        if len(mask) != len(self.in_nodes):
            raise ValueError(f"{self.spec.api_name}: set_active_input_mask got {len(mask)} "
                             f"flags; expected one per input ({len(self.in_nodes)})")
        if not any(mask):
            raise ValueError(f"{self.spec.api_name}: set_active_input_mask needs at least "
                             "one active input")
        kernel = getattr(self.kernel, "masked_kernel", self.kernel)
        self.kernel = kernel if all(mask) else _MaskedKernel(kernel, mask)
        _graph.bump()             # plans bound the old kernel

    def __repr__(self):
        return f"<Function {self.spec.name} at {hex(id(self))}>"

    # -- execution (engine) ---------------------------------------------------------------
    def run_forward(self, replay=False):
        """Run the kernel on the graph's nodes; ``replay`` repeats the last random draws."""
        outs = [None if n is None else n.data for n in (r() for r in self.out_refs)]
        resized = _execute.forward(self, [None if n is None else n.data for n in self.in_nodes],
                                   outs, replay)
        if resized:                   # a data-dependent output shape: the grad follows
            for i in resized:
                node = self.out_refs[i]()
                node.grad = SyncedArray(node.data.shape, node.grad.dtype)
            _graph.bump()             # plans (backward steps) bound the old shapes


class _MaskedKernel:
    """A kernel seen through an active-input mask: it gets the active inputs only.

    Everything else (shapes, flags) is the wrapped kernel's; the grads of inactive
    inputs are ``None``.
    """

    def __init__(self, kernel, mask):
        self.masked_kernel = kernel
        self.mask = mask

    def __getattr__(self, name):
        return getattr(self.masked_kernel, name)

    def _active(self, values):
        return [v for v, m in zip(values, self.mask) if m]

    def forward(self, xs):
        return self.masked_kernel.forward(self._active(xs))

    def backward(self, xs, ys, dys, propagate_down):
        grads = iter(self.masked_kernel.backward(self._active(xs), ys, dys,
                                                 self._active(propagate_down)))
        return [next(grads) if m else None for m in self.mask]


def _data_of(variables):
    """The data arrays of ``variables`` (None stays None)."""
    return [None if v is None else v._node.data for v in variables]


class PythonFunction:
    """Base class of user-defined functions written in Python.

    Subclasses implement ``name``, ``min_outputs``, ``setup_impl``,
    ``forward_impl``, ``backward_impl``, ``grad_depends_output_data`` and
    ``grad_depends_input_data``; calling the instance on Variables builds a
    graph node (or runs at once under auto-forward).

    Args:
        ctx (Context): context of the forward/backward pass; default: the current one.
    """

    python = True

    def __init__(self, ctx=None):
        self._ctx = ctx
        self.tags = {}

    @property
    def ctx(self):
        return self._ctx if self._ctx is not None else get_current_context()

    @property
    def name(self):
        return type(self).__name__

    @property
    def info(self):
        return FunctionInfo(self.name, self.args)

    @property
    def args(self):
        return {}

    def min_outputs(self):
        return 1

    def setup_impl(self, inputs, outputs):
        raise NotImplementedError

    def forward_impl(self, inputs, outputs):
        raise NotImplementedError

    def backward_impl(self, inputs, outputs, propagate_down, accum):
        raise NotImplementedError

    def grad_depends_output_data(self, i, o):
        return True

    def grad_depends_input_data(self, i, j):
        return True

    def setup(self, inputs, outputs):
        """Shape ``outputs`` for ``inputs`` (calls :meth:`setup_impl`)."""
        self.setup_impl(inputs, outputs)

    def forward(self, inputs, outputs):
        """Compute ``outputs`` from ``inputs`` (calls :meth:`forward_impl`)."""
        self.forward_impl(inputs, outputs)

    def backward(self, inputs, outputs, accum=None):
        """Back-propagate ``outputs``' grads into ``inputs``' grads (add where ``accum``;
        without ``accum`` every input accumulates, as nnabla's ``Function.backward``)."""
        accum = [True] * len(inputs) if accum is None else list(accum)
        propagate_down = [v.need_grad for v in inputs]
        self.backward_impl(inputs, outputs, propagate_down, accum)

    def need_setup_recompute(self, o):
        """False: a Python function's recomputation is its forward pass again."""
        return False

    def setup_recompute(self, inputs, outputs):
        """Nothing to save (see :meth:`need_setup_recompute`)."""

    def recompute(self, inputs, outputs):
        """Recompute ``outputs`` from ``inputs`` (calls :meth:`forward_impl`)."""
        self.forward_impl(inputs, outputs)

    def inplace_data(self, i):
        return 0

    def inplace_data_with(self, i):
        return -1

    @property
    def context(self):
        """The context of the forward and backward passes."""
        return self.ctx

    @property
    def arguments(self):
        return self.args

    def __call__(self, *inputs, n_outputs=-1, auto_forward=None, outputs=None):
        return _python_function.call(self, inputs, n_outputs, outputs)

    @property
    def inputs(self):
        return [variable_of(n) for n in self.in_nodes]

    @property
    def outputs(self):
        return [variable_of(n) for n in (r() for r in self.out_refs) if n is not None]

    def __repr__(self):
        return f"<PythonFunction {self.name} at {hex(id(self))}>"

