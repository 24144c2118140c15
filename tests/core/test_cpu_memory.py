"""The CPU backend's caching allocator (``nnabla_ext.cpu.memory``, numpy's memory-handler API).

The allocator is process state: each test installs it for itself and the fixture puts back
what was there, so the order of the tests does not matter.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import nnabla_ext.cpu as cpu
from nnabla_ext.cpu import memory

MIB = 1 << 20


@pytest.fixture
def cache():
    """The allocator installed, with an empty cache and its default limit."""
    was_installed = cpu.memory_cache_stats()["installed"]
    memory.install()
    cpu.clear_memory_cache()
    yield memory
    if was_installed:
        memory.install()
    else:
        memory.uninstall()
    cpu.clear_memory_cache()


def _delta(before, after):
    return {key: after[key] - before[key] for key in ("in_use", "cached", "hits", "misses")}


def test_a_freed_block_is_cached_and_reused_by_the_next_array_of_its_size(cache):
    before = cpu.memory_cache_stats()
    a = np.ones(MIB, np.float32)
    held = _delta(before, cpu.memory_cache_stats())
    assert held["in_use"] >= 4 * MIB and held["misses"] == 1 and held["hits"] == 0
    del a
    freed = _delta(before, cpu.memory_cache_stats())
    assert freed["in_use"] == 0 and freed["cached"] == held["in_use"]
    b = np.empty(MIB, np.float32)
    reused = _delta(before, cpu.memory_cache_stats())
    assert reused == {"in_use": held["in_use"], "cached": 0, "hits": 1, "misses": 1}
    del b


def test_values_are_correct_in_reused_blocks(cache):
    dirty = np.full(3 * MIB // 8, 7.0)
    del dirty                                   # a cached block full of 7.0
    zeros = np.zeros(3 * MIB // 8)              # calloc on a reused block must clear it
    assert cpu.memory_cache_stats()["hits"] >= 1
    assert not zeros.any()
    rng = np.random.RandomState(0)
    x = rng.randn(512, 300)
    y = x @ x.T                                 # results written into reused blocks
    del y
    np.testing.assert_allclose((x @ x.T)[:3, :3], x[:3] @ x[:3].T)


def test_small_arrays_bypass_the_cache(cache):
    before = cpu.memory_cache_stats()
    arrays = [np.ones(100) for _ in range(50)]
    assert _delta(before, cpu.memory_cache_stats()) == dict.fromkeys(_delta(before, before), 0)
    assert sum(float(a.sum()) for a in arrays) == 5000


def test_clear_memory_cache_returns_every_cached_block(cache):
    blocks = [np.ones(n * 100_000) for n in range(1, 6)]
    del blocks
    assert cpu.memory_cache_stats()["cached"] > 0
    cpu.clear_memory_cache()
    stats = cpu.memory_cache_stats()
    assert stats["cached"] == 0 and stats["in_use"] == 0


def test_resizing_an_array_keeps_its_values_across_the_small_and_large_paths(cache):
    a = np.arange(10.0)
    a.resize(200_000, refcheck=False)           # small -> large: realloc moves the data
    np.testing.assert_array_equal(a[:10], np.arange(10.0))
    assert not a[10:].any()
    a.resize(5, refcheck=False)                 # large -> small
    np.testing.assert_array_equal(a, np.arange(5.0))


def test_the_cache_keeps_at_most_its_limit(cache):
    from nnabla_ext.cpu import _native
    limit = cpu.memory_cache_stats()["limit"]
    try:
        _native.set_memory_cache_limit(2 * MIB)
        blocks = [np.ones(MIB // 8) for _ in range(5)]       # five 1 MiB arrays
        del blocks
        assert 0 < cpu.memory_cache_stats()["cached"] <= 2 * MIB
    finally:
        _native.set_memory_cache_limit(limit)


def test_arrays_outlive_uninstalling_the_allocator(cache):
    a = np.ones(MIB)
    memory.uninstall()
    assert not cpu.memory_cache_stats()["installed"]
    b = np.ones(MIB)                            # numpy's own allocator
    in_use = cpu.memory_cache_stats()["in_use"]
    del a                                       # freed through the cache that made it
    assert cpu.memory_cache_stats()["in_use"] < in_use
    assert b.sum() == MIB


_CHILD = """
import json, numpy as np, nnabla as nn, nnabla.functions as F, nnabla_ext.cpu as cpu
y = F.relu(nn.Variable.from_numpy_array(np.ones((64, 1024), np.float32)))
y.forward()
print(json.dumps(cpu.memory_cache_stats()))
"""


def _child_stats(value):
    """memory_cache_stats() of a fresh process that ran a CPU kernel, with the variable
    set to ``value`` (unset when None)."""
    env = dict(os.environ)
    env.pop("NNABLA_CPU_CACHED_ALLOCATOR", None)
    if value is not None:
        env["NNABLA_CPU_CACHED_ALLOCATOR"] = value
    done = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("value, installed", [("0", False), ("1", True)])
def test_the_environment_variable_switches_the_allocator(value, installed):
    stats = _child_stats(value)
    assert stats["installed"] is installed
    assert (stats["misses"] > 0) is installed     # the 256 KiB output came from the cache


def test_the_default_follows_memory_default_enabled():
    assert _child_stats(None)["installed"] is memory.DEFAULT_ENABLED


def test_an_unknown_value_of_the_environment_variable_is_refused():
    with pytest.raises(ValueError, match="NNABLA_CPU_CACHED_ALLOCATOR is 'yes'"):
        memory.enabled_by_environment({"NNABLA_CPU_CACHED_ALLOCATOR": "yes"})
