"""Concrete data sources (``nnabla.utils.data_source_implements``).

* :class:`SimpleDataSource`: examples from a user function ``load_func(index)``.
* :class:`CsvDataSource`: a data-set CSV file as nnabla's tools write it (header
  ``NAME[__INDEX][:LABEL]``, cells holding numbers or paths of image, CSV, ``.npy`` or
  audio files relative to the CSV).
* :class:`CacheDataSource`: a cache directory written by ``DataSourceWithFileCache`` or
  ``nnabla.utils.create_cache.CreateCache``.
* :class:`ConcatDataSource`: several sources one after the other.
"""
from __future__ import annotations

import csv
import os
import threading
from collections import OrderedDict, deque
from concurrent.futures import ThreadPoolExecutor

import numpy

from nnabla.config import nnabla_config

from .data_source import DataSource
from .data_source_loader import FileReader, load


class _OrderSnapshot:
    __slots__ = ("generation", "order")

    def __init__(self, generation, order):
        self.generation = generation
        self.order = order


class SimpleDataSource(DataSource):
    """Examples given by ``load_func(index)`` for ``index`` in ``[0, num_examples)``.

    Each generation (epoch of the iterator) has its own order, drawn from ``rng`` when
    shuffling; the last 15 orders are kept so that slices of this source that run a few
    epochs apart still agree (``DataIterator.slice``).

    Args:
        load_func (callable): ``load_func(index)`` returns a tuple of arrays, one per
            variable (named ``x0``, ``x1``...).
        num_examples (int): Number of examples.
        shuffle (bool): A new random order every generation.
        rng (numpy.random.RandomState or None): Generator for shuffling; None gives
            ``RandomState(313)``.

        indexes (sequence of int or None): Beyond nnabla: restrict the source to these
            indices of ``load_func`` (``num_examples`` is then ignored).

    Raises:
        TypeError: ``load_func`` is not callable.
        ValueError: ``num_examples`` is not positive.
    """

    def __init__(self, load_func, num_examples, shuffle=False, rng=None, *, indexes=None):
        if not callable(load_func):
            raise TypeError("SimpleDataSource: argument 'load_func' must be callable; given "
                            f"{type(load_func).__name__}")
        self._indexes = numpy.arange(int(num_examples)) if indexes is None \
            else numpy.asarray(indexes, dtype=numpy.int64)
        if len(self._indexes) < 1:
            raise ValueError("SimpleDataSource: argument 'num_examples' must be >= 1; given "
                             f"{num_examples}")
        super().__init__(shuffle=shuffle, rng=rng)
        self._load_func = load_func
        self._size = len(self._indexes)
        self._generation = 0
        self._variables = [f"x{i}" for i in
                           range(len(self._call_load_func(int(self._indexes[0]))))]
        self._orders = deque(maxlen=15)
        self.reset()
        self._generate_order(0)

    def _call_load_func(self, index):
        example = self._load_func(index)
        # nnabla indexes whatever comes back (a tuple, or an array whose rows are the values)
        if not (hasattr(example, "__len__") and hasattr(example, "__getitem__")) \
                or isinstance(example, (str, bytes)):
            raise TypeError(f"SimpleDataSource: load_func({index}) must return a tuple of "
                            f"arrays, one per variable; it returned {type(example).__name__}")
        return example

    def _get_data(self, position):
        return self._get_data_of_generation(position, self._generation)

    def _get_data_of_generation(self, position, generation):
        for snapshot in self._orders:
            if snapshot.generation == generation:
                return self._call_load_func(int(self._indexes[snapshot.order[position]]))
        raise ValueError(f"SimpleDataSource: no order for generation {generation} (kept: "
                         f"{[s.generation for s in self._orders]}); the slices of one "
                         "source were advanced more than 15 epochs apart")

    def apply_order(self):
        """Switch to the order of the next generation."""
        self._generation += 1
        self._generate_order(self._generation)

    def _generate_order(self, generation):
        if any(snapshot.generation == generation for snapshot in self._orders):
            return
        order = self._rng.permutation(self._size) if self._shuffle \
            else numpy.arange(self._size)
        self._orders.append(_OrderSnapshot(generation, order))

    def reset(self):
        """Start an epoch at position 0 (the order changes in :meth:`apply_order`)."""
        super().reset()


def _parse_column(column_value):
    name, _, label = column_value.partition(":")
    variable, _, index = name.partition("__")
    return variable, (index if "__" in name else None), (label if ":" in column_value else None)


class CsvDataSource(DataSource):
    """Examples from a data-set CSV file.

    The header names the variables: ``x``, ``x:label`` or ``x__0``, ``x__1``... (the
    ``__INDEX`` columns of one variable form a vector); columns whose name starts with
    ``#`` are ignored. A cell holds a number or a path (relative to the CSV) of a file
    loaded by extension: images (``.png``, ``.jpg``..., channel-first), ``.csv``,
    ``.npy`` or ``.wav``.

    Args:
        filename (str): Path or URL of the CSV file.
        shuffle (bool): A new random order every epoch.
        rng (numpy.random.RandomState or None): Generator for shuffling.
        normalize (bool): Scale 8-bit (16-bit) images to [0, 1].

    Raises:
        ValueError: The file has no header, or a row does not have one cell per column
            (the message gives the row's line number).
    """

    def __init__(self, filename, shuffle=False, rng=None, normalize=False):
        super().__init__(shuffle=shuffle, rng=rng)
        self._filename = filename
        self._normalize = normalize
        self._generation = -1
        self._filereader = FileReader(self._filename)
        with self._filereader.open(textmode=True, encoding="utf-8-sig") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None:
                raise ValueError(f"CsvDataSource: {filename!r} is empty (no header row)")
            self._rows = [row for row in reader if row]  # blank lines hold no example
        self._check_rows(header, self._rows)
        self._size = len(self._rows)
        self._remove_comment_cols(header, self._rows)
        self._process_header(header)
        self._original_source_uri = self._filename
        self._original_order = list(range(self._size))
        self._order = list(range(self._size))
        self._variables = tuple(self._variables_dict.keys())
        self.reset()

    def _check_rows(self, header, rows):
        for row_index, row in enumerate(rows):
            if len(row) != len(header):
                raise ValueError(
                    f"CsvDataSource: {self._filename!r} line {row_index + 2} has {len(row)} "
                    f"column(s); the header {header} has {len(header)}")

    def _remove_comment_cols(self, header, rows):
        for col_index in reversed(range(len(header))):
            if header[col_index].startswith("#"):
                del header[col_index]
                for row in rows:
                    del row[col_index]

    def _process_header(self, row):
        self._variables_dict = OrderedDict()
        self._columns = []
        for column_value in row:
            variable, index, label = _parse_column(column_value)
            self._columns.append((variable, index, label))
            if index is None:
                self._variables_dict[variable] = {"label": label, "value": None}
            else:
                self._variables_dict.setdefault(variable, []).append(
                    {"label": label, "value": None})

    def _process_row(self, row, line=None):
        values = OrderedDict()
        for column_value, (variable, index, _) in zip(row, self._columns):
            try:
                if index is None:
                    values[variable] = self._get_value(column_value, is_vector=True)
                else:
                    values.setdefault(variable, []).append(self._get_value(column_value))
            except (OSError, ValueError) as error:
                where = f"line {line}" if line is not None else "a row"
                raise type(error)(f"CsvDataSource: {self._filename!r} {where}, column "
                                  f"{variable!r}: {error}") from error
        return values.values()

    def _get_value(self, value, is_vector=False):
        try:
            return [float(value)] if is_vector else float(value)
        except ValueError:
            pass
        ext = os.path.splitext(value)[1].lower()
        loader = load(ext)
        with self._filereader.open(value.strip()) as f:
            return loader(f, normalize=self._normalize)

    def _get_data(self, position):
        row_index = self._order[position]
        return tuple(self._process_row(self._rows[row_index], line=row_index + 2))

    def reset(self):
        """Start an epoch; draw a new order when shuffling."""
        if self._shuffle:
            self._order = list(self._rng.permutation(list(range(self._size))))
        self._generation += 1
        super().reset()


class ConcatDataSource(DataSource):
    """The examples of several sources, one after the other (one order over all).

    Args:
        data_source_list (list of DataSource): Sources with the same variables.
        shuffle (bool): A new random order over all examples every epoch.
        rng (numpy.random.RandomState or None): Generator for shuffling.

    Raises:
        ValueError: The list is empty or the sources' variables differ.
    """

    def __init__(self, data_source_list, shuffle=True, rng=None):
        super().__init__(shuffle=shuffle, rng=rng)
        if not data_source_list:
            raise ValueError("ConcatDataSource: argument 'data_source_list' is empty")
        first = tuple(data_source_list[0].variables)
        for i, source in enumerate(data_source_list[1:], start=1):
            if tuple(source.variables) != first:
                raise ValueError(f"ConcatDataSource: data source {i} has variables "
                                 f"{tuple(source.variables)}; data source 0 has {first}")
        self._data_sources = data_source_list
        self._sw_points = list(numpy.cumsum([source.size for source in data_source_list]))
        self._size = int(self._sw_points[-1])
        self._variables = data_source_list[0].variables
        self.reset()

    def _get_data(self, position):
        index = int(self._indexes[position])
        for i, bound in enumerate(self._sw_points):
            if index < bound:
                offset = int(self._sw_points[i - 1]) if i > 0 else 0
                return self._data_sources[i]._get_data(index - offset)
        return None

    def reset(self):
        """Start an epoch; draw a new order when shuffling."""
        self._indexes = self._rng.permutation(self._size) if self._shuffle \
            else numpy.arange(self._size)
        super().reset()


class CacheDataSource(DataSource):
    """Examples read from a cache directory (see :mod:`nnabla.utils.data_source`).

    The next cache files in the order are read ahead by
    ``[DATA_ITERATOR] cache_file_cache_num_of_threads`` threads (``.npy`` caches).

    Args:
        cachedir (str): The cache directory (local or ``s3://``).
        shuffle (bool): Shuffle the files and the examples within each file every epoch.
        rng (numpy.random.RandomState or None): Generator for shuffling.
        normalize (bool): Scale ``uint8`` (``uint16``) arrays to float32 in [0, 1].

    Raises:
        FileNotFoundError: A file listed in ``cache_index.csv`` is missing.
        ValueError: The directory holds no cache, or its files do not match its index or
            variable list (for instance a cache written by another program version).
    """

    def __init__(self, cachedir, shuffle=False, rng=None, normalize=False):
        super().__init__(shuffle=shuffle, rng=rng)
        self._current_data = {}
        self._current_filename = None
        self._cachedir = cachedir
        self._normalize = normalize
        self._filereader = FileReader(self._cachedir)
        self._num_of_threads = int(nnabla_config.get("DATA_ITERATOR",
                                                     "cache_file_cache_num_of_threads"))
        self._variables = None
        self._generation = -1
        self._cache_files = []
        self._max_length = 1
        self._thread_lock = threading.Lock()
        self._prefetched = {}
        self._pool = None
        self._initialize_cache_info(os.path.join(cachedir, "cache_info.csv"))
        self._initialize_cache_files(os.path.join(cachedir, "cache_index.csv"))
        if not self._cache_files:
            raise ValueError(f"CacheDataSource: {cachedir!r} holds no cache (no cache_index.csv "
                             "entries and no .h5 files)")
        self._check_first_file()
        if self._cache_type == ".npy" and self._num_of_threads > 0:
            self._pool = ThreadPoolExecutor(max_workers=self._num_of_threads)
        self._original_order = [(name, j) for name, length in self._cache_files
                                for j in range(length)]
        self.reset()

    def _initialize_cache_info(self, info_filename):
        if os.path.isfile(info_filename) or self._filereader._file_type == "s3":
            try:
                with FileReader(info_filename).open(textmode=True) as f:
                    self._variables = [row[0] for row in csv.reader(f) if row]
                self._cache_type = ".npy"
                return
            except (OSError, IndexError):
                pass
        self._cache_type = ".h5"

    def _initialize_cache_files(self, index_filename):
        try:
            with FileReader(index_filename).open(textmode=True) as f:
                rows = [row for row in csv.reader(f) if row]
        except OSError:
            rows = None
        if rows is None:
            for name in self._filereader.listdir() or []:
                self._add_h5_file(name)
            return
        for line, row in enumerate(rows, start=1):
            if len(row) < 2 or not row[1].strip().isdigit():
                raise ValueError(f"CacheDataSource: {index_filename!r} line {line} must be "
                                 f"'file name,number of examples'; given {row}")
            file_name = os.path.join(self._cachedir, row[0])
            self._add_file(file_name, int(row[1]))
            if self._variables is None:
                with self._filereader.open_cache(file_name) as cache:
                    self._variables = list(cache.keys())

    def _add_file(self, file_name, length):
        if self._filereader._file_type == "file" and not os.path.isfile(file_name):
            raise FileNotFoundError(f"CacheDataSource: cache file {file_name!r} listed in "
                                    "cache_index.csv does not exist")
        self._cache_files.append((file_name, length))
        self._max_length = max(self._max_length, length)

    def _add_h5_file(self, file_name):
        with self._filereader.open_cache(file_name) as cache:
            if self._variables is None:
                self._variables = list(cache.keys())
            lengths = {len(value) for value in cache.values()}
        if len(lengths) != 1:
            raise ValueError(f"CacheDataSource: the variables of {file_name!r} have different "
                             f"numbers of examples {sorted(lengths)}")
        self._add_file(os.path.join(self._cachedir, file_name), lengths.pop())

    def _check_first_file(self):
        file_name, length = self._cache_files[0]
        data = self._read_file(file_name)
        for name in self._variables:
            if len(data[name]) != length:
                raise ValueError(f"CacheDataSource: {file_name!r} holds {len(data[name])} "
                                 f"examples of {name!r}; cache_index.csv says {length}")
        self._prefetched[file_name] = data

    def _read_file(self, file_name):
        if self._cache_type == ".h5":
            with self._filereader.open_cache(file_name) as cache:
                data = {key: value[()] for key, value in cache.items()}
            missing = [name for name in self._variables if name not in data]
            if missing:
                raise ValueError(f"CacheDataSource: {file_name!r} lacks variables {missing}")
            return data
        data = {}
        with FileReader(file_name).open(textmode=False) as f:
            for name in self._variables:
                try:
                    data[name] = numpy.load(f, allow_pickle=True)
                except (ValueError, EOFError, OSError) as error:
                    raise ValueError(
                        f"CacheDataSource: {file_name!r} does not hold the arrays of the "
                        f"variables {self._variables} named in cache_info.csv (reading "
                        f"{name!r} failed: {error}); was it written by another version?"
                    ) from error
        return data

    def _next_file_names(self, position):
        stride = self._max_length
        names = [entry[0] for entry in
                 self._order[position + stride:position + stride * (self._num_of_threads + 1):
                             stride]]
        return [name for name in names if name != self._current_filename]

    def _load_current(self, file_name, position):
        pending = self._prefetched.pop(file_name, None)
        data = pending.result() if hasattr(pending, "result") else pending
        if data is None:
            data = self._read_file(file_name)
        if self._pool is not None:
            wanted = set(self._next_file_names(position))
            for name in list(self._prefetched):
                if name not in wanted:
                    del self._prefetched[name]
            for name in wanted:
                if name not in self._prefetched:
                    self._prefetched[name] = self._pool.submit(self._read_file, name)
        return data

    def _get_data(self, position):
        self._position = position
        file_name, index = self._order[position]
        if file_name != self._current_filename:
            self._current_data = self._load_current(file_name, position)
            self._current_filename = file_name
        data = [self._current_data[name][index] for name in self._variables]
        if self._normalize:
            data = [_normalized(value) for value in data]
        return data

    def close(self):
        """Stop the read-ahead threads."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        self._prefetched = {}
        super().close()

    def reset(self):
        """Start an epoch; with shuffling, permute the files and each file's examples."""
        with self._thread_lock:
            super().reset()
            self._order = []
            if self._shuffle:
                for i in self._rng.permutation(len(self._cache_files)):
                    file_name, length = self._cache_files[i]
                    self._order += [(file_name, j) for j in self._rng.permutation(length)]
            else:
                self._order = list(self._original_order)
            self._current_data = {}
            self._current_filename = None
            self._size = len(self._order)
            self._generation += 1


def _normalized(value):
    if value.dtype == numpy.uint8:
        return value.astype(numpy.float32) * (1.0 / 255.0)
    if value.dtype == numpy.uint16:
        return value.astype(numpy.float32) * (1.0 / 65535.0)
    return value
