"""Kernels of FFT/IFFT and STFT/ISTFT.

STFT and ISTFT are linear maps, so each kernel is one of four pure functions and its
backward is the adjoint: ``stft`` / ``stft_adjoint`` and ``istft`` / ``istft_adjoint``.
The ``as_istft_backward`` / ``as_stft_backward`` flags swap a map for the adjoint of
the other one, as nnabla uses them for higher-order gradients.
"""
from __future__ import annotations

from nnabla.function_spec import inverse_window_sum, window_function

from ._base import Kernel


def _complex(xp, x):
    return x[..., 0] + 1j * x[..., 1]


def _split(xp, z, dtype):
    return xp.stack([z.real, z.imag], axis=-1).astype(dtype, copy=False)


class _Fourier(Kernel):
    """FFT and IFFT: one DFT direction forward, its adjoint (the other one) backward."""

    inverse = False

    def setup(self):
        shape = self.in_shapes[0]
        self.axes = tuple(range(len(shape) - 1 - self.signal_ndim, len(shape) - 1))
        self.count = 1
        for a in self.axes:
            self.count *= shape[a]

    def transform(self, x, inverse):
        # The unnormalised DFT and its inverse are adjoint up to prod(N): scale explicitly.
        xp, z = self.xp, _complex(self.xp, x)
        if inverse:
            z = xp.fft.ifftn(z, axes=self.axes) * self.count
        else:
            z = xp.fft.fftn(z, axes=self.axes)
        if self.normalized:
            z = z / xp.sqrt(self.count)
        elif self.inverse:
            z = z / self.count
        return _split(xp, z, x.dtype)

    def forward(self, xs):
        return (self.transform(xs[0], self.inverse),)

    def backward(self, xs, ys, dys, propagate_down):
        return [self.transform(dys[0], not self.inverse) if propagate_down[0] else None]


class FFT(_Fourier):
    inverse = False


class IFFT(_Fourier):
    inverse = True


def _weights(xp, fft_size, dtype):
    """Per-bin multiplicity of a real signal's one-sided spectrum (1 at DC and Nyquist)."""
    k = xp.arange(fft_size // 2 + 1)
    c = xp.full(k.shape, 2.0, dtype=dtype)
    c[0] = 1
    if fft_size % 2 == 0:
        c[-1] = 1
    return c


class _ShortTime(Kernel):
    """Shared framing, padding and window arithmetic of STFT and ISTFT."""

    def setup_frames(self, frames, length):
        xp = self.xp
        self.pad = self.fft_size // 2 if self.center else 0
        self.frames, self.length = frames, length            # length: unpadded samples
        self.window = xp.asarray(window_function(self.window_type, self.window_size,
                                                 self.fft_size))
        inv = inverse_window_sum(self.window_type, self.window_size, self.stride,
                                 self.fft_size, frames)
        # Zeros only occur in the padding ISTFT slices away (checked by the spec).
        self.inv_window = xp.asarray(
            xp.where(inv > 1e-11, 1.0 / xp.maximum(inv, 1e-11), 0.0))
        self.reflect = None
        if self.center and self.pad_mode == "reflect":
            self.reflect = xp.pad(xp.arange(length), self.pad, mode="reflect")

    def pad_signal(self, x):
        if not self.pad:
            return x
        if self.reflect is not None:
            return x[:, self.reflect]
        return self.xp.pad(x, ((0, 0), (self.pad, self.pad)))

    def unpad_signal(self, g):
        """Adjoint of ``pad_signal``: reflected samples add back to their sources."""
        p = self.pad
        if not p:
            return g
        x = g[:, p:p + self.length].copy()
        if self.reflect is not None:
            src = self.xp.concatenate([self.reflect[:p], self.reflect[-p:]])
            edges = self.xp.concatenate([g[:, :p], g[:, -p:]], axis=1)
            self.xp.add.at(x, (slice(None), src), edges)
        return x

    def framed(self, x):
        """(batch, padded samples) -> (batch, frames, fft_size) windowed frames."""
        idx = self.xp.arange(self.frames)[:, None] * self.stride + self.xp.arange(self.fft_size)
        return x[:, idx] * self.window

    def overlap_add(self, f):
        """Adjoint of ``framed``: windowed frames summed into the padded signal.

        Samples after the last frame (a stride that does not divide the signal) get 0.
        """
        xp = self.xp
        f = f * self.window
        b, n, s = f.shape[0], self.frames, self.stride
        # Room for a whole stride past the end, so each offset is one reshaped view.
        out = xp.zeros((b, n * s + self.fft_size), dtype=f.dtype)
        for start in range(0, self.fft_size, s):           # one pass per offset in a frame
            width = min(s, self.fft_size - start)
            span = out[:, start:start + n * s].reshape(b, n, s)[:, :, :width]
            span += f[:, :, start:start + width]
        return out[:, :self.length + 2 * self.pad]

    # The four linear maps.
    def stft(self, x):
        z = self.xp.fft.rfft(self.framed(self.pad_signal(x)), axis=-1)
        return z.real.transpose(0, 2, 1), z.imag.transpose(0, 2, 1)

    def stft_adjoint(self, g_r, g_i):
        xp, n = self.xp, self.fft_size
        c = _weights(xp, n, g_r.dtype)[:, None]
        # sum_k g_k e^{+2 pi i k t / N} over the one-sided spectrum, via irfft.
        f = xp.fft.irfft((g_r + 1j * g_i) / c, n=n, axis=1) * n
        return self.unpad_signal(self.overlap_add(f.transpose(0, 2, 1)))

    def istft(self, y_r, y_i):
        f = self.xp.fft.irfft(y_r + 1j * y_i, n=self.fft_size, axis=1).transpose(0, 2, 1)
        x = self.overlap_add(f) * self.inv_window
        return x[:, self.pad:x.shape[1] - self.pad]

    def istft_adjoint(self, g):
        xp, n = self.xp, self.fft_size
        g = xp.pad(g, ((0, 0), (self.pad, self.pad))) * self.inv_window
        z = xp.fft.rfft(self.framed(g), axis=-1).transpose(0, 2, 1)
        c = _weights(xp, n, g.dtype)[:, None] / n
        return z.real * c, z.imag * c


class STFT(_ShortTime):
    def setup(self):
        _, _, frames = self.out_shapes[0]
        self.setup_frames(frames, self.in_shapes[0][1])

    def forward(self, xs):
        x = xs[0]
        y = self.istft_adjoint(x) if self.as_istft_backward else self.stft(x)
        return tuple(v.astype(x.dtype, copy=False) for v in y)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        g = self.istft(*dys) if self.as_istft_backward else self.stft_adjoint(*dys)
        return [g.astype(dys[0].dtype, copy=False)]


class ISTFT(_ShortTime):
    def setup(self):
        self.setup_frames(self.in_shapes[0][2], self.out_shapes[0][1])

    def forward(self, xs):
        y_r, y_i = xs
        x = self.stft_adjoint(y_r, y_i) if self.as_stft_backward else self.istft(y_r, y_i)
        return (x.astype(y_r.dtype, copy=False),)

    def backward(self, xs, ys, dys, propagate_down):
        g = self.stft(dys[0]) if self.as_stft_backward else self.istft_adjoint(dys[0])
        return [v.astype(dys[0].dtype, copy=False) if pd else None
                for v, pd in zip(g, propagate_down)]


KERNELS = {"FFT": FFT, "IFFT": IFFT, "STFT": STFT, "ISTFT": ISTFT}
