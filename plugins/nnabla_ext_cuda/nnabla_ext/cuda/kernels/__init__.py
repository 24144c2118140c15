"""The CUDA kernel table: the CPU plugin's generic ``xp`` kernels, run on CuPy, with CUDA
kernels where the generic code is not device-clean or is slow on a GPU.

``CUDA_KERNELS = {**GENERIC, **OVERRIDES}``: :data:`nnabla_ext.cpu.kernels.GENERIC` is
written against ``self.xp`` (numpy's API), which the engine sets to ``cupy``; the entries of
:data:`OVERRIDES` (this package's modules) replace those that call host-only numpy or
APIs CuPy lacks. Every raw CUDA source is listed in :mod:`.sources` and compiled device-less
by ``python -m nnabla_ext.cuda.check``.
"""
from __future__ import annotations

from nnabla_ext.cpu.kernels import GENERIC

OVERRIDES = {}

CUDA_KERNELS = {**GENERIC, **OVERRIDES}
