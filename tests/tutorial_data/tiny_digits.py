"""Helpers used by the tutorial tests: scikit-learn's 8x8 hand-written digits.

Our own version of the small helper module the nnabla tutorials import with
``from tiny_digits import *``. The data ship inside scikit-learn, so nothing is
downloaded.
"""
import numpy as np
from nnabla.utils.data_iterator import data_iterator_simple

__all__ = ["data_iterator_tiny_digits", "load_digits", "plot_stats"]


def load_digits(n_class=10):
    """Load the digits data set of scikit-learn.

    Args:
        n_class (int): Keep the classes ``0 .. n_class - 1``.

    Returns:
        sklearn.utils.Bunch: With ``images`` (N, 8, 8) float64 in [0, 16] and ``target`` (N,).
    """
    from sklearn.datasets import load_digits as sklearn_load_digits

    return sklearn_load_digits(n_class=n_class)


def data_iterator_tiny_digits(digits, batch_size=64, shuffle=False, rng=None):
    """Iterate over ``digits`` in mini-batches.

    Args:
        digits: The result of :func:`load_digits`.
        batch_size (int): Examples per batch.
        shuffle (bool): New random order every epoch.
        rng (numpy.random.RandomState or None): Generator for shuffling.

    Returns:
        DataIterator: Each ``next()`` gives ``(images, labels)``: images of shape
        ``(batch_size, 1, 8, 8)`` float32 and labels of shape ``(batch_size, 1)`` int32.
    """
    images = np.asarray(digits.images, dtype=np.float32)[:, None]
    labels = np.asarray(digits.target, dtype=np.int32)[:, None]

    def load_func(index):
        return images[index], labels[index]

    return data_iterator_simple(load_func, len(labels), batch_size, shuffle=shuffle, rng=rng,
                                with_file_cache=False)


def plot_stats(digits):
    """Print the size, image shape and labels of ``digits`` (no plotting in tests)."""
    print("Num images:", digits.images.shape[0])
    print("Image shape:", digits.images.shape[1:])
    print("Labels:", np.unique(digits.target))
