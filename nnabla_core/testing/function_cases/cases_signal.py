"""Cases of the signal family: interpolate, onnx_resize, fft, ifft, stft, istft.

References are written point by point (output coordinate -> source samples), unlike the
kernels, which build per-axis weight matrices or use FFTs.
"""
import numpy as np
from .case import Case, Normal, Uniform


def _src_linear(n_in, n_out, align_corners, half_pixel):
    scale = 0.0 if n_out == 1 else ((n_in - 1) / (n_out - 1) if align_corners else n_in / n_out)
    out = []
    for d in range(n_out):
        src = max(0.0, scale * (d + 0.5) - 0.5) if half_pixel else scale * d
        lo = min(int(src), n_in - 1)
        out.append((lo, min(lo + 1, n_in - 1), src - lo))
    return out


def _src_nearest(n_in, n_out, align_corners, half_pixel, half_pixel_for_nn):
    if half_pixel_for_nn:
        return [min(int(n_in / n_out * (d + 0.5)), n_in - 1) for d in range(n_out)]
    scale = 0.0 if n_out == 1 else ((n_in - 1) / (n_out - 1) if align_corners else n_in / n_out)
    srcs = [max(0.0, scale * (d + 0.5) - 0.5) if half_pixel else scale * d
            for d in range(n_out)]
    return [min(int(s), n_in - 1) for s in srcs]


def ref_interpolate(x, output_size, mode, align_corners=True, half_pixel=False,
                    half_pixel_for_nn=False, channel_last=False):
    n = len(output_size)
    if channel_last:
        x = np.moveaxis(x, -1, -n - 1)
    for k, n_out in enumerate(output_size):
        axis = x.ndim - n + k
        n_in = x.shape[axis]
        if mode == "nearest":
            x = np.take(x, _src_nearest(n_in, n_out, align_corners, half_pixel,
                                        half_pixel_for_nn), axis=axis)
            continue
        parts = []
        for lo, hi, frac in _src_linear(n_in, n_out, align_corners, half_pixel):
            parts.append((1 - frac) * np.take(x, lo, axis=axis)
                         + frac * np.take(x, hi, axis=axis))
        x = np.stack(parts, axis=axis)
    return np.moveaxis(x, -n - 1, -1) if channel_last else x


def _interp(shape, size, mode, **kw):
    args = {"output_size": size, "mode": mode, "align_corners": False, **kw}
    flags = "-".join(k for k, v in kw.items() if v is True)
    return Case("Interpolate", [Normal(shape)], args, ref=ref_interpolate, grad_atol=5e-3,
                id=f"{mode}-{len(size)}d-{'x'.join(map(str, shape))}-{flags}")


INTERPOLATE = [
    _interp((3,), (6,), "linear", align_corners=True),
    _interp((2, 3, 4), (10,), "linear", half_pixel=True),
    _interp((3, 3), (2, 1), "linear"),
    _interp((2, 3, 4, 4), (8, 6), "linear", align_corners=True),
    _interp((2, 2, 4, 4), (3, 5), "linear", half_pixel=True),
    _interp((1, 2, 3, 4, 4), (4, 5, 3), "linear", align_corners=True),
    _interp((2, 4, 4, 3), (5, 6), "linear", half_pixel=True, channel_last=True),
    _interp((3,), (8,), "nearest", align_corners=True),
    _interp((2, 3, 4, 4), (8, 6), "nearest", half_pixel=True),
    _interp((2, 3, 4, 4), (3, 3), "nearest", align_corners=True, half_pixel_for_nn=True),
    _interp((3, 3, 3), (6, 2, 4), "nearest"),
    _interp((2, 4, 5, 2), (7, 3), "nearest", channel_last=True),
]


def _onnx_source(mode, d, n_in, n_out, scale, start, end):
    if mode == "asymmetric":
        return d / scale
    if mode == "align_corners":
        return d * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    if mode == "tf_crop_and_resize":
        return start * (n_in - 1) + d * (end - start) * (n_in - 1) / (n_out - 1)
    return (d + 0.5) / scale - 0.5                          # half_pixel


def _cubic(t, a):
    t = abs(t)
    if t <= 1:
        return (a + 2) * t ** 3 - (a + 3) * t ** 2 + 1
    return a * t ** 3 - 5 * a * t ** 2 + 8 * a * t - 4 * a if t < 2 else 0.0


def _onnx_1d(v, n_out, scale, args, start, end):
    """Resample a 1-D array as ONNX Runtime; NaN marks an extrapolated sample."""
    n_in, out = len(v), []
    for d in range(n_out):
        s = _onnx_source(args["coordinate_transformation_mode"], d, n_in, n_out, scale,
                         start, end)
        if args["coordinate_transformation_mode"] == "tf_crop_and_resize" and \
                not 0 <= s <= n_in - 1:
            out.append(np.nan)
        elif args["mode"] == "nearest":
            i = {"floor": np.floor(s), "ceil": np.ceil(s), "round_prefer_floor": np.ceil(s - 0.5),
                 "round_prefer_ceil": np.floor(s + 0.5)}[args["nearest_mode"]]
            out.append(v[int(np.clip(i, 0, n_in - 1))])
        elif args["mode"] == "linear":
            s = min(max(s, 0.0), n_in - 1)
            lo = int(s)
            out.append(v[lo] * (1 - (s - lo)) + v[min(lo + 1, n_in - 1)] * (s - lo))
        else:
            lo = int(np.floor(s))
            out.append(sum(_cubic(s - t, args["cubic_coeff_a"]) * v[min(max(t, 0), n_in - 1)]
                           for t in range(lo - 1, lo + 3)))
    return np.array(out)


def ref_onnx_resize(x, **args):
    args = {"mode": "nearest", "coordinate_transformation_mode": "half_pixel",
            "nearest_mode": "round_prefer_floor", "cubic_coeff_a": -0.75, **args}
    scales, sizes, roi = args["scales"], args["sizes"], args.get("roi") or ()
    n = x.ndim
    y = x
    for axis in range(n):
        n_out = sizes[axis] if sizes else int(np.floor(x.shape[axis] * scales[axis]))
        scale = scales[axis] if scales else n_out / x.shape[axis]
        if n_out == x.shape[axis] and scale == 1:
            continue
        start, end = (roi[axis], roi[n + axis]) if roi else (0, 1)
        y = np.apply_along_axis(_onnx_1d, axis, y, n_out, scale, args, start, end)
    return np.where(np.isnan(y), args.get("extrapolation_value", 0.0), y)


def _onnx(shape, scales=(), sizes=(), id="", **kw):
    args = {"scales": scales, "sizes": sizes, **kw}
    return Case("ONNXResize", [Uniform(shape, 0, 1)], args, ref=ref_onnx_resize, grad=False,
                id=id)


ONNX_RESIZE = [
    _onnx((1, 2, 5, 7), (1, 1, 0.7, 1.3), mode="linear",
          coordinate_transformation_mode="half_pixel", id="linear-half_pixel"),
    _onnx((1, 2, 3, 4), sizes=(1, 2, 6, 2), mode="nearest", nearest_mode="floor",
          coordinate_transformation_mode="asymmetric", id="nearest-asymmetric-floor"),
    _onnx((1, 2, 5, 7), (1, 1, 1.5, 0.8), mode="cubic", cubic_coeff_a=-0.5,
          coordinate_transformation_mode="align_corners", id="cubic-align_corners"),
    _onnx((1, 1, 4, 6), sizes=(1, 1, 3, 5), mode="linear",
          roi=(0, 0, 0.1, 0.2, 1, 1, 1.1, 1.2), extrapolation_value=10.0,
          coordinate_transformation_mode="tf_crop_and_resize", id="linear-crop"),
    _onnx((1, 2, 5), (1, 1, 2.0), id="default-nearest"),
]


def _complex(x):
    return x[..., 0] + 1j * x[..., 1]


def ref_fft(x, signal_ndim, normalized=False, inverse=False):
    z = _complex(x.astype(np.float64))
    axes = tuple(range(x.ndim - 1 - signal_ndim, x.ndim - 1))
    count = np.prod([x.shape[a] for a in axes])
    # The DFT written as a sum over a DFT matrix per axis.
    for a in axes:
        n = x.shape[a]
        k = np.arange(n)
        mat = np.exp((2j if inverse else -2j) * np.pi * np.outer(k, k) / n)
        z = np.moveaxis(np.tensordot(z, mat, axes=([a], [1])), -1, a)
    if normalized:
        z = z / np.sqrt(count)
    elif inverse:
        z = z / count
    return np.stack([z.real, z.imag], axis=-1)


FFT = [
    Case(name, [Normal(shape)], {"signal_ndim": nd, "normalized": norm},
         ref=lambda x, inverse=(name == "IFFT"), **a: ref_fft(x, inverse=inverse, **a),
         atol=1e-4, id=f"{nd}d-{'x'.join(map(str, shape))}-{'norm' if norm else 'raw'}")
    for name in ("FFT", "IFFT")
    for nd, shape, norm in [(1, (8, 2), False), (1, (3, 6, 2), True),
                            (2, (2, 4, 3, 2), False), (3, (2, 3, 2, 2), True)]
]


def _window(window_type, window_size, fft_size):
    n = np.arange(window_size)
    w = {"hanning": 0.5 - 0.5 * np.cos(2 * np.pi * n / window_size),
         "hamming": 0.54 - 0.46 * np.cos(2 * np.pi * n / window_size),
         "rectangular": np.ones(window_size)}[window_type]
    full = np.zeros(fft_size)
    left = (fft_size - window_size) // 2
    full[left:left + window_size] = w
    return full


def ref_stft_plain(x, window_size, stride, fft_size, window_type="hanning", center=True,
                   pad_mode="reflect", **_):
    if center:
        p = fft_size // 2
        x = np.pad(x, ((0, 0), (p, p)), mode="reflect" if pad_mode == "reflect" else "constant")
    w = _window(window_type, window_size, fft_size)
    frames = (x.shape[1] - fft_size) // stride + 1
    k = np.arange(fft_size // 2 + 1)[:, None]
    basis = np.exp(-2j * np.pi * k * np.arange(fft_size) / fft_size) * w     # (K, N)
    y = np.stack([x[:, t * stride:t * stride + fft_size] @ basis.T for t in range(frames)],
                 axis=2)
    return y.real, y.imag


def ref_istft_plain(y_r, y_i, window_size, stride, fft_size, window_type="hanning",
                    center=True, **_):
    w = _window(window_type, window_size, fft_size)
    b, _, frames = y_r.shape
    length = (frames - 1) * stride + fft_size
    out, norm = np.zeros((b, length)), np.zeros(length)
    for t in range(frames):
        frame = np.fft.irfft(y_r[:, :, t] + 1j * y_i[:, :, t], n=fft_size, axis=1)
        out[:, t * stride:t * stride + fft_size] += frame * w
        norm[t * stride:t * stride + fft_size] += w * w
    p = fft_size // 2 if center else 0
    return (out / np.where(norm > 1e-11, norm, 1))[:, p:length - p]


def _matrix_of(fn, in_shapes):
    """The matrix of a linear map of arrays of ``in_shapes`` (columns: basis inputs)."""
    sizes = [int(np.prod(s)) for s in in_shapes]
    cols = []
    for j in range(sum(sizes)):
        e = np.zeros(sum(sizes))
        e[j] = 1
        parts = np.split(e, np.cumsum(sizes)[:-1])
        out = fn(*[p.reshape(s) for p, s in zip(parts, in_shapes)])
        out = out if isinstance(out, tuple) else (out,)
        cols.append(np.concatenate([o.ravel() for o in out]))
    return np.stack(cols, axis=1)


def ref_stft(x, as_istft_backward=False, **kw):
    if not as_istft_backward:
        return ref_stft_plain(x, **kw)
    yr, _ = ref_stft_plain(x, **{**kw, "pad_mode": "constant"})
    m = _matrix_of(lambda a, b: ref_istft_plain(a, b, **kw), [yr.shape, yr.shape])
    g = x.reshape(x.shape[0] * 0 + 1, -1).ravel() @ m           # adjoint: x^T M
    half = g.size // 2
    return g[:half].reshape(yr.shape), g[half:].reshape(yr.shape)


def ref_istft(y_r, y_i, as_stft_backward=False, **kw):
    if not as_stft_backward:
        return ref_istft_plain(y_r, y_i, **kw)
    length = (y_r.shape[2] - 1) * kw["stride"] + kw["fft_size"]
    length -= 2 * (kw["fft_size"] // 2) if kw.get("center", True) else 0
    m = _matrix_of(lambda x: ref_stft_plain(x, **kw), [(y_r.shape[0], length)])
    g = np.concatenate([y_r.ravel(), y_i.ravel()]) @ m
    return g.reshape(y_r.shape[0], length)


def _stft(samples, ws, st, fs, window="hanning", center=True, pad="reflect", adj=False):
    args = {"window_size": ws, "stride": st, "fft_size": fs, "window_type": window,
            "center": center, "pad_mode": pad, "as_istft_backward": adj}
    return Case("STFT", [Normal((2, samples))], args, ref=ref_stft, atol=1e-4, grad_atol=5e-3,
                id=f"{ws}-{st}-{fs}-{window}-{'c' if center else 'nc'}-{pad}"
                   + ("-adjoint" if adj else ""))


def _frames(samples, st, fs, center):
    return (samples + (fs // 2 * 2 if center else 0) - fs) // st + 1


def _istft(samples, ws, st, fs, window="hanning", center=True, pad="constant", adj=False):
    args = {"window_size": ws, "stride": st, "fft_size": fs, "window_type": window,
            "center": center, "pad_mode": pad, "as_stft_backward": adj}
    shape = (2, fs // 2 + 1, _frames(samples, st, fs, center))
    return Case("ISTFT", [Normal(shape), Normal(shape)], args, ref=ref_istft, atol=1e-4,
                grad_atol=5e-3,
                id=f"{ws}-{st}-{fs}-{window}-{'c' if center else 'nc'}-{pad}"
                   + ("-adjoint" if adj else ""))


STFT = [
    _stft(32, 8, 2, 8),
    _stft(32, 8, 4, 8, "hamming", pad="constant"),
    _stft(30, 6, 3, 8, "rectangular", center=False),
    _stft(33, 7, 3, 7, "hanning"),
    _stft(32, 8, 4, 8, "hanning", pad="constant", adj=True),
    _stft(32, 8, 2, 8, "hamming", center=False, pad="constant", adj=True),
    _istft(32, 8, 2, 8),
    _istft(32, 8, 4, 8, "hamming"),
    _istft(32, 8, 4, 8, "hamming", center=False),
    _istft(24, 6, 2, 8, "rectangular"),
    _istft(32, 8, 4, 8, pad="reflect", adj=True),
    _istft(32, 8, 2, 8, "rectangular", center=False, adj=True),
]

CASES = INTERPOLATE + ONNX_RESIZE + FFT + STFT
