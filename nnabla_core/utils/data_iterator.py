"""Mini-batch iterators over data sources (``nnabla.utils.data_iterator``).

A :class:`DataIterator` stacks ``batch_size`` consecutive examples of a data source
(:mod:`nnabla.utils.data_source`) into a batch, counts epochs and calls the registered
epoch callbacks. The helpers build one from a function (:func:`data_iterator_simple`), a
data-set CSV file (:func:`data_iterator_csv_dataset`), a cache directory
(:func:`data_iterator_cache`) or several sources (:func:`data_iterator_concat_datasets`),
optionally behind a memory and/or file cache.

Ordering rules (nnabla 1.39's):

* Without shuffling, examples come in index order; a batch that crosses the end of the
  data set wraps around to the beginning.
* With shuffling, the order of an epoch is drawn from ``rng`` (default
  ``numpy.random.RandomState(313)``, independent of ``numpy.random.seed``). When a batch
  crosses the end of an epoch, a :class:`~nnabla.utils.data_source_implements.SimpleDataSource`
  switches to its new order only after that batch is complete.
* ``epoch`` is incremented, and the end/begin callbacks run (in the caller's thread),
  inside the ``next()`` call whose batch contains the last example of an epoch.
* With ``use_thread=True`` the next batch is read in a background thread while the
  current one is used, so ``position`` runs one batch ahead of the batches returned.
"""
from __future__ import annotations

import atexit
import os
import queue
import threading

import numpy

from nnabla.logger import logger

from .data_source import DataSourceWithFileCache, DataSourceWithMemoryCache, SlicedDataSource
from .data_source_implements import (CacheDataSource, ConcatDataSource, CsvDataSource,
                                     SimpleDataSource)

__all__ = ["DataIterator", "data_iterator", "data_iterator_simple", "data_iterator_csv_dataset",
           "data_iterator_cache", "data_iterator_concat_datasets"]


def _stack(values, index):
    try:
        return numpy.array(values)
    except ValueError as error:
        shapes = sorted({numpy.shape(v) for v in values})
        raise ValueError(f"DataIterator: the examples of variable {index} cannot be stacked "
                         f"into a batch (shapes {shapes})") from error


class DataIterator:
    """Yields mini-batches from a data source and keeps track of epochs.

    Args:
        data_source (DataSource): The examples (:mod:`nnabla.utils.data_source`).
        batch_size (int): Examples per batch (may exceed the data set size; the batch then
            wraps around several times).
        rng (numpy.random.RandomState or None): Kept for nnabla's signature; shuffling
            uses the data source's generator.
        use_thread (bool): Read the next batch in a background thread.
        epoch_begin_callbacks (list of callable): Each is called with the new epoch index
            when an epoch begins (not for epoch 0).
        epoch_end_callbacks (list of callable): Each is called with the index of the epoch
            that has just ended.
        stop_exhausted (bool): Raise ``StopIteration`` when the rest of the epoch cannot
            fill a batch, instead of wrapping around.

    Raises:
        ValueError: ``batch_size`` is not a positive integer or the source is empty.

    Example:
        >>> import numpy as np
        >>> it = data_iterator_simple(lambda i: (np.full(2, i), np.array([i])), 5, 2,
        ...                           use_thread=False)
        >>> x, y = it.next()
        >>> x.shape, y.ravel().tolist(), it.position, it.epoch
        ((2, 2), [0, 1], 2, 0)
    """

    def __init__(self, data_source, batch_size, rng=None, use_thread=True,
                 epoch_begin_callbacks=[], epoch_end_callbacks=[], stop_exhausted=False):
        logger.info("Using DataIterator")
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, numpy.integer)) \
                or batch_size < 1:
            raise ValueError("DataIterator: argument 'batch_size' must be a positive integer; "
                             f"given {batch_size!r}")
        if data_source.size < 1:
            raise ValueError("DataIterator: argument 'data_source' has no examples (size 0)")
        self._stop_exhausted = stop_exhausted
        self._rng = numpy.random.RandomState(313) if rng is None else rng
        self._data_source = data_source
        self._shuffle = data_source.shuffle
        self._variables = data_source.variables
        self._num_of_variables = len(data_source.variables)
        self._batch_size = int(batch_size)
        self._epoch_end_callbacks = list(epoch_end_callbacks)
        self._epoch_begin_callbacks = list(epoch_begin_callbacks)
        self._size = data_source.size
        self._queue = queue.Queue()
        self._exhausted = False
        self._reset()
        self._current_epoch = 0
        self._use_thread = use_thread
        self._closed = False
        if self._use_thread:
            self._start_thread()
        atexit.register(self.close)

    def __iter__(self):
        return self

    def __next__(self):
        return self.next()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()

    def close(self):
        """Wait for the reading thread and close the data source (idempotent)."""
        if not self._closed:
            atexit.unregister(self.close)
            if self._use_thread:
                self._next_thread.join()
            self._data_source.close()
            self._closed = True

    @property
    def epoch(self):
        """int: Number of completed epochs."""
        return self._current_epoch

    @property
    def position(self):
        """int: Position of the next example to read within the current epoch."""
        return self._data_source.position

    @property
    def size(self):
        """int: Number of examples in one epoch."""
        return self._size

    @property
    def variables(self):
        """tuple of str: Names of the arrays of a batch."""
        return self._variables

    @property
    def batch_size(self):
        """int: Number of examples per batch."""
        return self._batch_size

    def _reset(self):
        self._data_source.reset()

    def _start_thread(self):
        self._next_thread = threading.Thread(target=self._next, daemon=True)
        self._next_thread.start()

    def _next(self):
        try:
            self._queue.put(self._read_batch())
        except BaseException as error:  # handed to the caller's thread by next()
            self._queue.put((error, -1))

    def _read_batch(self):
        source = self._data_source
        if self._stop_exhausted and source.position + self._batch_size > self._size:
            return None, 0
        n_reset = 0
        columns = [[] for _ in self._variables]
        for _ in range(self._batch_size):
            example = source.next()
            if example is None:
                return None, 0
            if source.position >= self._size and not self._stop_exhausted:
                n_reset += 1
                self._reset()
            if len(example) != len(columns):
                raise ValueError(f"DataIterator: an example has {len(example)} value(s); the "
                                 f"data source has {len(columns)} variables {self._variables}")
            for column, value in zip(columns, example):
                column.append(value)
        if n_reset:
            source.apply_order()
        return tuple(_stack(column, i) for i, column in enumerate(columns)), n_reset

    def _take(self):
        if not self._use_thread:
            self._next()
        data, n_reset = self._queue.get()
        if self._use_thread:
            self._next_thread.join()
        if n_reset < 0:
            raise data
        return data, n_reset

    def next(self):
        """Return the next batch.

        Returns:
            tuple of numpy.ndarray: One array per variable, of shape
            ``(batch_size,) + example_shape``.

        Raises:
            StopIteration: With ``stop_exhausted=True``, once the epoch is used up.
        """
        if self._exhausted:
            raise StopIteration
        data, n_reset = self._take()
        if data is None:
            if self._stop_exhausted:
                self._exhausted = True
                raise StopIteration
            logger.log(99, "next() got None retrying...")
            if self._use_thread:
                self._start_thread()
            data, n_reset = self._take()
        if self._use_thread:
            self._start_thread()
        for _ in range(n_reset):
            self._callback_epoch_end()
            self._current_epoch += 1
            self._callback_epoch_begin()
        return data

    def slice(self, rng, num_of_slices=None, slice_pos=None, slice_start=None, slice_end=None,
              cache_dir=None, use_cache=False, drop_last=False):
        """Return a new iterator over a contiguous part of this iterator's examples.

        Give either ``num_of_slices`` and ``slice_pos`` or ``slice_start`` and
        ``slice_end``. With the former, each slice holds ``ceil(size / num_of_slices)``
        examples and the last one is moved back to end at ``size`` (so it overlaps its
        neighbour), or ``size // num_of_slices`` with ``drop_last=True``. The slices of a
        shuffled source read the same per-epoch order, so they stay disjoint.

        Args:
            rng (numpy.random.RandomState or None): Generator of the cache wrappers.
            num_of_slices (int): Number of slices.
            slice_pos (int): Index of the slice to return.
            slice_start (int): First example of the slice.
            slice_end (int): Example after the last one.
            cache_dir (str or None): Directory for a file cache of the slice (default: the
                file cache directory of this iterator's source, if any).
            use_cache (bool): Wrap the slice in a memory cache (and a file cache when a
                cache directory is known).
            drop_last (bool): Drop the remainder instead of overlapping the last slice.

        Returns:
            DataIterator: The iterator of the slice (same batch size).

        Raises:
            ValueError: The arguments do not describe a non-empty slice.
        """
        slice_start, slice_end = self._slice_bounds(num_of_slices, slice_pos, slice_start,
                                                    slice_end, drop_last)
        if cache_dir is None:
            cache_dir = self._find_cache_dir()
        source = SlicedDataSource(self._data_source, self._data_source.shuffle,
                                  slice_start=slice_start, slice_end=slice_end)
        if use_cache:
            if cache_dir is not None:
                source = DataSourceWithFileCache(
                    source, cache_dir=cache_dir,
                    cache_file_name_prefix=f"cache_sliced_{slice_start:08d}_{slice_end:08d}",
                    shuffle=self._shuffle, rng=rng)
            source = DataSourceWithMemoryCache(source, shuffle=self._shuffle, rng=rng)
        return DataIterator(source, self._batch_size)

    def _find_cache_dir(self):
        cache_dir = None
        source = self._data_source
        while hasattr(source, "_data_source"):
            cache_dir = getattr(source, "_cache_dir", cache_dir)
            source = source._data_source
        return cache_dir

    def _slice_bounds(self, num_of_slices, slice_pos, slice_start, slice_end, drop_last):
        size = self._size
        if num_of_slices is not None and slice_pos is not None and slice_start is None \
                and slice_end is None:
            if not 0 <= slice_pos < num_of_slices:
                raise ValueError(f"DataIterator.slice: argument 'slice_pos' must be in "
                                 f"[0, {num_of_slices}); given {slice_pos}")
            if drop_last:
                length = size // num_of_slices
                start = length * slice_pos
            else:
                length = (size + num_of_slices - 1) // num_of_slices
                start = min((length * slice_pos) % size, size - length)
            if length < 1:
                raise ValueError(f"DataIterator.slice: {num_of_slices} slices of {size} "
                                 "examples with drop_last=True are empty")
            return start, start + length
        if num_of_slices is None and slice_pos is None and slice_start is not None \
                and slice_end is not None:
            if not 0 <= slice_start < slice_end <= size:
                raise ValueError(f"DataIterator.slice: expected 0 <= slice_start < slice_end "
                                 f"<= {size}; given slice_start={slice_start}, "
                                 f"slice_end={slice_end}")
            return slice_start, slice_end
        raise ValueError("DataIterator.slice: give either 'num_of_slices' and 'slice_pos' or "
                         "'slice_start' and 'slice_end'")

    def _callback_epoch_end(self):
        for callback in self._epoch_end_callbacks:
            callback(self.epoch)

    def _callback_epoch_begin(self):
        for callback in self._epoch_begin_callbacks:
            callback(self.epoch)

    def register_epoch_end_callback(self, callback):
        """Call ``callback(epoch)`` whenever an epoch ends, with the ended epoch's index."""
        self._epoch_end_callbacks.append(callback)

    def register_epoch_begin_callback(self, callback):
        """Call ``callback(epoch)`` whenever a new epoch begins, with its index."""
        self._epoch_begin_callbacks.append(callback)


def _check_arguments(api, **arguments):
    """The arguments the ``data_iterator*`` functions share, checked before anything is
    built: sizes positive ints, ``load_func`` a callable, ``rng`` a RandomState or None,
    ``uri`` a path, ``data_source`` a DataSource and ``data_source_list`` a non-empty list
    of them. TypeError (wrong type) or ValueError (a wrong value; any wrong batch_size)
    naming ``api``."""
    for arg, value in arguments.items():
        if arg in ("batch_size", "num_examples"):
            if isinstance(value, bool) or not isinstance(value, (int, numpy.integer)):
                # a batch_size of another type is a ValueError, as DataIterator raises it
                error = ValueError if arg == "batch_size" else TypeError
                raise error(f"{api}: argument '{arg}' is {value!r} (of type "
                            f"{type(value).__name__}); expected a positive int")
            if value < 1:
                raise ValueError(f"{api}: argument '{arg}' is {value}; expected a positive int")
        elif arg == "load_func" and not callable(value):
            raise TypeError(f"{api}: argument 'load_func' is of type {type(value).__name__}; "
                            "expected a callable returning the example at an index")
        elif arg == "rng" and value is not None and not isinstance(
                value, (numpy.random.RandomState, numpy.random.Generator)):
            raise TypeError(f"{api}: argument 'rng' is of type {type(value).__name__}; "
                            "expected a numpy.random.RandomState or None")
        elif arg == "uri" and not isinstance(value, (str, os.PathLike)):
            raise TypeError(f"{api}: argument 'uri' is of type {type(value).__name__}; "
                            "expected a path or URL (str)")
        elif arg == "data_source":
            _check_source(api, arg, value)
        elif arg == "data_source_list":
            if not isinstance(value, (list, tuple)) or not value:
                raise TypeError(f"{api}: argument 'data_source_list' is {value!r}; expected "
                                "a non-empty list of DataSource")
            for k, source in enumerate(value):
                _check_source(api, f"data_source_list[{k}]", source)


def _check_source(api, arg, value):
    if not all(hasattr(value, a) for a in ("variables", "size", "shuffle", "reset")):
        raise TypeError(f"{api}: argument '{arg}' is of type {type(value).__name__}; "
                        "expected a nnabla.utils.data_source.DataSource")


def data_iterator(data_source, batch_size, rng=None, use_thread=True, with_memory_cache=True,
                  with_file_cache=False, cache_dir=None, epoch_begin_callbacks=[],
                  epoch_end_callbacks=[], stop_exhausted=False):
    """Create a :class:`DataIterator` over ``data_source``, optionally behind caches.

    Args:
        data_source (DataSource): The examples.
        batch_size (int): Examples per batch.
        rng (numpy.random.RandomState or None): Generator of the cache wrappers' shuffling.
        use_thread (bool): Read the next batch in a background thread.
        with_memory_cache (bool): Wrap the source in a
            :class:`~nnabla.utils.data_source.DataSourceWithMemoryCache`.
        with_file_cache (bool): Wrap the source in a
            :class:`~nnabla.utils.data_source.DataSourceWithFileCache` (built now).
        cache_dir (str or None): Directory of the file cache; None uses a temporary one,
            removed when the iterator is closed.
        epoch_begin_callbacks, epoch_end_callbacks, stop_exhausted: As in
            :class:`DataIterator`.

    Returns:
        DataIterator: The iterator.
    """
    _check_arguments("data_iterator", data_source=data_source, batch_size=batch_size, rng=rng)
    source = data_source
    if with_file_cache:
        source = DataSourceWithFileCache(data_source=source, cache_dir=cache_dir,
                                         shuffle=source.shuffle, rng=rng)
    if with_memory_cache:
        source = DataSourceWithMemoryCache(source, shuffle=source.shuffle, rng=rng)
    return DataIterator(source, batch_size, use_thread=use_thread,
                        epoch_begin_callbacks=epoch_begin_callbacks,
                        epoch_end_callbacks=epoch_end_callbacks, stop_exhausted=stop_exhausted)


def data_iterator_simple(load_func, num_examples, batch_size, shuffle=False, rng=None,
                         use_thread=True, with_memory_cache=False, with_file_cache=False,
                         cache_dir=None, epoch_begin_callbacks=[], epoch_end_callbacks=[],
                         stop_exhausted=False):
    """Create a :class:`DataIterator` that loads example ``i`` with ``load_func(i)``.

    Args:
        load_func (callable): ``load_func(index)`` returns a tuple of arrays, one per
            variable; batches stack them along a new first axis.
        num_examples (int): Number of examples; indices run over ``[0, num_examples)``.
        batch_size (int): Examples per batch.
        shuffle (bool): A new random order every epoch.
        rng (numpy.random.RandomState or None): Generator for shuffling; None gives a new
            ``RandomState(313)``.
        use_thread, with_memory_cache, with_file_cache, cache_dir, epoch_begin_callbacks,
            epoch_end_callbacks, stop_exhausted: As in :func:`data_iterator`.

    Returns:
        DataIterator: The iterator.

    Example:
        >>> import numpy as np
        >>> it = data_iterator_simple(lambda i: (np.array([i]),), 3, 2, use_thread=False)
        >>> [it.next()[0].ravel().tolist() for _ in range(2)], it.epoch
        ([[0, 1], [2, 0]], 1)
    """
    _check_arguments("data_iterator_simple", load_func=load_func, num_examples=num_examples,
                     batch_size=batch_size, rng=rng)
    source = SimpleDataSource(load_func, num_examples, shuffle=shuffle, rng=rng)
    return data_iterator(source, batch_size=batch_size, use_thread=use_thread,
                         with_memory_cache=with_memory_cache, with_file_cache=with_file_cache,
                         cache_dir=cache_dir, epoch_begin_callbacks=epoch_begin_callbacks,
                         epoch_end_callbacks=epoch_end_callbacks, stop_exhausted=stop_exhausted)


def data_iterator_csv_dataset(uri, batch_size, shuffle=False, rng=None, use_thread=True,
                              normalize=True, with_memory_cache=True, with_file_cache=True,
                              cache_dir=None, epoch_begin_callbacks=[], epoch_end_callbacks=[],
                              stop_exhausted=False):
    """Create a :class:`DataIterator` over a data-set CSV file.

    See :class:`~nnabla.utils.data_source_implements.CsvDataSource` for the file format.

    Args:
        uri (str): Path or URL (``http(s)://``, ``s3://``) of the CSV file.
        batch_size (int): Examples per batch.
        shuffle (bool): A new random order every epoch.
        rng (numpy.random.RandomState or None): Generator for shuffling.
        use_thread (bool): Read the next batch in a background thread.
        normalize (bool): Scale 8-bit (16-bit) images to [0, 1].
        with_memory_cache, with_file_cache, cache_dir, epoch_begin_callbacks,
            epoch_end_callbacks, stop_exhausted: As in :func:`data_iterator`.

    Returns:
        DataIterator: The iterator.

    Raises:
        FileNotFoundError: The CSV or a file it names does not exist.
        ValueError: A row has missing columns or a file cannot be decoded (the message
            names the line and the file).
    """
    _check_arguments("data_iterator_csv_dataset", uri=uri, batch_size=batch_size, rng=rng)
    source = CsvDataSource(uri, shuffle=shuffle, rng=rng, normalize=normalize)
    return data_iterator(source, batch_size=batch_size, use_thread=use_thread,
                         with_memory_cache=with_memory_cache, with_file_cache=with_file_cache,
                         cache_dir=cache_dir, epoch_begin_callbacks=epoch_begin_callbacks,
                         epoch_end_callbacks=epoch_end_callbacks, stop_exhausted=stop_exhausted)


def data_iterator_cache(uri, batch_size, shuffle=False, rng=None, use_thread=True,
                        normalize=True, with_memory_cache=True, epoch_begin_callbacks=[],
                        epoch_end_callbacks=[], stop_exhausted=False):
    """Create a :class:`DataIterator` over a cache directory.

    Args:
        uri (str): The cache directory (see :mod:`nnabla.utils.data_source`).
        batch_size (int): Examples per batch.
        shuffle (bool): Shuffle the files and the examples within each file every epoch.
        rng (numpy.random.RandomState or None): Generator for shuffling.
        use_thread (bool): Read the next batch in a background thread.
        normalize (bool): Scale ``uint8`` (``uint16``) arrays to [0, 1].
        with_memory_cache, epoch_begin_callbacks, epoch_end_callbacks, stop_exhausted: As
            in :func:`data_iterator`.

    Returns:
        DataIterator: The iterator.
    """
    _check_arguments("data_iterator_cache", uri=uri, batch_size=batch_size, rng=rng)
    source = CacheDataSource(uri, shuffle=shuffle, rng=rng, normalize=normalize)
    return data_iterator(source, batch_size=batch_size, use_thread=use_thread,
                         with_memory_cache=with_memory_cache,
                         epoch_begin_callbacks=epoch_begin_callbacks,
                         epoch_end_callbacks=epoch_end_callbacks, stop_exhausted=stop_exhausted)


def data_iterator_concat_datasets(data_source_list, batch_size, shuffle=False, rng=None,
                                  use_thread=True, with_memory_cache=True,
                                  with_file_cache=False, cache_dir=None,
                                  epoch_begin_callbacks=[], epoch_end_callbacks=[],
                                  stop_exhausted=False):
    """Create a :class:`DataIterator` over several data sources, one after the other.

    Args:
        data_source_list (list of DataSource): Sources with the same variables.
        batch_size (int): Examples per batch.
        shuffle (bool): A new random order over all examples every epoch.
        rng (numpy.random.RandomState or None): Generator for shuffling.
        use_thread, with_memory_cache, with_file_cache, cache_dir, epoch_begin_callbacks,
            epoch_end_callbacks, stop_exhausted: As in :func:`data_iterator` (as in
            nnabla 1.39, ``cache_dir`` is not passed on: a file cache is temporary).

    Returns:
        DataIterator: The iterator.
    """
    _check_arguments("data_iterator_concat_datasets", data_source_list=data_source_list,
                     batch_size=batch_size, rng=rng)
    source = ConcatDataSource(data_source_list, shuffle=shuffle, rng=rng)
    return data_iterator(source, batch_size=batch_size, use_thread=use_thread,
                         with_memory_cache=with_memory_cache, with_file_cache=with_file_cache,
                         epoch_begin_callbacks=epoch_begin_callbacks,
                         epoch_end_callbacks=epoch_end_callbacks, stop_exhausted=stop_exhausted)
