"""Data-dependent output shapes (bool_gather, nonzero, packed sequences) in static graphs:
sized from the inputs' data when the graph is built (as nnabla's setup), and followed by the
functions after them when a forward pass produces another size."""
import numpy as np

import nnabla as nn
import nnabla.functions as F


def _var(values, need_grad=False):
    return nn.Variable.from_numpy_array(np.asarray(values), need_grad=need_grad)


def test_a_static_graph_sizes_data_dependent_outputs_from_the_data_at_build():
    x = _var(np.arange(12, dtype=np.float32).reshape(4, 3), need_grad=True)
    mask = _var([1, 0, 1, 1])
    y = F.bool_gather(x, mask)
    assert y.shape == (3, 3)                    # nnabla's setup counts the mask
    assert F.nonzero(mask).shape == (1, 3)
    packed, sizes = F.pack_padded_sequence(_var(np.ones((3, 2), np.float32)), _var([3, 1]))
    assert packed.shape == (4,) and sizes.shape == (3,)
    # without data yet, the placeholder (0 along the data-dependent axis) stays
    assert F.bool_gather(nn.Variable((4, 3)), nn.Variable((4,))).shape == (0, 3)


def test_functions_after_a_data_dependent_shape_follow_it_forward_and_backward():
    xv = np.arange(12, dtype=np.float32).reshape(4, 3)
    x = _var(xv, need_grad=True)
    mask = _var([1, 0, 1, 1])
    y = F.sum(F.identity(F.bool_gather(x, mask)) * 2.0, axis=1)
    y.forward()
    np.testing.assert_allclose(y.d, 2 * xv[[0, 2, 3]].sum(1))
    for m in ([0, 1, 0, 0], [1, 1, 1, 1]):      # a new mask: another number of rows
        mask.d = m
        y.forward()
        rows = np.flatnonzero(m)
        assert y.shape == (len(rows),)
        np.testing.assert_allclose(y.d, 2 * xv[rows].sum(1))
        x.grad.zero()
        y.backward(np.ones(len(rows), np.float32))
        want = np.zeros_like(xv)
        want[rows] = 2.0
        np.testing.assert_allclose(x.g, want)


def test_the_explicit_setup_sizes_from_the_data():
    x = _var(np.ones((3, 2), np.float32))
    mask = _var([1, 1, 0])
    y = F.bool_gather(x, mask)
    mask.d = [1, 1, 1]
    y.parent.setup([x, mask], [y])
    assert y.shape == (3, 2)
    y.g = np.full((3, 2), 5.0, np.float32)      # a gradient of the new shape is accepted
    assert y.g.shape == (3, 2)


def test_bool_gather_and_bool_scatter_are_twice_differentiable():
    xv = np.random.RandomState(0).randn(4, 2).astype(np.float32)
    x = _var(xv, need_grad=True)
    mask = _var([1, 0, 1, 1])
    y = F.bool_gather(x, mask)
    (gx,) = nn.grad([F.sum(y ** 2.0)], [x])       # 2 x at the mask's rows
    F.sink(gx).forward()
    np.testing.assert_allclose(gx.d, 2 * xv * np.array([1, 0, 1, 1])[:, None], rtol=1e-6)
    s = _var(xv[[0, 2, 3]], need_grad=True)
    z = F.bool_scatter(s, mask)
    (gs,) = nn.grad([F.sum(z ** 2.0)], [s])
    F.sink(gs).forward()
    np.testing.assert_allclose(gs.d, 2 * xv[[0, 2, 3]], rtol=1e-6)
