"""The kernel base of the CPU plugin's kernels: the core's public contract (``nnabla.kernel``).

Generic kernels are written against ``self.xp`` (the bound family's namespace), so other
backends may reuse them (``nnabla_ext.cpu.kernels.GENERIC``).
"""
from __future__ import annotations

from nnabla.kernel import Kernel, rng_for, unbroadcast

__all__ = ["Kernel", "rng_for", "unbroadcast"]
