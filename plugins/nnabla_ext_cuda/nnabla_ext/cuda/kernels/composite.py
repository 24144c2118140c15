"""Kernels made of other kernels, with their parts bound to the device.

The CPU plugin's ``FusedConvolution`` builds its stages from the CPU table (native C++
convolution on numpy arrays), and its quantized layers (``BinaryConnectConvolution``...)
construct their inner ``Affine``/``Convolution`` directly, so the inner kernel computes with
numpy. Here every part is this backend's kernel, bound to the device namespace.
"""
from __future__ import annotations

from nnabla_ext.cpu.kernels import GENERIC

_FusedConvolution = GENERIC["FusedConvolution"]
STAGES = ("pad_k", "conv_k", "bn_k", "act_k")


def device_kernel(table, host_kernel, xp, storage_dtype):
    """``host_kernel``'s function as ``table``'s kernel, with the same arguments and shapes."""
    spec = host_kernel.spec
    args = {a.name: getattr(host_kernel, a.name) for a in spec.args}
    cls = table[spec.name]
    kernel = cls.__new__(cls)
    kernel.xp = xp
    kernel.storage_dtype = storage_dtype
    kernel.__init__(spec, args, host_kernel.in_shapes, host_kernel.out_shapes)
    return kernel


class FusedConvolution(_FusedConvolution):
    """pad -> convolution -> [batch normalization] -> [+ z] -> nonlinearity, on the device."""

    def setup(self):
        super().setup()
        from . import CUDA_KERNELS
        for stage in STAGES:
            k = getattr(self, stage)
            if k is not None:
                setattr(self, stage, device_kernel(CUDA_KERNELS, k, self.xp, self.storage_dtype))


def _with_device_inner(name, cls):
    def setup(self):
        cls.setup(self)
        self.inner.xp = self.xp                      # its setup made no arrays: shapes only
        self.inner.storage_dtype = self.storage_dtype
    return type(name, (cls,), {"setup": setup, "__module__": __name__,
                               "__doc__": f"{name} with its inner kernel on the device."})


QUANTIZED = {name: _with_device_inner(name, cls) for name, cls in GENERIC.items()
             if getattr(cls, "inner_class", None) is not None}
KERNELS = {"FusedConvolution": FusedConvolution, **QUANTIZED}
