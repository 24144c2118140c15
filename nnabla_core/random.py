"""nnabla's global random state: the parameter generator and the function generator.

Two generators exist, as in nnabla:

- ``prng``: the ``numpy.random.RandomState`` that parameter initialisers draw from
  when they are given no ``rng``. It starts seeded with ``pseed`` (313), and
  :func:`seed` *replaces* it, so code must read ``nnabla.random.prng`` at call time.
- the function generator, which stochastic functions (``F.dropout``, ``F.rand``,
  ...) created with ``seed=-1`` draw from. :func:`seed` reseeds it *in place*, so
  function instances created before ``nn.seed`` follow the new seed too. Until
  the first ``nn.seed`` it is seeded from the operating system, as nnabla's is.

A function created with an explicit ``seed >= 0`` owns a generator of its own,
seeded once at creation: two forward passes of that instance give different
draws, and two instances with the same seed give the same sequence.
"""
from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "function_rng",
    "function_seed",
    "prng",
    "pseed",
    "seed",
    "set_function_seed",
    "set_parameter_seed",
]

pseed = 313
prng = np.random.RandomState(pseed)

_function_rng = np.random.RandomState()
_function_seed = None   # None until nn.seed: the generator was seeded from the OS


def _check_seed(seed_value):
    if isinstance(seed_value, (bool, np.bool_)) or not isinstance(seed_value, numbers.Integral):
        raise TypeError(f"nn.seed: argument 'seed_value' is of type "
                        f"{type(seed_value).__name__} ({seed_value!r}); expected int")
    if not 0 <= int(seed_value) < 2 ** 32:
        raise ValueError(f"nn.seed: argument 'seed_value' is {seed_value!r}; "
                         f"expected an int in [0, 2**32)")
    return int(seed_value)


def seed(seed_value, set_function_seed=True, set_parameter_seed=True):
    """Reset nnabla's random generators (``nn.seed``).

    Args:
        seed_value (int): The seed, in [0, 2**32).
        set_function_seed (bool): Reseed the generator of stochastic functions
            created with ``seed=-1`` (including those already created).
        set_parameter_seed (bool): Replace ``prng``, the generator of parameter
            initialisers, by ``numpy.random.RandomState(seed_value)``.

    Raises:
        TypeError: ``seed_value`` is not an integer.
        ValueError: ``seed_value`` is outside [0, 2**32).

    >>> from nnabla import random
    >>> random.seed(7); a = random.prng.rand()
    >>> random.seed(7); a == random.prng.rand()
    True
    """
    global pseed, prng, _function_seed
    seed_value = _check_seed(seed_value)
    if set_parameter_seed:
        pseed = seed_value
        prng = np.random.RandomState(seed_value)
    if set_function_seed:
        _function_seed = seed_value
        _function_rng.seed(seed_value)


def set_parameter_seed(seed_value):
    """Reseed only the parameter generator ``prng`` (same across workers)."""
    seed(seed_value, set_function_seed=False, set_parameter_seed=True)


def set_function_seed(seed_value):
    """Reseed only the function generator (may differ across workers)."""
    seed(seed_value, set_function_seed=True, set_parameter_seed=False)


def function_seed():
    """The seed last given to the function generator, or None if it came from the OS."""
    return _function_seed


def function_rng(seed=-1):
    """The generator a stochastic function instance draws from.

    Args:
        seed (int): The function's ``seed`` argument. ``-1`` returns the global
            function generator (shared, reseeded in place by :func:`seed`); any
            other value returns a new ``RandomState(seed)`` that the caller keeps
            for the life of its function instance.

    Raises:
        ValueError: ``seed`` is negative but not -1, or too large.
    """
    if seed == -1:
        return _function_rng
    if not 0 <= seed < 2 ** 32:
        raise ValueError(f"seed is {seed!r}; expected -1 (global generator) or an int "
                         f"in [0, 2**32)")
    return np.random.RandomState(seed)
