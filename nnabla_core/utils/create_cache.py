"""Build the cache directory of a data-set CSV file (``nnabla.utils.create_cache``).

The layout is the one :class:`~nnabla.utils.data_source.DataSourceWithFileCache` writes
and :class:`~nnabla.utils.data_source_implements.CacheDataSource` reads (see
:mod:`nnabla.utils.data_source`). Cache files are written by a thread pool, each under a
temporary name renamed when complete, with a tqdm bar.
"""
from __future__ import annotations

import csv
import os
from concurrent.futures import ThreadPoolExecutor

import numpy

from nnabla.config import nnabla_config
from nnabla.logger import logger

from .._atomic import write_atomically
from .data_source import progress_bar, save_cache_file, write_csv_atomically
from .data_source_implements import CsvDataSource
from .data_source_loader import FileReader


class CreateCache(CsvDataSource):
    """Create the cache of a local data-set CSV file.

    Args:
        input_csv_filename (str): The CSV file (see
            :class:`~nnabla.utils.data_source_implements.CsvDataSource`).
        rng (numpy.random.RandomState or None): Generator of the stored order; None gives
            ``RandomState(313)``.
        shuffle (bool): Store the examples in a random order (``order.csv`` records it).
        num_of_threads (int or None): Writer threads; None or 0 takes
            ``[DATA_ITERATOR] data_source_file_cache_num_of_threads``.

    Raises:
        ValueError: A row of the CSV does not have one cell per column.

    Example:
        >>> import os, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> with open(os.path.join(folder, "d.csv"), "w") as f:
        ...     _ = f.write("x,y\\n1,0\\n2,1\\n")
        >>> os.mkdir(os.path.join(folder, "cache"))
        >>> CreateCache(os.path.join(folder, "d.csv")).create(os.path.join(folder, "cache"))
        >>> sorted(os.listdir(os.path.join(folder, "cache")))[:2]
        ['cache_00000000_00000001.npy', 'cache_index.csv']
    """

    def __init__(self, input_csv_filename, rng=None, shuffle=False, num_of_threads=None):
        self._cache_size = int(nnabla_config.get("DATA_ITERATOR",
                                                 "data_source_file_cache_size"))
        self._filereader = FileReader(input_csv_filename)
        self._filename = input_csv_filename
        self._original_source_uri = input_csv_filename
        self._rng = numpy.random.RandomState(313) if rng is None else rng
        self._shuffle = shuffle
        self._normalize = False
        with open(input_csv_filename, "r", encoding="utf-8-sig") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None:
                raise ValueError(f"CreateCache: {input_csv_filename!r} is empty (no header row)")
            self._csv_data = [row for row in reader if row]
        self._check_rows(header, self._csv_data)
        self._size = len(self._csv_data)
        self._remove_comment_cols(header, self._csv_data)
        self._process_header(header)
        self._variables = tuple(self._variables_dict.keys())
        self._original_order = list(range(self._size))
        self._order = list(self._rng.permutation(self._size)) if self._shuffle \
            else list(range(self._size))
        self._num_of_threads = num_of_threads or int(nnabla_config.get(
            "DATA_ITERATOR", "data_source_file_cache_num_of_threads"))
        logger.info(f"Num of thread is {self._num_of_threads}")

    def _save_cache(self, block):
        last_position, row_indexes = block
        examples = [tuple(self._process_row(self._csv_data[i], line=i + 2))
                    for i in row_indexes]
        first_position = last_position + 1 - len(examples)
        file_name = os.path.join(
            self._cache_dir, f"{self._cache_file_name_prefix}_{first_position:08d}_"
                             f"{last_position:08d}{self._cache_file_format}")
        save_cache_file(file_name, self._variables, examples, self._cache_file_format)
        return file_name, len(examples)

    def _blocks(self):
        blocks = []
        for start in range(0, self._size, self._cache_size):
            rows = self._order[start:start + self._cache_size]
            blocks.append((start + len(rows) - 1, rows))
        return blocks

    def create(self, output_cache_dirname, normalize=True, cache_file_name_prefix="cache"):
        """Write the cache files and ``cache_index.csv``, ``cache_info.csv`` (``.npy``),
        ``original.csv`` and ``order.csv`` into ``output_cache_dirname``.

        Args:
            output_cache_dirname (str): Output directory (created when missing).
            normalize (bool): Scale 8-bit (16-bit) images to [0, 1].
            cache_file_name_prefix (str): First part of the cache file names.

        Raises:
            FileNotFoundError: A file named in the CSV does not exist (the message gives
                the line).
            ValueError: A file cannot be decoded, or one variable's examples have
                different shapes.
        """
        self._normalize = normalize
        self._cache_file_name_prefix = cache_file_name_prefix
        self._cache_dir = output_cache_dirname
        self._cache_file_format = nnabla_config.get("DATA_ITERATOR", "cache_file_format")
        os.makedirs(output_cache_dirname, exist_ok=True)
        blocks = self._blocks()
        index_rows = []
        with ThreadPoolExecutor(max_workers=max(1, self._num_of_threads)) as pool, \
                progress_bar(len(blocks), "Create cache") as bar:
            for file_name, length in pool.map(self._save_cache, blocks):
                index_rows.append((os.path.basename(file_name), length))
                bar.update(1)
        self._write_side_files(output_cache_dirname, index_rows)

    def _write_side_files(self, directory, index_rows):
        write_csv_atomically(os.path.join(directory, "cache_index.csv"), index_rows)
        if self._cache_file_format == ".npy":
            write_csv_atomically(os.path.join(directory, "cache_info.csv"),
                                 [(name,) for name in self._variables])
        with open(self._original_source_uri, "rb") as f:
            content = f.read()
        write_atomically(os.path.join(directory, "original.csv"), lambda out: out.write(content))
        write_csv_atomically(os.path.join(directory, "order.csv"),
                             [list(pair) for pair in zip(self._original_order, self._order)])
