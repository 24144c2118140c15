"""Execution: the only place that gathers inputs, runs kernels, stores outputs and
accumulates gradients.

Everything here works on :class:`~nnabla._array.SyncedArray` objects and the bound
backend's :class:`~nnabla.array_family.ArrayFamily`; nothing assumes numpy. The static
plan, auto-forward, imperative calls, ``Function.forward/backward``, ``nn.grad``'s kernel
gradient nodes, PythonFunction glue and the solvers all call these functions.

A "call" below is anything with the attributes ``spec``, ``kernel``, ``family``,
``in_dtypes``, ``out_dtypes`` and ``grad_dtype`` (a :class:`~nnabla.function.Function`
or an imperative :class:`Call`).
"""
from __future__ import annotations

import weakref

import numpy as np

from . import _native_graph
from ._array import F16, F32, I64, SyncedArray, holding
from .array_family import HOST

__all__ = ["Call", "new_kernel", "dtype_plan", "gather", "forward", "store", "accumulate",
           "zeros", "read"]


class Call:
    """An imperative call: a kernel bound to a family and a dtype plan, no graph node."""

    __slots__ = ("spec", "kernel", "family", "in_dtypes", "out_dtypes", "grad_dtype")

    def __init__(self, spec, kernel, family, plan):
        self.spec = spec
        self.kernel = kernel
        self.family = family
        self.in_dtypes, self.out_dtypes, self.grad_dtype = plan


def new_kernel(binding, spec, args, in_shapes, out_shapes):
    """Construct ``binding``'s kernel with its family's ``xp``, the context's device and,
    under ``half``, the storage type (a kernel fusing several functions rounds between
    stages to it)."""
    cls = binding.kernel
    kernel = cls.__new__(cls)
    kernel.xp = binding.family.xp
    kernel.device_id = binding.device_id
    if binding.type_config == "half":
        kernel.storage_dtype = F16
    kernel.__init__(spec, args, in_shapes, out_shapes)
    return kernel


_dtype_plans = {}


def dtype_plan(spec, n_inputs, n_outputs, type_config):
    """(input compute dtypes, output storage dtypes, grad storage dtype), memoised.

    Kernels compute in float32 (int64 for integer inputs; ``None``: the dtype the input
    is stored in); ``half`` stores float outputs and gradients as float16.
    """
    key = (spec.name, n_inputs, n_outputs, type_config)
    plan = _dtype_plans.get(key)
    if plan is None:
        store = F16 if type_config == "half" else F32
        integer = {i for i, inp in enumerate(spec.inputs) if inp.integer}
        stored = {i for i, inp in enumerate(spec.inputs) if inp.stored_dtype}
        ins = [None if i in stored else I64 if i in integer and not spec.variadic_input
               else F32 for i in range(n_inputs)]
        outs = []
        for i in range(n_outputs):
            out = spec.outputs[min(i, len(spec.outputs) - 1)]
            outs.append(np.dtype(out.dtype) if out.dtype else store)
        plan = _dtype_plans[key] = (ins, outs, store)
    return plan


# -- inputs ----------------------------------------------------------------------------------
def read(synced, dtype, family):
    """A head of ``synced`` for reading, in ``dtype`` (None: the dtype it is stored in)."""
    return synced.get(synced.dtype if dtype is None else dtype, family)


def gather(call, arrays):
    """The kernel inputs of ``call`` from ``arrays`` (SyncedArray or None per input).

    Inputs the function updates in place come as writable heads (every other head of
    them is dropped, so a later read anywhere sees the update). Under ``half``, float
    inputs are rounded to float16 and computed in float32, as nnabla's half kernels do.
    """
    fam = call.family
    xs = [None if a is None else a.get(a.dtype if dt is None else dt, fam)
          for a, dt in zip(arrays, call.in_dtypes)]
    mutated = call.spec._mutated
    if mutated:
        for i in mutated:
            a = arrays[i] if i < len(arrays) else None
            if a is not None and xs[i].dtype == a.dtype:
                xs[i] = a.cast(a.dtype, fam)
    if call.grad_dtype is F16:
        xs = through_half(fam, xs)
    return xs


def writable_inputs(call, arrays, xs):
    """``xs`` with the inputs ``call``'s backward writes (the spec's ``backward_mutates``,
    e.g. VATNoise's ``w``) replaced by writable heads: every other head of them is dropped,
    so the write is what any later read sees, in whatever family."""
    for i in call.spec._backward_mutated:
        a = arrays[i]
        if a is not None:
            dtype = call.in_dtypes[i]
            xs[i] = a.cast(a.dtype if dtype is None else dtype, call.family)
    return xs


def keep_written_inputs(call, arrays, xs):
    """After a backward: a written input the kernel saw as a converted copy (half
    computation) is stored back into its array."""
    for i in call.spec._backward_mutated:
        a = arrays[i]
        if a is not None and xs[i] is not None \
                and all(head is not xs[i] for head in a.heads.values()):
            a.set(call.family.astype(xs[i], a.dtype), call.family)


def through_half(fam, xs):
    """Float32 inputs rounded to float16 and back (how a half kernel sees them)."""
    return [fam.astype(fam.astype(x, F16), F32) if x is not None and x.dtype == F32 else x
            for x in xs]


def write_back(call, arrays, xs):
    """Store the inputs a kernel updated in place where it got a copy rather than the
    writable head (another compute type, or half's rounding)."""
    fam = call.family
    for i in call.spec._mutated:
        a = arrays[i] if i < len(arrays) else None
        if a is None or (len(a.heads) == 1 and a.heads.get((fam, xs[i].dtype)) is xs[i]):
            continue                    # the kernel updated the array's only head itself
        a.set(fam.astype(xs[i], a.dtype) if xs[i].dtype != a.dtype else xs[i], fam)


# -- forward ---------------------------------------------------------------------------------
def forward(call, ins, outs, replay=False, xs=None):
    """Run ``call``'s kernel forward on ``ins`` and store into ``outs`` (None: dropped).

    ``replay`` repeats a stochastic kernel's last draws (``recompute``). ``xs`` are
    prepared inputs, when the caller must start from saved values. Returns the list of
    output shapes that differed from the arrays' (data-dependent shapes), else None.
    """
    if xs is None:
        xs = gather(call, ins)
    kernel = call.kernel
    ys = kernel.recompute(xs) if replay else kernel.forward(xs)
    resized = None
    for i, (arr, y) in enumerate(zip(outs, ys)):
        if arr is not None and store(call, arr, y, call.out_dtypes[i]):
            resized = resized or []
            resized.append(i)
    if call.spec._mutated:
        write_back(call, ins, xs)
    return resized


def store(call, arr, y, dtype):
    """Store kernel output ``y`` into ``arr`` in storage type ``dtype``; True if the
    array took a new (data-dependent) shape."""
    fam = call.family
    if y.__class__ is not fam.array_type and not fam.owns(y):
        y = fam.asarray(y)        # a numpy scalar or a foreign array a kernel returned
    ydt = y.dtype
    # float outputs take the storage type; integer outputs keep theirs
    if ydt is not dtype and ydt != dtype and (ydt.kind == "f" or dtype.kind != "f"):
        y = fam.astype(y, dtype)
    resized = False
    if y.shape != arr.shape:
        y = fix_shape(call, fam, y, arr.shape)
        if y.shape != arr.shape:
            arr.shape = tuple(y.shape)
            resized = True
    arr.set(y, fam)
    return resized


def keep(call, arr, y, dtype, key, nbytes):
    """:func:`store` for plans that know the head's ``key`` and size: ``y`` is kept as it
    is when it already is the family's array in ``dtype`` and ``arr``'s shape."""
    if y.__class__ is key[0].array_type and y.dtype is dtype and y.shape == arr.shape:
        arr.put(key, y, nbytes)
    else:
        store(call, arr, y, dtype)


def fix_shape(call, fam, y, shape):
    if call.spec.dynamic_shape:
        return y
    if int(np.prod(y.shape)) != int(np.prod(shape)):
        raise RuntimeError(f"{call.spec.api_name}: kernel {type(call.kernel).__name__} "
                           f"returned shape {tuple(y.shape)}; expected {shape}")
    return fam.reshape(y, shape)


# -- backward --------------------------------------------------------------------------------
def zeros(fam, shape):
    """A float32 zero gradient of ``shape`` in family ``fam``."""
    return fam.zeros(tuple(shape), F32)


def backward(call, xs, ys, dys, propagate_down):
    """Run ``call``'s kernel backward; returns one gradient (or None) per input."""
    return call.kernel.backward(xs, ys, dys, propagate_down)


def accumulate(fam, grad, g, add, dtype, protect=()):
    """Write gradient ``g`` (an array of family ``fam``) into ``grad`` (a SyncedArray) in
    storage type ``dtype``: add to what it holds when ``add``, else overwrite.
    ``protect`` lists arrays ``g`` must not alias (the kernel may have returned one of
    its inputs, e.g. ``dy`` itself).

    A sum is made in a new array the first time; while that array stays ``grad``'s only
    head, later sums add into it in place (as nnabla accumulates into the gradient's
    memory). Arrays a kernel returned are never written to: a kernel may keep them."""
    if g.__class__ is not fam.array_type and not fam.owns(g):
        g = fam.asarray(g)
    if g.shape != grad.shape:
        g = fam.reshape(g, grad.shape)
    summed = None
    if add and (grad.heads or grad.fill_value not in (None, 0)):
        if _add_in_place(fam, grad, g):
            return
        new = summed = fam.add(grad.get(F32, fam), g)
    elif aliases(fam, g, protect):
        new = fam.copy(g)
    else:
        new = g
    if new.dtype != dtype:
        new = fam.astype(new, dtype)
    grad.set(new, fam)
    if new is summed:
        try:
            grad.summed = weakref.ref(new)
        except TypeError:           # the family's arrays take no weak references
            pass


def _add_in_place(fam, grad, g):
    """Add ``g`` into ``grad``'s head when that head is the float32 sum :func:`accumulate`
    made (its only head, ``grad`` neither a window nor narrowed); returns whether it did."""
    summed = getattr(grad, "summed", None)
    if summed is None or len(grad.heads) != 1 or grad.is_window or grad.narrowed:
        return False
    head = grad.heads.get((fam, F32))
    if head is None or summed() is not head:
        return False
    fam.iadd(head, g)
    grad.modification_count += 1
    return True


def accumulate_from(grad, src, add):
    """Add (``add``) or copy the values of SyncedArray ``src`` into SyncedArray ``grad``,
    in the family ``src`` holds them in."""
    if not src.heads:
        src.get(F32, HOST)         # a lazily filled array: materialise it
    (fam, _), head = next(iter(src.heads.items()))
    accumulate(fam, grad, head, add, grad.dtype, protect=(head,))


def aliases(fam, g, arrays):
    """Whether ``g`` shares memory with any of ``arrays`` (by owner; never element-wise).

    ``arrays`` existed before the kernel made ``g``, so when ``g`` owns its memory it can
    share it with one of them only by being it."""
    owner = fam.owner(g)
    if owner is g:
        for a in arrays:
            if a is g:
                return True
        return False
    for a in arrays:
        if a is not None and (a is g or fam.owner(a) is owner):
            return True
    return False


def output_seed(shape, value):
    """A gradient array of ``shape`` filled lazily with ``value`` (backward's seed)."""
    seed = SyncedArray(shape, F32)
    seed.fill(value)
    return seed


def has_data(arr):
    """True when SyncedArray ``arr`` holds values (written, or filled), not just a shape."""
    return bool(arr.heads) or arr.fill_value is not None


def sizes_known(spec, arrays):
    """True when the data that sizes a ``dynamic_shape`` function's outputs is present in
    ``arrays`` (the inputs' SyncedArrays, None for an absent one)."""
    names = spec.sized_by or spec.input_names
    for name, arr in zip(spec.input_names, arrays):
        if arr is not None and name in names and not has_data(arr):
            return False
    return True


def direct_forward(kernel, spec):
    """``kernel.forward_ufunc``, checked: ``(f, *operands)`` when the kernel's forward is
    ``(f(xs[0], *operands),)`` (see :class:`nnabla.kernel.Kernel`), else None."""
    call = getattr(kernel, "forward_ufunc", None)
    most = _native_graph.MAX_UFUNC_OPERANDS
    if call is not None and not (isinstance(call, tuple) and 1 <= len(call) <= most + 1
                                 and callable(call[0])):
        raise TypeError(f"{spec.api_name}: {type(kernel).__name__}.forward_ufunc must be a "
                        f"tuple (callable, *operands) with at most {most} operands; "
                        f"got {call!r}")
    return call


# -- static plans ----------------------------------------------------------------------------
def forward_runner(f):
    """A no-argument callable running graph function ``f``'s forward on its nodes.

    Built once per execution plan, it binds everything that depends only on the graph
    (kernel, family, dtypes, nodes), so a static forward pass is a flat loop of these
    calls. Functions needing the general path (Python functions, in-place input updates,
    half storage, data-dependent shapes) get ``f.run_forward``.
    """
    if f.python:
        return lambda: f.forward_impl(f.inputs, f.outputs)
    spec = f.spec
    if spec._mutated or f.grad_dtype is F16 or spec.dynamic_shape:
        return f.run_forward
    fam, kernel = f.family, f.kernel
    fwd = kernel.forward
    # per input: (node, head key or None when read in its stored dtype)
    ins = tuple((n, None if dt is None else (fam, dt)) for n, dt in zip(f.in_nodes, f.in_dtypes))
    # per output: (weak node, storage dtype, head key, bytes of the stored head)
    outs = tuple((ref, dt, (fam, dt), int(np.prod(shape)) * dt.itemsize)
                 for ref, dt, shape in zip(f.out_refs, f.out_dtypes, kernel.out_shapes))
    if len(outs) == 1 and all(node is not None and key is not None for node, key in ins):
        if len(ins) == 1:
            return _unary_runner(f, fwd, direct_forward(kernel, spec), ins[0], outs[0])
        return _single_output_runner(f, fwd, ins, outs[0])

    def run():
        xs = []
        for node, key in ins:
            if node is None:
                xs.append(None)
                continue
            a = node.data
            head = a.heads.get(key or (fam, a.dtype))
            xs.append(head if head is not None else a.get(key[1] if key else a.dtype, fam))
        for (ref, dtype, key, nbytes), y in zip(outs, fwd(xs)):
            node = ref()
            if node is not None:
                keep(f, node.data, y, dtype, key, nbytes)
    return run


def _unary_runner(f, fwd, direct, source, target):
    """:func:`forward_runner` for one input and one output (most functions): no loops;
    ``direct``: the kernel's ``(f, *operands)`` (:func:`direct_forward`) or None."""
    (node_in, key_in), (ref, dtype, key, nbytes) = source, target
    fam = key_in[0]
    array_type = fam.array_type
    function, *operands = direct or (None,)
    single = function is not None and len(operands) == 1
    operand = operands[0] if single else None

    def run():
        a = node_in.data
        head = a.heads.get(key_in)
        if head is None:
            head = a.get(key_in[1], fam)
        if single:
            y = function(head, operand)
        elif function is not None:
            y = function(head, *operands)
        else:
            y = fwd([head])[0]
        node = ref()
        if node is not None:
            arr = node.data
            if y.__class__ is array_type and y.dtype is dtype and y.shape == arr.shape:
                arr.put(key, y, nbytes)
            else:
                store(f, arr, y, dtype)
    return run


def _single_output_runner(f, fwd, ins, target):
    """:func:`forward_runner` for present inputs read in fixed dtypes and one output."""
    ref, dtype, key, nbytes = target
    fam = key[0]
    array_type = fam.array_type
    ins = tuple((node, key_in, key_in[1]) for node, key_in in ins)

    def run():
        xs = []
        for node_in, key_in, dtype_in in ins:
            a = node_in.data
            head = a.heads.get(key_in)
            xs.append(head if head is not None else a.get(dtype_in, fam))
        y = fwd(xs)[0]
        node = ref()
        if node is not None:
            arr = node.data
            if y.__class__ is array_type and y.dtype is dtype and y.shape == arr.shape:
                arr.put(key, y, nbytes)
            else:
                store(f, arr, y, dtype)
    return run


def imperative_runner(call, out_shapes):
    """``run(arrays) -> SyncedArray``: an imperative call of a shared kernel with one output
    on the inputs' SyncedArrays (None for an absent input), or None where the general path
    is needed."""
    spec, fam = call.spec, call.family
    if (len(out_shapes) != 1 or spec._mutated or call.grad_dtype is F16 or spec.dynamic_shape
            or spec.outputs[-1].variadic):
        return None
    fwd = call.kernel.forward
    direct = direct_forward(call.kernel, spec)
    keys = tuple(None if dt is None else (fam, dt) for dt in call.in_dtypes)
    shape, dtype = tuple(out_shapes[0]), call.out_dtypes[0]
    key, nbytes = (fam, dtype), int(np.prod(shape)) * dtype.itemsize
    array_type = fam.array_type

    def stored(y):
        """The output of a kernel that did not return the planned array: the general store."""
        arr = SyncedArray(shape, dtype)
        store(call, arr, y, dtype)
        return arr
    if len(keys) == 1 and keys[0] is not None:      # in C; the auto-forward builder runs it
        return _native_graph.UnaryRunner(keys[0], fwd, array_type, shape, key, nbytes, stored,
                                         direct)

    def run(arrays):
        xs = []
        for a, k in zip(arrays, keys):
            if a is None:
                xs.append(None)
                continue
            head = a.heads.get(k or (fam, a.dtype))
            xs.append(head if head is not None else a.get(k[1] if k else a.dtype, fam))
        y = fwd(xs)[0]
        if y.__class__ is array_type and y.dtype is dtype and y.shape == shape:
            return holding(shape, key, y, nbytes)
        return stored(y)
    return run
