"""Kernels whose ``setup`` builds constant arrays with numpy (windows, index tables).

The generic ``STFT``/``ISTFT`` compute their window, inverse window sum and reflection
indices in ``setup`` from host data. Here ``setup`` runs once on the host (``xp`` is numpy
while it runs) and the arrays it made are moved to the device, so every forward and
backward runs on the device.
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


KERNELS = {name: _host_setup(name) for name in ("STFT", "ISTFT")}
