"""The thread pool of the native loops, shared with numpy's OpenBLAS.

Every native loop gives the same bits on one thread and on several (each output element
is computed by one thread, in the same order); numpy's matrix products run their jobs on
the pool and give the same result; a forked child still computes (its own pool).
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import nnabla_ext.cpu as cpu
from nnabla_ext.cpu import _blas, _native
from nnabla_ext.cpu.kernels import native


@pytest.fixture
def threads():
    """Set the pool's size for one test, then restore it."""
    before = cpu.get_num_threads()
    yield cpu.set_num_threads
    cpu.set_num_threads(before)


def _native_results(rng):
    x = rng.randn(8, 16, 12, 12).astype(np.float32)
    lists = ([12, 12], [12, 12], [3, 3], [1, 1], [1, 1], [1, 1])
    col = _native.im2col(x, 8, 16, 1, *lists, False)
    image = _native.col2im(col, 8, 16, 1, *lists, False)
    pool_lists = ([12, 12], [6, 6], [2, 2], [0, 0], [2, 2])
    y, index = _native.max_pool_forward(x, 8 * 16, 1, *pool_lists)
    dx = _native.max_pool_backward(y, index, 8 * 16, x.size)
    avg = _native.avg_pool_forward(x, 8 * 16, 1, *pool_lists, True, True)
    davg = _native.avg_pool_backward(avg, 8 * 16, 1, *pool_lists, True, True)
    mean, var = _native.channel_moments(x, 8, 16, 144)
    soft = _native.softmax_forward(x, 8 * 16 * 12, 12)
    dsoft = _native.softmax_backward(soft, x, 8 * 16 * 12, 12)
    wide = rng.randn(300_000).astype(np.float32)        # the element-wise loops' threshold
    return [col, image, y, index, dx, avg, davg, mean, var, soft, dsoft,
            _native.tanh_forward(wide), _native.gelu_backward(wide, wide)]


def test_native_loops_give_the_same_bits_on_any_thread_count(threads):
    results = []
    for n in (1, 2, 3):
        threads(n)
        assert cpu.get_num_threads() == n
        results.append(_native_results(np.random.RandomState(0)))
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)


def test_blas_jobs_run_on_the_pool(threads):
    if not native.SHARED_BLAS_POOL:
        pytest.skip("numpy's BLAS takes no threads callback (not OpenBLAS >= 0.3.27): "
                    "its own threads run the products")
    assert _blas.installed()
    rng = np.random.RandomState(1)
    a = rng.rand(300, 700).astype(np.float32)
    b = rng.rand(700, 500).astype(np.float32)
    threads(1)
    expected = a @ b
    threads(2)
    before = _native.blas_job_batches()
    got = a @ b
    assert _native.blas_job_batches() > before          # OpenBLAS handed us its jobs
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4)


def test_set_num_threads_rejects_bad_counts():
    for bad in (0, -1, 1.5, "2", True, None):
        with pytest.raises(ValueError, match="set_num_threads: argument 'n'"):
            cpu.set_num_threads(bad)
    cpu.set_num_threads(np.int64(cpu.get_num_threads()))      # any integer type


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_a_forked_child_still_computes():
    # In a fresh interpreter: the pool's workers exist in the parent before the fork.
    script = textwrap.dedent("""
        import os
        import numpy as np
        import nnabla_ext.cpu as cpu
        from nnabla_ext.cpu import _native
        cpu.set_num_threads(2)
        rng = np.random.RandomState(0)
        a = rng.rand(256, 512).astype(np.float32)
        x = rng.rand(4, 8, 16, 16).astype(np.float32)
        lists = ([16, 16], [8, 8], [2, 2], [0, 0], [2, 2])
        expected = (a @ a.T, _native.max_pool_forward(x, 32, 1, *lists)[0])
        pid = os.fork()
        if pid == 0:
            got = (a @ a.T, _native.max_pool_forward(x, 32, 1, *lists)[0])
            same = all(np.array_equal(g, e) for g, e in zip(got, expected))
            os._exit(0 if same else 3)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0"
