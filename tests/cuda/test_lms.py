"""``nnabla.lms.SwapInOutScheduler`` on the cuda backend (emulation): arrays leave the
device after use and come back before it, within the budget, and training gives the same
numbers as without the scheduler; a CPU-only context is refused with the reason."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import nnabla.solvers as S
from nnabla.array_family import family
from nnabla.ext_utils import get_extension_context
from nnabla.lms import SwapInOutScheduler

STEPS = 4


def _network(scope):
    rng = np.random.RandomState(0)
    with nn.parameter_scope(scope):
        nn.clear_parameters()
        x = nn.Variable((8, 1, 6, 6))
        t = nn.Variable((8, 1))
        h = F.relu(PF.convolution(x, 4, (3, 3), pad=(1, 1), name="c1"))
        h = F.max_pooling(h, (2, 2))
        h = F.relu(PF.affine(h, 16, name="fc1"))
        loss = F.mean(F.softmax_cross_entropy(PF.affine(h, 3, name="fc2"), t))
        params = nn.get_parameters()
    data = [(rng.randn(*x.shape), rng.randint(0, 3, t.shape)) for _ in range(STEPS)]
    return x, t, loss, params, data


def _train(scope, scheduler=None, watch=None, type_config="float"):
    """Losses and final parameters of STEPS Momentum steps on the cuda context."""
    nn.seed(1)
    with nn.context_scope(get_extension_context("cuda", type_config=type_config)):
        x, t, loss, params, data = _network(scope)
        solver = S.Momentum(0.1)
        solver.set_parameters(params)
        if watch is not None:
            watch.arrays = _graph_arrays(loss, params)
        losses = []
        for xd, td in data:
            with (scheduler if scheduler is not None else _nothing()):
                if watch is not None:
                    watch.begin()
                x.d, t.d = xd, td
                loss.forward(clear_no_need_grad=True)
                solver.zero_grad()
                loss.backward(clear_buffer=True)
                solver.weight_decay(1e-4)
                solver.update()
                if watch is not None:
                    watch.end()
            losses.append(float(loss.d))
    return losses, {k: v.d.copy() for k, v in params.items()}, (x, t, loss, params)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _device_bytes(arrays, fam):
    return sum(fam.nbytes(h) for sa in arrays for (f, _), h in sa.heads.items() if f is fam)


def _graph_arrays(loss, params):
    arrays, seen, stack = [], set(), [loss._node]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        arrays += [n.data, n.grad]
        if n.parent is not None:
            stack += [m for m in n.parent.in_nodes if m is not None]
    return arrays


@pytest.mark.parametrize("type_config", ["float", "half"])
def test_training_under_the_scheduler_gives_the_same_numbers(type_config):
    get_extension_context("cuda")
    fam = family("cuda")
    scheduler = SwapInOutScheduler(get_extension_context("cpu", type_config=type_config),
                                   get_extension_context("cuda", type_config=type_config),
                                   size=4096)
    ref_losses, ref_params, _ = _train("lms_ref", type_config=type_config)
    losses, params, (x, t, loss, net_params) = _train("lms_swap", scheduler,
                                                      type_config=type_config)
    assert losses == ref_losses
    assert sorted(params) == sorted(ref_params)          # names relative to the scope
    for key in ref_params:
        np.testing.assert_array_equal(params[key], ref_params[key])
    assert scheduler.swapped_out_bytes > 0 and scheduler.swapped_in_bytes > 0
    # the iteration ended with nothing the scheduler saw left on the device
    assert _device_bytes(_graph_arrays(loss, net_params), fam) == 0


class _Watch:
    """Device bytes held by the network's arrays after each function and update step."""

    def __init__(self, fam):
        self.arrays, self.fam, self.peaks, self.prefetched = [], fam, [], []
        self.beyond_block = []      # device bytes besides those of the block just run

    def begin(self):
        nn.set_function_pre_hook("watch_pre", self.pre)
        nn.set_function_post_hook("watch_post", self.sample)
        nn.set_solver_post_hook("watch_post", self.sample)
        self.peaks.append(0)
        self.beyond_block.append(0)
        self.prefetched.append([])

    def end(self):
        for unset in (nn.unset_function_pre_hook, nn.unset_function_post_hook,
                      nn.unset_solver_post_hook):
            unset("watch_pre" if unset is nn.unset_function_pre_hook else "watch_post")

    def pre(self, f):
        # runs after the scheduler's pre hook: were the inputs' values brought in already?
        held = [n.data for n in f.in_nodes if n is not None and n.data.heads]
        self.prefetched[-1].append(all(any(k[0] is self.fam for k in sa.heads)
                                       for sa in held))

    def sample(self, f=None):
        held = _device_bytes(self.arrays, self.fam)
        self.peaks[-1] = max(self.peaks[-1], held)
        if f is not None:
            own = {id(sa): sa for n in list(f.in_nodes) + [r() for r in f.out_refs]
                   if n is not None for sa in (n.data, n.grad)}
            held -= _device_bytes(own.values(), self.fam)
            self.beyond_block[-1] = max(self.beyond_block[-1], held)


def _watched(scope, scheduler):
    get_extension_context("cuda")
    watch = _Watch(family("cuda"))
    _train(scope, scheduler, watch)
    return watch


def test_a_small_budget_keeps_the_device_holding_less_than_without_it():
    unscheduled = _watched("lms_w0", None)
    budget = 2048
    scheduled = _watched("lms_w1", SwapInOutScheduler(get_extension_context("cpu"),
                                                      get_extension_context("cuda"), budget))
    assert max(scheduled.peaks) < max(unscheduled.peaks)
    # first iteration: the arrays of earlier blocks left the device after them
    assert scheduled.beyond_block[0] == 0
    # later ones: besides the block just run, the device holds the budget at most
    assert 0 < max(scheduled.beyond_block[1:]) <= budget < max(unscheduled.beyond_block)


def test_with_room_every_input_is_prefetched_from_the_second_iteration_on():
    scheduler = SwapInOutScheduler(get_extension_context("cpu"),
                                   get_extension_context("cuda"), size=1 << 30)
    watch = _watched("lms_room", scheduler)
    assert not all(watch.prefetched[0])                 # recording: fetched on use
    assert all(all(p) for p in watch.prefetched[1:])    # scheduled: there before use
    assert scheduler.swapped_in_bytes > 0


def test_a_cpu_only_device_context_is_refused_with_the_reason():
    cpu = get_extension_context("cpu")
    with pytest.raises(ValueError, match="'d_ctx'.*host memory.*device context.*"
                                         "nnabla-ext-cuda"):
        SwapInOutScheduler(cpu, cpu, size=1 << 20)
    with pytest.raises(ValueError, match="'h_ctx'.*expected a host context"):
        SwapInOutScheduler(get_extension_context("cuda"), get_extension_context("cuda"), 1)


def test_bad_arguments_raise_naming_them():
    cpu, cuda = get_extension_context("cpu"), get_extension_context("cuda")
    with pytest.raises(ValueError, match="'size' must be >= 0"):
        SwapInOutScheduler(cpu, cuda, -1)
    with pytest.raises(TypeError, match="'size' must be a number of bytes; given str"):
        SwapInOutScheduler(cpu, cuda, "1GB")
    with pytest.raises(TypeError, match="'d_ctx' must be an nnabla.Context"):
        SwapInOutScheduler(cpu, "cuda", 1)
    scheduler = SwapInOutScheduler(cpu, cuda, 1 << 20)
    assert scheduler.prefetch_size == 3 << 19               # 1.5 x size, as nnabla
    with pytest.raises(RuntimeError, match="end_scheduling: not scheduling"):
        scheduler.end_scheduling()
    scheduler.start_scheduling()
    with pytest.raises(RuntimeError, match="already scheduling"):
        scheduler.start_scheduling()
    scheduler.end_scheduling()


def test_the_with_statement_removes_its_hooks_even_on_error():
    from nnabla import callback
    scheduler = SwapInOutScheduler(get_extension_context("cpu"),
                                   get_extension_context("cuda"), 1 << 20)
    with pytest.raises(KeyError):
        with scheduler:
            assert "lms_function_pre_hook" in callback._HOOKS["function_pre"]
            raise KeyError("boom")
    assert all(not hooks for hooks in callback._HOOKS.values())


def test_swap_out_keeps_the_widest_copy_first_on_the_host():
    from nnabla._array import SyncedArray
    get_extension_context("cuda")
    cuda, host = family("cuda"), family("cpu")
    value = np.float32(1) / np.float32(3) + np.arange(4, dtype=np.float32)
    sa = SyncedArray((4,), np.float32)
    sa.set(cuda.from_numpy(value), cuda)
    sa.get(np.dtype(np.float16), host)          # a narrower host copy exists already
    sa.get(np.dtype(np.float16), cuda)
    count = sa.modification_count
    released = sa.swap_out(cuda, host)
    assert released == 4 * 4 + 4 * 2
    assert [k[0] for k in sa.heads] == [host, host]
    assert next(iter(sa.heads))[1] == np.float32      # what later reads convert from
    np.testing.assert_array_equal(sa.get(np.dtype(np.float32), cuda).get(), value)
    assert sa.modification_count == count
    assert sa.swap_out(host, host) == 0
    empty = SyncedArray((2,))
    assert empty.swap_out(cuda, host) == 0 and not empty.heads
