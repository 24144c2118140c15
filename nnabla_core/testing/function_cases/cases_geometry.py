"""Cases of affine_grid, warp_by_grid, warp_by_flow and image_augmentation.

References loop over output points (small shapes), unlike the vectorised kernels.
"""
import itertools

import numpy as np
from .case import Case, Fixed, Normal, Uniform


def ref_affine_grid(theta, size, align_corners=False):
    n = len(size)
    axes = []
    for s in size:
        g = np.linspace(-1, 1, s) if s > 1 else np.zeros(1)
        axes.append(g if align_corners else g * (s - 1) / s)
    out = np.zeros((theta.shape[0],) + tuple(size) + (n,))
    for pos in itertools.product(*[range(s) for s in size]):
        target = [axes[a][pos[a]] for a in reversed(range(n))] + [1.0]   # (x, y[, z], 1)
        out[(slice(None),) + pos] = theta @ np.array(target)
    return out


def _pixel(s, size, padding_mode, align_corners):
    f = (s + 1) * (size - 1) / 2 if align_corners else ((s + 1) * size - 1) / 2
    if padding_mode == "repeat":
        return min(max(f, 0.0), size - 1.0)
    if padding_mode == "reflect":
        lo, hi = (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)
        span = hi - lo
        while not lo <= f <= hi:                       # mirror until inside
            f = 2 * lo - f if f < lo else 2 * hi - f
        f = f if span > 0 else lo
        return min(max(f, 0.0), size - 1.0)
    return f


def ref_warp_by_grid(x, grid, mode="linear", padding_mode="zero", align_corners=False,
                     channel_last=False):
    if channel_last:
        x = np.moveaxis(x, -1, 1)
    b, c = x.shape[:2]
    sizes = x.shape[2:]
    n = len(sizes)
    out = np.zeros((b, c) + grid.shape[1:-1])
    for bi in range(b):
        for pos in itertools.product(*[range(s) for s in grid.shape[1:-1]]):
            f = [_pixel(grid[(bi,) + pos][n - 1 - a], sizes[a], padding_mode, align_corners)
                 for a in range(n)]
            if mode == "nearest":
                corners = [([int(np.floor(v + 0.5)) for v in f], 1.0)]
            else:
                corners = []
                for step in itertools.product((0, 1), repeat=n):
                    idx = [int(np.floor(v)) + s for v, s in zip(f, step)]
                    wgt = np.prod([1 - abs(v - i) for v, i in zip(f, idx)])
                    corners.append((idx, wgt))
            for idx, wgt in corners:
                if all(0 <= i < s for i, s in zip(idx, sizes)):
                    out[(bi, slice(None)) + pos] += wgt * x[(bi, slice(None)) + tuple(idx)]
    return np.moveaxis(out, 1, -1) if channel_last else out


def ref_warp_by_flow(data, flow):
    n, _, h, w = data.shape
    out = np.zeros(data.shape)
    for b, i, j in itertools.product(range(n), range(h), range(w)):
        xf, yf = j + flow[b, 0, i, j], i + flow[b, 1, i, j]
        x0, y0 = np.floor(xf), np.floor(yf)
        a, bt = xf - x0, yf - y0

        def at(y, x, b=b):
            return data[b, :, int(np.clip(y, 0, h - 1)), int(np.clip(x, 0, w - 1))]
        top = (1 - a) * at(y0, x0) + a * at(y0, x0 + 1)
        bottom = (1 - a) * at(y0 + 1, x0) + a * at(y0 + 1, x0 + 1)
        out[b, :, i, j] = (1 - bt) * top + bt * bottom
    return out


def _theta(n, batch):
    rng = np.random.RandomState(7)
    angle = rng.uniform(-0.3, 0.3, batch)
    theta = np.zeros((batch, n, n + 1))
    theta[:, :n, :n] = np.eye(n) * 0.9
    theta[:, 0, 0] = theta[:, 1, 1] = 0.9 * np.cos(angle)
    theta[:, 0, 1], theta[:, 1, 0] = -np.sin(angle) * 0.9, np.sin(angle) * 0.9
    theta[:, :, -1] = rng.uniform(-0.2, 0.2, (batch, n))
    return Fixed(theta)


def _warp(x_shape, out_size, mode, padding_mode, align_corners, channel_last=False,
          low=-1.4, high=1.4):
    n = len(out_size)
    args = {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners,
            "channel_last": channel_last}
    return Case("WarpByGrid", [Normal(x_shape), Uniform((x_shape[0],) + out_size + (n,), low,
                                                         high)],
                args, ref=ref_warp_by_grid, grad_inputs=(0, 1) if mode == "linear" else (0,),
                grad_atol=5e-3, second_order=mode != "linear",   # grid points near pixel kinks
                id=f"{mode}-{padding_mode}-{'ac' if align_corners else 'nac'}-{n}d"
                   + ("-cl" if channel_last else ""))


CASES = [
    Case("AffineGrid", [_theta(2, 2)], {"size": (3, 4), "align_corners": False},
         ref=ref_affine_grid, id="2d"),
    Case("AffineGrid", [Normal((2, 2, 3))], {"size": (4, 3), "align_corners": True},
         ref=ref_affine_grid, id="2d-align"),
    Case("AffineGrid", [Normal((2, 3, 4))], {"size": (2, 3, 4)}, ref=ref_affine_grid, id="3d"),
    # a size-1 axis at coordinate 0: a deliberate difference from nnabla 1.39 (README.md)
    Case("AffineGrid", [Normal((1, 2, 3))], {"size": (1, 3)}, ref=ref_affine_grid,
         id="single-row"),
    _warp((2, 2, 4, 5), (3, 4), "linear", "zero", False),
    _warp((1, 2, 4, 4), (3, 3), "linear", "zero", True),
    _warp((2, 1, 5, 4), (3, 3), "linear", "repeat", False),
    _warp((1, 2, 4, 4), (4, 3), "linear", "reflect", True, low=-2.5, high=2.5),
    _warp((1, 2, 4, 5), (3, 3), "linear", "reflect", False, low=-2.5, high=2.5),
    _warp((1, 2, 3, 4, 3), (2, 3, 2), "linear", "zero", False),
    _warp((1, 4, 5, 2), (3, 3), "linear", "repeat", True, channel_last=True),
    _warp((2, 2, 4, 5), (3, 4), "nearest", "zero", False),
    _warp((1, 2, 4, 4), (3, 3), "nearest", "reflect", False, low=-2.5, high=2.5),
    _warp((1, 2, 3, 3, 3), (2, 2, 2), "nearest", "repeat", True),
    Case("WarpByFlow", [Normal((1, 1, 4, 5)), Normal((1, 2, 4, 5), scale=1.5)], {},
         ref=ref_warp_by_flow, grad_atol=5e-3, second_order=False, id="single"),
    Case("WarpByFlow", [Normal((2, 3, 3, 4)), Normal((2, 2, 3, 4))], {},
         ref=ref_warp_by_flow, grad_atol=5e-3, second_order=False, id="batch"),
    Case("WarpByFlow", [Normal((2, 2, 1, 6)), Normal((2, 2, 1, 6), scale=2.0)], {},
         ref=ref_warp_by_flow, grad_atol=5e-3, second_order=False, id="one-row"),
    Case("ImageAugmentation", [Normal((2, 3, 6, 6))], {"seed": 11},
         ref=lambda x, seed: x, grad=False, id="identity"),
    Case("ImageAugmentation", [Normal((4, 3, 8, 8))],
         {"shape": (3, 5, 8), "pad": (2, 2), "min_scale": 0.8, "max_scale": 1.2, "angle": 0.2,
          "aspect_ratio": 1.1, "distortion": 0.1, "flip_lr": True, "brightness": 0.1,
          "brightness_each": True, "contrast": 1.1, "contrast_center": 0.5,
          "contrast_each": True, "noise": 0.1, "seed": 3}, grad=False, id="all"),
]
