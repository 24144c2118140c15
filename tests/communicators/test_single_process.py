"""nnabla.communicators in one process: API, argument errors, the backend lookup, the
missing-MPI message, the bucketed callback and DataParallelCommunicator."""
import sys

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import nnabla as nn
import nnabla.communicators as C
import nnabla.functions as F
import nnabla.parametric_functions as PF
from nnabla import plugins
from nnabla.ext_utils import get_extension_context
from nnabla.plugins import CommunicatorSet, Extension, PluginInfo, hookimpl


def _nd(values):
    return nn.NdArray.from_numpy_array(np.asarray(values, np.float32))


@pytest.fixture(scope="module")
def comm(mpi):
    comm = C.MultiProcessCommunicator(get_extension_context("cpu"))
    comm.init()
    return comm


def test_nnabla_names_and_signatures():
    import inspect
    assert C.MultiProcessDataParalellCommunicator is C.MultiProcessDataParallelCommunicator
    assert C.MultiProcessCommunicator is C.MultiProcessDataParallelCommunicator
    sig = {name: str(inspect.signature(getattr(C.Communicator, name))) for name in
           ("all_reduce", "reduce", "bcast", "all_gather", "reduce_scatter",
            "all_reduce_callback", "allreduce", "new_group")}
    assert sig == {  # nnabla 1.39's
        "all_reduce": "(self, data, division=False, inplace=False, group='world')",
        "reduce": "(self, data, dst, division=False, inplace=False, group='world')",
        "bcast": "(self, data, src, inplace=False, group='world')",
        "all_gather": "(self, ndarray, ndarray_list, group='world')",
        "reduce_scatter": "(self, ndarray_list, ndarray, division=False, group='world')",
        "all_reduce_callback": "(self, data, pack_size, division=False, group='world', "
                               "scale_grad=1.0, keep_dtype=False)",
        "allreduce": "(self, division=False, inplace=False)",
        "new_group": "(self, name_ranks)"}
    assert str(inspect.signature(C.MultiProcessCommunicator)) == "(ctx)"


def test_one_process_collectives_are_identities(comm):
    assert (comm.size, comm.rank, comm.local_rank) == (1, 0, 0)
    assert comm.name == "MultiProcessDataParallelCommunicatorMpi"
    a, b = _nd([[1, 2], [3, 4]]), _nd([5, 6, 7])
    comm.all_reduce([a, b], division=True)
    comm.reduce(a, dst=0)
    comm.bcast([a, b], src=0, inplace=True)
    assert_array_equal(a.data, [[1, 2], [3, 4]])
    assert_array_equal(b.data, [5, 6, 7])
    out = _nd([0, 0, 0])
    comm.all_gather(b, [out])
    assert_array_equal(out.data, [5, 6, 7])
    comm.reduce_scatter([b], out, division=True)
    assert_array_equal(out.data, [5, 6, 7])
    comm.barrier()


def test_groups_are_listed_and_found(comm):
    assert comm.new_group(("solo", [0])) == "solo"
    assert comm.list_groups() == {"world": [0], "solo": [0]}
    assert comm.find_group("solo") == [0] and comm.find_group("missing") == []
    a = _nd([1, 2])
    comm.all_reduce(a, group="solo")
    assert_array_equal(a.data, [1, 2])
    with pytest.raises(ValueError, match=r"new_group: group 'bad' has ranks \[3\]; expected "
                                         r"distinct ranks in \[0, 1\)"):
        comm.new_group(("bad", [3]))


def test_bad_arguments_name_the_method_argument_and_expectation(comm):
    x = nn.Variable((2,))
    with pytest.raises(TypeError, match=r"all_reduce: argument 'data\[1\]' is of type "
                                        r"Variable; expected nnabla.NdArray \(pass its "
                                        r"\.data or \.grad\)"):
        comm.all_reduce([x.data, x])
    with pytest.raises(ValueError, match=r"all_reduce: argument 'group' is 'nope'; expected "
                                         r"one of \['solo', 'world'\]|expected one of "
                                         r"\['world'\]"):
        comm.all_reduce(x.data, group="nope")
    with pytest.raises(ValueError, match=r"bcast: argument 'src' is 1; expected a rank of "
                                         r"group 'world': \[0\]"):
        comm.bcast(x.data, src=1)
    with pytest.raises(ValueError, match=r"all_gather: argument 'ndarray_list' has 2 arrays; "
                                         r"expected 1, one per process"):
        comm.all_gather(x.data, [_nd([0, 0]), _nd([0, 0])])
    with pytest.raises(ValueError, match=r"reduce_scatter: argument 'ndarray_list\[0\]' has "
                                         r"shape \(3,\); expected \(2,\)"):
        comm.reduce_scatter([_nd([1, 2, 3])], x.data)
    with pytest.raises(ValueError, match="all_reduce_callback: argument 'pack_size' is 0"):
        comm.all_reduce_callback([x.grad], 0)
    with pytest.raises(RuntimeError, match="already initialized"):
        comm.init()


def test_collectives_before_init_raise(mpi):
    comm = C.MultiProcessCommunicator(get_extension_context("cpu"))
    with pytest.raises(RuntimeError, match=r"all_reduce: the communicator is not "
                                           r"initialized; call comm.init\(\) first"):
        comm.all_reduce(_nd([1.0]))


def _mlp_grads():
    nn.clear_parameters()
    rng = np.random.RandomState(0)
    x = nn.Variable.from_numpy_array(rng.randn(4, 3).astype(np.float32))
    with nn.parameter_scope("cb"):
        h = F.relu(PF.affine(x, 6, name="a"))
        loss = F.sum(PF.affine(h, 2, name="b") ** 2)
        params = list(nn.get_parameters().values())
    return loss, params


def test_all_reduce_callback_buckets_gradients_and_scales_them(comm, monkeypatch):
    loss, params = _mlp_grads()
    loss.forward()
    loss.backward()
    plain = [p.g.copy() for p in params]
    sent = []
    real = comm._all_reduce
    monkeypatch.setattr(comm, "_all_reduce",
                        lambda arrays, *a: (sent.append([x.size for x in arrays]),
                                            real(arrays, *a))[1])
    for p in params:
        p.grad.zero()
    # backward order: b/W (12 values), b/b (2), a/W (18), a/b (6); buckets of >= 13 values
    loss.backward(communicator_callbacks=comm.all_reduce_callback(
        [p.grad for p in params], 13, scale_grad=0.25))
    assert sent == [[12, 2], [18], [6]]
    for p, g in zip(params, plain):
        assert_allclose(p.g, 0.25 * g, rtol=1e-6)


def test_all_reduce_callback_refuses_shared_parameters(comm):
    x = nn.Variable.from_numpy_array(np.ones((2, 3), np.float32))
    with nn.parameter_scope("shared"):
        y = PF.affine(x, 3, name="fc")
        y = PF.affine(y, 3, name="fc")           # the same W and b again
    callback = comm.all_reduce_callback(
        [p.grad for p in nn.get_parameters().values()], 1)
    y.forward()
    with pytest.raises(RuntimeError, match="used by several functions"):
        y.backward(communicator_callbacks=callback)


def test_missing_mpi_raises_saying_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)      # import mpi4py fails
    with pytest.raises(ImportError, match=r"C.MultiProcessDataParallelCommunicator on the "
                                          r"cpu backend needs MPI.*pip install "
                                          r"'nnabla-ext-cpu\[mpi\]'"):
        C.MultiProcessCommunicator(get_extension_context("cpu"))


def test_data_parallel_communicator_sums_gradients_over_added_contexts():
    ctx = get_extension_context("cpu")
    comm = C.DataParallelCommunicator(ctx)
    sets = []
    for device in range(2):
        v = nn.Variable.from_numpy_array(np.zeros(3, np.float32), need_grad=True)
        v.g = np.arange(3, dtype=np.float32) * (device + 1)
        comm.add_context_and_parameters((nn.Context(["cpu:float"], device_id=str(device)),
                                         {"w": v}))
        sets.append(v)
    comm.init()
    assert comm.size == 2
    comm.allreduce(division=True)
    for v in sets:
        assert_allclose(v.g, [0, 1.5, 3])
    with pytest.raises(ValueError, match="same context was added"):
        comm.add_context_and_parameters((nn.Context(["cpu:float"], device_id="0"), {}))
    with pytest.raises(NotImplementedError, match="use C.MultiProcessCommunicator"):
        comm.all_reduce(sets[0].grad)


# -- a third-party backend ships its own communicator -------------------------------------
class EchoCommunicator(C.Communicator):
    """Multiplies by 3 instead of summing: proves which implementation ran."""
    NAME = "Echo"

    def _init(self):
        self._size, self._groups = 3, {"world": [0, 1, 2]}

    def _all_reduce(self, arrays, division, inplace, group, scale):
        for a in arrays:
            a.data = a.data * (1 if division else 3) * scale


ECHO = {"MultiProcessDataParallelCommunicator": EchoCommunicator}


class EchoPlugin:
    @hookimpl
    def nnabla_plugin_info(self):
        return PluginInfo("echo", "0.1", plugins.PLUGIN_API_VERSION)

    @hookimpl
    def nnabla_extensions(self):
        return [Extension("echo", "cpu", ("CpuCachedArray",), __name__, ("cpu",))]

    @hookimpl
    def nnabla_communicators(self):
        return [CommunicatorSet("echo", f"{__name__}:ECHO")]


@pytest.fixture
def registry_snapshot():
    registry = plugins.REGISTRY
    names = ("records", "extensions", "families", "kernels", "solver_rules", "communicators")
    saved = {name: dict(getattr(registry, name)) for name in names}
    active, layers = set(registry.active), {t: dict(v) for t, v in registry._layers.items()}
    yield
    for name, value in saved.items():
        setattr(registry, name, value)
    registry.active, registry._layers = active, layers
    registry.version += 1


def test_a_backends_plugin_provides_its_communicator(registry_snapshot):
    plugins.register(EchoPlugin(), name="echo")
    comm = C.MultiProcessCommunicator(nn.Context(backend=["echo:float", "cpu:float"]))
    assert isinstance(comm, EchoCommunicator) and comm.name == "Echo"
    comm.init()
    a = _nd([1, 2])
    comm.all_reduce(a)
    assert_array_equal(a.data, [3, 6])
    assert comm.list_groups() == {"world": [0, 1, 2]}


def test_no_communicator_for_the_context_names_what_is_registered(registry_snapshot):
    plugins.register(EchoPlugin(), name="echo")
    with pytest.raises(NotImplementedError, match=r"C.DataParallelCommunicator: no "
                                                  r"communicator for context "
                                                  r"backend=\['echo:float'\]; registered "
                                                  r"communicators: .*'cpu': "):
        C.DataParallelCommunicator(nn.Context(backend=["echo:float"]))
    with pytest.raises(TypeError, match="argument 'ctx' is of type str; expected nnabla.Context"):
        C.MultiProcessCommunicator("cpu")


def test_huge_page_hint_discards_only_the_whole_2mib_pages_inside_a_pack_buffer():
    # a kept pack's new buffer is advised onto transparent huge pages (Linux): the whole
    # 2 MiB pages inside it are discarded (read as zeros) and nothing around it is touched
    from nnabla_ext.cpu import communicator as cpu_comm
    huge = 2 << 20
    big = np.full((12 << 20) // 4, 7.0, np.float32)
    first = (-big.ctypes.data) % huge // 4 + 1000          # an unaligned start, 4 KB on
    buf = big[first:first + (5 << 20) // 4]
    assert cpu_comm._huge_pages(buf) is buf
    start = buf.ctypes.data
    low = -(-start // huge) * huge
    high = (start + buf.nbytes) // huge * huge
    assert high - low >= huge
    inside = np.zeros(big.size, bool)
    inside[(low - big.ctypes.data) // 4:(high - big.ctypes.data) // 4] = True
    if sys.platform.startswith("linux"):
        assert_array_equal(big[inside], 0)
    else:                      # no madvise there: the hint does nothing
        assert_array_equal(big[inside], 7)
    assert_array_equal(big[~inside], 7)
    small = np.full(1000, 7.0, np.float32)                   # under one huge page: untouched
    assert cpu_comm._huge_pages(small) is small
    assert_array_equal(small, 7)


@pytest.mark.parametrize("limit", [4096, 5])
def test_forecasts_follow_the_collectives_as_a_lookup_of_the_last_two_would(limit):
    # _Forecasts.learn keeps, per entry, the step to the next entry (skipping the hashing of
    # two signatures on a training loop's steady path): checked against a model that looks
    # the last two signatures up on every call, through a repeating cycle, deviations, a
    # cycle that changes, signatures passed as the same object or as equal copies, and the
    # table forgotten when it is full
    from nnabla_ext.cpu.communicator import _Forecasts

    class Forecasts(_Forecasts):
        __slots__ = ()
        LIMIT = limit

    signatures = {name: ("all_reduce", (((i + 1, 2), "f"),), (False, False))
                  for i, name in enumerate("ABCDE")}
    forecasts, after, recent = Forecasts(), {}, (None, None)
    sequence = "ABCABCABCABDABCABCAACABCABC" * 3 + "EEEEABABAB" + "ABC" * 4
    for k, name in enumerate(sequence):
        same = signatures[name]
        signature = same if k % 3 else tuple(list(same))      # an equal copy, or itself
        entry = after.get(recent)
        if entry is not None and entry[0] == signature:
            entry[1] += 1
        else:
            if len(after) >= limit:
                after.clear()
            after[recent] = [signature, 1]
        recent = (recent[1], signature)
        forecasts.learn(signature, packs=("packs", name))
        assert forecasts.recent == recent, k
        want = after.get(recent)
        got = forecasts.entry
        assert (got is None) == (want is None), k
        if want is not None:
            assert got[:2] == want, (k, got[:2], want)
            for other in signatures.values():       # what hit() says for each next call
                assert forecasts.hit(other) == (want[1] >= 2 and other == want[0]), k


@pytest.mark.parametrize("timeout", [0.01, 1.0])
def test_the_watchdog_polls_without_pauses_first_and_times_out_on_time(mpi, monkeypatch,
                                                                       timeout):
    # MpiCommunicator._wait on a request that never completes, on a fake clock advancing
    # 1 ms per reading: no pause during the first SPIN_SECONDS (MPI progresses a
    # non-blocking collective only inside its calls), then pauses; the timeout is kept
    # even when it is shorter than the spinning
    from nnabla_ext.cpu import communicator as cpu_comm
    comm = C.MultiProcessCommunicator(get_extension_context("cpu"))
    comm.init()
    clock, sleeps, polls = [100.0], [], []
    monkeypatch.setattr(cpu_comm.time, "monotonic",
                        lambda: clock.__setitem__(0, clock[0] + 1e-3) or clock[0])
    monkeypatch.setattr(cpu_comm.time, "sleep", lambda s: sleeps.append((clock[0], s)))

    class Never:
        def Test(self):
            polls.append(clock[0])
            return False

    comm._timeout = timeout
    with pytest.raises(C.CommunicatorTimeoutError, match=rf"within {timeout:g} s on rank 0"):
        comm._wait(Never(), "all_reduce", "world")
    comm._pending = False
    start = 100.001
    assert clock[0] - start <= timeout + 2e-3
    if timeout < cpu_comm.SPIN_SECONDS:
        assert sleeps == []
    else:
        assert sleeps[0][0] >= start + cpu_comm.SPIN_SECONDS
        assert len(polls) > cpu_comm.SPIN_SECONDS / 1e-3 * 0.9 and len(sleeps) < len(polls)
        assert max(s for _, s in sleeps) == 1e-3
