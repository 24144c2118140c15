"""The cuDNN backend's kernels: convolutions and batch normalization through cuDNN frontend
graphs, pooling and softmax through cuDNN's descriptor API.

Each kernel subclasses the CUDA backend's kernel of its function (so its arguments, shapes
and, on the emulation, its arithmetic are the ``cuda`` backend's) and, on a GPU, runs the
cached cuDNN plan or descriptor of its shapes (:mod:`.graphs`, :mod:`.norm_graphs`,
:mod:`.legacy`). On the emulation the plans and descriptors are still built (device-less),
then the ``cuda`` computation runs. Functions without a kernel here resolve to the next
backend of the context (``cuda``), as in nnabla.
"""
from __future__ import annotations

import logging
import math

import numpy as np
from nnabla_ext.cpu.kernels import GENERIC
from nnabla_ext.cuda._namespace import on_device
from nnabla_ext.cuda.kernels import CUDA_KERNELS

from . import graphs, legacy, norm_graphs

logger = logging.getLogger(__name__)


def _device_layer():
    import nnabla_ext.cuda
    return nnabla_ext.cuda.runtime()


def cudnn_module():
    """The cuDNN frontend module, or ``None`` when it is not installed (emulation only)."""
    try:
        import cudnn
    except ImportError:
        return None
    return cudnn


class _CudnnConvolutionBase:
    """Shared by Convolution and Deconvolution: descriptors, plans and execution."""

    @classmethod
    def accepts(cls, args):
        pad = args.get("pad")          # None before defaults are filled in: decided later
        if pad is not None and not 1 <= len(pad) <= 3:
            return f"cuDNN convolutions have 1 to 3 spatial axes; given {len(pad)}"
        return None

    def conv_shapes(self):
        """(image x, weight, output y) shapes of the forward convolution cuDNN runs."""
        raise NotImplementedError

    def descriptor(self, mode):
        cache = self.__dict__.setdefault("_descriptors", {})
        if mode not in cache:
            rt = _device_layer()
            x, w, y = self.conv_shapes()
            cache[mode] = graphs.descriptor(
                rt.cupy.cuda.Device().id, "half" if self.storage_dtype is not None else
                "float", mode, x, w, y, self.base_axis, self.conv_group(),
                getattr(self, "channel_last", False), self.pad, self.stride, self.dilation)
        return cache[mode]

    def conv_group(self):
        return self.group

    def plan(self, mode):
        """The cached plan, or ``None`` where cuDNN cannot run (the emulation)."""
        cudnn, rt = cudnn_module(), _device_layer()
        executes = not rt.emulated
        if cudnn is None:
            if executes:
                raise RuntimeError("the cudnn backend needs the cuDNN frontend: "
                                   "pip install nvidia-cudnn-frontend nvidia-cudnn-cu13")
            return None
        p = graphs.plan(cudnn, self.descriptor(mode), executes, tune=self._tune)
        return p if executes else None

    def _tune(self, built):
        xp = self.xp
        shapes = dict(zip("xwy", self.conv_shapes()))
        arrays = {r: xp.zeros(s, dtype=self._io_dtype()) for r, s in shapes.items()}
        workspace = xp.empty(int(built.graph.get_workspace_size()), dtype=xp.uint8)
        graphs.fastest_plan(built.graph, lambda i: built.graph.execute_plan_at_index(
            {built.tensors[r]: a for r, a in arrays.items()}, workspace, i))

    def _io_dtype(self):
        return self.xp.float16 if self.storage_dtype is not None else self.xp.float32

    def run(self, p, inputs, out_role, out_shape):
        """Execute plan ``p`` on ``inputs`` (role -> array); the output in float32."""
        xp, io = self.xp, self._io_dtype()
        arrays = {r: xp.ascontiguousarray(a.astype(io, copy=False)) for r, a in inputs.items()}
        out = xp.empty(out_shape, dtype=io)
        arrays[out_role] = out
        workspace = xp.empty(p.workspace_size, dtype=xp.uint8)
        cudnn = cudnn_module()
        p.graph.execute({p.tensors[r]: a for r, a in arrays.items()}, workspace,
                        handle=graphs.handle(cudnn, p.desc.device))
        return out.astype(xp.float32)

    def channel_axis_of(self, ndim):
        return ndim - 1 if getattr(self, "channel_last", False) else self.base_axis

    def add_bias(self, y, b):
        shape = [1] * y.ndim
        shape[self.channel_axis_of(y.ndim)] = -1
        return y + b.reshape(shape)

    def bias_grad(self, dy):
        axis = self.channel_axis_of(dy.ndim)
        return dy.sum(axis=tuple(i for i in range(dy.ndim) if i != axis))


class Convolution(_CudnnConvolutionBase, GENERIC["Convolution"]):
    """y = conv(x, w) + b by cuDNN (fprop; dgrad and wgrad for backward)."""

    def conv_shapes(self):
        return self.in_shapes[0], self.in_shapes[1], self.out_shapes[0]

    def forward(self, xs):
        p = self.plan("fprop")
        if p is None:
            return super().forward(xs)
        y = self.run(p, {"x": xs[0], "w": xs[1]}, "y", self.out_shapes[0])
        return (self.add_bias(y, xs[2]) if len(xs) > 2 and xs[2] is not None else y,)

    def backward(self, xs, ys, dys, propagate_down):
        dgrad = self.plan("dgrad") if propagate_down[0] else None
        wgrad = self.plan("wgrad") if propagate_down[1] else None
        if (propagate_down[0] and dgrad is None) or (propagate_down[1] and wgrad is None):
            return super().backward(xs, ys, dys, propagate_down)
        dy = dys[0]
        grads = [None] * len(xs)
        if propagate_down[0]:
            grads[0] = self.run(dgrad, {"y": dy, "w": xs[1]}, "x", self.in_shapes[0])
        if propagate_down[1]:
            grads[1] = self.run(wgrad, {"x": xs[0], "y": dy}, "w", self.in_shapes[1])
        if len(xs) > 2 and xs[2] is not None and propagate_down[2]:
            grads[2] = self.bias_grad(dy)
        return grads


class Deconvolution(_CudnnConvolutionBase, GENERIC["Deconvolution"]):
    """The adjoint of a convolution: y = dgrad(x, w) + b; backward by fprop and wgrad."""

    @classmethod
    def accepts(cls, args):
        reason = super().accepts(args)
        if reason is None and any(args.get("output_padding") or ()):
            return "cuDNN deconvolution here has no output_padding"
        return reason

    def conv_shapes(self):
        # the forward convolution whose adjoint this is: image = y, output = x
        return self.out_shapes[0], self.in_shapes[1], self.in_shapes[0]

    def forward(self, xs):
        p = self.plan("dgrad")
        if p is None:
            return super().forward(xs)
        y = self.run(p, {"y": xs[0], "w": xs[1]}, "x", self.out_shapes[0])
        return (self.add_bias(y, xs[2]) if len(xs) > 2 and xs[2] is not None else y,)

    def backward(self, xs, ys, dys, propagate_down):
        fprop = self.plan("fprop") if propagate_down[0] else None
        wgrad = self.plan("wgrad") if propagate_down[1] else None
        if (propagate_down[0] and fprop is None) or (propagate_down[1] and wgrad is None):
            return super().backward(xs, ys, dys, propagate_down)
        dy = dys[0]
        grads = [None] * len(xs)
        if propagate_down[0]:
            grads[0] = self.run(fprop, {"x": dy, "w": xs[1]}, "y", self.in_shapes[0])
        if propagate_down[1]:
            grads[1] = self.run(wgrad, {"x": dy, "y": xs[0]}, "w", self.in_shapes[1])
        if len(xs) > 2 and xs[2] is not None and propagate_down[2]:
            grads[2] = self.bias_grad(dy)
        return grads


def _dtype_name(kernel):
    return "half" if kernel.storage_dtype is not None else "float"


def _current_device(rt):
    return rt.cupy.cuda.Device().id


class _Legacy:
    """Shared by pooling and softmax: one cached descriptor per instance, or ``None`` where
    cuDNN cannot take the shapes (then the ``cuda`` kernel runs)."""

    def legacy_key(self, device):
        raise NotImplementedError

    def legacy_descriptor(self):
        """The cached descriptor; ``None`` when cuDNN declines these shapes, or on the
        emulation without libcudnn."""
        if "_legacy" not in self.__dict__:
            rt = _device_layer()
            ok, reason = legacy.available()
            desc = None
            if ok:
                try:
                    desc = legacy.descriptor(self.legacy_key(_current_device(rt)))
                except legacy.CudnnLibraryError as e:
                    logger.info("%s runs on cuda: %s", self.spec.name, e)
            elif not rt.emulated:
                raise legacy.CudnnLibraryError(reason)
            self._legacy = desc
        return self._legacy

    def legacy_run(self):
        """The descriptor when it can execute (a device), else ``None``."""
        desc = self.legacy_descriptor()
        if desc is None or _device_layer().emulated:
            return None
        return desc

    def legacy_handle(self, desc):
        return legacy.handle(desc.key.device, self.xp.cupy.cuda.get_current_stream().ptr)

    def io(self, a):
        dtype = self.xp.float16 if self.storage_dtype is not None else self.xp.float32
        return self.xp.ascontiguousarray(a.astype(dtype, copy=False))


class _CudnnPooling(_Legacy):
    """Max, average and sum pooling by ``cudnnPoolingForward``/``Backward``."""

    window_scale = False        # SumPooling: the average times the window size

    @classmethod
    def accepts(cls, args):
        if args.get("ignore_border") is False:
            return "cuDNN pools whole windows only (ignore_border=False)"
        kernel = args.get("kernel")
        if kernel is not None and not 1 <= len(kernel) <= 3:
            return f"cuDNN pools 1 to 3 spatial axes; given {len(kernel)}"
        return None

    def cudnn_mode(self):
        raise NotImplementedError

    def legacy_key(self, device):
        return legacy.pooling_key(device, _dtype_name(self), self.cudnn_mode(),
                                  self.in_shapes[0], self.out_shapes[0], self.kernel,
                                  self.pad, self.stride, self.channel_last)

    def forward(self, xs):
        desc = self.legacy_run()
        if desc is None:
            return super().forward(xs)
        xp = self.xp
        x = self.io(xs[0])
        y = xp.empty(self.out_shapes[0], dtype=x.dtype)
        legacy.pooling_forward(self.legacy_handle(desc), desc, x, y)
        self._pooled = y
        y = y.astype(xp.float32)
        return (y * math.prod(self.kernel) if self.window_scale else y,)

    def backward(self, xs, ys, dys, propagate_down):
        desc = self.legacy_run()
        if desc is None:
            return super().backward(xs, ys, dys, propagate_down)
        if not propagate_down[0]:
            return [None]
        xp = self.xp
        x = self.io(xs[0])
        y = self.__dict__.get("_pooled")
        if y is None:
            y = xp.empty(self.out_shapes[0], dtype=x.dtype)
            legacy.pooling_forward(self.legacy_handle(desc), desc, x, y)
        dy = dys[0] * math.prod(self.kernel) if self.window_scale else dys[0]
        dx = xp.empty(self.in_shapes[0], dtype=x.dtype)
        legacy.pooling_backward(self.legacy_handle(desc), desc, y, self.io(dy), x, dx)
        return [dx.astype(xp.float32)]


class MaxPooling(_CudnnPooling, CUDA_KERNELS["MaxPooling"]):
    """Max pooling by cuDNN (deterministic backward under NNABLA_CUDNN_DETERMINISTIC)."""

    def cudnn_mode(self):
        from . import config
        return (legacy.POOL_MAX_DETERMINISTIC if config.settings().deterministic
                else legacy.POOL_MAX)


class AveragePooling(_CudnnPooling, CUDA_KERNELS["AveragePooling"]):
    """Average pooling by cuDNN, counting the padding or not as ``including_pad`` says."""

    def cudnn_mode(self):
        return (legacy.POOL_AVG_INCLUDE_PAD if self.including_pad
                else legacy.POOL_AVG_EXCLUDE_PAD)


class SumPooling(_CudnnPooling, CUDA_KERNELS["SumPooling"]):
    """Sum pooling: cuDNN's padding-counting average times the window size."""

    window_scale = True

    def cudnn_mode(self):
        return legacy.POOL_AVG_INCLUDE_PAD


class _CudnnSoftmax(_Legacy):
    """Softmax over one axis by ``cudnnSoftmaxForward``/``Backward`` on the
    (outer, axis, inner, 1) view."""

    algorithm = legacy.SOFTMAX_ACCURATE

    def legacy_key(self, device):
        shape = self.in_shapes[0]
        return legacy.softmax_key(device, _dtype_name(self), self.algorithm, shape,
                                  self.axis % len(shape))

    def forward(self, xs):
        desc = self.legacy_run()
        if desc is None:
            return super().forward(xs)
        x = self.io(xs[0])
        y = self.xp.empty(x.shape, dtype=x.dtype)
        legacy.softmax_forward(self.legacy_handle(desc), desc, x, y)
        return (y.astype(self.xp.float32),)

    def backward(self, xs, ys, dys, propagate_down):
        desc = self.legacy_run()
        if desc is None:
            return super().backward(xs, ys, dys, propagate_down)
        if not propagate_down[0]:
            return [None]
        y, dy = self.io(ys[0]), self.io(dys[0])
        dx = self.xp.empty(y.shape, dtype=y.dtype)
        legacy.softmax_backward(self.legacy_handle(desc), desc, y, dy, dx)
        return [dx.astype(self.xp.float32)]


class Softmax(_CudnnSoftmax, CUDA_KERNELS["Softmax"]):
    """Softmax by cuDNN's accurate (max-subtracting) algorithm."""


class LogSoftmax(_CudnnSoftmax, CUDA_KERNELS["LogSoftmax"]):
    """Log-softmax by cuDNN's log algorithm."""

    algorithm = legacy.SOFTMAX_LOG


class BatchNormalization(CUDA_KERNELS["BatchNormalization"]):
    """Batch normalization over one axis by cuDNN frontend graphs: batch statistics with
    the running statistics updated (``train``), running statistics (``infer``) and the
    gradients of ``train`` (``backward``). Other cases (several axes, absent parameters,
    the statistics as outputs) run on cuda."""

    BETA, GAMMA = 1, 2

    def cudnn_usable(self, xs):
        return (len(self.axes) == 1 and len(self.out_shapes) == 1 and len(xs) == 5
                and all(a is not None for a in xs))

    def norm_plan(self, mode):
        """The cached plan of ``mode`` where it executes; ``None`` on the emulation (after
        constructing the graph) or without the frontend there."""
        cudnn, rt = cudnn_module(), _device_layer()
        if cudnn is None:
            if not rt.emulated:
                raise RuntimeError("the cudnn backend needs the cuDNN frontend: "
                                   "pip install nvidia-cudnn-frontend nvidia-cudnn-cu13")
            return None
        shape = self.in_shapes[0]
        desc = norm_graphs.descriptor(_current_device(rt), _dtype_name(self), mode, shape,
                                      self.axes[0] % len(shape))
        p = norm_graphs.plan(cudnn, desc, not rt.emulated)
        return p if p.finalized else None

    def _stat(self, a):
        return self.xp.ascontiguousarray(a.astype(self.xp.float32, copy=False)).reshape(
            1, -1, 1, 1)

    def _execute(self, p, arrays):
        xp = self.xp
        workspace = xp.empty(p.workspace_size, dtype=xp.uint8)
        p.graph.execute({p.tensors[r]: a for r, a in arrays.items()}, workspace,
                        handle=graphs.handle(cudnn_module(), p.desc.device))

    def forward(self, xs):
        self._saved = None
        if not self.cudnn_usable(xs):
            return super().forward(xs)
        p = self.norm_plan("train" if self.batch_stat else "infer")
        if p is None:
            return super().forward(xs)
        xp = self.xp
        x = xp.ascontiguousarray(xs[0].astype(xp.float16 if p.desc.dtype == "half"
                                              else xp.float32, copy=False))
        y = xp.empty(x.shape, dtype=x.dtype)
        beta, gamma = self._stat(xs[self.BETA]), self._stat(xs[self.GAMMA])
        mean, var = xs[self.MEAN], xs[self.VARIANCE]
        if self.batch_stat:
            c = p.desc.channels
            saved_mean, saved_inv = (xp.empty((1, c, 1, 1), dtype=xp.float32)
                                     for _ in range(2))
            next_mean, next_var = (xp.empty((1, c, 1, 1), dtype=xp.float32)
                                   for _ in range(2))
            self._execute(p, {"x": x, "scale": gamma, "bias": beta,
                              "running_mean": self._stat(mean),
                              "running_var": self._stat(var),
                              "eps": np.full((1, 1, 1, 1), self.eps, np.float32),
                              "momentum": np.full((1, 1, 1, 1), 1 - self.decay_rate,
                                                  np.float32),
                              "y": y, "mean": saved_mean, "inv_var": saved_inv,
                              "next_mean": next_mean, "next_var": next_var})
            mean[...] = next_mean.reshape(mean.shape)
            var[...] = next_var.reshape(var.shape)
            self._saved = (saved_mean, saved_inv)
        else:
            inv = 1.0 / xp.sqrt(self._stat(var) + np.float32(self.eps))
            self._execute(p, {"x": x, "mean": self._stat(mean), "inv_var": inv,
                              "scale": gamma, "bias": beta, "y": y})
        return (y.astype(xp.float32),)

    def backward(self, xs, ys, dys, propagate_down):
        saved = self.__dict__.get("_saved")
        wanted_stats = any(propagate_down[i] for i in (self.MEAN, self.VARIANCE)
                           if i < len(propagate_down))
        if saved is None or not self.batch_stat or wanted_stats:
            return super().backward(xs, ys, dys, propagate_down)
        p = self.norm_plan("backward")
        if p is None:
            return super().backward(xs, ys, dys, propagate_down)
        xp = self.xp
        io = xp.float16 if p.desc.dtype == "half" else xp.float32
        x = xp.ascontiguousarray(xs[0].astype(io, copy=False))
        dy = xp.ascontiguousarray(dys[0].astype(io, copy=False))
        dx = xp.empty(x.shape, dtype=io)
        c = p.desc.channels
        dscale, dbias = (xp.empty((1, c, 1, 1), dtype=xp.float32) for _ in range(2))
        self._execute(p, {"x": x, "dy": dy, "scale": self._stat(xs[self.GAMMA]),
                          "mean": saved[0], "inv_var": saved[1], "dx": dx,
                          "dscale": dscale, "dbias": dbias})
        grads = [None] * len(xs)
        if propagate_down[0]:
            grads[0] = dx.astype(xp.float32)
        if propagate_down[self.BETA]:
            grads[self.BETA] = dbias.reshape(xs[self.BETA].shape)
        if propagate_down[self.GAMMA]:
            grads[self.GAMMA] = dscale.reshape(xs[self.GAMMA].shape)
        return grads


CUDNN_KERNELS = {"Convolution": Convolution, "Deconvolution": Deconvolution,
                 "MaxPooling": MaxPooling, "AveragePooling": AveragePooling,
                 "SumPooling": SumPooling, "Softmax": Softmax, "LogSoftmax": LogSoftmax,
                 "BatchNormalization": BatchNormalization}
# what the backend registers: each kernel run on its context's device
DEVICE_KERNELS = {name: on_device(cls) for name, cls in CUDNN_KERNELS.items()}
