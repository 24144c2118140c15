"""The cuDNN settings nnabla reads from the environment, once, before the first convolution.

- ``NNABLA_CUDNN_WORKSPACE_LIMIT``: bytes a convolution plan may use as workspace; ``-1``
  (default) means unlimited.
- ``NNABLA_CUDNN_DETERMINISTIC``: anything but ``0`` (or unset) keeps only plans whose
  results do not depend on scheduling (no atomics).
- ``NNABLA_CUDNN_ALGORITHM_BY_HEURISTIC``: ``1`` (default) takes cuDNN's heuristic choice;
  ``0`` builds every candidate plan and keeps the fastest measured one.
- ``NNABLA_CUDA_ALLOW_TF32``: anything but ``0`` (or unset) lets float32 convolutions use
  TF32 tensor cores; by default they do not (float32 accuracy, as nnabla).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

WORKSPACE_LIMIT = "NNABLA_CUDNN_WORKSPACE_LIMIT"
DETERMINISTIC = "NNABLA_CUDNN_DETERMINISTIC"
BY_HEURISTIC = "NNABLA_CUDNN_ALGORITHM_BY_HEURISTIC"
ALLOW_TF32 = "NNABLA_CUDA_ALLOW_TF32"


@dataclass(frozen=True)
class Settings:
    """The cuDNN settings in force (see the module doc)."""

    workspace_limit: int = -1
    deterministic: bool = False
    by_heuristic: bool = True
    allow_tf32: bool = False


def _flag(environ, name, default):
    value = environ.get(name, "")
    return default if value == "" else value != "0"


def from_environment(environ=None):
    """:class:`Settings` from ``environ`` (default ``os.environ``).

    Raises:
        ValueError: ``NNABLA_CUDNN_WORKSPACE_LIMIT`` is not an integer.

    Example:
        >>> from nnabla_ext.cudnn.config import from_environment
        >>> from_environment({"NNABLA_CUDNN_WORKSPACE_LIMIT": "1048576",
        ...                   "NNABLA_CUDNN_DETERMINISTIC": "1"})
        Settings(workspace_limit=1048576, deterministic=True, by_heuristic=True, allow_tf32=False)
    """
    environ = os.environ if environ is None else environ
    raw = environ.get(WORKSPACE_LIMIT, "").strip() or "-1"
    try:
        limit = int(raw)
    except ValueError:
        raise ValueError(f"{WORKSPACE_LIMIT}={raw!r}: expected an integer number of bytes "
                         "(-1: unlimited)") from None
    return Settings(workspace_limit=limit, deterministic=_flag(environ, DETERMINISTIC, False),
                    by_heuristic=_flag(environ, BY_HEURISTIC, True),
                    allow_tf32=_flag(environ, ALLOW_TF32, False))


_settings = []


def settings():
    """The settings read at the first call (as nnabla reads them once)."""
    if not _settings:
        _settings.append(from_environment())
    return _settings[0]


def reset():
    """Read the environment again at the next :func:`settings` call (tests)."""
    _settings.clear()
