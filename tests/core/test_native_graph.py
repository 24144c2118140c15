"""The core's C module (``nnabla._native_graph``): what its objects hold, what the garbage
collector sees of them, how it refuses misuse, and the finalizers it gives SyncedArray and
Variable. The nodes' slots are compared with the constructors' in
tests/core/test_auto_forward_nodes.py."""
import gc
import weakref

import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
from nnabla import _native_graph
from nnabla._array import NO_HEADS, SyncedArray, memory_stats
from nnabla._dispatch import graph_builders, imperative_runners

SHAPE = (16,)


def _chain(x, length):
    with nn.auto_forward():
        h = x
        for _ in range(length):
            h = F.add_scalar(h, 1.0)
    return h


def _tracked_by(make):
    """(result of make(), objects it left tracked by the collector)."""
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        result = make()
        return result, len(gc.get_objects()) - before
    finally:
        gc.enable()


def _collected(ref):
    """Whether the object of weak reference ``ref`` is gone after a full collection."""
    gc.collect()
    return ref() is None


def test_an_auto_forward_chain_from_a_leaf_is_left_to_reference_counting():
    # below a leaf nothing can close a cycle (each node and function holds only what lies
    # upstream, arrays, and objects the call site shares): the builder leaves its node,
    # function and inputs' tuple untracked, so the collector neither walks nor promotes them
    x = nn.Variable.from_numpy_array(np.zeros(SHAPE, np.float32))
    _chain(x, 2)                # the builder is recorded
    h, tracked = _tracked_by(lambda: _chain(x, 100))
    assert h.d.tolist() == [100.0] * 16
    assert tracked <= 2         # the last handle (and its context manager's leftovers)
    node = h._node
    f = node.parent
    assert not gc.is_tracked(node) and not gc.is_tracked(f)
    assert not gc.is_tracked(f.in_nodes) and not gc.is_tracked(node.data)
    assert not gc.is_tracked(f.out_refs) and not gc.is_tracked(f.out_refs[0])
    assert not gc.is_tracked(f.in_nodes[0].refs)      # the consumer's weak reference
    assert gc.is_tracked(h)                           # the user's handle is an ordinary object
    # reference counting alone frees the whole chain when its last handle goes
    first = weakref.ref(f.in_nodes[0].parent)
    del f, node, h
    assert first() is None


def test_below_a_function_made_in_python_the_builder_tracks():
    # a function built outside auto-forward is tracked (user objects may hang on it), and so
    # is everything built below it, so a cycle through it stays visible to the collector
    x = nn.Variable.from_numpy_array(np.zeros(SHAPE, np.float32))
    _chain(x, 2)
    y = F.add_scalar(x, 1.0)                    # static: made in Python
    y.forward()
    assert gc.is_tracked(y.parent)
    h, tracked = _tracked_by(lambda: _chain(y, 10))
    assert h.d.tolist() == [11.0] * 16
    assert gc.is_tracked(h._node) and gc.is_tracked(h.parent)
    assert gc.is_tracked(h.parent.in_nodes)
    assert tracked >= 30


def test_a_cycle_through_a_functions_tags_is_still_collected():
    x = nn.Variable.from_numpy_array(np.zeros(SHAPE, np.float32))
    _chain(x, 2)
    h = _chain(x, 3)
    top = h.parent.in_nodes[0].parent.in_nodes[0].parent      # the chain's first function
    assert not gc.is_tracked(top)
    top.tags["last"] = h        # first function -> tags -> a handle two nodes below it
    # reading the tags tracked the function and everything below it
    assert gc.is_tracked(top) and gc.is_tracked(h._node) and gc.is_tracked(h.parent)
    assert gc.is_tracked(h.parent.in_nodes)
    # and what is built below it afterwards is tracked too
    with nn.auto_forward():
        z = F.add_scalar(h, 1.0)
    assert gc.is_tracked(z.parent) and gc.is_tracked(z._node)
    dead = weakref.ref(top)
    del h, top, z
    assert _collected(dead)


def test_tags_track_every_branch_below_a_function():
    # a node with many consumers keeps their weak references in a list; two outputs' worth
    # of functions below each branch
    x = nn.Variable.from_numpy_array(np.zeros(SHAPE, np.float32))
    _chain(x, 2)
    with nn.auto_forward():
        a = F.add_scalar(x, 1.0)
        branches = [F.mul_scalar(F.add_scalar(a, float(i)), 2.0) for i in range(20)]
        total = F.add2(branches[0], branches[1])
    assert isinstance(a._node.refs, list) and len(a._node.refs) >= 20
    assert not any(gc.is_tracked(b.parent) for b in branches) and not gc.is_tracked(total.parent)
    a.parent.tags["kept"] = branches
    assert all(gc.is_tracked(b.parent) and gc.is_tracked(b._node) for b in branches)
    assert all(gc.is_tracked(b.parent.in_nodes[0].parent) for b in branches)
    assert gc.is_tracked(total.parent) and gc.is_tracked(total._node)
    dead = weakref.ref(a.parent)
    del a, branches, total
    assert _collected(dead)


def test_a_cycle_through_a_rewired_parent_is_still_collected():
    # rewire_on hangs a loose chain below a tagged (tracked) function: the chain is tracked
    x = nn.Variable.from_numpy_array(np.zeros(SHAPE, np.float32))
    _chain(x, 2)
    leaf = nn.Variable.from_numpy_array(np.zeros(SHAPE, np.float32))
    below = _chain(leaf, 3)                         # loose: built on a leaf
    assert not gc.is_tracked(below.parent)
    top = _chain(x, 1)
    top.parent.tags["below"] = below                # top's function -> tags -> below
    dead = weakref.ref(top.parent)
    leaf.rewire_on(top)                             # below now hangs from top's function
    assert gc.is_tracked(below.parent) and gc.is_tracked(below._node)
    del top, below, leaf
    assert _collected(dead)


def test_track_graph_refuses_what_is_not_a_graph_object():
    with pytest.raises(TypeError, match="track_graph: a VarNode or a Function expected, got int"):
        _native_graph.track_graph(3)


def test_dropped_arrays_leave_the_memory_counters():
    x = nn.Variable.from_numpy_array(np.zeros(SHAPE, np.float32))
    _chain(x, 2)
    before = memory_stats()["in_use"]
    h = _chain(x, 50)
    # every intermediate released its 64 bytes when its handle went away; the last one holds
    assert memory_stats()["in_use"] - before == 64
    del h
    assert memory_stats()["in_use"] == before


def test_clear_releases_the_bytes_and_reads_as_zeros():
    a = nn.NdArray.from_numpy_array(np.ones(SHAPE, np.float32))
    before = memory_stats()["in_use"]
    a._array.clear()
    assert memory_stats()["in_use"] == before - 64
    assert a._array.clear_called and a._array.nbytes_held == 0
    assert a._array.heads is NO_HEADS           # no dict of its own
    assert a.data.tolist() == [0.0] * 16
    assert type(a._array.heads) is dict and len(a._array.heads) == 1


def test_arrays_without_heads_share_one_read_only_mapping():
    x = nn.Variable.from_numpy_array(np.zeros(SHAPE, np.float32))
    _chain(x, 2)
    h = _chain(x, 3)
    released = h.parent.in_nodes[0].data          # its handle went away: cleared
    assert released.heads is NO_HEADS and SyncedArray((2,)).heads is NO_HEADS
    with pytest.raises(TypeError):
        NO_HEADS[("family", "dtype")] = None    # shared: it cannot be written
    assert len(NO_HEADS) == 0
    fresh = SyncedArray((2,))
    fresh.fill(3.0)
    assert fresh.get(np.dtype(np.float32)).tolist() == [3.0, 3.0]
    assert type(fresh.heads) is dict and fresh.heads is not NO_HEADS


def test_a_kept_intermediate_is_not_released():
    x = nn.Variable.from_numpy_array(np.zeros(SHAPE, np.float32))
    with nn.auto_forward():
        y = F.add_scalar(x, 1.0)
        y.persistent = True
        z = F.add_scalar(y, 1.0)
    data = y._node.data
    del y
    assert data.heads and z.d.tolist() == [2.0] * 16


def test_misuse_is_refused_with_a_message():
    x = nn.Variable.from_numpy_array(np.zeros(SHAPE, np.float32))
    _chain(x, 2)
    builder = next(b for k, b in graph_builders.items() if k[0] == "AddScalar")
    ctx = nn.get_current_context()
    with pytest.raises(TypeError, match="in_nodes must be a list or a tuple"):
        builder(x._node, ctx)
    with pytest.raises(TypeError, match="one input node"):
        builder([x._node, x._node], ctx)
    with pytest.raises(TypeError, match="must be a VarNode"):
        builder([x], ctx)
    with pytest.raises(TypeError, match="two arguments"):
        builder([x._node])
    with pytest.raises(TypeError, match="not a __slots__ member"):
        _native_graph.bind_function(type("NoSlots", (), {"spec": 1}), object())
    with pytest.raises(TypeError, match="SyncedArray expected"):
        SyncedArray.clear(object())
    with pytest.raises(TypeError, match="a VarNode and a weak reference expected"):
        _native_graph.add_consumer(x._node, x._node)


def _fast_call(name, inputs, values):
    """What a wrapper's call site answers the first time (nothing remembered yet)."""
    return _native_graph.CallSite(name)(inputs, values)


def test_the_wrappers_fast_call_runs_only_what_was_recorded():
    x = nn.Variable.from_numpy_array(np.ones(SHAPE, np.float32))
    a = nn.NdArray.from_numpy_array(np.ones(SHAPE, np.float32))
    F.add_scalar(a, 2.0)                    # records the imperative runner
    out = _fast_call("AddScalar", (a,), (2.0, False))     # (val, inplace)
    assert type(out) is nn.NdArray and out.data.tolist() == [3.0] * 16
    assert _fast_call("AddScalar", (a,), (5.0, False)) is None   # not recorded
    assert _fast_call("AddScalar", (a,), ([2.0], False)) is None  # unhashable
    assert _fast_call("Add2", (a, x), (False,)) is None          # mixed inputs
    assert _fast_call("AddScalar", (x,), (2.0, False)) is None   # no auto-forward
    with nn.auto_forward():
        F.add_scalar(x, 2.0)
        y = _fast_call("AddScalar", (x,), (2.0, False))
    assert type(y) is nn.Variable and y.d.tolist() == [3.0] * 16 and y.parent is not None
    with pytest.raises(TypeError, match="two tuples expected"):
        _fast_call("AddScalar", [a], (2.0, False))


def test_the_unary_runner_reads_windows_and_refuses_misuse():
    a = nn.NdArray.from_numpy_array(np.arange(6, dtype=np.float32))
    F.add_scalar(a, 1.0)                    # records the runner for shape (6,)
    runner = next(r for k, r in imperative_runners.items()
                  if k[0] == "AddScalar" and k[1] == ((6,),))
    assert type(runner) is _native_graph.UnaryRunner
    window = a.narrow(0, 0, 3)              # a SyncedArrayView: its heads are a property
    assert F.add_scalar(window, 1.0).data.tolist() == [1.0, 2.0, 3.0]
    assert runner((a._array,)).shape == (6,)
    with pytest.raises(TypeError, match="a list or tuple of one array"):
        runner([a._array, a._array])
    with pytest.raises(TypeError, match="key_in and key must be"):
        _native_graph.UnaryRunner((1,), None, None, (), (1, 2), 0, None)


def _site_hits(site, inputs, values):
    """Whether ``site`` answers the call (a recorded runner or builder ran)."""
    return site(inputs, values) is not None


def test_a_call_site_remembers_its_last_hit_only_for_the_same_key_parts():
    site = _native_graph.CallSite("AddScalar")
    a = nn.NdArray.from_numpy_array(np.ones((5, 7), np.float32))    # shapes no other test uses
    b = nn.NdArray.from_numpy_array(np.ones((3, 11), np.float32))
    F.add_scalar(a, 2.25)
    F.add_scalar(a, 7.25)
    assert site((a,), (2.25, False)).data.tolist() == [[3.25] * 7] * 5   # read from the table
    assert site((a,), (2.25, False)).data.tolist() == [[3.25] * 7] * 5   # remembered
    # another value, shape or type is compared, never taken for the remembered one
    assert site((a,), (7.25, False)).data.tolist() == [[8.25] * 7] * 5
    assert site((a,), (2.25, False)).data.tolist() == [[3.25] * 7] * 5
    assert site((a,), (5.25, False)) is None                         # never recorded
    assert site((b,), (2.25, False)) is None                         # another shape
    assert site((a,), ([2.25], False)) is None                       # unhashable, unequal
    equal = site((a,), (np.float64(2.25), False))                   # equal: the table answers
    assert equal.data.tolist() == [[3.25] * 7] * 5
    # another context object with the same backends reads the table again, and answers
    with nn.context_scope(nn.Context(["cpu:float"])):
        assert site((a,), (2.25, False)).data.tolist() == [[3.25] * 7] * 5
    with nn.context_scope(nn.Context(["cpu:half"])):
        assert site((a,), (2.25, False)) is None                     # not recorded for half
    with pytest.raises(TypeError, match="two tuples expected"):
        site([a], (2.25, False))


def test_a_call_site_reads_the_contexts_backends_and_device_each_call():
    # a Context's slots are read directly, another class's attributes by name; either way an
    # edit in place is seen on the next call
    site = _native_graph.CallSite("AddScalar")
    a = nn.NdArray.from_numpy_array(np.ones((2, 13), np.float32))
    ctx = nn.Context(["cpu:float"])
    with nn.context_scope(ctx):
        F.add_scalar(a, 1.5)
        assert _site_hits(site, (a,), (1.5, False))
        ctx.backend = ["cpu:half"]
        assert not _site_hits(site, (a,), (1.5, False))             # not recorded for half
        ctx.backend = ["cpu:float"]
        ctx.device_id = "1"
        assert not _site_hits(site, (a,), (1.5, False))             # nor for device 1
        ctx.device_id = "0"
        assert _site_hits(site, (a,), (1.5, False))

    class Derived(nn.Context):
        __slots__ = ()

    with nn.context_scope(Derived(["cpu:float"])):
        assert site((a,), (1.5, False)).data.tolist() == [[2.5] * 13] * 2


def test_a_call_site_forgets_when_the_caches_or_the_registry_change():
    from nnabla._state import clear_caches
    from nnabla.plugins import REGISTRY
    site = _native_graph.CallSite("AddScalar")
    a = nn.NdArray.from_numpy_array(np.ones(SHAPE, np.float32))
    F.add_scalar(a, 2.0)
    assert _site_hits(site, (a,), (2.0, False))
    clear_caches()                          # the tables are emptied: nothing is recorded
    assert not _site_hits(site, (a,), (2.0, False))
    F.add_scalar(a, 2.0)
    assert _site_hits(site, (a,), (2.0, False))
    imperative_runners.clear()              # one table emptied directly
    assert not _site_hits(site, (a,), (2.0, False))
    F.add_scalar(a, 2.0)
    assert _site_hits(site, (a,), (2.0, False))
    REGISTRY.version += 1                   # the records are keyed by the registry version
    try:
        assert not _site_hits(site, (a,), (2.0, False))
    finally:
        REGISTRY.version -= 1
    with nn.auto_forward():                 # each mode has its own entry
        x = nn.Variable.from_numpy_array(np.ones(SHAPE, np.float32))
        F.add_scalar(x, 2.0)
        y = site((x,), (2.0, False))
        assert type(y) is nn.Variable and y.d.tolist() == [3.0] * 16
    assert type(site((a,), (2.0, False))) is nn.NdArray


def test_the_memory_counters_count_in_c():
    from nnabla._array import reset_peak_memory
    before = memory_stats()
    assert set(before) == {"in_use", "peak"} and before["peak"] >= before["in_use"]
    a = nn.NdArray.from_numpy_array(np.ones((1000,), np.float32))
    after = memory_stats()
    assert after["in_use"] - before["in_use"] == 4000
    assert after["peak"] >= after["in_use"]
    del a
    assert memory_stats()["in_use"] == before["in_use"]
    reset_peak_memory()
    assert memory_stats()["peak"] == memory_stats()["in_use"]
    with pytest.raises(TypeError, match="an int expected"):
        _native_graph.account(1.5)


def test_put_installs_the_only_head_and_keeps_the_counters():
    a = SyncedArray((4,))
    a.fill(2.0)
    a.get(np.dtype(np.float64))             # a float64 head, 32 bytes
    before, count = memory_stats()["in_use"], a.modification_count
    head = np.arange(4, dtype=np.float32)
    key = next(iter(a.heads))[0], np.dtype(np.float32)
    a.clear_called = True
    a.put(key, head, 16)
    assert a.heads == {key: head} and a.heads[key] is head and type(a.heads) is dict
    assert a.nbytes_held == 16 and memory_stats()["in_use"] == before - 32 + 16
    assert a.dtype == np.float32 and a.fill_value is None and a.clear_called is False
    assert a.modification_count == count + 1
    with pytest.raises(TypeError, match=r"put\(key, arr, nbytes\)"):
        a.put(key, head, 16.0)
    with pytest.raises(TypeError, match=r"put\(key, arr, nbytes\)"):
        a.put((key[0],), head, 16)
    with pytest.raises(TypeError, match="a SyncedArray expected"):
        SyncedArray.put(object(), key, head, 16)


def test_references_to_an_auto_forward_variables_data_are_counted():
    # get_number_of_references scans the collector's referrers; auto-forward nodes are not
    # tracked, so it also reads the variable's own node and the array's recorded sharers
    x = nn.Variable.from_numpy_array(np.zeros(SHAPE, np.float32))
    _chain(x, 2)
    h = _chain(x, 2)
    assert not gc.is_tracked(h._node)
    assert h.get_number_of_references == 1
    unlinked = h.get_unlinked_variable()
    assert h.get_number_of_references == 2 and unlinked.get_number_of_references == 2
    other = nn.Variable(SHAPE)
    other.data = h.data
    assert other.get_number_of_references == 3 and h.get_number_of_references == 3
    del unlinked
    assert other.get_number_of_references == 2
    # data handed out by .data alone (no unlinked copy): the node is found all the same
    g = _chain(x, 2)
    assert not gc.is_tracked(g._node)
    another = nn.Variable(SHAPE)
    another.data = g.data
    assert another.get_number_of_references == 2 and g.get_number_of_references == 2
    with pytest.raises(TypeError, match="track: a VarNode expected, got int"):
        _native_graph.track(3)
