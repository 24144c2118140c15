"""Mini-batch iterators over in-memory examples (``nnabla.utils.data_iterator``).

A data source hands out one example (a tuple of numpy arrays) per position; a
:class:`DataIterator` stacks ``batch_size`` consecutive examples into a batch, counts
epochs and calls the registered epoch callbacks.

Ordering rules, chosen to give the same sequence of examples as nnabla 1.39:

* Without shuffling, examples come in index order and a batch that crosses the end of
  the data set wraps around to index 0.
* With shuffling, the order of an epoch is ``rng.permutation(size)``; ``rng`` defaults to
  ``numpy.random.RandomState(313)`` (a fresh one per iterator, independent of
  ``numpy.random.seed``). When a batch crosses the end of an epoch, the new permutation
  takes effect only after that batch is complete, so the examples of the batch that
  follow the wrap are still read in the old order.
* ``epoch`` is incremented (and the end/begin callbacks run) inside the ``next()`` call
  whose batch contains the last example of the epoch.

Everything is held in memory and loading is synchronous: ``use_thread``,
``with_memory_cache``, ``with_file_cache`` and ``cache_dir`` are accepted for
compatibility and ignored (there is no prefetch thread and no cache file is written).
"""
import logging

import numpy

_logger = logging.getLogger("nnabla")
_DEFAULT_SEED = 313


def _default_rng(rng):
    return numpy.random.RandomState(_DEFAULT_SEED) if rng is None else rng


class SimpleDataSource:
    """Data source that calls ``load_func(index)`` for each example.

    Args:
        load_func (callable): ``load_func(index)`` returns a tuple (or list) of array-likes,
            one per variable, for example ``index`` in ``[0, num_examples)``.
        num_examples (int): Number of examples.
        shuffle (bool): Visit the examples in a new random order every epoch.
        rng (numpy.random.RandomState or None): Random generator used for shuffling.
        indexes (sequence of int or None): Restrict the source to these example indices
            (used by :meth:`DataIterator.slice`).

    Raises:
        ValueError: If ``num_examples`` is negative.
        TypeError: If ``load_func`` is not callable.
    """

    def __init__(self, load_func, num_examples, shuffle=False, rng=None, indexes=None):
        if not callable(load_func):
            raise TypeError(f"data_iterator_simple: argument 'load_func' must be callable; "
                            f"given {type(load_func).__name__}")
        if int(num_examples) < 0:
            raise ValueError(f"data_iterator_simple: argument 'num_examples' must be >= 0; "
                             f"given {num_examples}")
        self._load_func = load_func
        self._indexes = numpy.arange(int(num_examples)) if indexes is None \
            else numpy.asarray(indexes, dtype=numpy.int64)
        self._shuffle = bool(shuffle)
        self.rng = _default_rng(rng)
        self._position = 0
        self._order = self._new_order()
        self._variables = None

    @property
    def size(self):
        """int: Number of examples in one epoch."""
        return len(self._indexes)

    @property
    def shuffle(self):
        """bool: Whether the order changes every epoch."""
        return self._shuffle

    @property
    def position(self):
        """int: Position of the next example within the current epoch."""
        return self._position

    @property
    def variables(self):
        """list of str: Names of the example's fields, ``['x0', 'x1', ...]``."""
        if self._variables is None:
            example = self._get_data(0) if self.size else ()
            self._variables = [f"x{i}" for i in range(len(example))]
        return list(self._variables)

    def _new_order(self):
        if self._shuffle:
            return self._indexes[self.rng.permutation(self.size)]
        return self._indexes

    def _get_data(self, position):
        index = int(self._order[position])
        example = self._load_func(index)
        if not isinstance(example, (tuple, list)):
            raise TypeError(f"data_iterator_simple: load_func({index}) must return a tuple of "
                            f"arrays, one per variable; it returned {type(example).__name__}")
        return tuple(example)

    def next(self):
        """Return the example at the current position and advance by one."""
        example = self._get_data(self._position)
        self._position += 1
        return example

    def reset(self):
        """Rewind to position 0 (the order is renewed by :meth:`apply_order`)."""
        self._position = 0

    def apply_order(self):
        """Draw the order of the next epoch (a no-op without shuffling)."""
        self._order = self._new_order()

    def sliced(self, indexes, rng):
        """Return a new source over ``self``'s examples at the given indices."""
        return SimpleDataSource(self._load_func, 0, self._shuffle, rng,
                                indexes=self._indexes[numpy.asarray(indexes, dtype=numpy.int64)])


class DataIterator:
    """Yields mini-batches from a data source and keeps track of epochs.

    Args:
        data_source: A source such as :class:`SimpleDataSource`: it has ``size``,
            ``variables``, ``position``, ``next()``, ``reset()`` and ``apply_order()``.
        batch_size (int): Number of examples per batch (may exceed the data set size; the
            batch then wraps around several times).
        rng (numpy.random.RandomState or None): Kept for compatibility; shuffling uses the
            data source's generator.
        use_thread (bool): Ignored (loading is synchronous).
        epoch_begin_callbacks (list of callable): Each is called with the new epoch index
            when an epoch begins (not for epoch 0).
        epoch_end_callbacks (list of callable): Each is called with the index of the epoch
            that has just ended.
        stop_exhausted (bool): Raise ``StopIteration`` instead of wrapping around when the
            rest of the epoch cannot fill a batch; the epoch counter then stays at 0 and the
            iterator stays exhausted until :meth:`reset`.

    Raises:
        ValueError: If ``batch_size`` is not a positive integer, or the source is empty.

    Example:
        >>> import numpy as np
        >>> it = data_iterator_simple(lambda i: (np.full(2, i), np.array([i])), 5, 2)
        >>> x, y = it.next()
        >>> x.shape, y.ravel().tolist(), it.position, it.epoch
        ((2, 2), [0, 1], 2, 0)
    """

    def __init__(self, data_source, batch_size, rng=None, use_thread=True,
                 epoch_begin_callbacks=(), epoch_end_callbacks=(), stop_exhausted=False):
        if isinstance(batch_size, bool) or int(batch_size) != batch_size or batch_size < 1:
            raise ValueError(f"DataIterator: argument 'batch_size' must be a positive integer; "
                             f"given {batch_size!r}")
        if data_source.size < 1:
            raise ValueError("DataIterator: argument 'data_source' has no examples (size 0)")
        self._data_source = data_source
        self._batch_size = int(batch_size)
        self._rng = rng
        self._epoch = 0
        self._stop_exhausted = bool(stop_exhausted)
        self._exhausted = False
        self._epoch_begin_callbacks = list(epoch_begin_callbacks)
        self._epoch_end_callbacks = list(epoch_end_callbacks)
        _logger.info("Using DataIterator")

    @property
    def epoch(self):
        """int: Number of completed epochs (incremented by the batch that ends one)."""
        return self._epoch

    @property
    def position(self):
        """int: Position of the next example within the current epoch."""
        return self._data_source.position

    @property
    def size(self):
        """int: Number of examples in one epoch."""
        return self._data_source.size

    @property
    def batch_size(self):
        """int: Number of examples per batch."""
        return self._batch_size

    @property
    def variables(self):
        """list of str: Names of the arrays in each batch, ``['x0', 'x1', ...]``."""
        return self._data_source.variables

    def register_epoch_begin_callback(self, callback):
        """Call ``callback(epoch)`` whenever a new epoch begins."""
        self._epoch_begin_callbacks.append(callback)

    def register_epoch_end_callback(self, callback):
        """Call ``callback(epoch)`` whenever an epoch ends, with the ended epoch's index."""
        self._epoch_end_callbacks.append(callback)

    def next(self):
        """Return the next batch.

        Returns:
            tuple of numpy.ndarray: One array per variable, of shape
            ``(batch_size,) + example_shape`` and the dtype ``load_func`` returned.

        Raises:
            StopIteration: With ``stop_exhausted=True``, when the epoch is used up.
        """
        source = self._data_source
        if self._stop_exhausted and source.position + self._batch_size > source.size:
            self._exhausted = True
        if self._exhausted:
            raise StopIteration
        examples = []
        wrapped = False
        for _ in range(self._batch_size):
            examples.append(source.next())
            # An exhaustible iterator stops at the end instead of starting a new epoch.
            if source.position >= source.size and not self._stop_exhausted:
                self._end_epoch()
                wrapped = True
        if wrapped:
            source.apply_order()
        return self._stack(examples)

    def _end_epoch(self):
        for callback in self._epoch_end_callbacks:
            callback(self._epoch)
        self._epoch += 1
        self._data_source.reset()
        for callback in self._epoch_begin_callbacks:
            callback(self._epoch)

    def _stack(self, examples):
        arity = len(examples[0])
        if any(len(example) != arity for example in examples):
            raise ValueError(f"DataIterator: examples have different numbers of variables; "
                             f"the first has {arity}")
        return tuple(numpy.stack([numpy.asarray(example[i]) for example in examples])
                     for i in range(arity))

    def reset(self):
        """Start over: position 0, epoch 0, a new order if shuffling, not exhausted."""
        self._data_source.reset()
        self._data_source.apply_order()
        self._epoch = 0
        self._exhausted = False

    def slice(self, rng, num_of_slices=None, slice_pos=None, slice_start=None, slice_end=None,
              cache_dir=None, use_cache=False, drop_last=False):
        """Return a new iterator over a contiguous part of the examples.

        Give either ``slice_start``/``slice_end`` (example indices, end excluded) or
        ``num_of_slices``/``slice_pos``. In the latter case each slice holds
        ``ceil(size / num_of_slices)`` examples and the last one is moved back so that it
        ends at ``size`` (so it may overlap its neighbour); with ``drop_last=True`` each
        holds ``size // num_of_slices`` and the remainder is dropped. The new iterator has
        the same batch size, callbacks and shuffling (drawn from ``rng``, or from a
        ``RandomState(313)`` when ``rng`` is None). ``cache_dir`` and ``use_cache`` are
        ignored.

        Raises:
            ValueError: If the arguments do not describe a non-empty slice.
        """
        start, end = _slice_bounds(self.size, num_of_slices, slice_pos, slice_start,
                                   slice_end, drop_last)
        source = self._data_source.sliced(numpy.arange(start, end), _default_rng(rng))
        return DataIterator(source, self._batch_size, rng,
                            epoch_begin_callbacks=self._epoch_begin_callbacks,
                            epoch_end_callbacks=self._epoch_end_callbacks,
                            stop_exhausted=self._stop_exhausted)

    def close(self):
        """Release resources (nothing to release: there is no thread and no cache)."""

    def __iter__(self):
        return self

    def __next__(self):
        return self.next()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()


def _slice_bounds(size, num_of_slices, slice_pos, slice_start, slice_end, drop_last):
    if num_of_slices is not None:
        if slice_pos is None or not 0 <= slice_pos < num_of_slices:
            raise ValueError(f"DataIterator.slice: argument 'slice_pos' must be in "
                             f"[0, {num_of_slices}); given {slice_pos!r}")
        length = size // num_of_slices if drop_last else -(-size // num_of_slices)
        start = min(slice_pos * length, size - length)
        return start, start + length
    if slice_start is None or slice_end is None:
        raise ValueError("DataIterator.slice: give either 'num_of_slices' and 'slice_pos' "
                         "or 'slice_start' and 'slice_end'")
    if not 0 <= slice_start < slice_end <= size:
        raise ValueError(f"DataIterator.slice: expected 0 <= slice_start < slice_end <= {size}; "
                         f"given slice_start={slice_start}, slice_end={slice_end}")
    return slice_start, slice_end


def data_iterator(data_source, batch_size, rng=None, use_thread=True, with_memory_cache=True,
                  with_file_cache=False, cache_dir=None, epoch_begin_callbacks=(),
                  epoch_end_callbacks=(), stop_exhausted=False):
    """Create a :class:`DataIterator` over ``data_source``.

    The cache arguments are accepted and ignored: the examples already live in memory
    and no cache file is written.

    Args:
        data_source: A data source such as :class:`SimpleDataSource`.
        batch_size (int): Examples per batch.
        rng, use_thread, epoch_begin_callbacks, epoch_end_callbacks, stop_exhausted:
            As in :class:`DataIterator`.
        with_memory_cache, with_file_cache, cache_dir: Ignored.

    Returns:
        DataIterator: The iterator.
    """
    return DataIterator(data_source, batch_size, rng=rng, use_thread=use_thread,
                        epoch_begin_callbacks=epoch_begin_callbacks,
                        epoch_end_callbacks=epoch_end_callbacks, stop_exhausted=stop_exhausted)


def data_iterator_simple(load_func, num_examples, batch_size, shuffle=False, rng=None,
                         use_thread=True, with_memory_cache=False, with_file_cache=False,
                         cache_dir=None, epoch_begin_callbacks=(), epoch_end_callbacks=(),
                         stop_exhausted=False):
    """Create a :class:`DataIterator` that loads example ``i`` with ``load_func(i)``.

    Args:
        load_func (callable): ``load_func(index)`` returns a tuple of array-likes, one per
            variable; batches stack them along a new first axis, keeping their dtype.
        num_examples (int): Number of examples; indices run over ``[0, num_examples)``.
        batch_size (int): Examples per batch.
        shuffle (bool): Visit the examples in a new random order every epoch.
        rng (numpy.random.RandomState or None): Generator for shuffling; None means a new
            ``RandomState(313)``, so the order does not depend on ``numpy.random.seed``.
        use_thread, with_memory_cache, with_file_cache, cache_dir: Ignored (no prefetch
            thread, no cache).
        epoch_begin_callbacks, epoch_end_callbacks, stop_exhausted: As in
            :class:`DataIterator`.

    Returns:
        DataIterator: The iterator.

    Example:
        >>> import numpy as np
        >>> it = data_iterator_simple(lambda i: (np.array([i]),), 3, 2)
        >>> [it.next()[0].ravel().tolist() for _ in range(2)], it.epoch
        ([[0, 1], [2, 0]], 1)
    """
    source = SimpleDataSource(load_func, num_examples, shuffle=shuffle, rng=rng)
    return DataIterator(source, batch_size, rng=rng, use_thread=use_thread,
                        epoch_begin_callbacks=epoch_begin_callbacks,
                        epoch_end_callbacks=epoch_end_callbacks, stop_exhausted=stop_exhausted)
