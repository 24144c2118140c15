"""Profiling a Python function with a Python profiler (``nnabla.utils.function_profile``).

"Function" here is a plain Python function, not an :class:`nnabla.function.Function`. The
decorator :func:`profile` runs each (selected) call of the decorated function under a
profiler such as :class:`cProfile.Profile`, gathers the statistics of all calls in one
:class:`pstats.Stats`, and prints them on demand, every ``print_freq`` calls, or when the
interpreter exits.

Example:
    >>> from nnabla.utils import function_profile
    >>> @function_profile.profile(print_freq=0)
    ... def work(n):
    ...     return sum(range(n))
    >>> work(10)
    45
    >>> work.profiler.ncalls
    1
    >>> work.profiler.reset_stats()     # nothing left to print at exit
"""
from __future__ import annotations

import atexit
import cProfile
import functools
import pstats

__all__ = ["profile"]


def _always(*args, **kwargs):
    return True


class FunctionProfile:
    """The profiler state of one decorated function (made by :func:`profile` and reachable
    as the decorated function's ``profiler`` attribute).

    Args:
        fn (callable): the profiled function.
        condition (callable): called with the same arguments as ``fn``; a call is profiled
            only when it returns True. Default: every call.
        profile_class (type): profiler class with ``runcall`` (default
            :class:`cProfile.Profile`).
        print_freq (int): print the statistics every ``print_freq`` profiled calls (0: only
            at exit or by :meth:`print_stats`).
        sort_keys (tuple of str): passed to :meth:`pstats.Stats.sort_stats`; default
            ``('cumulative', 'time', 'calls')``.
        print_restrictions (tuple): passed to :meth:`pstats.Stats.print_stats`; default
            ``(40,)`` (the first 40 entries).

    Attributes:
        stats (pstats.Stats or None): the statistics gathered since the last reset.
        ncalls (int): profiled calls since the last reset.
    """

    #: True while any decorated function is being profiled: a profiled call made inside
    #: another profiled call runs unprofiled (Python profilers do not nest).
    profiling = False

    def __init__(self, fn, condition=None, profile_class=cProfile.Profile, print_freq=0,
                 sort_keys=None, print_restrictions=None):
        self.fn = fn
        self.condition = _always if condition is None else condition
        self.profile_class = profile_class
        self.print_freq = print_freq
        self.sort_keys = ("cumulative", "time", "calls") if sort_keys is None else sort_keys
        self.print_restrictions = (40,) if print_restrictions is None else print_restrictions
        self.reset_stats()
        atexit.register(self._atexit)

    def __call__(self, *args, **kwargs):
        if not self.condition(*args, **kwargs):
            return self.fn(*args, **kwargs)
        self.ncalls += 1
        if FunctionProfile.profiling:
            return self.fn(*args, **kwargs)
        profiler = self.profile_class()
        FunctionProfile.profiling = True
        try:
            return profiler.runcall(self.fn, *args, **kwargs)
        finally:
            FunctionProfile.profiling = False
            if self.stats is None:
                self.stats = pstats.Stats(profiler)
            else:
                self.stats.add(profiler)
            if self.print_freq and self.ncalls % self.print_freq == 0:
                self.print_stats()

    def reset_stats(self):
        """Forget the statistics gathered so far."""
        self.stats = None
        self.ncalls = 0

    def print_stats(self, reset=True):
        """Print the statistics gathered so far (nothing when no call was profiled).

        Args:
            reset (bool): forget them afterwards (:meth:`reset_stats`); default True.
        """
        if not self.ncalls or self.stats is None:
            return
        code = self.fn.__code__
        print("--- Function Profiling ---")
        print(f'File "{code.co_filename}", line {code.co_firstlineno}, '
              f"function {self.fn.__name__}")
        self.stats.sort_stats(*self.sort_keys)
        self.stats.print_stats(*self.print_restrictions)
        print("--------------------------")
        if reset:
            self.reset_stats()

    def _atexit(self):
        try:
            self.print_stats()
        except ValueError:
            # stdout may already be closed at exit (pytest's capture replaces it)
            pass


def profile(fn=None, condition=None, profile_class=cProfile.Profile, print_freq=0,
            sort_keys=None, print_restrictions=None):
    """Decorate a Python function so that its calls run under a Python profiler.

    Args:
        fn (callable): the function; None (default) returns a decorator taking the other
            arguments, for ``@profile(condition=...)``.
        condition (callable): takes the function's arguments; only calls for which it
            returns True are profiled (default: all).
        profile_class (type): profiler class (default :class:`cProfile.Profile`).
        print_freq (int): print every ``print_freq`` profiled calls; 0 (default) prints at
            exit or when ``decorated.profiler.print_stats()`` is called.
        sort_keys (tuple of str): :meth:`pstats.Stats.sort_stats` keys (default
            ``('cumulative', 'time', 'calls')``).
        print_restrictions (tuple): :meth:`pstats.Stats.print_stats` arguments (default
            ``(40,)``).

    Returns:
        callable: the decorated function, with the :class:`FunctionProfile` as its
        ``profiler`` attribute (or a decorator when ``fn`` is None).
    """
    if fn is None:
        return functools.partial(profile, condition=condition, profile_class=profile_class,
                                 print_freq=print_freq, sort_keys=sort_keys,
                                 print_restrictions=print_restrictions)
    if not callable(fn):
        raise TypeError(f"function_profile.profile: argument 'fn' must be callable; "
                        f"given {type(fn).__name__}")
    profiler = FunctionProfile(fn, condition=condition, profile_class=profile_class,
                               print_freq=print_freq, sort_keys=sort_keys,
                               print_restrictions=print_restrictions)

    @functools.wraps(fn)
    def profiled(*args, **kwargs):
        return profiler(*args, **kwargs)

    profiled.profiler = profiler
    return profiled
