"""The CUDA kernel table: the CPU plugin's generic ``xp`` kernels, run on CuPy, with device
kernels where the generic code is not device-clean.

``CUDA_KERNELS = {**GENERIC, **OVERRIDES}``: :data:`nnabla_ext.cpu.kernels.GENERIC` is
written against ``self.xp`` (numpy's API), which the engine sets to the CUDA namespace
(CuPy, :mod:`nnabla_ext.cuda._namespace`). :data:`OVERRIDES` replaces the entries that are
not device-clean: raw CUDA kernels (:mod:`.raw`, :mod:`.sampling`; every source is compiled
device-less by ``python -m nnabla_ext.cuda.check``), composite kernels rebuilt from this
table (:mod:`.composite`), kernels whose constant tables are built on the host once
(:mod:`.host_setup`), random functions drawing on the host and writing on the device
(:mod:`.stochastic`) and transposes by cuTENSOR (:mod:`.transpose`). No function copies its
inputs through the host.

The backend registers :data:`DEVICE_KERNELS`: each class of ``CUDA_KERNELS`` wrapped by
:func:`~nnabla_ext.cuda._namespace.on_device`, so a kernel runs on its context's device.
"""
from __future__ import annotations

from nnabla_ext.cpu.kernels import GENERIC

from .._namespace import on_device
from . import composite, host_setup, raw, sampling, stochastic, transpose

OVERRIDES = {**host_setup.KERNELS, **composite.KERNELS, **raw.KERNELS, **sampling.KERNELS,
             **stochastic.KERNELS, **transpose.KERNELS}
CUDA_KERNELS = {**GENERIC, **OVERRIDES}
DEVICE_KERNELS = {name: on_device(cls) for name, cls in CUDA_KERNELS.items()}
