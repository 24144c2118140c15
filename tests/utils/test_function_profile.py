"""nnabla.utils.function_profile: profiling Python functions with cProfile."""
import pytest

from nnabla.utils import function_profile as fp


def _leaf(n):
    return sum(range(n))


def _work(a, b=None):
    return _leaf(a) + _leaf(a)


def _called(stats, name):
    """Number of calls of the function ``name`` recorded in ``stats``."""
    return sum(v[1] for k, v in stats.stats.items() if k[2] == name)


def test_profile_gathers_calls_and_prints(capsys):
    work = fp.profile(_work)
    assert work.__name__ == "_work" and work(10) == 90
    work(5)
    prof = work.profiler
    assert prof.ncalls == 2
    assert _called(prof.stats, "_leaf") == 4
    prof.print_stats(reset=False)
    out = capsys.readouterr().out
    assert "--- Function Profiling ---" in out and "function _work" in out and "_leaf" in out
    assert prof.ncalls == 2
    prof.print_stats()          # reset=True by default
    assert prof.ncalls == 0 and prof.stats is None
    prof.print_stats()          # nothing gathered: prints nothing
    assert capsys.readouterr().out.count("Function Profiling") == 1


def test_condition_and_print_freq(capsys):
    work = fp.profile(condition=lambda a, b=None: b is not None, print_freq=2)(_work)
    work(3)                     # not profiled
    assert work.profiler.ncalls == 0 and work.profiler.stats is None
    work(3, b=1)
    assert capsys.readouterr().out == ""
    work(3, b=1)                # second profiled call: printed and reset
    assert "function _work" in capsys.readouterr().out
    assert work.profiler.ncalls == 0


def test_nested_profiled_calls_run_unprofiled():
    inner = fp.profile(_leaf)

    def outer(n):
        return inner(n)

    outer = fp.profile(outer)
    assert outer(4) == 6
    assert inner.profiler.ncalls == 1 and inner.profiler.stats is None
    assert _called(outer.profiler.stats, "_leaf") == 1
    inner.profiler.reset_stats()
    outer.profiler.reset_stats()


def test_defaults_and_bad_input():
    prof = fp.profile(_work).profiler
    assert prof.sort_keys == ("cumulative", "time", "calls")
    assert prof.print_restrictions == (40,)
    assert prof.print_freq == 0
    with pytest.raises(TypeError, match="fn"):
        fp.profile(3)
