"""Shared helpers of the PyTorch twin scripts (``torch_*.py``).

A twin measures the same case as its ``bench_*.py`` script with PyTorch's CPU build and
prints the same result fields (see :func:`_harness.emit`), so ``run.py`` shows PyTorch
beside our nnabla and nnabla 1.39. PyTorch is never a dependency: ``run.py`` runs twins
only in an interpreter where ``import torch`` works. Thread count: PyTorch reads
``OMP_NUM_THREADS`` itself; :func:`setup` applies it explicitly as well, so ``run.py
--threads N`` gives PyTorch exactly N intra-op threads (and one inter-op thread).
"""
import os

import _harness
import torch


def setup(seed=0):
    """Seed PyTorch, set its threads from ``OMP_NUM_THREADS`` when that is set."""
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    if value.isdigit():
        torch.set_num_threads(int(value))
        torch.set_num_interop_threads(1)
    torch.manual_seed(seed)


def emit(value, unit, **extra):
    """:func:`_harness.emit` with PyTorch's own intra-op thread count as ``threads``."""
    extra.setdefault("threads", torch.get_num_threads())
    extra.setdefault("torch_version", torch.__version__)
    _harness.emit(value, unit, **extra)


def device():
    """The ``torch.device`` of this run (``--device``; see ``_gpu.py``)."""
    if _harness.device() == "cpu":
        return torch.device("cpu")
    return torch.device(_harness.device(), torch.cuda.current_device())
