"""``nnabla.monitor``: monitors that log training values, timings and images.

The files are nnabla's, so nnabla's plot tools read ours and ours read nnabla's. In the
monitor's folder (spaces of a monitor's name become ``-`` in its file names):

- ``<name>.series.txt``: one line ``"<index> <value>"`` per flush, the value written with
  ``{:g}`` (6 significant digits), by :class:`MonitorSeries`;
- ``<name>.timer.txt``: one line ``"<index> <seconds since the previous flush> <iterations
  since it> <seconds since the start>"``, by :class:`MonitorTimeElapsed`;
- ``<name>/<index:06d>-<image:03d>.png`` by :class:`MonitorImage`, and
  ``<name>/<index:06d>.png`` by :class:`MonitorImageTile`.

Each line also goes to ``nnabla.logger`` at level INFO when ``verbose`` is true.
"""
from __future__ import annotations

import os
import time

import numpy as np

from .logger import logger

_PLOT_EXTRA_HINT = "pip install 'nnabla[utils]' (or pip install matplotlib)"
_TIME_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 3600.0 * 24}


class Monitor:
    """The folder the monitors of one training run write into.

    Args:
        save_path (str): The folder; it is created (with its parents) when missing.

    Example:
        >>> import tempfile
        >>> Monitor(tempfile.mkdtemp()).save_path != ""
        True
    """

    def __init__(self, save_path):
        if not isinstance(save_path, (str, os.PathLike)):
            raise TypeError(f"Monitor: argument 'save_path' is of type "
                            f"{type(save_path).__name__}; expected a folder path (str)")
        self._save_path = save_path
        os.makedirs(save_path, exist_ok=True)

    @property
    def save_path(self):
        """str: The folder given at construction."""
        return self._save_path


def _check(api, name, monitor, interval, monitor_required=False, **counts):
    """The constructor arguments of the monitors: ``name`` a str, ``monitor`` a
    :class:`Monitor` (or None where it is optional), ``interval`` an int (positive for the
    image monitors, whose schedule divides by it), each of ``counts`` a non-negative int.
    TypeError/ValueError naming ``api`` and the argument."""
    if not isinstance(name, str):
        raise TypeError(f"{api}: argument 'name' is of type {type(name).__name__}; "
                        "expected a str")
    if not (monitor is None and not monitor_required) and not isinstance(
            getattr(monitor, "save_path", None), (str, os.PathLike)):
        raise TypeError(f"{api}: argument 'monitor' is of type {type(monitor).__name__}; "
                        "expected an nnabla.monitor.Monitor"
                        + ("" if monitor_required else " or None"))
    for arg, value in dict(interval=interval, **counts).items():
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{api}: argument '{arg}' is {value!r} (of type "
                            f"{type(value).__name__}); expected an int")
        if arg in counts and value < 0:
            raise ValueError(f"{api}: argument '{arg}' is {value}; expected a non-negative int")
        if arg == "interval" and monitor_required and value < 1:
            raise ValueError(f"{api}: argument 'interval' is {value}; expected a positive int "
                             "(images are saved where (index + 1) % interval == 0)")


def _check_index(api, index):
    if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
        raise TypeError(f"{api}: argument 'index' is {index!r} (of type "
                        f"{type(index).__name__}); expected an int (the iteration)")


def _monitor_file(monitor, name, suffix):
    """The path of a monitor's text file, emptied; None without a Monitor."""
    if monitor is None:
        return None
    path = os.path.join(monitor.save_path, name.replace(" ", "-")) + suffix
    open(path, "w").close()  # each run starts its file afresh, as nnabla does
    return path


def _append_line(path, line):
    if path is not None:
        with open(path, "a") as file:
            file.write(line + "\n")


class MonitorSeries:
    """Logs the mean of the values added since the last flush.

    A flush happens at the first ``add`` whose index is at least ``interval`` past the index
    of the previous flush (or past -1 before the first one). It writes
    ``"<index> <mean:g>"`` to ``<name>.series.txt`` and logs ``iter=<index> {<name>}=<mean>``.

    Args:
        name (str): Name of the series, in the log and (spaces as ``-``) in the file name.
        monitor (Monitor): Where to write the file; None logs only.
        interval (int): Minimum distance in index between two flushes.
        verbose (bool): Whether to log each flush.

    Example:
        >>> series = MonitorSeries("loss", interval=2, verbose=False)
        >>> for i in range(4):
        ...     series.add(i, float(i))
    """

    def __init__(self, name, monitor=None, interval=1, verbose=True):
        _check("MonitorSeries", name, monitor, interval)
        self.name = name
        self.interval = interval
        self.verbose = verbose
        self.sp = _monitor_file(monitor, name, ".series.txt")
        self.flush_at = -1
        self.buf = []

    def add(self, index, value):
        """Add ``value`` at ``index``; flush the mean when the interval has passed.

        Args:
            index (int): Iteration index.
            value (float or numpy.ndarray): The value; arrays are averaged over all elements.

        Raises:
            TypeError: ``index`` is not an int or ``value`` not a number or numeric array.
        """
        _check_index("MonitorSeries.add", index)
        if not (isinstance(value, (int, float, np.number)) or isinstance(
                value, np.ndarray) and value.dtype.kind in "biuf") or isinstance(value, complex):
            raise TypeError(f"MonitorSeries.add: argument 'value' is of type "
                            f"{type(value).__name__} ({value!r}); expected a number or a "
                            "numeric numpy array")
        self.buf.append(value)
        if index - self.flush_at < self.interval:
            return
        mean = np.mean(self.buf)
        if self.verbose:
            logger.info(f"iter={index} {{{self.name}}}={mean}")
        _append_line(self.sp, f"{index} {mean:g}")
        self.flush_at = index
        self.buf = []


class MonitorTimeElapsed:
    """Logs the time spent between flushes and since the monitor was created.

    A flush happens at the first ``add`` whose index is at least ``interval`` past the index
    of the previous flush (or past -1). It writes ``"<index> <lap seconds> <iterations>
    <total seconds>"`` to ``<name>.timer.txt`` and logs
    ``iter=<index> {<name>}=<lap>[sec/<iterations>iter] <total>[sec]``.

    Args:
        name (str): Name of the timer, in the log and (spaces as ``-``) in the file name.
        monitor (Monitor): Where to write the file; None logs only.
        interval (int): Minimum distance in index between two flushes.
        verbose (bool): Whether to log each flush.

    Example:
        >>> timer = MonitorTimeElapsed("time", interval=10, verbose=False)
        >>> timer.add(9)
    """

    def __init__(self, name, monitor=None, interval=100, verbose=True):
        _check("MonitorTimeElapsed", name, monitor, interval)
        self.name = name
        self.interval = interval
        self.verbose = verbose
        self.sp = _monitor_file(monitor, name, ".timer.txt")
        self.flush_at = -1
        self.start = time.time()
        self.lap = self.start

    def add(self, index):
        """Flush the elapsed times when ``index`` is ``interval`` past the last flush.

        Args:
            index (int): Iteration index.
        """
        _check_index("MonitorTimeElapsed.add", index)
        if index - self.flush_at < self.interval:
            return
        now = time.time()
        elapsed, elapsed_total = now - self.lap, now - self.start
        iterations = index - self.flush_at
        self.lap = now
        if self.verbose:
            logger.info(f"iter={index} {{{self.name}}}={elapsed}[sec/{iterations}iter] "
                        f"{elapsed_total}[sec]")
        _append_line(self.sp, f"{index} {elapsed} {iterations} {elapsed_total}")
        self.flush_at = index


def _as_numpy(var, api):
    """A copy of the values of a Variable, an NdArray or a numpy array."""
    import nnabla as nn
    if isinstance(var, nn.Variable):
        return np.array(var.d, copy=True)
    if isinstance(var, nn.NdArray):
        return np.array(var.data, copy=True)
    if isinstance(var, np.ndarray):
        return var.copy()
    raise TypeError(f"{api}: argument 'var' must be an nnabla.Variable, "
                    f"nnabla.NdArray or numpy.ndarray; given {type(var).__name__}")


class MonitorImage:
    """Saves images of a ``(N, ..., C, H, W)`` minibatch as PNG files.

    The monitor writes at index 0 and at each index where ``(index + 1) % interval == 0``.
    The first ``num_images`` images (the leading axes flattened) are normalized together by
    ``normalize_method`` to [0, 1]; more than 3 channels keep the first 3, 2 channels get a
    third channel of ones, and one channel is saved as a grayscale image. Image ``j`` goes to
    ``<name>/<index:06d>-<j:03d>.png``.

    Args:
        name (str): Name of the monitor, in the log and (spaces as ``-``) as the folder.
        monitor (Monitor): The monitor folder the image folder is created in.
        interval (int): Period, in iterations, of the saves.
        verbose (bool): Whether to log each save.
        num_images (int): Number of images saved at each save.
        normalize_method (callable): Maps the ``(B, C, H, W)`` numpy batch to [0, 1];
            default: ``(x - x.min()) / (x.max() - x.min())``.

    Example:
        >>> import tempfile
        >>> images = MonitorImage("noise", Monitor(tempfile.mkdtemp()), interval=2,
        ...                       num_images=2, verbose=False)
        >>> images.add(0, np.random.rand(4, 3, 8, 8))
        >>> sorted(os.listdir(images.save_dir))
        ['000000-000.png', '000000-001.png']
    """

    def __init__(self, name, monitor, interval=1000, verbose=True, num_images=16,
                 normalize_method=None):
        _check(type(self).__name__, name, monitor, interval, monitor_required=True,
               num_images=num_images)
        self.name = name
        self.interval = interval
        self.verbose = verbose
        self.normalize_method = normalize_method or self.default_normalize_method
        self.num_images = num_images
        self.save_dir = os.path.join(monitor.save_path, name.replace(" ", "-"))
        os.makedirs(self.save_dir, exist_ok=True)

    def default_normalize_method(self, x):
        """Min-max normalization of the whole batch ``x`` to [0, 1].

        A constant batch maps to zeros (nnabla divides by zero there).
        """
        low, high = x.min(), x.max()
        if high == low:
            return np.zeros_like(x, dtype=np.float64)
        return (x - low) / (high - low)

    def _is_due(self, index):
        return index == 0 or (index + 1) % self.interval == 0

    def _images(self, var):
        """The normalized ``(B, C <= 3, H, W)`` batch to save."""
        data = _as_numpy(var, f"{type(self).__name__}.add")
        if data.ndim < 3:
            raise ValueError(f"{type(self).__name__}.add: argument 'var' has shape "
                             f"{data.shape}; expected (N, ..., C, H, W)")
        channels = data.shape[-3]
        data = data.reshape((-1,) + data.shape[-3:])[:self.num_images]
        data = self.normalize_method(data)
        if channels > 3:
            data = data[:, :3]
        elif channels == 2:
            data = np.concatenate([data, np.ones_like(data[:, :1])], axis=1)
        return data

    def add(self, index, var):
        """Save the images of ``var`` when ``index`` is due.

        Args:
            index (int): Iteration index.
            var (nnabla.Variable, nnabla.NdArray or numpy.ndarray): A ``(N, ..., C, H, W)``
                minibatch.
        """
        from nnabla.utils.image_utils import imsave
        _check_index("MonitorImage.add", index)
        if not self._is_due(index):
            return
        data = self._images(var)
        path_pattern = os.path.join(self.save_dir, f"{index:06d}-{{}}")
        for j, image in enumerate(data):
            image = image.transpose(1, 2, 0)
            imsave(path_pattern.format(f"{j:03d}.png"),
                   image[..., 0] if image.shape[-1] == 1 else image)
        if self.verbose:
            logger.info(f"iter={index} {{{self.name}}} are written to "
                        f"{path_pattern.format('*.png')}.")


class MonitorImageTile(MonitorImage):
    """Saves the images of a ``(N, ..., C, H, W)`` minibatch tiled into one PNG file.

    Same schedule and preprocessing as :class:`MonitorImage`; the ``num_images`` images are
    tiled by :func:`tile_images` into ``<name>/<index:06d>.png``.

    Example:
        >>> import tempfile
        >>> tiles = MonitorImageTile("noise", Monitor(tempfile.mkdtemp()), interval=2,
        ...                          num_images=4, verbose=False)
        >>> tiles.add(1, np.random.rand(10, 3, 8, 8))
        >>> os.listdir(tiles.save_dir)
        ['000001.png']
    """

    def add(self, index, var):
        """Save the tiled images of ``var`` when ``index`` is due.

        Args:
            index (int): Iteration index.
            var (nnabla.Variable, nnabla.NdArray or numpy.ndarray): A ``(N, ..., C, H, W)``
                minibatch.
        """
        from nnabla.utils.image_utils import imsave
        _check_index("MonitorImageTile.add", index)
        if not self._is_due(index):
            return
        path = os.path.join(self.save_dir, f"{index:06d}.png")
        imsave(path, tile_images(self._images(var)))
        if self.verbose:
            logger.info(f"iter={index} {{{self.name}}} is written to {path}.")


def tile_images(data, padsize=1, padval=0):
    """Tile a ``(B, C, H, W)`` batch into one image on a square grid.

    The grid has ``n = ceil(sqrt(B))`` rows and columns, filled row by row; every tile gets
    ``padsize`` pixels of ``padval`` below and to its right, and missing tiles are
    ``padval``.

    Args:
        data (numpy.ndarray): The ``(B, C, H, W)`` batch.
        padsize (int): Padding after each tile, in pixels.
        padval (float): Value of the padding pixels.

    Returns:
        numpy.ndarray: ``(n * (H + padsize), n * (W + padsize))`` for one channel, else the
        same with a trailing channel axis ``C``.

    Raises:
        ValueError: ``data`` is not 4-dimensional.

    Example:
        >>> tile_images(np.ones((3, 1, 2, 2))).astype(int)
        array([[1, 1, 0, 1, 1, 0],
               [1, 1, 0, 1, 1, 0],
               [0, 0, 0, 0, 0, 0],
               [1, 1, 0, 0, 0, 0],
               [1, 1, 0, 0, 0, 0],
               [0, 0, 0, 0, 0, 0]])
    """
    data = np.asarray(data)
    if data.ndim != 4:
        raise ValueError(f"tile_images: argument 'data' has shape {data.shape}; "
                         "expected (B, C, H, W)")
    batch, channels, height, width = data.shape
    n = int(np.ceil(np.sqrt(batch)))
    padded = np.pad(data.transpose(0, 2, 3, 1),
                    ((0, n * n - batch), (0, padsize), (0, padsize), (0, 0)),
                    mode="constant", constant_values=padval)
    tile_h, tile_w = height + padsize, width + padsize
    grid = padded.reshape(n, n, tile_h, tile_w, channels).transpose(0, 2, 1, 3, 4)
    tiled = grid.reshape(n * tile_h, n * tile_w, channels)
    return tiled[..., 0] if channels == 1 else tiled


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError(f"nnabla.monitor plots need matplotlib: {_PLOT_EXTRA_HINT}") \
            from error
    return plt


def _read_columns(filename, value_column):
    """The index column (int64) and one value column (float32) of a monitor text file."""
    with open(filename) as file:
        rows = [line.split() for line in file if line.strip()]
    index = np.array([int(row[0]) for row in rows], dtype=np.int64)
    values = np.array([float(row[value_column]) for row in rows], dtype=np.float32)
    return index, values


def plot_series(filename, plot_kwargs=None):
    """Plot a ``*.series.txt`` file of :class:`MonitorSeries` on the current axes.

    Args:
        filename (str): Path to the file.
        plot_kwargs (dict): Keyword arguments of ``matplotlib.pyplot.plot``.

    Raises:
        ImportError: matplotlib is not installed.
    """
    plt = _pyplot()
    index, values = _read_columns(filename, 1)
    plt.plot(index, values, **(plot_kwargs or {}))


def plot_time_elapsed(filename, elapsed=False, unit="s", plot_kwargs=None):
    """Plot a ``*.timer.txt`` file of :class:`MonitorTimeElapsed` on the current axes.

    Args:
        filename (str): Path to the file.
        elapsed (bool): Plot the total elapsed time instead of the time per flush.
        unit (str): Time unit, one of ``'s'``, ``'m'``, ``'h'`` and ``'d'``.
        plot_kwargs (dict): Keyword arguments of ``matplotlib.pyplot.plot``.

    Raises:
        ValueError: ``unit`` is not one of the four.
        ImportError: matplotlib is not installed.
    """
    if unit not in _TIME_UNITS:
        raise ValueError(f"plot_time_elapsed: argument 'unit' is {unit!r}; "
                         "expected one of 's', 'm', 'h', 'd'")
    plt = _pyplot()
    index, seconds = _read_columns(filename, 3 if elapsed else 1)
    plt.plot(index, seconds / np.float32(_TIME_UNITS[unit]), **(plot_kwargs or {}))
