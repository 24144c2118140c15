"""Kernels of spectral normalization and synchronized batch normalization."""
from __future__ import annotations

from ._base import Kernel
from .normalization import BatchNormalization


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
    """Batch normalization whose statistics span ``comm``'s processes.

    One process (or no communicator) is plain batch normalization; several
    processes would need the statistics all-reduced, which is not implemented.
    """

    @classmethod
    def accepts(cls, args):
        comm = args.get("comm")
        if comm is not None and getattr(comm, "size", 1) > 1:
            return "statistics across several processes are not implemented on cpu"
        return None


KERNELS = {"SpectralNorm": SpectralNorm, "SyncBatchNormalization": SyncBatchNormalization}
