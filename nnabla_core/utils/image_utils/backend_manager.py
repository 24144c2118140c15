"""Choice of the image backend for each call of ``imread``, ``imsave`` and ``imresize``.

The backends are the modules of ``backend_events`` listed below whose library imports. For a
call, the manager asks each backend whether it accepts the operation on the file's extension;
the ``Recommended`` ones are tried first, then the ``OK`` ones, in the order below, until one
does not refuse. ``set_backend`` pins one backend instead.
"""
from __future__ import annotations

import errno
import importlib
import os
from collections import OrderedDict

from nnabla.logger import logger

from .backend_events.common import BackendRefusal, get_file_extension


class ImageReadError(OSError, ValueError):
    """No backend could decode an image file (an OSError as pillow's, a ValueError as nnabla's
    'no backend available')."""

# Module name and backend class, in order of preference among equals: the order nnabla 1.39
# registers them in (tests/data/image_utils records it), so an ``OK`` tie (saving a 16-bit
# PNG) goes to OpenCV before pypng, as there.
BACKEND_MODULES = (("pil_backend", "PilBackend"), ("cv2_backend", "Cv2Backend"),
                   ("pypng_backend", "PngBackend"))
EXTRA_HINT = "pip install 'nnabla[utils]' (or pip install pillow)"
_VERBS = {"load": "read", "save": "save", "resize": "resize"}


def _import_backends():
    backends = OrderedDict()
    for module_name, class_name in BACKEND_MODULES:
        try:
            module = importlib.import_module(f"{__package__}.backend_events.{module_name}")
        except ImportError:
            continue  # its image library is not installed
        backends[class_name] = getattr(module, class_name)()
    return backends


class ImageUtilsBackendManager:
    """The installed backends and the one pinned by ``set_backend``, if any."""

    def __init__(self, backends):
        self._backends = backends
        self._pinned = None
        self._current = None

    def get_available_backends(self):
        return list(self._backends)

    def set_backend(self, name):
        if name is not None and name not in self._backends:
            # nnabla quietly goes back to the automatic choice here; we say so.
            logger.warning(f"image_utils.set_backend: backend {name!r} is not available "
                           f"(available: {self.get_available_backends()}); choosing the "
                           "backend by file type")
            name = None
        self._pinned = name

    def get_backend(self):
        return self._pinned or self._current or ""

    def candidates(self, source, operator):
        """The backends to try for ``operator`` on ``source``, best first.

        A pinned backend is the only one, except that a pinned backend that cannot resize
        (pypng) leaves resizing to the automatic choice (nnabla recurses forever there).
        """
        ext = get_file_extension(source) if operator != "resize" else ""
        states = {name: backend.accept(source, ext, operator)
                  for name, backend in self._backends.items()}
        if self._pinned is not None and (operator != "resize" or states[self._pinned] != "NG"):
            return [self._pinned]
        return ([name for name, state in states.items() if state == "Recommended"]
                + [name for name, state in states.items() if state == "OK"])

    def call(self, operator, source, method, *args, **kwargs):
        """Call ``method`` of the first backend that does not refuse; restore file positions.

        Raises:
            ImportError: no image library is installed.
            FileNotFoundError: ``load`` of a path that does not exist.
            ImageReadError: every candidate refused to read the file (OSError, ValueError).
            ValueError: every candidate refused, or none accepts the file type.
        """
        if not self._backends:
            raise ImportError(f"nnabla.utils.image_utils needs an image library: {EXTRA_HINT}")
        if operator == "load" and isinstance(source, (str, os.PathLike)) \
                and not os.path.exists(source):
            raise FileNotFoundError(errno.ENOENT, "image_utils.imread: no such file",
                                    os.fspath(source))
        start = source.tell() if hasattr(source, "seek") else None
        refusals = []
        for name in self.candidates(source, operator):
            try:
                result = getattr(self._backends[name], method)(*args, **kwargs)
            except BackendRefusal as refusal:
                refusals.append(f"{name}: {refusal}")
                if start is not None:
                    source.seek(start)
                continue
            self._current = name
            return result
        error = ImageReadError if operator == "load" and refusals else ValueError
        raise error(self._failure_message(operator, source, refusals))

    def _failure_message(self, operator, source, refusals):
        what = "the image" if operator == "resize" else repr(source)
        message = f"image_utils.im{operator.replace('load', 'read')}: no backend could " \
                  f"{_VERBS[operator]} {what}"
        if refusals:
            return message + ": " + "; ".join(refusals)
        return message + f" (no backend accepts '{get_file_extension(source)}' files; " \
                         f"available: {self.get_available_backends()})"


backend_manager = ImageUtilsBackendManager(_import_backends())
