"""Automatic logging of nnabla's monitors to MLflow (``nnabla.autolog``).

After :func:`autolog`, every flush of a :class:`~nnabla.monitor.MonitorSeries` or
:class:`~nnabla.monitor.MonitorTimeElapsed` is also logged as an MLflow metric (the monitor's
name, the flushed value, the iteration as step), and the PNG files a
:class:`~nnabla.monitor.MonitorImage` or :class:`~nnabla.monitor.MonitorImageTile` writes
are logged as artifacts of the active run (under ``runs_<run id>/<monitor name>``); with
``with_save_parameters=True``, files written by ``nn.save_parameters`` are logged too
(under ``runs_<run id>/parameters``). :func:`stop_autolog` restores the plain monitors.
Images and parameter files need an active run (``mlflow.start_run()``).

MLflow is an optional dependency: ``pip install mlflow`` (or ``nnabla[mlflow]``).

Example:
    >>> import nnabla.autolog, mlflow                       # doctest: +SKIP
    >>> nnabla.autolog.autolog()                            # doctest: +SKIP
    >>> with mlflow.start_run():                            # doctest: +SKIP
    ...     for i in range(10):
    ...         monitor_loss.add(i, loss.d)
    >>> nnabla.autolog.stop_autolog()                       # doctest: +SKIP
"""
from __future__ import annotations

import functools
import os
import time

import numpy as np

import nnabla as nn

from .monitor import MonitorImage, MonitorImageTile, MonitorSeries, MonitorTimeElapsed

# (owner, attribute name, original) of each method autolog replaced
_patched = []


def _mlflow():
    try:
        import mlflow
    except ImportError as e:
        raise ImportError("nnabla.autolog needs MLflow: pip install mlflow (or "
                          "'nnabla[mlflow]')") from e
    return mlflow


def _artifact_dir(kind):
    run = _mlflow().active_run()
    if run is None:
        raise RuntimeError("nnabla.autolog: no active MLflow run to log artifacts to; "
                           "call mlflow.start_run() first")
    return f"runs_{run.info.run_id}/{kind}"


def _flushes(monitor, index):
    """True when ``monitor.add(index, ...)`` writes (its interval has passed)."""
    return index - monitor.flush_at >= monitor.interval


def _image_written(monitor, index):
    return (index + 1) % monitor.interval == 0


def _wrap_series(add):
    @functools.wraps(add)
    def logged(self, index, value):
        if _flushes(self, index):
            values = [np.mean(np.asarray(v, dtype=np.float64)) for v in self.buf + [value]]
            _mlflow().log_metric(self.name, float(np.mean(values)), step=index)
        return add(self, index, value)
    return logged


def _wrap_time_elapsed(add):
    @functools.wraps(add)
    def logged(self, index):
        if _flushes(self, index):
            _mlflow().log_metric(self.name, time.time() - self.lap, step=index)
        return add(self, index)
    return logged


def _wrap_images(add, names):
    @functools.wraps(add)
    def logged(self, index, value):
        result = add(self, index, value)
        if _image_written(self, index):
            directory = _artifact_dir(self.name)
            for name in names(self, index, value):
                path = os.path.join(self.save_dir, name)
                if os.path.exists(path):
                    _mlflow().log_artifact(path, directory)
        return result
    return logged


def _image_names(monitor, index, value):
    count = min(monitor.num_images, int(np.prod(np.shape(_values(value))[:-3])))
    return [f"{index:06d}-{j:03d}.png" for j in range(count)]


def _tile_names(monitor, index, value):
    return [f"{index:06d}.png"]


def _values(value):
    return getattr(value, "d", value)


def _wrap_save_parameters(save):
    @functools.wraps(save)
    def logged(path, params=None, *args, **kwargs):
        result = save(path, params, *args, **kwargs)
        _mlflow().log_artifact(path, _artifact_dir("parameters"))
        return result
    return logged


def _patch(owner, attr, wrapper):
    original = getattr(owner, attr)
    _patched.append((owner, attr, original))
    setattr(owner, attr, wrapper(original))


def autolog(with_save_parameters=False):
    """Log the monitors' values, images and (optionally) saved parameters to MLflow.

    Calling it again first undoes the previous call.

    Args:
        with_save_parameters (bool): also log each file ``nn.save_parameters`` writes.

    Raises:
        ImportError: MLflow is not installed.
    """
    _mlflow()
    stop_autolog()
    _patch(MonitorSeries, "add", _wrap_series)
    _patch(MonitorTimeElapsed, "add", _wrap_time_elapsed)
    # MonitorImageTile derives from MonitorImage: each class gets its own wrapper
    _patch(MonitorImage, "add", lambda add: _wrap_images(add, _image_names))
    _patch(MonitorImageTile, "add", lambda add: _wrap_images(add, _tile_names))
    if with_save_parameters:
        _patch(nn, "save_parameters", _wrap_save_parameters)


def stop_autolog():
    """Undo :func:`autolog`: monitors and ``nn.save_parameters`` log nothing to MLflow."""
    while _patched:
        owner, attr, original = _patched.pop()
        setattr(owner, attr, original)
