"""Native (C++) overrides of the hot CPU kernels.

The generic kernels in :mod:`.neural_network` keep the math (GEMMs through
``numpy.matmul``/BLAS); these subclasses only swap their window loops (im2col,
col2im, pooling) for the C++ ones in ``nnabla_ext.cpu._native``, which run
without the GIL, on the thread pool that also runs numpy's OpenBLAS jobs
(:mod:`nnabla_ext.cpu._blas`). Problems with more than three spatial axes
stay on the generic code. Importing this module raises ``ImportError`` when the
compiled module is missing; the kernel table then keeps the generic kernels.
"""
from __future__ import annotations

import math
import os

import numpy as np

from .. import _blas, _native
from . import activation, arithmetic, array_extra, loss, normalization
from . import neural_network as generic
from ._columns import add_bias


def _leading_int(value):
    """The first count of an ``OMP_NUM_THREADS``-style value ("4", "4,2"), else None."""
    head = (value or "").split(",")[0].strip()
    return int(head) if head.isdigit() and int(head) > 0 else None


def _usable_cores():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):        # not Linux
        return os.cpu_count() or 1


def default_threads(environ=os.environ, shared_pool=True):
    """Threads of the native loops at import.

    ``NNABLA_CPU_NUM_THREADS`` if set, else ``OMP_NUM_THREADS`` (as PyTorch and oneDNN
    read it), else every usable core, as PyTorch. That holds when numpy's OpenBLAS runs
    its jobs on the native loops' threads (``shared_pool``, see :mod:`nnabla_ext.cpu._blas`).
    Without that, 1 unless ``NNABLA_CPU_NUM_THREADS`` says otherwise: OpenBLAS's own
    workers keep spinning after each GEMM (its ``OPENBLAS_THREAD_TIMEOUT``), so an OpenMP
    team started between GEMMs waits for the cores they hold (measured here, 3x3
    convolution of 64x128x8x8, forward + backward, idle machine: 65 ms with 2 BLAS
    threads and 1 native thread, 116-128 ms with 2 and 2).
    ``nnabla_ext.cpu.set_num_threads`` changes it later.
    """
    own = _leading_int(environ.get("NNABLA_CPU_NUM_THREADS"))
    if own is not None:
        return own
    if not shared_pool:
        return 1
    omp = _leading_int(environ.get("OMP_NUM_THREADS"))
    return omp if omp is not None else _usable_cores()


SHARED_BLAS_POOL = bool(_blas.install(_native))
_native.set_num_threads(default_threads(shared_pool=SHARED_BLAS_POOL))

MAX_NATIVE_AXES = 3
NATIVE_DTYPES = (np.float32, np.float64)


def _as_native(x):
    """A C-contiguous float32/float64 array the C++ code can read without a copy."""
    if x.dtype not in NATIVE_DTYPES:
        x = x.astype(np.float32)
    return np.ascontiguousarray(x)


def _conv_lists(g):
    return (list(g.in_shape), list(g.out_shape), list(g.kernel), list(g.pad),
            list(g.stride), list(g.dilation))


def _pool_lists(g):
    return (list(g.in_shape), list(g.out_shape), list(g.kernel), list(g.pad), list(g.stride))


def _into(out, dtype):
    """``out`` if the C++ code can write into it (C-contiguous, of ``dtype``), else None."""
    if out is not None and out.dtype == dtype and out.flags.c_contiguous:
        return out
    return None


def _deliver(result, out):
    """The result in ``out`` when one was asked for (copied there unless written in place)."""
    if out is None or result is out:
        return result
    out.reshape(result.shape)[...] = result
    return out


class _NativeIm2col:
    """Mixin replacing the im2col/col2im hooks of the convolution kernels."""

    def im2col(self, x, g, out=None):
        if len(g.kernel) > MAX_NATIVE_AXES:
            return super().im2col(x, g, out)
        xn = _as_native(x)
        col = _native.im2col(xn, g.batch, g.channels, g.groups, *_conv_lists(g),
                             g.channel_last, out=_into(out, xn.dtype))
        return _deliver(col.astype(x.dtype, copy=False), out).reshape(g.col_shape)

    def col2im(self, col, g, out=None):
        if len(g.kernel) > MAX_NATIVE_AXES:
            return super().col2im(col, g, out)
        cn = _as_native(col)
        image = _native.col2im(cn, g.batch, g.channels, g.groups, *_conv_lists(g),
                               g.channel_last, out=_into(out, cn.dtype))
        return _deliver(image.astype(col.dtype, copy=False), out).reshape(g.image_shape)


class Convolution(_NativeIm2col, generic.Convolution):
    pass


class Deconvolution(_NativeIm2col, generic.Deconvolution):
    pass


class DepthwiseConvolution(_NativeIm2col, generic.DepthwiseConvolution):
    """Direct C++ loops (``_native.depthwise``) for up to three spatial axes and float32/64:
    im2col + GEMM made one-row GEMMs per channel, several times slower."""

    def _direct(self, *arrays):
        """The C++ arguments after the arrays, or None to take the im2col path."""
        g = self.geo
        present = [a for a in arrays if a is not None]
        if len(g.kernel) > MAX_NATIVE_AXES or present[0].dtype not in NATIVE_DTYPES or any(
                a.dtype != present[0].dtype for a in present):
            return None
        return (g.batch, g.channels, self.in_shapes[1][0] // max(g.channels, 1),
                list(g.in_shape), list(g.out_shape), list(g.kernel), list(g.pad),
                list(g.stride), list(g.dilation))

    def forward(self, xs):
        args = self._direct(xs[0], xs[1])
        if args is None:
            return super().forward(xs)
        y = _native.depthwise(0, np.ascontiguousarray(xs[0]), np.ascontiguousarray(xs[1]),
                              *args).reshape(self.out_shapes[0])
        return (add_bias(np, y, xs[2], self.channel_axis) if self.has_bias() else y,)

    def data_grads(self, x, w, dy, wanted):
        args = self._direct(dy, w, x)
        if args is None:
            return super().data_grads(x, w, dy, wanted)
        dy = np.ascontiguousarray(dy)
        dx = dw = None
        if wanted[0]:
            dx = _native.depthwise(1, dy, np.ascontiguousarray(w), *args)
            dx = dx.reshape(self.in_shapes[0])
        if wanted[1]:
            dw = _native.depthwise(2, dy, np.ascontiguousarray(x), *args)
            dw = dw.reshape(self.in_shapes[1])
        return dx, dw


class DepthwiseDeconvolution(_NativeIm2col, generic.DepthwiseDeconvolution):
    pass


class MaxPooling(generic.MaxPooling):
    """The forward state is the flat index of each maximum in ``x``."""

    def max_forward(self, x):
        g = self.geo
        if len(g.kernel) > MAX_NATIVE_AXES:
            return super().max_forward(x)
        y, index = _native.max_pool_forward(_as_native(x), g.outer, g.inner, *_pool_lists(g))
        return y.astype(x.dtype, copy=False), index

    def max_backward(self, dy, state):
        g = self.geo
        if len(g.kernel) > MAX_NATIVE_AXES:
            return super().max_backward(dy, state)
        x_size = g.outer * g.inner * int(np.prod(g.in_shape))
        dx = _native.max_pool_backward(_as_native(dy), state, g.outer, x_size)
        return dx.astype(dy.dtype, copy=False)


class SumPooling(generic.SumPooling):
    def _flags(self):
        return getattr(self, "including_pad", True), self.average

    def pool_forward(self, x):
        g = self.geo
        if len(g.kernel) > MAX_NATIVE_AXES:
            return super().pool_forward(x)
        y = _native.avg_pool_forward(_as_native(x), g.outer, g.inner, *_pool_lists(g),
                                     *self._flags())
        return y.astype(x.dtype, copy=False)

    def pool_backward(self, dy):
        g = self.geo
        if len(g.kernel) > MAX_NATIVE_AXES:
            return super().pool_backward(dy)
        dx = _native.avg_pool_backward(_as_native(dy), g.outer, g.inner, *_pool_lists(g),
                                       *self._flags())
        return dx.astype(dy.dtype, copy=False)


class AveragePooling(SumPooling):
    average = True


class TopKData(array_extra.TopKData):
    """Top-k selection by a C++ partial sort (numpy's argpartition was the bottleneck)."""

    def indices(self, x2):
        if x2.dtype not in NATIVE_DTYPES or self.k > x2.shape[1]:
            return super().indices(x2)
        rows, n = x2.shape
        return _native.top_k(np.ascontiguousarray(x2), rows, n, self.k, self.abs, self.largest)


class SoftmaxCrossEntropy(loss.SoftmaxCrossEntropy):
    """One C++ pass per position (max, exp-sum, pick) instead of ~10 numpy calls: the
    loss of a small classifier was the slowest kernel of the tutorial MLP's step."""

    def setup(self):
        super().setup()
        shape = self.in_shapes[0]
        self.blocks = (math.prod(shape[:self.axis]), shape[self.axis],
                       math.prod(shape[self.axis + 1:]))

    def _native_ok(self, x):
        return x.dtype in NATIVE_DTYPES

    def forward(self, xs):
        x, t = xs
        if not self._native_ok(x):
            return super().forward(xs)
        y, bad = _native.softmax_cross_entropy_forward(np.ascontiguousarray(x), t,
                                                       *self.blocks)
        if bad is not None:
            loss.check_labels(self, t, self.blocks[1])      # raises, naming the function
        return (y.reshape(self.out_shapes[0]),)

    def backward(self, xs, ys, dys, propagate_down):
        x, t = xs
        if not propagate_down[0] or not self._native_ok(x):
            return super().backward(xs, ys, dys, propagate_down)
        dx, bad = _native.softmax_cross_entropy_backward(
            np.ascontiguousarray(x), t, np.ascontiguousarray(dys[0], dtype=x.dtype),
            *self.blocks)
        if bad is not None:
            loss.check_labels(self, t, self.blocks[1])
        return [dx.reshape(x.shape), None]


def channel_blocks(shape, keep):
    """``shape`` as (outer, channels, inner) when the ``keep`` axes (those with one
    statistic each) are consecutive, else None."""
    keep = sorted(keep)
    if not keep:
        return (1, 1, math.prod(shape))
    if keep != list(range(keep[0], keep[-1] + 1)):
        return None
    return (math.prod(shape[:keep[0]]), math.prod(shape[keep[0]:keep[-1] + 1]),
            math.prod(shape[keep[-1] + 1:]))


def _per_channel(a, like, channels):
    """``a`` (a statistic-shaped array, a scalar or None) as C-contiguous (channels,)."""
    if a is None:
        return np.zeros(channels, dtype=like.dtype)
    return np.ascontiguousarray(np.broadcast_to(np.asarray(a, dtype=like.dtype).reshape(-1)
                                                if np.ndim(a) else a, (channels,)))


class _NativeStandardize:
    """The fused per-statistic path of the normalizations in two C++ passes each way:
    statistics then ``y``; gradient sums then ``dx``. Needs the statistics' axes to be
    consecutive (batch normalization over axis 1, layer normalization over the trailing
    axes) and float32/float64 data; anything else takes the generic numpy code."""

    def setup(self):
        super().setup()
        self.blocks = channel_blocks(self.x_shape, self.keep) if self.fast else None

    def _native_ok(self, *arrays):
        return self.blocks is not None and all(
            a is None or a.dtype == arrays[0].dtype for a in arrays) and (
            arrays[0].dtype in NATIVE_DTYPES)

    def fused_forward(self, x, beta, gamma):
        if not self._native_ok(x, beta, gamma):
            return None
        xn = np.ascontiguousarray(x)
        c = self.blocks[1]
        mean, var = _native.channel_moments(xn, *self.blocks)
        inv_std = 1.0 / np.sqrt(var + x.dtype.type(self.eps))
        scale = inv_std if gamma is None else _per_channel(gamma, x, c) * inv_std
        y = _native.channel_affine(xn, mean, scale, _per_channel(beta, x, c), *self.blocks)
        self.inv_std = inv_std.reshape(self.stat)
        return y.reshape(self.x_shape), mean.reshape(self.stat), var.reshape(self.stat)

    def fused_backward(self, xs, dy, gamma, dmean, dvar, pd):
        x = xs[0]
        if not self._native_ok(x, dy, gamma):
            return None
        xn, dyn = np.ascontiguousarray(x), np.ascontiguousarray(dy)
        c = self.blocks[1]
        mean, inv_std = self.mean.reshape(c), self.inv_std.reshape(c)
        sums = _native.channel_grad_sums(dyn, xn, np.ascontiguousarray(mean), *self.blocks)
        grads = [None] * len(xs)
        if self.has_beta and pd[self.BETA]:
            grads[self.BETA] = sums[0].reshape(self.stat)
        if self.has_gamma and pd[self.GAMMA]:
            grads[self.GAMMA] = (sums[1] * inv_std).reshape(self.stat)
        if pd[0]:
            n = max(x.size // max(c, 1), 1)
            flat = [None if a is None else a.reshape(c) for a in (dmean, dvar)]
            s, coef, const = normalization.standardize_grad_coefficients(
                None if gamma is None else gamma.reshape(c), inv_std, n, sums, *flat)
            dx = _native.channel_affine(xn, mean, _per_channel(coef, x, c),
                                        _per_channel(const, x, c), *self.blocks, dyn,
                                        _per_channel(s, x, c))
            grads[0] = dx.reshape(self.x_shape)
        return grads


class BatchNormalization(_NativeStandardize, normalization.BatchNormalization):
    """Also the running-statistics path (inference): one pass ``(x - mean) γ/σ + β``."""

    def forward(self, xs):
        x = xs[0]
        if self.batch_stat or not self._native_ok(x, *xs[1:5]):
            return super().forward(xs)
        beta, gamma = self.params(xs)
        c = self.blocks[1]
        mean = _per_channel(xs[self.MEAN], x, c)
        self.mean = xs[self.MEAN]
        self.inv_std = 1.0 / np.sqrt(xs[self.VARIANCE] + x.dtype.type(self.eps))
        scale = self.inv_std.reshape(c) if gamma is None else (gamma * self.inv_std).reshape(c)
        y = _native.channel_affine(np.ascontiguousarray(x), mean, _per_channel(scale, x, c),
                                   _per_channel(beta, x, c), *self.blocks)
        return (y.reshape(self.x_shape),)


def _flat(a):
    return None if a is None else a.reshape(-1)


class LayerNormalization(_NativeStandardize, normalization.LayerNormalization):
    """Per-feature ``γ``, ``β`` (nnabla's parameters: x's shape with the batch axes 1)
    take C++ loops when the batch axes lead (x viewed as (rows, features)): forward, the
    statistics then ``y`` per row; backward, the rows' sums, then ``dx`` and the parameter
    gradients (column sums) together per block of columns, one read of ``x`` and ``dy``
    (``src/normalization.h``). Statistics-shaped or absent parameters take the
    per-statistic path of ``_NativeStandardize``; other layouts and dtypes, the generic
    code."""

    def setup(self):
        super().setup()
        lead = len(self.keep)
        self.rows = None
        if not self.fast and self.keep == tuple(range(lead)):
            self.rows = (math.prod(self.x_shape[:lead]), math.prod(self.x_shape[lead:]))

    def _rows_ok(self, x, *others):
        return self.rows is not None and x.dtype in NATIVE_DTYPES and all(
            a is None or a.dtype == x.dtype for a in others)

    def forward(self, xs):
        x = xs[0]
        beta, gamma = self.params(xs)
        if not self._rows_ok(x, beta, gamma):
            return super().forward(xs)
        y, mean, var, inv_std = _native.row_norm_forward(
            np.ascontiguousarray(x), _flat(gamma), _flat(beta), *self.rows, self.eps)
        self.mean, self.var = mean.reshape(self.stat), var.reshape(self.stat)
        self.inv_std = inv_std.reshape(self.stat)
        y = y.reshape(self.x_shape)
        return (y, self.mean, self.var) if self.output_stat else (y,)

    def backward(self, xs, ys, dys, pd):
        x, dy = xs[0], dys[0]
        beta, gamma = self.params(xs)
        dmean, dvar = (dys[1], dys[2]) if self.output_stat else (None, None)
        if not self._rows_ok(x, gamma, dy, dmean, dvar):
            return super().backward(xs, ys, dys, pd)
        want_beta = self.has_beta and bool(pd[self.BETA])
        want_gamma = self.has_gamma and bool(pd[self.GAMMA])
        dx, dbeta, dgamma = _native.row_norm_backward(
            np.ascontiguousarray(x), np.ascontiguousarray(dy), _flat(self.mean),
            _flat(self.inv_std), _flat(gamma), _flat(dmean), _flat(dvar), *self.rows,
            bool(pd[0]), want_beta, want_gamma)
        grads = [None] * len(xs)
        if dx is not None:
            grads[0] = dx.reshape(self.x_shape)
        if dbeta is not None:
            grads[self.BETA] = dbeta.reshape(self.in_shapes[self.BETA])
        if dgamma is not None:
            grads[self.GAMMA] = dgamma.reshape(self.in_shapes[self.GAMMA])
        return grads


class InstanceNormalization(_NativeStandardize, normalization.InstanceNormalization):
    pass


class _Elementwise:
    """A unary kernel whose float32/float64 forward and backward are one C++ pass each:
    ``native_forward(x)`` and ``native_backward(x or y, dy)`` (``backward_reads``: "x" or
    "y"); other dtypes take the generic code."""

    def forward(self, xs):
        x = xs[0]
        if x.dtype not in NATIVE_DTYPES:
            return super().forward(xs)
        return (type(self).native_forward(np.ascontiguousarray(x)).reshape(x.shape),)

    def backward(self, xs, ys, dys, propagate_down):
        a = xs[0] if self.backward_reads == "x" else ys[0]
        dy = dys[0]
        if not propagate_down[0] or a.dtype not in NATIVE_DTYPES or dy.dtype != a.dtype:
            return super().backward(xs, ys, dys, propagate_down)
        dx = type(self).native_backward(np.ascontiguousarray(a), np.ascontiguousarray(dy))
        return [dx.reshape(a.shape)]


class Tanh(_Elementwise, activation.Tanh):
    """tanh in one vectorized pass (numpy's float32 tanh is not vectorized here)."""

    native_forward = staticmethod(_native.tanh_forward)
    native_backward = staticmethod(_native.tanh_backward)
    backward_reads = "y"


class GELU(_Elementwise, activation.GELU):
    """nnabla's tanh-form GELU in one pass each way (numpy made about ten)."""

    native_forward = staticmethod(_native.gelu_forward)
    native_backward = staticmethod(_native.gelu_backward)
    backward_reads = "x"


class Softmax(activation.Softmax):
    """Softmax over the last axis, one C++ pass per row (other axes stay generic)."""

    def setup(self):
        super().setup()
        shape = self.in_shapes[0]
        axis = self.axis % len(shape) if shape else 0
        self.rows = (math.prod(shape[:-1]), shape[-1]) if shape and axis == len(shape) - 1 \
            else None

    def forward(self, xs):
        x = xs[0]
        if self.rows is None or x.dtype not in NATIVE_DTYPES:
            return super().forward(xs)
        return (_native.softmax_forward(np.ascontiguousarray(x), *self.rows).reshape(x.shape),)

    def backward(self, xs, ys, dys, propagate_down):
        y, dy = ys[0], dys[0]
        if not propagate_down[0] or self.rows is None or y.dtype not in NATIVE_DTYPES or (
                dy.dtype != y.dtype):
            return super().backward(xs, ys, dys, propagate_down)
        dx = _native.softmax_backward(np.ascontiguousarray(y), np.ascontiguousarray(dy),
                                      *self.rows)
        return [dx.reshape(y.shape)]


class _NativeScalar:
    """``x + v`` or ``x * v`` through ``native_ufunc`` (``_native.scalar_add``,
    ``scalar_multiply``): numpy's ufunc, bit for bit, with a native loop for small float32
    arrays, where numpy's call costs more than the loop."""

    native_ufunc = None

    def ufunc_function(self):
        return type(self).native_ufunc

    def forward(self, xs):
        return (type(self).native_ufunc(xs[0], self.v),)


class AddScalar(_NativeScalar, arithmetic.AddScalar):
    native_ufunc = staticmethod(_native.scalar_add)


class MulScalar(_NativeScalar, arithmetic.MulScalar):
    native_ufunc = staticmethod(_native.scalar_multiply)


KERNELS = {
    "AddScalar": AddScalar,
    "MulScalar": MulScalar,
    "Tanh": Tanh,
    "GELU": GELU,
    "BatchNormalization": BatchNormalization,
    "LayerNormalization": LayerNormalization,
    "InstanceNormalization": InstanceNormalization,
    "Softmax": Softmax,
    "SoftmaxCrossEntropy": SoftmaxCrossEntropy,
    "TopKData": TopKData,
    "Convolution": Convolution,
    "Deconvolution": Deconvolution,
    "DepthwiseConvolution": DepthwiseConvolution,
    "DepthwiseDeconvolution": DepthwiseDeconvolution,
    "MaxPooling": MaxPooling,
    "AveragePooling": AveragePooling,
    "SumPooling": SumPooling,
}
