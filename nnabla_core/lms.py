"""``nnabla.lms``: out-of-core training, swapping arrays between device and host memory.

:class:`SwapInOutScheduler` keeps the device memory a training step holds within a budget by
moving arrays out to host memory after use and back before they are needed again. The
first iteration run under the scheduler records, for each function (forward and backward)
and each parameter a solver processes, which arrays it used on the device; every array is
moved out right after its block, so that iteration runs in little device memory. From the
second iteration on, the recorded order gives a schedule: arrays are fetched back ahead of
their use (prefetch, up to ``prefetch_size`` bytes ahead and never beyond ``size``), and when
the arrays held on the device would exceed ``size`` bytes the one needed again latest is
moved out. An iteration that departs from the recorded order still computes the same
numbers: arrays are synchronised on use by the engine, the schedule only decides where they
wait; arrays off the schedule are moved out at the end of the iteration.

Moving goes through the core's array families (``SyncedArray.swap_out`` copies a device
head to a host head and releases it; a prefetch is a device ``get``), so values are copied,
never recomputed: training under the scheduler gives the same numbers as without it.
"""
from __future__ import annotations

import bisect
import numbers
import weakref

from . import callback
from ._array import SyncedArrayView
from .array_family import HOST
from .context import Context
from .plugins.resolve import family_of_context

__all__ = ["SwapInOutScheduler"]

_HOOK_KEYS = ("lms_function_pre_hook", "lms_function_post_hook", "lms_solver_pre_hook",
              "lms_solver_post_hook")


def _memory_root(sa):
    return sa.root if isinstance(sa, SyncedArrayView) else sa


def _function_arrays(f):
    """The arrays a graph function may touch: data and grad of its inputs and outputs."""
    nodes = [n for n in f.in_nodes if n is not None]
    nodes += [n for n in (r() for r in f.out_refs) if n is not None]
    out = []
    for n in nodes:
        out.append(_memory_root(n.data))
        out.append(_memory_root(n.grad))
    return out


class SwapInOutScheduler:
    """Out-of-core execution: keep a training step within ``size`` bytes of device memory.

    Wrap each iteration (setting the inputs, forward, backward, the solver calls) in
    ``with scheduler:``; the scheduler installs nnabla's global function and solver hooks
    (:mod:`nnabla.callback`) for the block. Every iteration should run the same graph in
    the same order: the schedule is made from the first one.

    Args:
        h_ctx (nnabla.Context): a context whose arrays live in host memory (the destination
            of swap-out), e.g. ``get_extension_context('cpu')``.
        d_ctx (nnabla.Context): the device context the network runs in, e.g.
            ``get_extension_context('cudnn', device_id='0')``.
        size (int): device memory, in bytes, the scheduled arrays may hold.
        prefetch_size (int, optional): bytes fetched ahead of their use at most; default
            ``1.5 * size``, as nnabla.
        save_host_mem (bool): nnabla's choice of prefetching by ``cast`` to save host memory.
            Here a prefetch never invalidates the host copy, so no host memory is saved and
            the flag changes nothing; accepted for compatibility.
        save_host_mem_no_abort (bool): with ``save_host_mem``, do not abort on an
            off-schedule access (never aborts here); accepted for compatibility.

    Raises:
        TypeError: a context is not an ``nnabla.Context``, or ``size`` is not a number.
        ValueError: ``size`` or ``prefetch_size`` is negative; ``h_ctx`` is not a host
            context; ``d_ctx`` resolves to host memory (a CPU-only context: there is no
            device memory to save), or its backend is not installed or not available.

    Example::

        from nnabla.ext_utils import get_extension_context
        from nnabla.lms import SwapInOutScheduler

        host_ctx = get_extension_context('cpu', device_id='', type_config='float')
        device_ctx = get_extension_context('cudnn', device_id='0', type_config='float')
        scheduler = SwapInOutScheduler(host_ctx, device_ctx, size=4 << 30)
        nn.set_default_context(device_ctx)
        loss = build_network(x)
        solver = S.Sgd(nn.get_parameters())
        for i in range(iterations):
            with scheduler:
                x.d = next_data()
                loss.forward(clear_no_need_grad=True)
                solver.zero_grad()
                loss.backward(clear_buffer=True)
                solver.update()
    """

    def __init__(self, h_ctx, d_ctx, size, prefetch_size=None, save_host_mem=False,
                 save_host_mem_no_abort=False):
        size = _bytes("size", size)
        prefetch_size = size * 1.5 if prefetch_size is None else prefetch_size
        self._host, self._device = _families(h_ctx, d_ctx)
        self.h_ctx, self.d_ctx = h_ctx, d_ctx
        self.size = size
        self.prefetch_size = _bytes("prefetch_size", prefetch_size)
        self.save_host_mem = bool(save_host_mem)
        self.save_host_mem_no_abort = bool(save_host_mem_no_abort)
        self._order = None          # recorded blocks: [(signature, [(weakref, dtype, bytes)])]
        self._plan = None           # per block: (swap-out refs, prefetch (ref, dtype)) before it
        self._recording = False
        self._active = False
        self.swapped_out_bytes = 0  # totals since construction, for inspection
        self.swapped_in_bytes = 0

    # -- the with-statement and nnabla's explicit interface -----------------------------
    def __enter__(self):
        self.start_scheduling()
        callback.set_function_pre_hook(_HOOK_KEYS[0], self.function_pre_hook)
        callback.set_function_post_hook(_HOOK_KEYS[1], self.function_post_hook)
        callback.set_solver_pre_hook(_HOOK_KEYS[2], self.update_pre_hook)
        callback.set_solver_post_hook(_HOOK_KEYS[3], self.update_post_hook)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        callback.unset_function_pre_hook(_HOOK_KEYS[0])
        callback.unset_function_post_hook(_HOOK_KEYS[1])
        callback.unset_solver_pre_hook(_HOOK_KEYS[2])
        callback.unset_solver_post_hook(_HOOK_KEYS[3])
        self.end_scheduling()

    def start_scheduling(self):
        """Start one scheduled iteration (the with-statement calls it on entry)."""
        if self._active:
            raise RuntimeError("SwapInOutScheduler.start_scheduling: already scheduling; "
                               "call end_scheduling first (or use one with-statement)")
        if self._order is not None and self._plan is None:
            self._plan = _make_plan(self._order, self.size, self.prefetch_size)
        self._active = True
        self._recording = self._order is None
        self._blocks = []           # this iteration's (signature, arrays) in order
        self._on_schedule = True
        self._previous = []         # arrays of the block before (first iteration)
        self._touched = {}          # id -> array, every array seen this iteration

    def end_scheduling(self):
        """End the iteration: every array it used on the device is moved out (the
        with-statement calls it on exit). The first iteration's order becomes the
        schedule of the next ones."""
        if not self._active:
            raise RuntimeError("SwapInOutScheduler.end_scheduling: not scheduling; call "
                               "start_scheduling first (or use one with-statement)")
        self._active = False
        for sa in list(self._touched.values()):
            self._swap_out(sa)
        if self._recording:
            self._order = [(sig, [(weakref.ref(sa), dtype, nbytes) for sa, dtype, nbytes in arrs])
                           for sig, arrs in self._blocks]
        self._recording = False
        self._blocks = self._touched = self._previous = None

    def function_pre_hook(self, func):
        """Global function pre hook set by the with-statement (forward and backward)."""
        self._pre(("f", id(func)), _function_arrays(func))

    def function_post_hook(self, func):
        """Global function post hook set by the with-statement."""
        self._post(_function_arrays(func))

    def update_pre_hook(self):
        """Global solver pre hook set by the with-statement (each parameter of update,
        weight_decay, clip_grad_by_norm, ...)."""
        self._pre(("u",), self._update_arrays())

    def update_post_hook(self):
        """Global solver post hook set by the with-statement."""
        self._post(self._update_arrays())

    # -- the work ----------------------------------------------------------------------
    @staticmethod
    def _update_arrays():
        arrays = callback.UPDATING[0]
        return [] if arrays is None else [_memory_root(sa) for sa in arrays]

    def _pre(self, signature, arrays):
        if not self._active:
            return
        index = len(self._blocks)
        self._blocks.append((signature, []))
        if self._recording or not self._follows(index, signature):
            for sa in self._previous:       # nnabla's first iteration: out after each block
                self._swap_out(sa)
            return
        swap_outs, prefetches = self._plan[index]
        for ref in swap_outs:
            sa = ref()
            if sa is not None:
                self._swap_out(sa)
        for ref, dtype in prefetches:
            sa = ref()
            if sa is not None:
                self._swap_in(sa, dtype)

    def _follows(self, index, signature):
        if self._on_schedule and (index >= len(self._order)
                                  or self._order[index][0] != signature):
            self._on_schedule = False
        return self._on_schedule

    def _post(self, arrays):
        if not self._active or not self._blocks:
            return
        used = []
        for sa in arrays:
            heads = [(key, head) for key, head in sa.heads.items() if key[0] is self._device]
            if heads:
                self._touched[id(sa)] = sa
                used.append((sa, heads[0][0][1], sum(self._device.nbytes(h) for _, h in heads)))
        self._blocks[-1][1].extend(used)
        self._previous = [sa for sa, _, _ in used]

    def _swap_out(self, sa):
        self.swapped_out_bytes += sa.swap_out(self._device, self._host)

    def _swap_in(self, sa, dtype):
        if not sa.heads or any(key[0] is self._device for key in sa.heads):
            return          # empty (cleared, lazily filled) or already there
        head = sa.get(dtype, self._device)
        self.swapped_in_bytes += self._device.nbytes(head)

    def __repr__(self):
        return (f"SwapInOutScheduler(size={self.size}, prefetch_size={self.prefetch_size}, "
                f"device family {self._device.name!r})")


def _bytes(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"SwapInOutScheduler: argument {name!r} must be a number of bytes; "
                        f"given {type(value).__name__}")
    if value < 0:
        raise ValueError(f"SwapInOutScheduler: argument {name!r} must be >= 0 bytes; "
                         f"given {value}")
    return int(value)


def _families(h_ctx, d_ctx):
    for name, ctx in (("h_ctx", h_ctx), ("d_ctx", d_ctx)):
        if not isinstance(ctx, Context):
            raise TypeError(f"SwapInOutScheduler: argument {name!r} must be an nnabla.Context; "
                            f"given {type(ctx).__name__}")
    host, device = family_of_context(h_ctx), family_of_context(d_ctx)
    if host is not HOST:
        raise ValueError(f"SwapInOutScheduler: argument 'h_ctx' (backend={h_ctx.backend}) "
                         f"resolves to array family {host.name!r}; expected a host context "
                         f"whose arrays live in host memory (family {HOST.name!r})")
    if device is HOST:
        raise ValueError(
            f"SwapInOutScheduler: argument 'd_ctx' (backend={d_ctx.backend}) resolves to "
            f"host memory (array family {HOST.name!r}); expected a device context such as "
            "get_extension_context('cudnn', device_id='0'): out-of-core execution swaps "
            "device memory out to the host, and a CPU-only context has no device memory. "
            "Install a device backend (pip install nnabla-ext-cuda) and check it with "
            "`python -m nnabla plugins`")
    return host, device


def _make_plan(order, size, prefetch_size):
    """Per recorded block: the arrays to move out and to fetch before it runs.

    A simulation of the device's contents over the recorded order: after each block, the
    arrays not used again leave, and while more than ``size`` bytes stay, the one used again
    latest leaves (Belady's choice); then arrays of the next blocks are fetched in order of
    use while they fit in ``size`` and ``prefetch_size`` bytes ahead. Arrays needed by a block
    and not resident are left to the engine's synchronisation on use.
    """
    uses = {}
    for i, (_, arrays) in enumerate(order):
        for ref, _, _ in arrays:
            uses.setdefault(ref, []).append(i)
    plan = [([], []) for _ in order]
    resident = {}
    if order:
        _prefetch(order, 0, resident, size, prefetch_size, plan[0][1])

    def next_use(ref, after):
        found = uses[ref]
        k = bisect.bisect_right(found, after)
        return found[k] if k < len(found) else len(order)

    for i, (_, arrays) in enumerate(order):
        for ref, _, n in arrays:
            resident[ref] = n
        if i + 1 == len(order):
            break
        outs = plan[i + 1][0]
        for ref in [r for r in resident if next_use(r, i) == len(order)]:
            del resident[ref]
            outs.append(ref)
        needed_next = {ref for ref, _, _ in order[i + 1][1]}
        while sum(resident.values()) > size:
            victims = [r for r in resident if r not in needed_next] or list(resident)
            victim = max(victims, key=lambda r: next_use(r, i))
            del resident[victim]
            outs.append(victim)
        _prefetch(order, i + 1, resident, size, prefetch_size, plan[i + 1][1])
    return plan


def _prefetch(order, start, resident, size, prefetch_size, fetches):
    used, ahead = sum(resident.values()), 0
    for _, arrays in order[start:]:
        for ref, dtype, n in arrays:
            if ref in resident:
                continue
            if used + n > size or ahead + n > prefetch_size:
                return
            resident[ref] = n
            used += n
            ahead += n
            fetches.append((ref, dtype))
