"""Parameter initializers (``nnabla.initializer``).

An initializer is a callable taking a shape and returning a ``numpy.ndarray`` of that
shape. The random ones draw from the ``rng`` they were given or, when ``rng`` is None,
from the global parameter generator ``nnabla.random.prng`` as it is at call time, so
``nn.seed(s)`` reseeds every default-constructed initializer.

Example:
    >>> import numpy as np
    >>> import nnabla.initializer as I
    >>> I.ConstantInitializer(0.5)((2, 2))
    array([[0.5, 0.5],
           [0.5, 0.5]], dtype=float32)
    >>> lo, hi = I.calc_uniform_lim_glorot(3, 5)
    >>> bool(np.isclose(hi, np.sqrt(6 / 8)))
    True
"""

import numpy as np

__all__ = [
    "BaseInitializer",
    "ConstantInitializer",
    "NormalInitializer",
    "OrthogonalInitializer",
    "RangeInitializer",
    "UniformInitializer",
    "UniformIntInitializer",
    "WeightNormalizationScaleInitializer",
    "calc_normal_std_glorot",
    "calc_normal_std_he_backward",
    "calc_normal_std_he_forward",
    "calc_uniform_lim_glorot",
]

random_float_type = np.float32


def _as_float(values):
    """Returns ``values`` as a float32 ndarray (0-d arrays stay arrays)."""
    return np.asarray(values, dtype=random_float_type)


def _shape_tuple(shape):
    """Normalizes a shape (list, tuple or int) into a tuple of ints."""
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


class BaseInitializer:
    """Base class of parameter initializers.

    Subclasses override ``__call__(shape)`` and return a ``numpy.ndarray`` with
    exactly that shape.
    """

    def __call__(self, shape):
        """Generates an array of ``shape``.

        Args:
            shape (tuple of int): Shape of the array to create.

        Returns:
            numpy.ndarray: The initial values.

        Raises:
            NotImplementedError: Always, for the base class.
        """
        raise NotImplementedError(
            f"{type(self).__name__}.__call__(shape) must be overridden by the initializer")


class _RandomInitializer(BaseInitializer):
    """Shared handling of ``rng``: None means the global parameter generator."""

    def __init__(self, rng=None):
        self._rng = rng

    @property
    def rng(self):
        """numpy.random.RandomState: The given generator, else the current global one."""
        if self._rng is not None:
            return self._rng
        from . import random as _random  # looked up per call: nn.seed replaces prng

        return _random.prng

    @rng.setter
    def rng(self, value):
        self._rng = value


class NormalInitializer(_RandomInitializer):
    """Draws from a zero-mean normal distribution, ``x ~ N(0, sigma^2)``.

    Args:
        sigma (float): Standard deviation.
        rng (numpy.random.RandomState, optional): Generator; None means
            ``nnabla.random.prng`` at call time.

    Example:
        >>> import numpy as np
        >>> import nnabla.initializer as I
        >>> I.NormalInitializer(2.0, rng=np.random.RandomState(0))((3,)).dtype
        dtype('float32')
    """

    def __init__(self, sigma=1.0, rng=None):
        super().__init__(rng)
        self.sigma = sigma

    def __repr__(self):
        return f"{type(self).__name__}({self.sigma})"

    def __call__(self, shape):
        return _as_float(self.rng.randn(*_shape_tuple(shape)) * self.sigma)


class UniformInitializer(_RandomInitializer):
    """Draws from a uniform distribution, ``x ~ U(lim[0], lim[1])``.

    One call draws ``rng.uniform(lim[0], lim[1], size=shape)`` and casts it to float32,
    so a seeded ``numpy.random.RandomState`` reproduces it exactly.

    Args:
        lim (tuple of float): Lower and upper bounds ``(a, b)``.
        rng (numpy.random.RandomState, optional): Generator; None means
            ``nnabla.random.prng`` at call time.

    Example:
        >>> import numpy as np
        >>> import nnabla.initializer as I
        >>> x = I.UniformInitializer((-1, 1), rng=np.random.RandomState(0))((2, 3))
        >>> x.shape, bool(np.all(np.abs(x) <= 1))
        ((2, 3), True)
    """

    def __init__(self, lim=(-1, 1), rng=None):
        super().__init__(rng)
        self.lim = lim

    def __repr__(self):
        return f"{type(self).__name__}({self.lim!r})"

    def __call__(self, shape):
        low, high = self.lim
        return _as_float(self.rng.uniform(low, high, size=_shape_tuple(shape)))


class UniformIntInitializer(_RandomInitializer):
    """Draws integers uniformly from the half-open range ``[lim[0], lim[1])``.

    Args:
        lim (tuple of int): Bounds ``(a, b)``, ``b`` excluded.
        rng (numpy.random.RandomState, optional): Generator; None means
            ``nnabla.random.prng`` at call time.

    Returns an integer array (numpy's default integer type), as nnabla does.
    """

    def __init__(self, lim=(0, 10), rng=None):
        super().__init__(rng)
        self.lim = lim

    def __repr__(self):
        return f"{type(self).__name__}({self.lim!r})"

    def __call__(self, shape):
        low, high = self.lim
        return self.rng.randint(low, high, size=_shape_tuple(shape))


class RangeInitializer(BaseInitializer):
    """Fills the last axis with ``start + step * i``, repeated over the other axes.

    Args:
        start (int or float): Value at index 0 of the last axis.
        step (int or float): Increment along the last axis.

    Example:
        >>> import nnabla.initializer as I
        >>> I.RangeInitializer(1, 2)((2, 3)).tolist()
        [[1, 3, 5], [1, 3, 5]]
    """

    def __init__(self, start=0, step=1):
        self.start = start
        self.step = step

    def __call__(self, shape):
        shape = _shape_tuple(shape)
        row = self.start + np.arange(0, shape[-1], 1) * self.step
        return np.array(np.broadcast_to(row, shape))


class ConstantInitializer(BaseInitializer):
    """Fills the array with one value (float32).

    Args:
        value (float): The constant.
    """

    def __init__(self, value=0):
        self.value = value

    def __repr__(self):
        return f"{type(self).__name__}({self.value})"

    def __call__(self, shape):
        return _as_float(np.ones(_shape_tuple(shape)) * self.value)


class OrthogonalInitializer(_RandomInitializer):
    """Orthogonal weights (Saxe et al., 2013), scaled by ``gain``.

    The array is viewed as a matrix ``(shape[0], prod(shape[1:]))``; a normal matrix of
    that shape is drawn and replaced by the orthonormal factor of its SVD that has the
    same shape, so rows (or columns, whichever are fewer) are orthonormal.

    Args:
        gain (float): Scaling factor.
        rng (numpy.random.RandomState, optional): Generator; None means
            ``nnabla.random.prng`` at call time.
    """

    def __init__(self, gain=1.0, rng=None):
        super().__init__(rng)
        self.gain = gain

    def __repr__(self):
        return f"{type(self).__name__}({self.gain})"

    def __call__(self, shape):
        shape = _shape_tuple(shape)
        flat_shape = (shape[0], int(np.prod(shape[1:])))
        x = self.rng.normal(0.0, 1.0, flat_shape)
        u, _, v = np.linalg.svd(x, full_matrices=False)
        q = u if u.shape == flat_shape else v
        return _as_float(q.reshape(shape) * self.gain)


class WeightNormalizationScaleInitializer(BaseInitializer):
    """L2 norm of each weight kernel, to initialise a weight-normalization scale.

    ``g[k] = sqrt(sum over all axes but dim of w**2 + eps)``, so that the normalized
    weight starts equal to ``w``.

    Args:
        w (nnabla.Variable): The weight the normalization is applied to.
        dim (int): Output axis of the weight, kept in the result.
        eps (float): Added under the square root.
    """

    def __init__(self, w, dim=0, eps=1e-12):
        self.w = w.get_unlinked_variable()
        self.dim = dim
        self.eps = eps

    def __repr__(self):
        return f"{type(self).__name__}(dim={self.dim}, eps={self.eps})"

    def __call__(self, shape):
        data = np.asarray(self.w.d)
        axes = tuple(a for a in range(data.ndim) if a != self.dim)
        return _as_float(np.sqrt(np.sum(data ** 2, axis=axes) + self.eps))


def calc_normal_std_he_forward(inmaps, outmaps, kernel=(1, 1)):
    """Standard deviation of He et al. (forward): ``sqrt(2 / (K * N))``.

    Args:
        inmaps (int): Input map size ``N``.
        outmaps (int): Output map size ``M`` (unused here).
        kernel (tuple of int): Kernel shape; ``K`` is its product.

    Returns:
        numpy.float64: The standard deviation.

    Example:
        >>> import nnabla.initializer as I
        >>> float(I.calc_normal_std_he_forward(2, 7))
        1.0
    """
    return np.sqrt(2. / (np.prod(kernel) * inmaps))


def calc_normal_std_he_backward(inmaps, outmaps, kernel=(1, 1)):
    """Standard deviation of He et al. (backward): ``sqrt(2 / (K * M))``.

    Args:
        inmaps (int): Input map size ``N`` (unused here).
        outmaps (int): Output map size ``M``.
        kernel (tuple of int): Kernel shape; ``K`` is its product.

    Returns:
        numpy.float64: The standard deviation.
    """
    return np.sqrt(2. / (np.prod(kernel) * outmaps))


def calc_normal_std_glorot(inmaps, outmaps, kernel=(1, 1)):
    """Standard deviation of Glorot et al.: ``sqrt(2 / (K * (N + M)))``.

    Args:
        inmaps (int): Input map size ``N``.
        outmaps (int): Output map size ``M``.
        kernel (tuple of int): Kernel shape; ``K`` is its product.

    Returns:
        numpy.float64: The standard deviation.
    """
    return np.sqrt(2. / (np.prod(kernel) * (inmaps + outmaps)))


def calc_uniform_lim_glorot(inmaps, outmaps, kernel=(1, 1)):
    """Uniform bounds of Glorot et al.: ``(-b, b)`` with ``b = sqrt(6 / (K * (N + M)))``.

    Args:
        inmaps (int): Input map size ``N``.
        outmaps (int): Output map size ``M``.
        kernel (tuple of int): Kernel shape; ``K`` is its product.

    Returns:
        tuple of numpy.float64: ``(-b, b)``.

    Example:
        >>> import nnabla.initializer as I
        >>> [float(v) for v in I.calc_uniform_lim_glorot(1, 2)]
        [-1.4142135623730951, 1.4142135623730951]
    """
    bound = np.sqrt(6. / (np.prod(kernel) * (inmaps + outmaps)))
    return -bound, bound
