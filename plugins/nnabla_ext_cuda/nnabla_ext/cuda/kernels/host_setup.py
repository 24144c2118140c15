"""Kernels whose ``setup`` builds constant arrays with numpy (windows, index tables).

The generic ``STFT``/``ISTFT`` compute their window, inverse window sum and reflection
indices in ``setup`` from host data, and ``ONNXResize`` its per-axis weight matrices and the
extrapolation mask. Here ``setup`` runs once on the host (``xp`` is numpy while it runs) and
the arrays it made are moved to the device, so every forward and backward runs on the device
(ONNXResize: one matrix product per resized axis, by cuBLAS).
"""
from __future__ import annotations

import numpy as np
from nnabla_ext.cpu.kernels import GENERIC


class HostSetup:
    """Mixin: ``setup()`` on the host, then its array attributes on the device."""

    def setup(self):
        device_xp = self.xp
        self.xp = np
        try:
            super().setup()
        finally:
            self.xp = device_xp
        for name, value in list(vars(self).items()):
            if isinstance(value, np.ndarray):
                setattr(self, name, device_xp.asarray(value))


def _host_setup(name):
    cls = GENERIC[name]
    return type(name, (HostSetup, cls), {"__module__": __name__,
                                         "__doc__": f"{name} with its setup on the host."})


class ONNXResize(GENERIC["ONNXResize"]):
    """ONNXResize with its matrices and extrapolation mask built on the host once."""

    def setup(self):
        device_xp = self.xp
        self.xp = np
        try:
            super().setup()
        finally:
            self.xp = device_xp
        self.matrices = {axis: device_xp.asarray(m) for axis, m in self.matrices.items()}
        # a mask with nothing outside changes nothing: decided here, not per call
        outside = self.outside
        self.outside = None if outside is None or not outside.any() else \
            device_xp.asarray(outside)

    def finish(self, y):
        if self.outside is None:
            return y
        return self.xp.where(self.outside, y.dtype.type(self.extrapolation_value), y)


KERNELS = {**{name: _host_setup(name) for name in ("STFT", "ISTFT")},
           "ONNXResize": ONNXResize}
