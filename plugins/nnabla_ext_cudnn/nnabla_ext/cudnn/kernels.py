"""The cuDNN backend's kernels: convolutions through cuDNN frontend graphs.

Each kernel subclasses the generic kernel of its function (so its arguments, shapes and,
on the emulation, its arithmetic are the CPU plugin's) and, on a GPU, runs the cached
cuDNN plan of its descriptor (:mod:`.graphs`). Functions without a kernel here resolve to
the next backend of the context (``cuda``), as in nnabla.
"""
from __future__ import annotations

from nnabla_ext.cpu.kernels import GENERIC

from . import graphs


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


CUDNN_KERNELS = {"Convolution": Convolution, "Deconvolution": Deconvolution}
