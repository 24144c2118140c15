"""Bad arguments of normalization and reduction functions raise clear errors, and the
kernel-level behaviours a Case row cannot express (running statistics, output_stat,
gradient clipping) match nnabla's definitions."""
import numpy as np
import pytest

from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer
from nnabla_ext.cpu.kernels import CPU_KERNELS

P = (1, 3, 1, 1)
X = (4, 3, 2, 2)


def _infer(name, shapes, **args):
    spec = SPECS[name]
    return infer(spec, shapes, bind_args(spec, args))


def _kernel(name, arrays, n_outputs=1, **args):
    """A CPU kernel bound like the engine would, for ``n_outputs`` outputs."""
    spec = SPECS[name]
    shapes = [None if a is None else a.shape for a in arrays]
    args = bind_args(spec, args)
    if spec.resolve_args:
        args = spec.resolve_args(spec, shapes, args)
    extra = {"n_outputs": n_outputs} if n_outputs != 1 else {}
    outs = spec.infer_shape(spec, *shapes, **args, **extra)
    return CPU_KERNELS[name](spec, args, shapes, outs)


def test_batch_normalization_rejects_parameter_of_wrong_shape():
    with pytest.raises(ValueError, match=r"'gamma' has shape \(3,\); expected \(1, 3, 1, 1\)"):
        _infer("BatchNormalization", [X, P, (3,), P, P])


def test_batch_normalization_rejects_beta_with_no_bias():
    with pytest.raises(ValueError, match="'beta'.*no_bias=True"):
        _infer("BatchNormalization", [X, P, P, P, P], no_bias=True)


def test_batch_normalization_needs_running_stats_without_batch_stat():
    with pytest.raises(ValueError, match="'mean'.*batch_stat=False"):
        _infer("BatchNormalization", [X, P, P, None, None], batch_stat=False)


def test_batch_normalization_rejects_axis_out_of_range():
    with pytest.raises(ValueError, match="'axes' is 4"):
        _infer("BatchNormalization", [X, P, P, P, P], axes=[4])


def test_fused_batch_normalization_rejects_unknown_nonlinearity():
    with pytest.raises(ValueError, match="'nonlinearity' is 'tanh'"):
        _infer("FusedBatchNormalization", [X, P, P, P, P, None], nonlinearity="tanh")


def test_group_normalization_rejects_groups_not_dividing_channels():
    with pytest.raises(ValueError, match="'num_groups' is 2; expected a positive divisor"):
        _infer("GroupNormalization", [X, P, P], num_groups=2)


def test_layer_normalization_parameters_exclude_the_batch_axis():
    with pytest.raises(ValueError, match=r"expected \(1, 3, 2, 2\)"):
        _infer("LayerNormalization", [X, P, P])


def test_reductions_reject_bad_axes():
    with pytest.raises(ValueError, match="'axes' is 3"):
        _infer("Sum", [(2, 3, 4)], axes=[0, 3])
    with pytest.raises(ValueError, match="distinct axes"):
        _infer("Max", [(2, 3, 4)], axes=[1, -2])
    with pytest.raises(ValueError, match="'p' is 0.5"):
        _infer("Norm", [(2, 3)], p=0.5)


def test_reduce_max_with_index_has_two_outputs_and_only_index_one():
    assert _infer("Max", [(2, 3)], axes=[1], with_index=True)[1] == ((2,), (2,))
    assert _infer("Min", [(2, 3)], axes=[1], only_index=True)[1] == ((2,),)
    assert _infer("ReduceMean", [(2, 3)])[1] == ((),)


def _bn_inputs(rng):
    x = rng.randn(*X).astype(np.float32) * 2 + 1
    return [x, np.zeros(P, np.float32), np.ones(P, np.float32),
            np.zeros(P, np.float32), np.ones(P, np.float32)]


def test_batch_normalization_updates_running_stats_with_unbiased_variance():
    xs = _bn_inputs(np.random.RandomState(0))
    k = _kernel("BatchNormalization", xs, decay_rate=0.75)
    k.forward(xs)
    red = (0, 2, 3)
    np.testing.assert_allclose(xs[3], 0.25 * xs[0].mean(axis=red, keepdims=True), rtol=1e-5)
    unbiased = xs[0].var(axis=red, ddof=1, keepdims=True)
    np.testing.assert_allclose(xs[4], 0.75 + 0.25 * unbiased, rtol=1e-5)


def test_batch_normalization_output_stat_returns_biased_batch_stats():
    xs = _bn_inputs(np.random.RandomState(1))
    y, m, v = _kernel("BatchNormalization", xs, n_outputs=3).forward(xs)
    red = (0, 2, 3)
    np.testing.assert_allclose(m, xs[0].mean(axis=red, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(v, xs[0].var(axis=red, keepdims=True), rtol=1e-5)


def test_batch_normalization_output_stat_gradient_includes_stat_outputs():
    rng = np.random.RandomState(2)
    xs = [a.astype(np.float64) for a in _bn_inputs(rng)]
    dys = [rng.randn(*X), rng.randn(*P), rng.randn(*P)]

    def objective(x):
        ys = _kernel("BatchNormalization", [x] + xs[1:], n_outputs=3).forward([x] + xs[1:])
        return sum(float((y * d).sum()) for y, d in zip(ys, dys))

    k = _kernel("BatchNormalization", xs, n_outputs=3)
    ys = k.forward(xs)
    dx = k.backward(xs, ys, dys, [True, False, False, False, False])[0]
    i, eps = (1, 2, 0, 1), 1e-5
    xp, xm = xs[0].copy(), xs[0].copy()
    xp[i] += eps
    xm[i] -= eps
    assert abs(dx[i] - (objective(xp) - objective(xm)) / (2 * eps)) < 1e-5


def test_clip_grad_by_value_clips_the_gradient_only():
    x = np.zeros((2, 3), np.float32)
    lo, hi = np.full((2, 3), -0.5, np.float32), np.full((2, 3), 0.5, np.float32)
    k = _kernel("ClipGradByValue", [x, lo, hi])
    dy = np.array([[-2, 0.25, 3], [0.5, -0.1, -0.75]], np.float32)
    g = k.backward([x, lo, hi], k.forward([x, lo, hi]), [dy], [True, True, True])
    np.testing.assert_array_equal(g[0], np.clip(dy, -0.5, 0.5))
    np.testing.assert_array_equal(g[1], 0)


def test_clip_grad_by_value_where_min_exceeds_max_follows_nnabla():
    # recorded from nnabla 1.39: above max gives max, else below min gives min
    x = np.zeros(6, np.float32)
    lo = np.array([3, 3, 1, 1, -1, 0], np.float32)
    hi = np.array([2, 2, -1, 2, -2, 5], np.float32)
    dy = np.array([1, 2.5, 0, 0.5, -1.5, 9], np.float32)
    k = _kernel("ClipGradByValue", [x, lo, hi])
    g = k.backward([x, lo, hi], k.forward([x, lo, hi]), [dy], [True, False, False])
    np.testing.assert_array_equal(g[0], [3, 2, -1, 1, -2, 5])


def test_clip_grad_by_norm_rescales_the_gradient_per_axes():
    x = np.zeros((2, 3), np.float32)
    k = _kernel("ClipGradByNorm", [x], clip_norm=2.0, axes=[1])
    dy = np.array([[3, 0, 4], [0, 1, 0]], np.float32)
    g = k.backward([x], k.forward([x]), [dy], [True])[0]
    np.testing.assert_allclose(g, [[1.2, 0, 1.6], [0, 2, 0]], rtol=1e-6)


def test_mean_subtraction_updates_running_mean_and_count():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    rm, t = np.zeros(3, np.float32), np.array([1])
    y = _kernel("MeanSubtraction", [x, rm, t]).forward([x, rm, t])[0]
    np.testing.assert_allclose(rm, x.mean(axis=0) / 2)
    assert t[0] == 2
    np.testing.assert_allclose(y, x - rm)
