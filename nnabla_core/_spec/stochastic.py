"""Stochastic functions: dropout, random generators and random data augmentation.

Every function here takes a ``seed``: ``-1`` draws from nnabla's global function
generator (``nn.seed``), any other value gives the function instance a generator
of its own, seeded once (see :mod:`nnabla.random`). The generators (``Rand``,
``Randn``, ...) have no inputs: their output shape is the ``shape`` argument.

Augmentations (crop, flip, shift, erase) draw independently for each sample,
a sample being one index over the axes before ``base_axis``.
"""
from __future__ import annotations

import math

from .args import check_axes, check_axis, check_nonnegative
from .base import Arg, FunctionSpec, Input, Needs, Output

CATEGORY = "Stochasticity"
Y = (Output("y"),)
SEED = Arg("seed", "int", -1)
SHAPE = Arg("shape", "ints", [])          # a list, as nnabla's signature shows it
BASE_AXIS = Arg("base_axis", "int", 1)


def check_seed(spec, seed):
    if seed < -1 or seed >= 2 ** 32:
        raise spec.value_error("seed", "-1 (the global generator) or an int in [0, 2**32)",
                               seed)


def check_unit(spec, name, value, closed_high=True):
    ok = 0 <= value <= 1 if closed_high else 0 <= value < 1
    if not ok:
        raise spec.value_error(name, "a probability in [0, 1" + ("]" if closed_high else ")"),
                               value)


def dropout(spec, x, *, p, seed):
    check_unit(spec, "p", p, closed_high=False)
    check_seed(spec, seed)
    return (tuple(x),)


def generator(spec, *, shape, seed, **args):
    """Inputs-free generators: the output has the ``shape`` argument's shape."""
    check_nonnegative(spec, "shape", shape)
    check_seed(spec, seed)
    return (tuple(shape),)


def randint(spec, *, low, high, shape, seed):
    if high <= low:
        raise spec.value_error("high", f"an int greater than low={low}", high,
                               why="values are drawn from [low, high)")
    return generator(spec, shape=shape, seed=seed)


def rand(spec, *, low, high, shape, seed):
    if not high > low:
        raise spec.value_error("high", f"a value greater than low={low}", high,
                               why="values are drawn from [low, high)")
    return generator(spec, shape=shape, seed=seed)


def randn(spec, *, mu, sigma, shape, seed):
    if sigma < 0:
        raise spec.value_error("sigma", "a non-negative standard deviation", sigma)
    return generator(spec, shape=shape, seed=seed)


def rand_binomial(spec, *, n, p, shape, seed):
    if n < 0:
        raise spec.value_error("n", "a non-negative number of trials", n)
    check_unit(spec, "p", p)
    return generator(spec, shape=shape, seed=seed)


def positive_params(*names):
    def rule(spec, *, shape, seed, **args):
        for name in names:
            if not args[name] > 0:
                raise spec.value_error(name, "a positive value", args[name])
        return generator(spec, shape=shape, seed=seed)
    return rule


def random_choice(spec, x, w, *, shape, replace, seed):
    if tuple(x) != tuple(w):
        raise spec.shape_error("w", f"{tuple(x)} like x", w)
    if len(x) == 0:
        raise spec.shape_error("x", "at least 1 dimension (the population axis)", x)
    check_nonnegative(spec, "shape", shape)
    check_seed(spec, seed)
    draws = math.prod(shape)
    if not replace and draws > x[-1]:
        raise spec.value_error("shape", f"at most {x[-1]} draws per row without replacement",
                               tuple(shape), why=f"the population has {x[-1]} items")
    return (tuple(x[:-1]) + (tuple(shape) if shape else (1,)),)


def _fill_defaults(spec, in_shapes, args):
    """Input-dependent defaults of the augmentations (nnabla's, applied when None)."""
    ndim = len(in_shapes[0])
    defaults = {"shape": tuple(in_shapes[0]), "axes": (ndim - 1,), "shifts": (0,) * ndim,
                "n": 1}
    out = dict(args)
    for name, value in defaults.items():
        if name in out and out[name] is None:
            out[name] = value
    if "base_axis" in out:
        out["base_axis"] = check_axis(spec, "base_axis", out["base_axis"], ndim)
    if "axes" in out:
        out["axes"] = check_axes(spec, "axes", out["axes"], ndim)
    return out


def random_crop(spec, x, *, shape, base_axis, seed):
    check_seed(spec, seed)
    if len(shape) > len(x):
        raise spec.value_error("shape", f"at most {len(x)} sizes (x has {len(x)} dimensions)",
                               tuple(shape))
    offset = len(x) - len(shape)
    if any(s < 0 or s > d for s, d in zip(shape, x[offset:])):
        raise spec.value_error("shape", f"sizes no larger than x's last dimensions "
                                        f"{tuple(x[offset:])}", tuple(shape))
    return (tuple(x[:offset]) + tuple(shape),)


def random_flip(spec, x, *, axes, base_axis, seed):
    check_seed(spec, seed)
    check_axes(spec, "axes", axes, len(x))
    return (tuple(x),)


def random_shift(spec, x, *, shifts, border_mode, constant_value, base_axis, seed):
    check_seed(spec, seed)
    if len(shifts) > len(x):
        raise spec.value_error("shifts", f"at most {len(x)} values (x has {len(x)} "
                                         f"dimensions)", tuple(shifts))
    check_nonnegative(spec, "shifts", shifts)
    return (tuple(x),)


def random_erase(spec, x, *, prob, area_ratios, aspect_ratios, replacements, n, share,
                 inplace, base_axis, seed, channel_last, ste_fine_grained):
    check_seed(spec, seed)
    check_unit(spec, "prob", prob)
    for name, pair in (("area_ratios", area_ratios), ("aspect_ratios", aspect_ratios),
                       ("replacements", replacements)):
        if len(pair) != 2:
            raise spec.value_error(name, "a pair (low, high)", tuple(pair))
    if n < 1:
        raise spec.value_error("n", "a positive number of patches", n)
    if len(x) - base_axis != 3:
        raise spec.shape_error("x", f"{base_axis + 3} dimensions (base_axis={base_axis} "
                                    "then channel and two spatial axes)", x)
    return (tuple(x),)


def _generator_spec(name, snake, params, rule, doc, dtype=None):
    return FunctionSpec(name, snake, CATEGORY, (), params + (SHAPE, SEED),
                        (Output("y", dtype=dtype),), rule, Needs(), differentiable=False,
                        stochastic=True, doc=doc)


def _augmentation(name, snake, args, rule, doc):
    return FunctionSpec(name, snake, CATEGORY, (Input("x"),), args, Y, rule, Needs(),
                        stochastic=True, resolve_args=_fill_defaults, doc=doc)


SPECS = [
    FunctionSpec(
        "Dropout", "dropout", CATEGORY, (Input("x"),),
        (Arg("p", "float", 0.5), SEED), Y, dropout, Needs(), stochastic=True,
        doc="Zeroes each element with probability p and scales the kept ones by "
            "1 / (1 - p); the backward pass uses the same mask."),
    _generator_spec("Rand", "rand", (Arg("low", "float", 0), Arg("high", "float", 1)),
                    rand, "Uniform samples in [low, high)."),
    _generator_spec("Randint", "randint", (Arg("low", "int", 0), Arg("high", "int", 1)),
                    randint, "Integer samples uniform in [low, high), stored as int32.",
                    dtype="int32"),
    _generator_spec("Randn", "randn", (Arg("mu", "float", 0), Arg("sigma", "float", 1)),
                    randn, "Normal samples N(mu, sigma^2)."),
    _generator_spec("RandBinomial", "rand_binomial",
                    (Arg("n", "int", 1), Arg("p", "float", 0.5)), rand_binomial,
                    "Binomial samples: successes in n trials of probability p."),
    _generator_spec("RandBeta", "rand_beta",
                    (Arg("alpha", "float", 0.5), Arg("beta", "float", 0.5)),
                    positive_params("alpha", "beta"), "Beta(alpha, beta) samples."),
    _generator_spec("RandGamma", "rand_gamma",
                    (Arg("k", "float", 0.5), Arg("theta", "float", 1)),
                    positive_params("k", "theta"),
                    "Gamma samples of shape k and scale theta."),
    FunctionSpec(
        "RandomChoice", "random_choice", CATEGORY, (Input("x"), Input("w")),
        (SHAPE, Arg("replace", "bool", True), SEED), Y, random_choice, Needs(),
        stochastic=True,
        doc="Draws from each row (last axis) of x with probabilities proportional to w; "
            "the output has shape x.shape[:-1] + shape. Gradients scatter dy to the "
            "drawn positions of both x and w, as nnabla does."),
    _augmentation(
        "RandomCrop", "random_crop",
        (Arg("shape", "ints?", None), BASE_AXIS, SEED), random_crop,
        "Crops the last len(shape) axes to `shape` at random offsets, per sample."),
    _augmentation(
        "RandomFlip", "random_flip",
        (Arg("axes", "ints?", None), BASE_AXIS, SEED), random_flip,
        "Reverses each of `axes` with probability 1/2, per sample (default: last axis)."),
    _augmentation(
        "RandomShift", "random_shift",
        (Arg("shifts", "ints?", None),
         Arg("border_mode", "str", "nearest", choices=("nearest", "reflect", "constant")),
         Arg("constant_value", "float", 0), BASE_AXIS, SEED), random_shift,
        "Shifts the last len(shifts) axes by random amounts in [-s, s], per sample; "
        "`border_mode` fills the uncovered border."),
    _augmentation(
        "RandomErase", "random_erase",
        (Arg("prob", "float", 0.5), Arg("area_ratios", "floats", (0.02, 0.4)),
         Arg("aspect_ratios", "floats", (0.3, 3.3333)),
         Arg("replacements", "floats", (0.0, 255.0)), Arg("n", "int?", None),
         Arg("share", "bool", True), Arg("inplace", "bool", False), BASE_AXIS, SEED,
         Arg("channel_last", "bool", False), Arg("ste_fine_grained", "bool", True)),
        random_erase,
        "Random erasing: n times per sample, with probability prob, fills a random "
        "rectangle of the image with uniform values in `replacements`."),
]
