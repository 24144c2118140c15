"""oneDNN for the CPU convolutions and batched matrix products: finds and loads the
library, then the module using it.

The compiled module ``nnabla_ext.cpu._onednn_conv`` (``src/onednn_conv.cpp``) is built
against oneDNN's headers and names ``libdnnl.so.3`` (found through its RPATH in
``<prefix>/lib``); this module loads that library from the ``onednn-cpu-gomp`` wheel (a
dependency of the plugin on x86-64 Linux) with ``RTLD_GLOBAL`` first, by the path the
wheel records, so other install layouts work too.
The module also holds the batched matrix products (``src/onednn_matmul.cpp``,
``matmul_plan``) of ``BatchMatmul``.
When the library or the module is missing, or loading fails, :data:`conv` is ``None``
and :data:`reason` says why; the convolution kernels then keep their im2col + GEMM
path, and ``BatchMatmul`` numpy's matmul. ``NNABLA_CPU_ONEDNN=0`` turns oneDNN off
before anything is loaded; ``NNABLA_CPU_ONEDNN=always`` makes every convolution and
product it takes use it (by default a geometry whose weights outweigh its maps keeps
im2col + GEMM, see :func:`nnabla_ext.cpu.kernels.onednn.worth_onednn`, and a small
product numpy's matmul). GNU OpenMP (oneDNN's threads) starts with
``GOMP_SPINCOUNT=50000`` (:data:`SPIN_COUNT`) unless the environment sets a wait policy or
a spin count (see :func:`_bounded_spinning`).

:func:`enabled` and :func:`set_enabled` switch the oneDNN path at run time (kernels set
up afterwards follow the switch).
"""
from __future__ import annotations

import contextlib
import ctypes
import glob
import importlib.metadata
import os

LIBRARY = "libdnnl.so.3"
DISTRIBUTION = "onednn-cpu-gomp"

conv = None
reason = None
_enabled = False
_always = False     # every geometry oneDNN takes, not only those worth it


def _library_paths():
    """Candidate paths of ``libdnnl.so.3``: the wheel's file, then the loader's search."""
    paths = []
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        for f in dist.files or ():
            if f.name == LIBRARY:
                paths.append(os.path.normpath(str(dist.locate_file(f))))
    # e.g. a venv whose RECORD is gone: <prefix>/lib of this interpreter
    import sys
    paths += glob.glob(os.path.join(sys.prefix, "lib", LIBRARY))
    paths.append(LIBRARY)   # LD_LIBRARY_PATH, the system's cache
    seen = set()
    return [p for p in paths if not (p in seen or seen.add(p))]


# Spins of an idle GNU OpenMP worker before it sleeps: ~1.5 ms at the ~30 ns a pause takes
# on this project's machine, about the 2 ms our pool's workers wait (src/thread_pool.h).
SPIN_COUNT = 50000


@contextlib.contextmanager
def _bounded_spinning(environ=os.environ):
    """``GOMP_SPINCOUNT`` = :data:`SPIN_COUNT` while GNU OpenMP starts, unless the user chose
    a wait policy (``OMP_WAIT_POLICY``) or a spin count.

    libgomp reads it once, when it is loaded (with libdnnl, here). Its default, ~300000
    spins (~9 ms) after every parallel region, keeps oneDNN's idle workers on the cores our
    thread pool and numpy need between layers; passive waiting (no spinning) makes every
    region of a layer that runs several (batch chunks, reorders) wait for a futex wake-up.
    Measured on this 2-core machine (benchmarks/README.md, issue 10), 2 threads, fresh
    processes: ResNet-18 inference at batch 1 took 27-30 ms with the default, 21-26 ms
    passive and 18-24 ms with 50000 (PyTorch 14-21); the strided convolution forward +
    backward a median 56 ms passive against 43 ms (PyTorch 43); the six workloads of issue
    10 ran 2-11 % faster than passive.
    The variable is restored afterwards, so child processes inherit the user's environment.
    """
    if "OMP_WAIT_POLICY" in environ or "GOMP_SPINCOUNT" in environ:
        yield
        return
    environ["GOMP_SPINCOUNT"] = str(SPIN_COUNT)
    try:
        yield
    finally:
        environ.pop("GOMP_SPINCOUNT", None)


def _load():
    global conv, reason, _enabled, _always
    setting = os.environ.get("NNABLA_CPU_ONEDNN", "1").strip().lower()
    if setting in ("0", "false", "off", "no"):
        reason = "NNABLA_CPU_ONEDNN is off"
        return
    errors = []
    with _bounded_spinning():
        for path in _library_paths():
            try:
                ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_GLOBAL)
                break
            except OSError as e:
                errors.append(f"{path}: {e}")
        else:
            path = None
    if path is None:
        reason = ("libdnnl.so.3 not loaded (install onednn-cpu-gomp==2023.2.0): "
                  + "; ".join(errors))
        return
    try:
        from . import _onednn_conv
    except ImportError as e:
        reason = f"nnabla_ext.cpu._onednn_conv not importable: {e}"
        return
    conv = _onednn_conv
    _enabled = True
    _always = setting == "always"


def enabled():
    """Whether newly set-up convolution kernels use oneDNN: ``False``, ``True`` (where
    it is worth it) or ``"always"`` (every geometry it takes)."""
    return "always" if _enabled and _always else _enabled


def set_enabled(flag):
    """Use oneDNN for convolutions set up from now on: ``True`` where it is worth it,
    ``"always"`` for every geometry it takes, ``False`` never.

    Returns the previous setting (as :func:`enabled` gives it). Raises ``RuntimeError``
    with :data:`reason` when ``flag`` is true and oneDNN is not available, ``ValueError``
    for another string.
    """
    global _enabled, _always
    if isinstance(flag, str) and flag != "always":
        raise ValueError(f"nnabla_ext.cpu._onednn.set_enabled: flag is {flag!r}; expected "
                         "True, False or 'always'")
    previous = enabled()
    if flag and conv is None:
        raise RuntimeError(f"nnabla_ext.cpu: oneDNN is not available ({reason})")
    _enabled = bool(flag)
    _always = flag == "always"
    return previous


def set_num_threads(n):
    """Threads of oneDNN's OpenMP team (applied on each call's thread)."""
    if conv is not None:
        conv.set_num_threads(int(n))


_load()
