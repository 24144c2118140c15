"""Stochastic functions at kernel level: seeding, statistics, masks, recomputation."""
import numpy as np
import pytest
from nnabla import random as nn_random
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer


def make(name, in_shapes=(), **args):
    from nnabla_ext.cpu.kernels import CPU_KERNELS
    spec = SPECS[name]
    args, out_shapes = infer(spec, [tuple(s) for s in in_shapes], bind_args(spec, args))
    return CPU_KERNELS[name](spec, args, list(in_shapes), out_shapes)


def draw(name, **args):
    return make(name, **args).forward([])[0]


def x_of(shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


# Seeding -------------------------------------------------------------------------

def test_explicit_seed_repeats_across_instances_and_advances_within_one():
    k1, k2 = make("Rand", shape=(50,), seed=7), make("Rand", shape=(50,), seed=7)
    first = k1.forward([])[0]
    assert np.array_equal(first, k2.forward([])[0])
    assert not np.array_equal(first, k1.forward([])[0])


def test_nn_seed_makes_global_draws_repeatable_even_for_existing_instances():
    kernel = make("Randn", shape=(20,))
    nn_random.seed(11)
    a = kernel.forward([])[0]
    nn_random.seed(11)
    assert np.array_equal(a, kernel.forward([])[0])
    assert not np.array_equal(a, make("Randn", shape=(20,)).forward([])[0])
    nn_random.seed(11)
    assert np.array_equal(a, make("Randn", shape=(20,)).forward([])[0])


def test_nn_seed_replaces_the_parameter_generator():
    nn_random.seed(3)
    a = nn_random.prng.rand(4)
    nn_random.seed(3, set_parameter_seed=False)
    b = nn_random.prng.rand(4)
    nn_random.seed(3)
    assert np.array_equal(a, nn_random.prng.rand(4)) and not np.array_equal(a, b)
    assert nn_random.pseed == 3 and nn_random.function_seed() == 3


@pytest.mark.parametrize("bad", [-2, 2 ** 32])
def test_bad_seeds_raise(bad):
    with pytest.raises(ValueError, match="seed"):
        make("Rand", shape=(2,), seed=bad)
    with pytest.raises(ValueError, match="seed_value"):
        nn_random.seed(bad)


def test_recompute_repeats_the_last_draws_without_advancing():
    kernel, twin = make("Dropout", [(30,)], p=0.5, seed=5), make("Dropout", [(30,)], seed=5)
    x = x_of((30,))
    y = kernel.forward([x])[0]
    assert np.array_equal(kernel.recompute([x])[0], y)
    twin.forward([x])
    assert np.array_equal(kernel.forward([x])[0], twin.forward([x])[0])


# Dropout -------------------------------------------------------------------------

@pytest.mark.parametrize("p", [0.0, 0.25, 0.8])
def test_dropout_mask_is_shared_by_forward_and_backward(p):
    x = x_of((40, 50)) + 10.0       # no zero inputs: y != 0 exactly where kept
    kernel = make("Dropout", [x.shape], p=p, seed=1)
    y = kernel.forward([x])[0]
    kept = y != 0
    np.testing.assert_allclose(y, x * kept / (1 - p), rtol=1e-6)
    dy = x_of(x.shape, 2)
    (dx,) = kernel.backward([x], [y], [dy], [True])
    np.testing.assert_allclose(dx, dy * kept / (1 - p), rtol=1e-6)
    assert abs(kept.mean() - (1 - p)) < 0.03


@pytest.mark.parametrize("p", [-0.01, 1.0])
def test_dropout_rejects_p_outside_0_1(p):
    with pytest.raises(ValueError, match=r"F\.dropout: argument 'p'"):
        make("Dropout", [(2, 3)], p=p)


# Generators -------------------------------------------------------------------------

N = 200_000


def test_rand_is_uniform_in_low_high():
    y = draw("Rand", low=-2.5, high=4, shape=(N,), seed=1)
    assert y.dtype == np.float32 and y.min() >= -2.5 and y.max() <= 4
    assert abs(y.mean() - 0.75) < 0.03 and abs(y.var() - 6.5 ** 2 / 12) < 0.05


def test_randint_is_integer_in_low_high_exclusive():
    y = draw("Randint", low=-3, high=4, shape=(N,), seed=1)
    assert y.dtype == np.int32 and set(np.unique(y)) == set(range(-3, 4))
    assert SPECS["Randint"].outputs[0].dtype == "int32"


def test_randn_mean_and_std():
    y = draw("Randn", mu=-10, sigma=3, shape=(N,), seed=2)
    assert abs(y.mean() + 10) < 0.03 and abs(y.std() - 3) < 0.03


@pytest.mark.parametrize("name,args,mean,var", [
    ("RandBinomial", {"n": 5, "p": 0.15}, 0.75, 5 * 0.15 * 0.85),
    ("RandBeta", {"alpha": 2, "beta": 5}, 2 / 7, 10 / (49 * 8)),
    ("RandBeta", {"alpha": 0.5, "beta": 0.5}, 0.5, 0.125),
    ("RandGamma", {"k": 7.5, "theta": 1}, 7.5, 7.5),
    ("RandGamma", {"k": 0.5, "theta": 2}, 1.0, 2.0),
])
def test_distribution_moments(name, args, mean, var):
    y = draw(name, shape=(N,), seed=3, **args)
    assert y.dtype == np.float32 and y.shape == (N,)
    assert abs(y.mean() - mean) < 0.02 * max(1, mean)
    assert abs(y.var() - var) < 0.03 * max(1, var)


def test_generators_take_shape_from_the_argument():
    assert draw("Rand", seed=1).shape == ()
    assert draw("RandBinomial", shape=[2, 0, 3], seed=1).shape == (2, 0, 3)
    assert SPECS["Rand"].inputs == ()


@pytest.mark.parametrize("name,args,arg", [
    ("Randint", {"low": 3, "high": 3}, "high"),
    ("Randn", {"sigma": -1.0}, "sigma"),
    ("RandBinomial", {"p": 1.5}, "p"),
    ("RandBeta", {"alpha": 0.0}, "alpha"),
    ("RandGamma", {"theta": -1.0}, "theta"),
    ("Rand", {"shape": (2, -1)}, "shape"),
])
def test_generator_arguments_are_checked(name, args, arg):
    with pytest.raises(ValueError, match=f"argument '{arg}'"):
        make(name, **args)


# Random choice -------------------------------------------------------------------

def test_random_choice_frequencies_follow_the_weights():
    x = np.arange(4, dtype=np.float32)
    w = np.array([1, 0, 3, 6], np.float32)
    y = make("RandomChoice", [(4,), (4,)], shape=(N,), seed=1).forward([x, w])[0]
    freq = np.bincount(y.astype(int), minlength=4) / N
    np.testing.assert_allclose(freq, w / w.sum(), atol=0.01)
    assert freq[1] == 0


def test_random_choice_rows_draw_from_their_own_population():
    x = np.array([[1, 2, 3], [-1, -2, -3]], np.float32)
    w = np.array([[1, 1, 1], [10, 10, 10]], np.float32)
    y = make("RandomChoice", [x.shape, w.shape], shape=(10,), seed=2).forward([x, w])[0]
    assert y.shape == (2, 10) and (y[0] > 0).all() and (y[1] < 0).all()


def test_random_choice_without_replacement_draws_distinct_positive_items():
    x = np.tile(np.arange(5, dtype=np.float32), (300, 1))
    w = np.tile(np.array([5, 0, 90, 1, 4], np.float32), (300, 1))
    kernel = make("RandomChoice", [x.shape, w.shape], shape=(4,), replace=False, seed=3)
    y = kernel.forward([x, w])[0]
    assert all(len(set(row)) == 4 and 1 not in row for row in y.tolist())
    assert (y[:, 0] == 2).mean() > 0.8      # the heavy item usually comes first
    dy = np.ones_like(y)
    gx, gw = kernel.backward([x, w], [y], [dy], [True, True])
    assert np.array_equal(gx, gw) and gx.sum() == y.size and (gx[:, 1] == 0).all()


@pytest.mark.parametrize("w,replace,match", [
    ([1.0, -1.0, 2.0], True, "non-negative"),
    ([0.0, 0.0, 0.0], True, "positive weight"),
    ([1.0, 0.0, 0.0], False, "positive weights"),
])
def test_random_choice_rejects_unusable_weights(w, replace, match):
    kernel = make("RandomChoice", [(3,), (3,)], shape=(2,), replace=replace, seed=1)
    with pytest.raises(ValueError, match=match):
        kernel.forward([np.zeros(3, np.float32), np.array(w, np.float32)])


def test_random_choice_without_replacement_cannot_draw_more_than_the_population():
    with pytest.raises(ValueError, match=r"F\.random_choice: argument 'shape'"):
        make("RandomChoice", [(2, 3), (2, 3)], shape=(4,), replace=False)


# Augmentations ---------------------------------------------------------------------

def test_random_crop_takes_one_window_per_sample():
    x = x_of((64, 6, 7))
    kernel = make("RandomCrop", [x.shape], shape=(3, 4), seed=1)
    y = kernel.forward([x])[0]
    offsets = set()
    for xi, yi in zip(x, y):
        hits = [(i, j) for i in range(4) for j in range(4)
                if np.array_equal(xi[i:i + 3, j:j + 4], yi)]
        assert len(hits) == 1
        offsets.add(hits[0])
    assert len(offsets) > 5
    (dx,) = kernel.backward([x], [y], [y], [True])
    assert np.isclose(dx.sum(), y.sum()) and (dx != 0).sum() == y.size


def test_random_flip_flips_each_sample_or_not():
    x = x_of((64, 3, 5))
    kernel = make("RandomFlip", [x.shape], axes=(1, 2), seed=2)
    y = kernel.forward([x])[0]
    seen = set()
    for xi, yi in zip(x, y):
        variants = {(a, b): xi[::(-1 if a else 1), ::(-1 if b else 1)]
                    for a in (0, 1) for b in (0, 1)}
        match = [k for k, v in variants.items() if np.array_equal(v, yi)]
        assert len(match) == 1
        seen.add(match[0])
    assert len(seen) == 4
    (dx,) = kernel.backward([x], [y], [y], [True])
    np.testing.assert_array_equal(dx, x)


@pytest.mark.parametrize("mode", ["nearest", "reflect", "constant"])
def test_random_shift_moves_each_sample_within_reach(mode):
    x = np.tile(np.arange(9, dtype=np.float32), (40, 1))
    y = make("RandomShift", [x.shape], shifts=(2,), border_mode=mode, constant_value=-7,
             seed=4).forward([x])[0]
    for yi in y:
        inner = yi[2:7]
        shift = int(inner[0] - 2) * -1          # values are positions: y[i] = x[i - s]
        assert abs(shift) <= 2 and np.array_equal(inner, np.arange(2, 7) - shift)
    if mode == "constant":
        assert (y == -7).any() and set(np.unique(y)) <= set(range(9)) | {-7}


def test_random_erase_fills_rectangles_and_stops_their_gradient():
    x = np.zeros((4, 2, 10, 12), np.float32)
    kernel = make("RandomErase", [x.shape], prob=1.0, area_ratios=(0.1, 0.2),
                  replacements=(3.0, 4.0), seed=5)
    y = kernel.forward([x])[0]
    erased = y != 0
    assert erased.any() and ((y[erased] >= 3) & (y[erased] < 4)).all()
    assert np.array_equal(erased[:, 0], erased[:, 1])      # share=True: same patch per channel
    (dx,) = kernel.backward([x], [y], [np.ones_like(y)], [True])
    np.testing.assert_array_equal(dx, ~erased)


@pytest.mark.parametrize("name,in_shape,args,arg", [
    ("RandomCrop", (2, 3, 4), {"shape": (5,)}, "shape"),
    ("RandomCrop", (2, 3), {"shape": (1, 2, 3)}, "shape"),
    ("RandomFlip", (2, 3), {"axes": (2,)}, "axes"),
    ("RandomShift", (2, 3), {"border_mode": "wrap"}, "border_mode"),
    ("RandomShift", (2, 3), {"shifts": (1, -1)}, "shifts"),
    ("RandomErase", (2, 3, 4), {}, "x"),
    ("RandomErase", (2, 3, 4, 5), {"prob": 2.0}, "prob"),
    ("RandomErase", (2, 3, 4, 5), {"area_ratios": (0.1,)}, "area_ratios"),
])
def test_augmentation_arguments_are_checked(name, in_shape, args, arg):
    with pytest.raises(ValueError, match=f"argument '{arg}'"):
        make(name, [in_shape], **args)


def test_augmentation_defaults_follow_nnabla():
    spec = SPECS["RandomErase"]
    args, _ = infer(spec, [(2, 3, 4, 5)], bind_args(spec, {}))
    assert args["n"] == 1 and args["base_axis"] == 1
    spec = SPECS["RandomShift"]
    args, _ = infer(spec, [(2, 3, 4)], bind_args(spec, {"base_axis": -1}))
    assert args["shifts"] == (0, 0, 0) and args["base_axis"] == 2
    spec = SPECS["RandomFlip"]
    assert infer(spec, [(2, 3, 4)], bind_args(spec, {}))[0]["axes"] == (2,)
