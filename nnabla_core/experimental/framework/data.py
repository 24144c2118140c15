"""The data side of the framework: data sources and iterators behind one object
(``nnabla.experimental.framework.data``)."""
from __future__ import annotations

from nnabla.utils.data_source import DataSource

__all__ = ["Data"]


class Data:
    """Base class of the data a :class:`~nnabla.experimental.framework.worker.Worker`
    trains and evaluates on: it builds the data sources and iterators and hands out batches.

    A subclass overrides the two factory hooks and keeps this constructor, or overrides
    the constructor and the three accessors (``reset``, ``next``, ``size``), typically with
    a ``train`` flag choosing between a training and a validation iterator:

    - ``CustomDataSource``: a :class:`~nnabla.utils.data_source.DataSource` subclass to
      fill in (``_get_data``, ``_size``, ``_variables``).
    - ``__data_source__(...)``: returns the data source (by default a ``CustomDataSource``).
    - ``__data_iterator__(data_source, ...)``: returns the iterator over it; there is no
      default, since only the subclass knows the batch size.

    The constructor stores them as ``self._data_source`` and ``self._data_iterator``; the
    accessors here delegate to ``self._data_iterator``.

    Raises:
        NotImplementedError: the subclass did not define ``__data_iterator__`` (from the
            constructor), or an accessor is used without a ``_data_iterator``.

    Example:
        >>> import numpy as np
        >>> from nnabla.experimental.framework import Data
        >>> from nnabla.utils.data_iterator import data_iterator
        >>> class Squares(Data):
        ...     class CustomDataSource(Data.CustomDataSource):
        ...         def __init__(self):
        ...             super().__init__()
        ...             self._size, self._variables = 6, ("x", "y")
        ...         def _get_data(self, position):
        ...             return np.array([position]), np.array([position ** 2])
        ...     def __data_iterator__(self, data_source):
        ...         return data_iterator(data_source, batch_size=3, with_memory_cache=False)
        >>> data = Squares()
        >>> x, y = data.next()
        >>> data.size(), x.ravel().tolist(), y.ravel().tolist()
        (6, [0, 1, 2], [0, 1, 4])
    """

    class CustomDataSource(DataSource):
        """The data source a subclass fills in (see :class:`Data`); empty as it is."""

    def __data_source__(self):
        """Create the data source; by default an instance of ``self.CustomDataSource``."""
        return self.CustomDataSource()

    def __data_iterator__(self, data_source):
        """Create the iterator over ``data_source``; a subclass must define it.

        Raises:
            NotImplementedError: always, here.
        """
        raise NotImplementedError(
            f"{type(self).__name__}.__data_iterator__: a Data subclass must define "
            "__data_iterator__(self, data_source) and return an iterator with its batch size, "
            "e.g. nnabla.utils.data_iterator.data_iterator(data_source, batch_size)")

    def __init__(self):
        self._data_source = self.__data_source__()
        self._data_iterator = self.__data_iterator__(self._data_source)

    def reset(self):
        """Rewind the iterator to the start of an epoch (before each epoch, or as needed)."""
        _iterator_of(self, "reset")._reset()

    def next(self):
        """Return the next batch, a tuple with one array per variable of the data source."""
        return _iterator_of(self, "next").next()

    def size(self):
        """Return the number of examples an epoch of the iterator holds."""
        return _iterator_of(self, "size").size


def _iterator_of(data, method):
    """Return ``data._data_iterator``, or say how to provide one."""
    iterator = getattr(data, "_data_iterator", None)
    if iterator is None:
        raise NotImplementedError(
            f"{type(data).__name__}.{method}: this Data has no _data_iterator; keep "
            "Data.__init__ (and define __data_iterator__), or override "
            f"{method}() in the subclass")
    return iterator
