"""Second-order gradients of the warps on sampling positions away from every kink.

The warps' first derivatives jump where a sampling position crosses a pixel (or a
padding fold), so central differences over random positions can straddle a jump. Here
the positions sit at fractional pixel offsets in (0.15, 0.35) or (0.65, 0.85), at least
0.15 from every integer and half-integer, and the step is far smaller than that.
"""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F


def _pixel_positions(rng, shape, low, high):
    whole = rng.randint(low, high, shape)
    frac = rng.uniform(0.15, 0.35, shape) + 0.5 * rng.randint(0, 2, shape)
    return whole + frac


def _check_second_order(func, arrays, eps=1e-3):
    rng = np.random.RandomState(3)
    xs = [nn.Variable.from_numpy_array(a.astype(np.float32), need_grad=True) for a in arrays]
    y = func(*xs)
    dy = nn.Variable.from_numpy_array(rng.randn(*y.shape).astype(np.float32), need_grad=True)
    grads = nn.grad([y], xs, grad_outputs=[dy])
    objective = None
    for g in grads:
        term = F.sum(g * nn.Variable.from_numpy_array(rng.randn(*g.shape).astype(np.float32)))
        objective = term if objective is None else objective + term
    wrt = xs + [dy]
    second = nn.grad([objective], wrt)
    nn.forward_all([objective] + [s for s in second if s is not None])
    for v, s in zip(wrt, second):
        base = v.d.copy()
        numeric = np.zeros(base.size)
        for j in range(base.size):
            for sign in (1, -1):
                pert = base.copy().reshape(-1)
                pert[j] += sign * eps
                v.d = pert.reshape(base.shape)
                objective.forward()
                numeric[j] += sign * float(objective.d) / (2 * eps)
        v.d = base
        analytic = np.zeros(base.size) if s is None else s.d.reshape(-1)
        # The objective is evaluated in float32 with step 1e-3: its rounding (~1e-7 of
        # |objective|) divided by the step reaches 6e-3 of a gradient element here.
        np.testing.assert_allclose(analytic, numeric, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("padding_mode", ["zero", "repeat", "reflect"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_warp_by_grid_second_order_matches_central_differences(padding_mode, align_corners):
    rng = np.random.RandomState(5)
    sizes = np.array([4, 5])                                    # (H, W) of x
    pixels = _pixel_positions(rng, (2, 3, 3, 2), -2, 6)         # (row, col) positions
    pixels = pixels[..., ::-1]                                  # the grid holds (x, y)
    size_xy = sizes[::-1]
    if align_corners:
        grid = 2 * pixels / (size_xy - 1) - 1
    else:
        grid = (2 * pixels + 1) / size_xy - 1
    x = rng.randn(2, 2, 4, 5)
    _check_second_order(lambda a, g: F.warp_by_grid(a, g, "linear", padding_mode,
                                                    align_corners), [x, grid])


def test_warp_by_flow_second_order_matches_central_differences():
    rng = np.random.RandomState(5)
    flow = _pixel_positions(rng, (2, 2, 3, 4), -2, 2)
    _check_second_order(F.warp_by_flow, [rng.randn(2, 2, 3, 4), flow])
