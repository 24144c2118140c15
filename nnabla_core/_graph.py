"""The graph engine: linking, execution plans, forward and backward passes.

A plan (the functions reachable from the roots, in topological order) is
cached per root and invalidated by a global graph version, which every
structural change bumps. Gradient accumulation follows nnabla: leaves (no
parent) accumulate across backward calls; an intermediate variable's first
contribution in a pass overwrites, later ones in the same pass add.
"""
from __future__ import annotations

import functools
import gc
import weakref

import numpy as np

from . import _execute, _native_graph, callback
from ._array import F32, SyncedArray, SyncedArrayView
from ._spec.binding import infer
from ._state import STATE
from .array_family import HOST

_plans = weakref.WeakKeyDictionary()    # root node -> (version, Plan)


def bump():
    STATE.graph_version += 1


def link(f, in_nodes, out_nodes):
    """Make ``f`` the parent of ``out_nodes`` and a consumer of ``in_nodes``.

    A node's consumers are weak references in its ``refs``: an empty tuple, the one weak
    reference of its only consumer (most nodes: one object less for the garbage collector
    to track), or a list; the dead ones are dropped whenever the list reaches a power of
    two, so a variable fed to many short-lived functions (auto-forward) keeps a short list.
    Read them with :func:`consumer_refs`."""
    ref = weakref.ref(f)
    for n in in_nodes:
        if n is not None:
            add_consumer(n, ref)
    for n in out_nodes:
        n.parent = f
    STATE.graph_version += 1
    if not f.python and f.spec.name == "Reshape" and f._args.get("inplace") \
            and in_nodes[0] is not None and in_nodes[0].data.dtype == f.out_dtypes[0]:
        _share_reshaped(in_nodes[0], out_nodes[0])      # (half stores outputs as float16)


# add_consumer(node, ref): record the weak reference ``ref`` of a new consumer in
# ``node.refs`` (the forms are described in :func:`link`): the first live one is held alone, a
# second makes a list, and a list drops its dead references whenever it reaches a power of
# two. In C, as the auto-forward builder records every consumer with it.
add_consumer = _native_graph.add_consumer


def consumer_refs(node):
    """Weak references to the functions consuming ``node`` (some may be dead), in the
    order they were linked (see :func:`link`)."""
    refs = node.refs
    return (refs,) if refs.__class__ is _WeakRef else refs


_WeakRef = weakref.ReferenceType


def _share_reshaped(source, target):
    """An in-place reshape: the output's data is a window on the input's (nnabla shares
    the memory; writing through either changes both)."""
    source.needed = True        # auto-forward must not release the shared memory
    target.data = source.data.window(target.data.shape)


def mark_needed(f, in_nodes, out_nodes):
    """Record which data a later backward needs, so dropped handles release the rest."""
    spec = f.spec
    for i in spec.needed_inputs(len(in_nodes)):
        n = in_nodes[i]
        if n is not None:
            n.needed = True
    for o in spec.needed_outputs(len(out_nodes)):
        out_nodes[o].needed = True


# -- topology ------------------------------------------------------------------------------
def topological_functions(roots):
    """Functions reachable from ``roots`` (nodes), every function after its inputs' parents."""
    order, seen = [], set()
    for root in roots:
        f = root.parent
        if f is None or id(f) in seen:
            continue
        seen.add(id(f))
        stack = [(f, iter(f.in_nodes))]
        while stack:
            g, it = stack[-1]
            for n in it:
                if n is not None:
                    p = n.parent
                    if p is not None and id(p) not in seen:
                        seen.add(id(p))
                        stack.append((p, iter(p.in_nodes)))
                        break
            else:
                stack.pop()
                order.append(g)
    return order


class Plan:
    """Functions in topological order plus lazily computed buffer-release schedules."""

    def __init__(self, roots, functions):
        self.roots = roots
        self.functions = functions
        self.releases = {}
        self.backward_steps = None
        self._runners = None
        self.recomputes = any(r() is not None and r().recompute
                              for f in functions for r in f.out_refs)

    @property
    def runners(self):
        """One forward callable per function (see ``_execute.forward_runner``).

        A function downstream of a data-dependent output shape (``nonzero``,
        ``bool_gather``, packed sequences) checks its input shapes before each run and
        follows them (nnabla re-runs setup when an input's shape changed).
        """
        if self._runners is None:
            runners, resizable = [], set()
            for f in self.functions:
                downstream = not f.python and any(n is not None and id(n) in resizable
                                                  for n in f.in_nodes)
                runners.append(functools.partial(_checked_forward, f) if downstream
                               else _execute.forward_runner(f))
                if downstream or (not f.python and f.spec.dynamic_shape):
                    resizable.update(id(r()) for r in f.out_refs if r() is not None)
            self._runners = runners
        return self._runners

    def backward_releases(self):
        """``backward(clear_buffer=True)``: per function id, (weak output, clear its data
        too) for the outputs cleared once that function's backward ran."""
        if "backward" not in self.releases:
            self.releases["backward"] = _backward_releases(self)
        return self.releases["backward"]

    def reads(self):
        """Ids of the nodes whose data some backward step of the plan reads."""
        if "reads" not in self.releases:
            self.releases["reads"] = _reads_of(self.functions)
        return self.releases["reads"]

    def release_schedule(self, mode):
        if mode not in self.releases:
            self.releases[mode] = _release_schedule(self, mode)
        return self.releases[mode]


def get_plan(roots):
    key = roots[0] if len(roots) == 1 else None
    if key is not None:
        cached = _plans.get(key)
        if cached is not None and cached[0] == STATE.graph_version:
            return cached[1]
    functions = topological_functions(roots)
    for f in functions:
        _check_shapes(f)
    plan = Plan(list(roots), functions)
    if key is not None:
        _plans[key] = (STATE.graph_version, plan)
    return plan


def _checked_forward(f):
    """Forward of a function whose inputs may have been resized in this pass."""
    shapes = [None if n is None else n.data.shape for n in f.in_nodes]
    if shapes != list(f.kernel.in_shapes):
        _check_shapes(f)
        bump()                  # backward steps bound the old kernel
    f.run_forward()


def _check_shapes(f):
    """Re-run shape inference when an input was resized since the function was created."""
    shapes = [None if n is None else n.data.shape for n in f.in_nodes]
    if f.python or shapes == list(f.kernel.in_shapes):
        return
    args, out_shapes = infer(f.spec, shapes, dict(f._args), len(f.out_refs))
    f.kernel = _execute.new_kernel(f.binding, f.spec, args, shapes, out_shapes)
    for ref, shape in zip(f.out_refs, out_shapes):
        node = ref()
        if node is not None and node.data.shape != shape:
            if isinstance(node.data, SyncedArrayView):     # an in-place reshape's window
                node.data = SyncedArray(shape, node.data.dtype)
            else:
                node.data.reshape(shape)
            node.grad.reshape(shape)
    if _inplaced(f) and f.in_nodes[0].data.dtype == f.out_dtypes[0]:
        node = f.out_refs[0]()
        if node is not None:
            _share_reshaped(f.in_nodes[0], node)


def effective_need_grad(functions):
    """need_grad of every node of the plan, propagated from the leaves (by node id)."""
    eff = {}
    for f in functions:
        any_in = False
        for n in f.in_nodes:
            if n is None:
                continue
            if n.parent is None:
                e = n.need_grad
            else:
                e = eff.get(id(n), n.need_grad)
            any_in = any_in or e
        any_in = any_in and f.spec.differentiable if not f.python else any_in
        for ref in f.out_refs:
            n = ref()
            if n is not None:
                # the user's explicit need_grad on an intermediate wins over propagation
                eff[id(n)] = any_in if n.stop is None else not n.stop
    return eff


def backward_reads(f):
    """Positions of the inputs and outputs whose data ``f``'s backward reads."""
    n_in, n_out = len(f.in_nodes), len(f.out_refs)
    if not f.python:
        return f.spec.needed_inputs(n_in), f.spec.needed_outputs(n_out)
    # A PythonFunction answers per (gradient of input i, data of input j / output o).
    ins = [j for j in range(n_in) if any(f.grad_depends_input_data(i, j) for i in range(n_in))]
    outs = [o for o in range(n_out)
            if any(f.grad_depends_output_data(i, o) for i in range(n_in))]
    return ins, outs


def _reads_of(functions):
    """Ids of the nodes whose data the backward of a function needing grads reads."""
    eff = effective_need_grad(functions)
    needed = set()
    for f in functions:
        if not any(eff.get(id(n), n.need_grad if n.parent is None else False)
                   for n in f.in_nodes if n is not None):
            continue
        ins, outs = backward_reads(f)
        needed.update(id(f.in_nodes[i]) for i in ins if f.in_nodes[i] is not None)
        needed.update(id(f.out_refs[o]()) for o in outs)
    return needed


def _release_schedule(plan, mode):
    """For each step, the nodes whose data may be released after it (forward pass)."""
    roots = {id(r) for r in plan.roots}
    last, kept = {}, set()
    for i, f in enumerate(plan.functions):
        for n in f.in_nodes:
            if n is not None:
                last[id(n)] = (i, n)
                if _keeps_inputs(f):
                    kept.add(id(n))
        kept.update(_inplaced(f))
    # what a recomputation re-reads: the inputs of functions with recompute outputs (those
    # inputs that are not recomputed themselves), in every mode
    needed = {id(n) for f in plan.functions
              if any(r() is not None and r().recompute for r in f.out_refs)
              for n in f.in_nodes if n is not None and not n.recompute}
    if mode == "no_need_grad":
        needed |= plan.reads()
    sched = [[] for _ in plan.functions]
    for key, (i, n) in last.items():
        if n.parent is None or n.persistent or key in roots or key in kept:
            continue
        if n.recompute or (mode != "none" and key not in needed):
            sched[i].append(n)      # recompute nodes go in every mode; backward rebuilds them
    return sched if any(sched) else None


# -- forward -------------------------------------------------------------------------------
# Float overflow and NaN are values in nnabla (loss scaling depends on seeing inf), not
# warnings: a whole pass runs with numpy's floating-point warnings off.
_QUIET = dict(over="ignore", invalid="ignore", divide="ignore", under="ignore")


def forward(roots, clear_buffer=False, clear_no_need_grad=False, pre_hook=None, post_hook=None):
    with np.errstate(**_QUIET):
        _forward(roots, clear_buffer, clear_no_need_grad, pre_hook, post_hook)


def _forward(roots, clear_buffer, clear_no_need_grad, pre_hook, post_hook):
    pre_hook, post_hook = callback.function_hooks(pre_hook, post_hook)
    plan = get_plan(roots)
    functions = plan.functions
    mode = "all" if clear_buffer else ("no_need_grad" if clear_no_need_grad else "none")
    sched = plan.release_schedule(mode)
    runners = plan.runners
    recorder = STATE.clear_called_recorder
    if sched is None and pre_hook is None and post_hook is None and recorder is None:
        for run in runners:
            run()
        return
    for i, f in enumerate(functions):
        if pre_hook is not None:
            pre_hook(f)
        runners[i]()
        if post_hook is not None:
            post_hook(f)
        if sched is not None:
            for n in sched[i]:
                n.data.clear()
        if recorder is not None:
            _record(recorder, f)


def _flags(node, seed=None):
    """(data, grad) ``clear_called`` of ``node``; ``seed``: the grad array it stands for."""
    grad = node.grad if seed is None else seed
    return (node.data.clear_called, grad.clear_called)


def _record(recorder, f, state=None):
    """Give the active clear-called recorder ``f``'s input and output flags."""
    root = None if state is None else state.root
    outs = [r() for r in f.out_refs]
    recorder.record([_flags(n) for n in f.in_nodes if n is not None],
                    [_flags(n, state.seed if n is root else None) for n in outs
                     if n is not None])


def _python_forward(f):
    f.forward_impl(f.inputs, f.outputs)


# -- backward ------------------------------------------------------------------------------
class _Pass:
    """State of one backward pass: which intermediate grads were written."""

    __slots__ = ("root", "seed", "written", "temporary_seed", "visits")

    def __init__(self, root, seed, temporary_seed=False):
        self.root = root
        self.seed = seed
        self.written = set()
        self.temporary_seed = temporary_seed    # made for this pass: clear_buffer clears it
        self.visits = {}        # recomputation: uses of each node seen so far


def backward(root, seed, clear_buffer=False, communicator_callbacks=None,
             pre_hook=None, post_hook=None, temporary_seed=False):
    """Back-propagate from node ``root`` starting from gradient ``seed`` (a SyncedArray;
    ``temporary_seed``: made for this call from a scalar or host array)."""
    with np.errstate(**_QUIET):
        _backward(root, seed, clear_buffer, communicator_callbacks, pre_hook, post_hook,
                  temporary_seed)


def _backward_steps(plan):
    """(function, propagate_down) in backward order, skipping functions with nothing to do.

    Cached on the plan: need_grad changes bump the graph version, which drops the plan.
    """
    steps = plan.backward_steps
    if steps is None:
        eff = effective_need_grad(plan.functions)
        steps = []
        for f in reversed(plan.functions):
            pd = [False if n is None else (eff.get(id(n), False) if n.parent is not None
                                           else n.need_grad) for n in f.in_nodes]
            if any(pd) and (f.python or f.spec.differentiable):
                steps.append((f, pd, _python_backward if f.python else _backward_runner(f, pd)))
        plan.backward_steps = steps
    return steps


def _backward(root, seed, clear_buffer, communicator_callbacks, pre_hook, post_hook,
              temporary_seed=False):
    pre_hook, post_hook = callback.function_hooks(pre_hook, post_hook)
    plan = get_plan([root])
    if not plan.functions:
        return
    state = _Pass(root, seed, temporary_seed)
    callbacks = _as_list(communicator_callbacks)
    steps = _backward_steps(plan)
    recorder = STATE.clear_called_recorder
    if not (callbacks or clear_buffer or pre_hook or post_hook or recorder is not None
            or plan.recomputes):
        for f, pd, run in steps:
            run(state) if run is not _python_backward else run(f, pd, state)
        return
    reads = plan.reads() if plan.recomputes else None
    for f, pd, run in steps:
        if reads is not None:
            _recompute_for(f, pd, state, reads, recorder)
        if pre_hook is not None:
            pre_hook(f)
        run(state) if run is not _python_backward else run(f, pd, state)
        if post_hook is not None:
            post_hook(f)
        for cb in callbacks:
            if hasattr(cb, "on_finish_function_backward"):
                cb.on_finish_function_backward(f)
        if clear_buffer:
            _release_after_backward(f, state, plan.backward_releases())
        if recorder is not None:
            _record(recorder, f, state)
    for cb in callbacks:
        if hasattr(cb, "on_finish_backward"):
            cb.on_finish_backward()


def _as_list(callbacks):
    if callbacks is None:
        return []
    return list(callbacks) if isinstance(callbacks, (list, tuple)) else [callbacks]


def _read_data(f, node, what, dtype=F32):
    arr = node.data
    head = arr.heads.get((f.family, arr.dtype if dtype is None else dtype))
    if head is not None:
        return head
    if not arr.heads and arr.fill_value is None and arr.clear_called and node.recompute:
        recompute(node)
    if not arr.heads and arr.fill_value is None and arr.clear_called:
        raise RuntimeError(f"{f.spec.api_name}: the backward pass needs the data of its {what}, "
                           "which was cleared (forward(clear_buffer=True) or "
                           "persistent=False); run forward with clear_no_need_grad=True instead")
    return arr.get(arr.dtype if dtype is None else dtype, f.family)


def recompute(node):
    """Rebuild the cleared data of ``node`` by re-running its parent (and, recursively,
    cleared ``recompute`` inputs of that parent). Stochastic kernels replay their draws."""
    f = node.parent
    for n in f.in_nodes:
        if n is not None and n.recompute and n.parent is not None and not n.data.heads:
            recompute(n)
    if f.python:
        _python_forward(f)
    else:
        f.run_forward(replay=True)


def _python_backward(f, propagate_down, state):
    """A PythonFunction's step: ``backward_impl`` with nnabla's accum flags, seeing the
    pass's output gradients (the root's seed; zeros for outputs not yet written)."""
    outs = [r() for r in f.out_refs]
    swapped = []
    for node in outs:
        if node is None:
            continue
        if node is state.root:
            saved = node.grad
            tmp = SyncedArray(saved.shape, saved.dtype)
            tmp.set(HOST.copy(state.seed.get(saved.dtype, HOST)))    # it reads .g on the host
            node.grad = tmp
            swapped.append((node, saved))
        elif id(node) not in state.written:
            node.grad.zero()
    accum = [n.parent is None or id(n) in state.written for n in f.in_nodes]
    try:
        f.backward_impl(f.inputs, f.outputs, list(propagate_down), accum)
    finally:
        for node, saved in swapped:
            node.grad = saved
    for n, pd in zip(f.in_nodes, propagate_down):
        if pd:
            state.written.add(id(n))


def _backward_runner(f, pd):
    """A callable ``run(state)`` doing ``f``'s step of a backward pass.

    Built once per plan: it binds which inputs and outputs the backward reads (the
    spec's ``backward_needs``), which inputs receive gradients, the kernel and the family,
    so a pass is a flat loop of these calls. Leaves accumulate across passes; an
    intermediate's first write in a pass overwrites, later ones add.

    A gradient that overwrites (the common case) is stored by the runner itself when it
    is the family's float32 array of the right shape: it becomes the gradient's only
    head, copied first only if it shares memory with an input or output gradient the
    kernel was given. Everything else goes through ``_execute.accumulate``.
    """
    spec, fam, kernel = f.spec, f.family, f.kernel
    n_in, n_out = len(f.in_nodes), len(f.out_refs)
    # (position, node, dtype or None for the stored one, head key when the dtype is fixed)
    reads = [(i, f.in_nodes[i], f.in_dtypes[i],
              None if f.in_dtypes[i] is None else (fam, f.in_dtypes[i]))
             for i in spec.needed_inputs(n_in) if f.in_nodes[i] is not None]
    out_reads = [(o, f.out_refs[o]) for o in spec.needed_outputs(n_out)]
    outs = list(zip(f.out_refs, kernel.out_shapes))
    # (position, node, leaf): leaves accumulate across passes (a parent change bumps the
    # graph version, which rebuilds the plan and this runner)
    targets = [(i, n, n.parent is None) for i, n in enumerate(f.in_nodes)
               if pd[i] and n is not None]
    half, grad_dtype, keeps = f.grad_dtype is _execute.F16, f.grad_dtype, kernel.keeps_input_grads
    backward, accumulate = kernel.backward, _execute.accumulate
    f32_key = (fam, F32)
    direct = grad_dtype is F32          # gradients are stored as the kernel computed them
    array_type, owner, nbytes, aliases = fam.array_type, fam.owner, fam.nbytes, _execute.aliases

    writes = bool(spec._backward_mutated)

    def store(grads, protect, written):
        for i, node, leaf in targets:
            g = grads[i]
            if g is None:
                continue
            key = id(node)
            grad = node.grad
            add = leaf or key in written
            if direct and g.__class__ is array_type and g.dtype is F32 \
                    and g.shape == grad.shape \
                    and not (add and (grad.heads or grad.fill_value not in (None, 0))):
                if owner(g) is g:       # owns its memory: shared only by being an array
                    for a in protect:
                        if a is g:
                            g = fam.copy(g)
                            break
                elif aliases(fam, g, protect):
                    g = fam.copy(g)
                grad.put(f32_key, g, nbytes(g))
            else:
                accumulate(fam, grad, g, add, grad_dtype, protect)
            written.add(key)

    if n_out == 1 and not (writes or half or keeps) and all(r[3] is not None for r in reads):
        return _single_output_backward(f, pd, reads, out_reads, outs[0], f32_key, store)

    def run(state):
        xs = [None] * n_in
        for i, node, dtype, key in reads:
            head = None if key is None else node.data.heads.get(key)
            xs[i] = head if head is not None else _read_data(f, node, f"input {i}", dtype)
        if writes:
            arrays = [None if n is None else n.data for n in f.in_nodes]
            xs = _execute.writable_inputs(f, arrays, xs)
        if half:
            xs = _execute.through_half(fam, xs)
        ys = [None] * n_out
        for o, ref in out_reads:
            node = ref()
            if node is not None:
                head = node.data.heads.get(f32_key)
                ys[o] = head if head is not None else _read_data(f, node, f"output {o}")
        root, written = state.root, state.written
        dys = []
        for ref, shape in outs:
            node = ref()
            if node is None:
                dys.append(_execute.zeros(fam, shape))
            elif node is root:
                dys.append(state.seed.get(F32, fam))
            elif id(node) in written:
                grad = node.grad
                head = grad.heads.get(f32_key)
                dys.append(head if head is not None else grad.get(F32, fam))
            else:       # the node's own shape: data-sized outputs differ from the inferred one
                dys.append(_execute.zeros(fam, node.data.shape))
        grads = backward(xs, ys, dys, pd)
        if writes:
            _execute.keep_written_inputs(f, arrays, xs)
        protect = dys + xs          # a gradient sharing their memory is copied
        if keeps:
            # F.sink(one_input_grad=False): the gradients already held by the inputs are
            # the ones this pass propagates from them.
            written.update(id(node) for _, node, _ in targets)
            return
        store(grads, protect, written)
    return run


def _single_output_backward(f, pd, reads, out_reads, out, f32_key, store):
    """:func:`_backward_runner`'s ``run`` for one output, inputs read in fixed dtypes, no
    backward writes to inputs and no half storage (most functions): no loop over outputs."""
    fam, backward, n_in = f.family, f.kernel.backward, len(f.in_nodes)
    reads = [(i, node, key, key[1]) for i, node, _, key in reads]
    ref, shape = out
    reads_y = bool(out_reads)

    def run(state):
        xs = [None] * n_in
        for i, node, key, dtype in reads:
            head = node.data.heads.get(key)
            xs[i] = head if head is not None else _read_data(f, node, f"input {i}", dtype)
        node = ref()
        ys = [None]
        if reads_y and node is not None:
            head = node.data.heads.get(f32_key)
            ys[0] = head if head is not None else _read_data(f, node, "output 0")
        written = state.written
        if node is None:
            dy = _execute.zeros(fam, shape)
        elif node is state.root:
            dy = state.seed.get(F32, fam)
        elif id(node) in written:
            grad = node.grad
            dy = grad.heads.get(f32_key)
            if dy is None:
                dy = grad.get(F32, fam)
        else:       # the node's own shape: data-sized outputs differ from the inferred one
            dy = _execute.zeros(fam, node.data.shape)
        dys = [dy]
        store(backward(xs, ys, dys, pd), dys + xs, written)
    return run


def _keeps_inputs(f):
    return not f.python and f.spec.keeps_inputs


def _inplaced(f):
    """Ids of the nodes an in-place reshape shares (its input and output): nnabla never
    clears them in a forward pass (its other functions' ``inplace`` flags are obsolete)."""
    if f.python or f.spec.name != "Reshape" or not f._args.get("inplace") \
            or f.in_nodes[0] is None:
        return ()
    out = f.out_refs[0]() if f.out_refs else None
    return (id(f.in_nodes[0]),) if out is None else (id(f.in_nodes[0]), id(out))


def _backward_releases(plan):
    """What ``clear_buffer`` clears after each backward step: the outputs of the step's
    function, except the root, persistent ones, inputs of functions keeping them, and
    outputs a function outside the plan also reads (another backward may need them, as in
    nnabla); an in-place reshape's output keeps its data (it is the input's)."""
    members = {id(f) for f in plan.functions}
    roots = {id(r) for r in plan.roots}
    releases = {}
    for f in plan.functions:
        shared = _inplaced(f)
        entries = []
        for ref in f.out_refs:
            n = ref()
            if n is None or n.persistent or id(n) in roots:
                continue
            consumers = [g for g in (r() for r in consumer_refs(n)) if g is not None]
            if any(_keeps_inputs(g) or id(g) not in members for g in consumers):
                continue
            entries.append((ref, id(n) not in shared))
        releases[id(f)] = entries
    return releases


def _release_after_backward(f, state, releases):
    """``clear_buffer``: clear what :func:`_backward_releases` lists for ``f``, and the seed
    backward made from a scalar or host array once the root's parent ran."""
    root = state.root
    if state.temporary_seed and root.parent is f and not root.persistent:
        state.seed.clear()
    for ref, with_data in releases[id(f)]:
        n = ref()
        if n is not None:
            n.grad.clear()
            if with_data:
                n.data.clear()


# -- recomputation during backward ---------------------------------------------------------
def _recompute_for(f, pd, state, reads, recorder):
    """Before ``f``'s backward step, rebuild the cleared ``recompute`` data it reads.

    As nnabla: the outputs and inputs that step reads and that were cleared are rebuilt by
    re-running their parents in forward order (going up only through cleared data); after
    each re-run, the inputs no backward step reads are cleared again.
    """
    ins, outs = backward_reads(f)
    if not any(pd):
        return
    closed = set()
    for o in outs:
        node = f.out_refs[o]()
        if node is not None and node.recompute and node.data.clear_called:
            _recompute_visit(f, closed, state, reads, recorder)
    for i in ins:
        node = f.in_nodes[i]
        if node is not None and node.parent is not None and node.recompute \
                and node.data.clear_called and id(node.parent) not in closed:
            _recompute_visit(node.parent, closed, state, reads, recorder)


def _recompute_visit(func, closed, state, reads, recorder):
    closed.add(id(func))
    for n in func.in_nodes:
        if n is not None and n.parent is not None and id(n.parent) not in closed \
                and n.data.clear_called:
            _recompute_visit(n.parent, closed, state, reads, recorder)
    if func.python:
        _python_forward(func)
    else:
        func.run_forward(replay=True)
    _clear_after_recompute(func, state, reads)
    if recorder is not None:
        _record(recorder, func)


def _clear_after_recompute(func, state, reads):
    """nnabla's ``clear_no_need_grad`` rule within a recomputation: an input is cleared at
    its last use unless a backward step reads it (``reads``), it is a leaf, persistent, or
    shared in place."""
    inplaced = _inplaced(func)
    for n in func.in_nodes:
        if n is None:
            continue
        uses = sum(1 for r in consumer_refs(n) if r() is not None)
        if uses > 1:
            seen = state.visits[id(n)] = state.visits.get(id(n), 0) + 1
            if seen < uses:
                continue
        if n.parent is None or n.persistent or id(n) in reads or id(n) in inplaced \
                or _keeps_inputs(func):
            continue
        n.data.clear()


# -- structure edits -----------------------------------------------------------------------
def _track_below(node):
    """Keep the collector's invariant after ``node`` got a parent: below a tracked function
    everything is tracked (auto-forward leaves nodes untracked only below untracked ones;
    see "Loose graphs" in _native_graph.c)."""
    if gc.is_tracked(node.parent):
        _native_graph.track_graph(node)


def set_parent(node, func):
    if func is None:
        node.parent = None
    else:
        func.out_refs = [*func.out_refs, weakref.ref(node)]     # a list or a tuple
        node.parent = func
        _track_below(node)
    bump()


def rewire_on(node, var_node):
    """``node`` takes ``var_node``'s data and parent; ``var_node`` loses its parent."""
    parent = var_node.parent
    node.data = var_node.data
    node.grad = var_node.grad
    node.parent = parent
    if parent is not None:
        parent.out_refs = [weakref.ref(node) if r() is var_node else r for r in parent.out_refs]
        _track_below(node)
    var_node.parent = None
    bump()


def clear_all_graph_links(node):
    for f in topological_functions([node]):
        for ref in f.out_refs:
            n = ref()
            if n is not None:
                n.parent = None
    node.parent = None
    bump()


def no_grad_copy(var):
    """Copy of the graph behind ``var`` where every leaf has need_grad False."""
    for f in topological_functions([var._node]):
        for n in f.in_nodes:
            if n is not None and n.parent is None:
                n.need_grad = False
        for ref in f.out_refs:
            n = ref()
            if n is not None:
                n.need_grad = False
    bump()
    return var
