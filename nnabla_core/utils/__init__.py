"""Utilities of the ``nnabla.utils`` package (data iterators, among others)."""
