"""Data sources and their cache wrappers (``nnabla.utils.data_source``).

A data source hands out one example (a tuple of arrays, one per variable) per position of
the current epoch. :class:`DataSourceWithFileCache` writes a source's examples once into
cache files (nnabla's layout, read back by ``CacheDataSource``),
:class:`DataSourceWithMemoryCache` keeps them in memory, and :class:`SlicedDataSource`
exposes a contiguous range of another source (``DataIterator.slice``).

Cache directory layout (as nnabla 1.39 writes it):

* ``<prefix>_<first:08d>_<last:08d>.npy``: the variables' arrays, one ``numpy.save`` after
  the other in variable order (``.h5`` instead: one dataset per variable), at most
  ``[DATA_ITERATOR] data_source_file_cache_size`` examples each;
* ``cache_index.csv``: ``file name,number of examples`` per cache file;
* ``cache_info.csv`` (``.npy`` only): one variable name per line;
* ``original.csv`` (the source CSV, when there is one) and ``order.csv``
  (``original index,position`` per example).

Every file is written under a temporary name and renamed when complete, so an interrupted
run leaves no truncated cache file.
"""
from __future__ import annotations

import atexit
import csv
import os
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from shutil import rmtree

import numpy

from nnabla.config import nnabla_config

from .._atomic import write_atomically
from .progress import progress_bar
from nnabla.logger import logger

from .data_source_loader import FileReader


def _config(key):
    return nnabla_config.get("DATA_ITERATOR", key)


def write_csv_atomically(path, rows):
    """Write ``rows`` as CSV (``\\n`` line ends) to ``path`` via a temporary file."""
    def write(f):
        csv.writer(f, lineterminator="\n").writerows(rows)
    write_atomically(path, write, mode="w")


def _as_cache_array(value):
    return value if isinstance(value, numpy.ndarray) else \
        numpy.array(value).astype(numpy.float32)


def _stack_variable(name, values, file_name):
    shapes = {numpy.shape(v) for v in values}
    if len(shapes) > 1:
        raise ValueError(f"creating cache file {file_name!r}: the examples of variable {name!r} "
                         f"have different shapes {sorted(shapes)}")
    return numpy.array(values)


def save_cache_file(file_name, variables, examples, file_format):
    """Write ``examples`` (tuples in ``variables`` order) as one cache file, atomically.

    Raises:
        ValueError: The examples of one variable have different shapes.
    """
    arrays = [_stack_variable(name, [_as_cache_array(example[i]) for example in examples],
                              file_name)
              for i, name in enumerate(variables)]
    logger.info(f"Creating cache file {file_name}")
    if file_format == ".h5":
        import h5py

        def write(f):
            with h5py.File(f, "w") as h5:
                for name, array in zip(variables, arrays):
                    h5.create_dataset(name, data=array)
        write_atomically(file_name, write, mode="w+b")
        return
    elif file_format == ".npy":
        def write(f):
            for array in arrays:
                numpy.save(f, array)
    else:
        raise ValueError(f"[DATA_ITERATOR] cache_file_format must be '.npy' or '.h5'; "
                         f"given {file_format!r}")
    write_atomically(file_name, write)


class DataSource:
    """Base class of data sources used by :class:`~nnabla.utils.data_iterator.DataIterator`.

    A subclass sets ``_size`` and ``_variables`` and implements ``_get_data(position)``
    (the example at ``position`` of the current epoch's order) and ``reset()``.

    Args:
        shuffle (bool): Whether the order changes every epoch.
        rng (numpy.random.RandomState or None): Generator for shuffling; None gives a new
            ``RandomState(313)``.
    """

    def __init__(self, shuffle=False, rng=None):
        logger.info(f"DataSource with shuffle({shuffle})")
        self._rng = numpy.random.RandomState(313) if rng is None else rng
        self._variables = None
        self._generation = -1
        self._shuffle = shuffle
        self._position = 0
        self._size = 0
        self._closed = False
        self._order = None
        self._original_order = None
        self._original_source_uri = None
        atexit.register(self.close)

    def _get_data(self, position):
        raise NotImplementedError(f"{type(self).__name__} must implement _get_data(position)")

    def _get_data_of_generation(self, position, generation):
        """The example at ``position`` in the order of ``generation`` (sliced readers)."""
        return self._get_data(position)

    def _generate_order(self, generation):
        """Prepare the order labelled ``generation``, keeping older ones for other slices."""

    def __next__(self):
        return self.next()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()

    def close(self):
        """Release the resources of the source (idempotent)."""
        if not self._closed:
            atexit.unregister(self.close)
            self._closed = True

    @property
    def order(self):
        """list: Order of the examples in the current epoch (None when not tracked)."""
        return self._order

    @property
    def variables(self):
        """tuple of str: Names of the variables of an example."""
        return self._variables

    def next(self):
        """Return the example at the current position and advance by one."""
        data = self._get_data(self._position)
        self._position += 1
        return data

    @property
    def position(self):
        """int: Position of the next example in the current epoch."""
        return self._position

    @property
    def size(self):
        """int: Number of examples."""
        return self._size

    @property
    def shuffle(self):
        """bool: Whether the order changes every epoch."""
        return self._shuffle

    @shuffle.setter
    def shuffle(self, value):
        self._shuffle = value

    def reset(self):
        """Start a new epoch at position 0."""
        self._position = 0

    def apply_order(self):
        """Called once a batch that ended an epoch is complete: switch to the next order."""


class DataSourceWithFileCacheError(Exception):
    """A file cache is used in a way it does not support."""


class DataSourceWithFileCache(DataSource):
    """Writes every example of ``data_source`` into cache files once, then reads them back.

    The cache is built at construction, with a tqdm bar. Settings come from the
    ``[DATA_ITERATOR]`` section of nnabla.conf: ``data_source_file_cache_size`` (examples
    per file), ``data_source_file_cache_num_of_threads`` (loader threads),
    ``cache_file_format`` (``.npy`` or ``.h5``) and ``data_source_file_cache_location``.

    Args:
        data_source (DataSource): The source to cache.
        cache_dir (str or None): Directory for the cache files. None creates a temporary
            directory, removed by :meth:`close`; a given directory is kept.
        cache_file_name_prefix (str): First part of the cache file names.
        shuffle (bool): Shuffle the files and the examples within each file every epoch.
        rng (numpy.random.RandomState or None): Generator for shuffling.
    """

    def __init__(self, data_source, cache_dir=None, cache_file_name_prefix="cache",
                 shuffle=False, rng=None):
        self._tempdir_created = False
        logger.info("Using DataSourceWithFileCache")
        super().__init__(shuffle=shuffle, rng=rng)
        self._cache_file_name_prefix = cache_file_name_prefix
        self._cache_dir = cache_dir
        self._cache_size = int(_config("data_source_file_cache_size"))
        self._num_of_threads = int(_config("data_source_file_cache_num_of_threads"))
        self._cache_file_format = _config("cache_file_format")
        if self._cache_size < 1:
            raise ValueError("[DATA_ITERATOR] data_source_file_cache_size must be >= 1; "
                             f"given {self._cache_size}")
        self._thread_lock = threading.Lock()
        self._size = data_source._size
        self._variables = data_source.variables
        self._data_source = data_source
        self._cache_file_names = []
        self._cache_file_order = []
        self._cache_file_start_positions = []
        self._cache_file_data_orders = []
        self._current_cache_file_index = -1
        self._current_cache_data = None
        self._original_order = list(range(self._size))
        self._order = list(range(self._size))
        if self._cache_dir is None:
            self._tempdir_created = True
            location = _config("data_source_file_cache_location")
            self._cache_dir = tempfile.mkdtemp(dir=location or None)
            logger.info(f"Tempdir for cache {self._cache_dir} created.")
        else:
            os.makedirs(self._cache_dir, exist_ok=True)
        self._create_cache()
        self._create_cache_file_position_table()

    def _load_example(self, position):
        for attempt in range(1, 11):
            example = self._data_source._get_data(position)
            if example is not None:
                return example
            logger.log(99, f"_get_data() fails. retrying count {attempt}/10.")
        raise RuntimeError(f"DataSourceWithFileCache: the data source returned None for "
                           f"position {position} ten times")

    def _save_block(self, positions, pool):
        examples = list(pool.map(self._load_example, positions))
        first, last = positions[0], positions[-1]
        file_name = os.path.join(
            self._cache_dir, f"{self._cache_file_name_prefix}_{first:08d}_{last:08d}"
                             f"{self._cache_file_format}")
        save_cache_file(file_name, self._variables, examples, self._cache_file_format)
        self._cache_file_names.append(file_name)
        self._cache_file_order.append(len(self._cache_file_order))
        self._cache_file_data_orders.append(list(range(len(examples))))

    def _create_cache(self):
        size = self._data_source._size
        starts = range(0, size, self._cache_size)
        with ThreadPoolExecutor(max_workers=max(1, self._num_of_threads)) as pool, \
                progress_bar(size, "Create cache") as bar:
            for start in starts:
                positions = list(range(start, min(start + self._cache_size, size)))
                self._save_block(positions, pool)
                bar.update(len(positions))
        self._position = size
        self._write_cache_side_files()

    def _write_cache_side_files(self):
        write_csv_atomically(os.path.join(self._cache_dir, "cache_index.csv"),
                             [(os.path.basename(name), len(orders)) for name, orders
                              in zip(self._cache_file_names, self._cache_file_data_orders)])
        if self._cache_file_format == ".npy":
            write_csv_atomically(os.path.join(self._cache_dir, "cache_info.csv"),
                                 [(name,) for name in self._variables])
        source = self._data_source
        if source._original_source_uri is not None:
            with FileReader(source._original_source_uri).open() as f:
                content = f.read()
            write_atomically(os.path.join(self._cache_dir, "original.csv"),
                             lambda out: out.write(content))
        if source._order is not None and source._original_order is not None:
            write_csv_atomically(os.path.join(self._cache_dir, "order.csv"),
                                 [list(pair) for pair in
                                  zip(source._original_order, source._order)])

    def _create_cache_file_position_table(self):
        self._cache_file_start_positions = list(range(len(self._cache_file_order)))
        self._order = list(range(self._size))
        self._cache_file_positions = list(range(self._size))
        count = 0
        start = 0
        for file_index in self._cache_file_order:
            self._cache_file_start_positions[file_index] = start
            start += len(self._cache_file_data_orders[file_index])
            for j in self._cache_file_data_orders[file_index]:
                self._order[count] = j + file_index * self._cache_size
                self._cache_file_positions[count] = file_index
                count += 1

    def _read_cache_file(self, file_name):
        if self._cache_file_format == ".npy":
            with open(file_name, "rb") as f:
                return {name: numpy.load(f, allow_pickle=True) for name in self._variables}
        import h5py
        with h5py.File(file_name, "r") as h5:
            return {name: value[()] for name, value in h5.items()}

    def _get_data_from_cache_file(self, position):
        file_index = self._cache_file_positions[position]
        start = self._cache_file_start_positions[file_index]
        index = self._cache_file_data_orders[file_index][position - start]
        if self._current_cache_file_index != file_index:
            self._current_cache_data = self._read_cache_file(self._cache_file_names[file_index])
            self._current_cache_file_index = file_index
        return [self._current_cache_data[name][index] for name in self._variables]

    def _get_data(self, position):
        with self._thread_lock:
            self._position = position
            return self._get_data_from_cache_file(position)

    def close(self):
        """Remove a temporary cache directory and close the wrapped source."""
        if not self._closed:
            atexit.unregister(self.close)
            if self._tempdir_created:
                rmtree(self._cache_dir, ignore_errors=True)
            self._data_source.close()
            self._closed = True

    def reset(self):
        """Start an epoch; with shuffling, permute the files and each file's examples."""
        with self._thread_lock:
            if self._shuffle:
                self._cache_file_order = list(self._rng.permutation(self._cache_file_order))
                self._cache_file_data_orders = [list(self._rng.permutation(orders))
                                                for orders in self._cache_file_data_orders]
            self._create_cache_file_position_table()
            self._data_source.reset()
            self._position = 0
            self._generation += 1


def _example_nbytes(example):
    total = 0
    for value in example:
        array = numpy.array(value, dtype=numpy.float32) if isinstance(value, list) \
            else numpy.asarray(value)
        total += array.size * array.itemsize
    return total


class DataSourceWithMemoryCache(DataSource):
    """Keeps the examples of ``data_source`` in memory after their first read.

    Caching is used when ``size`` times the bytes of the first example stays below
    ``[DATA_ITERATOR] data_source_buffer_max_size``; otherwise every read goes to the
    wrapped source. As in nnabla, the first two epochs come in the wrapped source's first
    order and, with ``shuffle``, each later epoch in a new permutation of that order.

    Args:
        data_source (DataSource): The source to cache.
        shuffle (bool): Shuffle the cached examples from the third epoch on.
        rng (numpy.random.RandomState or None): Generator for shuffling.
    """

    def __init__(self, data_source, shuffle=False, rng=None):
        logger.info("Using DataSourceWithMemoryCache")
        super().__init__(shuffle=shuffle, rng=rng)
        self._buffer_max_size = int(_config("data_source_buffer_max_size"))
        self._size = data_source._size
        self._variables = data_source.variables
        self._data_source = data_source
        self._order = list(range(self._size))
        self._cache = []
        self._data_size = _example_nbytes(self._get_data_func(0))
        self._on_memory = self._data_size * self._size < self._buffer_max_size
        if self._on_memory:
            logger.info("On-memory")

    def _get_data_func(self, position):
        return self._data_source._get_data(position)

    def _get_data(self, position):
        if self._on_memory:
            if self._order[position] < len(self._cache):
                data = self._cache[self._order[position]]
            else:
                data = self._get_data_func(position)
                self._cache.append(data)
        else:
            data = self._data_source._get_data(position)
        self._position = position
        return data

    def close(self):
        """Close the wrapped source."""
        if not self._closed:
            atexit.unregister(self.close)
            self._data_source.close()
            self._closed = True

    def reset(self):
        """Start an epoch (a new permutation of the cached examples when shuffling)."""
        if self._on_memory:
            self._generation += 1
            if self._shuffle and self._generation > 0:
                self._order = list(self._rng.permutation(self._size))
            else:
                self._order = list(range(self._size))
            if self._position == 0:
                self._generation = -1
            else:
                self._data_source._position = self._position
                self._data_source.reset()
        else:
            self._data_source.reset()
            self._generation = self._data_source._generation
            self._position = self._data_source._position
        super().reset()


class SlicedDataSource(DataSource):
    """The examples ``[slice_start, slice_end)`` of ``data_source``'s current order.

    Slices of one source share its per-generation orders, so in every epoch the slices
    of a shuffled source hold disjoint examples.

    Args:
        data_source (DataSource): The source to slice.
        shuffle (bool): Kept for nnabla's signature; the order is the source's.
        rng (numpy.random.RandomState or None): Kept for nnabla's signature.
        slice_start (int): First position of the slice.
        slice_end (int): Position after the last one.

    Raises:
        ValueError: The bounds are not ``0 <= slice_start < slice_end <= data_source.size``.
    """

    def __init__(self, data_source, shuffle=False, rng=None, slice_start=None,
                 slice_end=None):
        logger.info("Using SlicedDataSource")
        super().__init__(shuffle=shuffle, rng=rng)
        if slice_start is None or slice_end is None or \
                not 0 <= slice_start < slice_end <= data_source.size:
            raise ValueError(f"SlicedDataSource: expected 0 <= slice_start < slice_end <= "
                             f"{data_source.size}; given slice_start={slice_start}, "
                             f"slice_end={slice_end}")
        self._data_source = data_source
        self._variables = list(data_source._variables)
        self._slice_start = slice_start
        self._slice_end = slice_end
        self._size = slice_end - slice_start
        self._generation = 0

    def apply_order(self):
        """Move to the next generation's order of the sliced source."""
        self._generation += 1
        self._data_source._generate_order(self._generation)

    def reset(self):
        """Start an epoch at the slice's first position."""
        self._data_source.reset()
        self._data_source._position = self._slice_start
        self._position = 0

    def _get_data(self, position):
        self._position = position
        return self._data_source._get_data_of_generation(self._slice_start + position,
                                                         self._generation)
