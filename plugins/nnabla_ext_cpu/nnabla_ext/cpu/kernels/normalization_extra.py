"""Kernels of spectral normalization and synchronized batch normalization."""
from __future__ import annotations

import math

from ._base import Kernel, unbroadcast
from .normalization import LETTERS, BatchNormalization, stat_shape


class SpectralNorm(Kernel):
    """w_sn = W / (u^T W v) with u, v from power iterations on W (dim moved first).

    The gradient holds u and v constant (nnabla does the same):
    dW = dy / sigma - <dy, W> / sigma^2 u v^T.
    """

    def setup(self):
        shape = self.in_shapes[0]
        self.d = self.dim % len(shape)
        self.perm = (self.d,) + tuple(i for i in range(len(shape)) if i != self.d)
        self.inverse = tuple(self.perm.index(i) for i in range(len(shape)))
        self.moved = tuple(shape[i] for i in self.perm)

    def matrix(self, w):
        return w.transpose(self.perm).reshape(self.moved[0], -1)

    def unmatrix(self, m):
        return m.reshape(self.moved).transpose(self.inverse)

    def forward(self, xs):
        xp = self.xp
        w, u_in = self.matrix(xs[0]), xs[1]
        u = u_in
        for _ in range(self.itr):
            v = w.T @ u
            v = v / xp.sqrt((v * v).sum() + self.eps)
            u = w @ v
            u = u / xp.sqrt((u * u).sum() + self.eps)
        self.u, self.v = u, v
        self.sigma = u @ (w @ v)
        y = self.unmatrix(w / self.sigma).copy()
        original = u_in.copy() if self.output_u else None
        if not self.test:
            u_in[...] = u
        return (y, original) if self.output_u else (y,)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None, None]
        w, dy = self.matrix(xs[0]), self.matrix(dys[0])
        s = self.sigma
        g = dy / s - ((dy * w).sum() / (s * s)) * (self.u[:, None] * self.v[None, :])
        return [self.unmatrix(g).copy(), None]


class SyncBatchNormalization(BatchNormalization):
    """Batch normalization whose batch statistics span the processes of ``comm``'s group.

    Forward all-reduces the per-channel sums (then the sums of squared deviations from the
    global mean; two passes, as the local kernel, not E[x^2] - mean^2) with the sample
    counts, so the processes' batches may differ in size. Every per-channel sum is
    accumulated in float64, so it does not depend on the layout (``axes=[1]`` or ``[3]``
    give the same statistics and gradients to float32 rounding; a float32 sum's rounding
    depends on the order, which a transposed layout changes, and gamma's gradient under a
    constant ``dy`` is such a sum of values that cancel). Backward all-reduces
    ``sum dy`` and ``sum dy (x - mean)`` (and, with ``output_stat``, the gradients flowing
    into the batch statistics) for the gradient of x. The gradients of beta and gamma stay
    local: the data-parallel all-reduce of all parameter gradients sums them once (nnabla
    v1.32's definition; before it they were summed twice). One process, no communicator or
    ``batch_stat=False`` is plain batch normalization.
    """

    def setup(self):
        super().setup()
        comm = self.comm
        if comm is None or (not hasattr(comm, "find_group") and getattr(comm, "size", 2) == 1):
            self.synced = False      # no communicator, or an object standing for one process
            return
        if not hasattr(comm, "find_group"):
            raise TypeError(f"{self.spec.api_name}: argument 'comm' is of type "
                            f"{type(comm).__name__}; expected a "
                            "nnabla.communicators.Communicator or None")
        ranks = comm.find_group(self.group)
        if not ranks:
            raise ValueError(f"{self.spec.api_name}: argument 'group' is {self.group!r}, "
                             f"which communicator {comm.name} does not know; groups: "
                             f"{sorted(comm.list_groups())}")
        self.synced = len(ranks) > 1

    def all_reduce(self, *parts):
        """Sum the float64 vectors ``parts`` over the group in one message.

        The message stays in the kernel's array family (a device backend reusing this
        kernel hands its communicator device memory, as NCCL needs; the CPU's MPI one reads
        it on the host)."""
        from nnabla import NdArray
        xp = self.xp
        flat = xp.concatenate([xp.asarray(p, dtype=xp.float64).reshape(-1) for p in parts])
        fam = _family_of(flat)
        message = NdArray(flat.shape)
        message._array.set(flat, fam)
        self.comm.all_reduce(message, division=False, inplace=True, group=self.group)
        total, out, start = message._array.get(flat.dtype, fam), [], 0
        for p in parts:
            out.append(total[start:start + p.size].reshape(p.shape))
            start += p.size
        return out

    def forward(self, xs):
        if not (self.batch_stat and self.synced):
            return super().forward(xs)
        xp = self.xp
        x = xs[0]
        beta, gamma = self.params(xs)
        local_n = x.size // max(math.prod(self.stat), 1)
        total, count = self.all_reduce(_sum64(xp, x, self.keep), xp.asarray([local_n]))
        self.count = int(count[0])
        mean = (total / self.count).astype(x.dtype)
        xc = x - mean
        (squares,) = self.all_reduce(_sum64(xp, xc, self.keep, xc))
        var = (squares / self.count).astype(x.dtype)
        self.mean, self.var = mean, var
        self.inv_std = 1.0 / xp.sqrt(var + self.eps)
        self.update_running(xs, mean, var, self.count)
        y = self.normalize(x, beta, gamma, mean, self.inv_std, xc)
        return (y, mean, var) if self.output_stat else (y,)

    def update_running(self, xs, mean, var, n=None):
        if n is None:
            return super().update_running(xs, mean, var)
        d = self.decay_rate
        rm, rv = xs[self.MEAN], xs[self.VARIANCE]
        if rm is not None:
            rm *= d
            rm += (1 - d) * mean
        if rv is not None:
            rv *= d
            rv += (1 - d) * var * (n / max(n - 1, 1))

    def backward(self, xs, ys, dys, pd):
        if not (self.batch_stat and self.synced):
            return super().backward(xs, ys, dys, pd)
        xp = self.xp
        beta, gamma = self.params(xs)
        dy = dys[0]
        xc = xs[0] - self.mean
        s_dy, s_dyxc = _sum64(xp, dy, self.keep), _sum64(xp, dy, self.keep, xc)
        grads = [None] * len(xs)
        if self.has_beta and pd[self.BETA]:
            grads[self.BETA] = unbroadcast(xp, s_dy.astype(dy.dtype), self.in_shapes[self.BETA])
        if self.has_gamma and pd[self.GAMMA]:
            grads[self.GAMMA] = unbroadcast(xp, (s_dyxc * self.inv_std).astype(dy.dtype),
                                            self.in_shapes[self.GAMMA])
        # All ranks exchange even when this one needs no dx: the collective is collective.
        parts = [s_dy, s_dyxc]
        if self.output_stat:
            zero = xp.zeros(self.stat, dy.dtype)
            parts += [zero if d is None else d for d in dys[1:3]]
        summed = self.all_reduce(*parts)
        if not pd[0]:
            return grads
        n = self.count
        s = self.inv_std if gamma is None else gamma * self.inv_std
        coef = -s * self.inv_std * self.inv_std * summed[1] / n
        const = -s * summed[0] / n
        if self.output_stat:
            coef = coef + 2.0 * summed[3] / n
            const = const + summed[2] / n
        dx = dy * s
        xc *= coef.astype(xc.dtype)
        dx += xc
        dx += const.astype(dx.dtype)
        grads[0] = dx
        return grads


def _sum64(xp, a, keep, b=None):
    """:func:`sum_to` (``a`` or ``a * b`` summed over the axes not in ``keep``) accumulated
    in float64: the result does not depend on the order of the terms (the layout)."""
    s = LETTERS[:a.ndim]
    out = "".join(s[i] for i in sorted(keep))
    operands = (a,) if b is None else (a, b)
    r = xp.einsum(",".join([s] * len(operands)) + "->" + out, *operands, dtype=xp.float64)
    return r.reshape(stat_shape(a.shape, keep))


def _family_of(arr):
    """The registered array family ``arr`` belongs to (the host's for numpy arrays)."""
    from nnabla.array_family import HOST, families, family
    if HOST.owns(arr):
        return HOST
    for name in families():
        if family(name).owns(arr):
            return family(name)
    raise TypeError(f"SyncBatchNormalization: no registered array family holds arrays of "
                    f"type {type(arr).__name__}")


KERNELS = {"SpectralNorm": SpectralNorm, "SyncBatchNormalization": SyncBatchNormalization}
