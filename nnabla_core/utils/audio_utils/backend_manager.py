"""Choice of the audio backend of ``nnabla.utils.audio_utils`` (pydub, when installed)."""
from __future__ import annotations

import importlib
from collections import OrderedDict

_BACKENDS = ("pydub",)
INSTALL_HINT = "pip install pydub (WAV files need no ffmpeg)"


class AudioUtilsBackendManager:
    """Process-wide registry of the importable audio backends (a singleton)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
            cls._instance._loaded = False
        return cls._instance

    def __init__(self):
        if self._loaded:
            return
        self._backend = None
        self.backends = OrderedDict()
        for name in _BACKENDS:
            self._import_backend(name)
        available = self.get_available_backends()
        if available:
            self.backend = available[0]
        self._loaded = True

    def _import_backend(self, backend):
        try:
            module = importlib.import_module(f"{__package__}.{backend}_utils")
        except ImportError:
            module = None
        self.backends[backend] = module

    def _check_backend(self, backend):
        if backend is None:
            raise ModuleNotFoundError(f"nnabla.utils.audio_utils: no audio backend is installed; "
                                      f"{INSTALL_HINT}")
        if self.backends.get(backend) is None:
            raise ValueError(f"audio_utils: backend {backend!r} is not available here "
                             f"(available: {self.get_available_backends()})")

    def get_available_backends(self):
        """list of str: Names of the importable backends."""
        return [name for name, module in self.backends.items() if module is not None]

    @property
    def backend(self):
        """str or None: Name of the backend in use."""
        return self._backend

    @backend.setter
    def backend(self, backend):
        self._check_backend(backend)
        self._backend = backend

    @property
    def module(self):
        """The backend module in use."""
        self._check_backend(self._backend)
        return self.backends[self._backend]


backend_manager = AudioUtilsBackendManager()
