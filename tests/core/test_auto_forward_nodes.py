"""Graph nodes built by the auto-forward fast path (``nnabla._dispatch._graph_builder``).

The builder makes the output ``VarNode`` and the ``Function`` without calling their
constructors (it is the hottest path of dynamic code); these tests hold it to what the
constructors make, and check that the nodes it builds hold no reference cycle: a chain the
user drops is freed by reference counting alone, arrays included.
"""
import gc
import weakref

import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
from nnabla._array import memory_stats
from nnabla._graph import consumer_refs
from nnabla._variable import VarNode
from nnabla.function import Function

SHAPE = (16,)


def _slots(cls):
    names = []
    for klass in cls.__mro__:
        names += [s for s in getattr(klass, "__slots__", ()) if s != "__weakref__"]
    return names


def _state(obj, cls):
    """slot name -> value (or a marker when the slot is unset)."""
    return {name: getattr(obj, name, "<unset>") for name in _slots(cls)}


@pytest.mark.parametrize("two_inputs", [False, True])
def test_fast_path_node_and_function_match_the_constructors(two_inputs):
    x = nn.Variable.from_numpy_array(np.ones(SHAPE, np.float32), need_grad=True)
    with nn.auto_forward():
        for _ in range(2):      # the second call takes the recorded builder
            y = F.add2(x, x) if two_inputs else F.add_scalar(x, 1.0)
    assert y.d.tolist() == ([2.0] * 16)
    node = y._node
    built = _state(node, VarNode)
    reference = _state(VarNode(SHAPE, True), VarNode)
    # what a graph call gives a fresh node (see _dispatch._build): parent, handle, data
    reference.update(data=node.data, parent=node.parent, owner=node.owner, auto=True)
    assert built == reference
    f = y.parent
    assert type(f) is Function
    made = Function(f.spec, f._args, f.ctx, f.binding, f.kernel, f.in_nodes, [node])
    built, reference = _state(f, Function), _state(made, Function)
    assert [r() for r in built.pop("out_refs")] == [r() for r in reference.pop("out_refs")]
    assert built == reference
    assert f.inputs[0] is x and f.outputs[0] is y and x.function_references[-1] is f


def test_need_grad_propagates_and_backward_accumulates():
    x = nn.Variable.from_numpy_array(np.full(SHAPE, 2.0, np.float32), need_grad=True)
    c = nn.Variable.from_numpy_array(np.full(SHAPE, 3.0, np.float32))
    with nn.auto_forward():
        for _ in range(2):
            y = F.mul_scalar(F.add_scalar(x, 1.0), 2.0)
            z = F.add_scalar(c, 1.0)
    assert y.need_grad and not z.need_grad
    x.grad.zero()
    y.backward()
    y.backward()                # a leaf accumulates across passes
    np.testing.assert_array_equal(x.g, 4.0)
    np.testing.assert_array_equal(y.d, 6.0)


def test_a_dropped_chain_is_freed_by_reference_counting():
    x = nn.Variable.from_numpy_array(np.zeros(SHAPE, np.float32))
    with nn.auto_forward():
        F.add_scalar(F.add_scalar(x, 1.0), 1.0)     # record the builder
    gc.collect()
    base = memory_stats()["in_use"]
    enabled = gc.isenabled()
    gc.disable()                # only reference counting may free the chain
    try:
        with nn.auto_forward():
            h = x
            for _ in range(200):
                h = F.add_scalar(h, 1.0)
        assert h.d[0] == 200.0
        arrays = weakref.ref(h._node.data)
        functions = []
        node = h._node
        while node.parent is not None:
            functions.append(weakref.ref(node.parent))
            node = node.parent.in_nodes[0]
        del node
        assert len(functions) == 200
        assert memory_stats()["in_use"] - base == 16 * 4     # intermediates were released
        del h
        assert arrays() is None
        assert all(f() is None for f in functions)
        assert memory_stats()["in_use"] == base
    finally:
        if enabled:
            gc.enable()


def test_a_variable_fed_to_many_calls_keeps_a_short_consumer_list():
    x = nn.Variable.from_numpy_array(np.zeros(SHAPE, np.float32))
    with nn.auto_forward():
        for _ in range(1000):
            F.add_scalar(x, 1.0)
        kept = [F.add_scalar(x, 1.0) for _ in range(40)]
    assert len(consumer_refs(x._node)) < 80
    assert [f.outputs[0] for f in x.function_references] == kept


def test_handles_keep_their_identity_and_references():
    x = nn.Variable.from_numpy_array(np.zeros(SHAPE, np.float32))
    with nn.auto_forward():
        y = F.add_scalar(x, 1.0)
        y = F.add_scalar(x, 1.0)
    assert y.parent.outputs[0] is y
    assert y.get_number_of_references == 1
    u = y.get_unlinked_variable()
    assert y.get_number_of_references == 2 and u.parent is None
    del u
    weak = weakref.ref(y)
    node = y._node
    del y
    assert weak() is None and node.owner is None
    assert not node.data.heads            # its data went with the handle


def test_persistent_and_recompute_flags_are_respected():
    x = nn.Variable.from_numpy_array(np.ones(SHAPE, np.float32), need_grad=True)
    with nn.auto_forward():
        F.add_scalar(x, 1.0)
        h = F.add_scalar(x, 1.0).apply(persistent=True)
        node = h._node
        del h
        with nn.recompute():
            r = F.add_scalar(x, 1.0)
    assert node.data.heads                  # persistent: kept without a handle
    assert r.recompute


def test_a_dropped_handle_clears_its_array_as_clear_does():
    """Variable.__del__ clears an auto-forward intermediate's array inline: every slot of the
    array ends as SyncedArray.clear leaves it, and the memory count drops by its size."""
    from nnabla._array import SyncedArray
    x = nn.Variable.from_numpy_array(np.ones(SHAPE, np.float32))
    with nn.auto_forward():
        h = F.add_scalar(x, 1.0)
        y = F.add_scalar(h, 1.0)        # keeps h's node (and its array) in the graph
        h2 = F.add_scalar(x, 1.0)
    data, twin = h._node.data, h2._node.data
    assert data.nbytes_held == 4 * np.prod(SHAPE)
    in_use = memory_stats()["in_use"]
    del h
    assert memory_stats()["in_use"] == in_use - 4 * np.prod(SHAPE)
    twin.clear()
    assert _state(data, SyncedArray) == _state(twin, SyncedArray)
    assert data.heads == {} and data.clear_called and data.typed
    assert y.parent.inputs[0]._node.data is data
