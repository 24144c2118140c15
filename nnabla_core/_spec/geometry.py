"""Geometric layers (affine_grid, warp_by_grid, warp_by_flow) and image_augmentation."""
from __future__ import annotations

from .args import check_nonnegative, check_positive
from .base import Arg, FunctionSpec, Input, Needs, Output

CATEGORY = "Geometric Neural Network Layers"


def affine_grid(spec, theta, *, size, align_corners):
    n = len(size)
    if n not in (2, 3):
        raise spec.value_error("size", "(H, W) or (D, H, W)", size)
    check_positive(spec, "size", size)
    if len(theta) != 3 or tuple(theta[1:]) != (n, n + 1):
        raise spec.shape_error("theta", f"(B, {n}, {n + 1})", theta,
                               why=f"size has {n} dimensions")
    return ((theta[0],) + tuple(size) + (n,),)


def warp_by_grid(spec, x, grid, *, mode, padding_mode, align_corners, channel_last):
    n = len(x) - 2
    if n not in (2, 3):
        raise spec.shape_error("x", "(B, C, H, W) or (B, C, D, H, W)", x)
    if len(grid) != n + 2 or grid[-1] != n or grid[0] != x[0]:
        raise spec.shape_error("grid", f"{n + 2} dimensions ({x[0]}, <{n} sizes>, {n})", grid,
                               why=f"x has {n} spatial dimensions and batch {x[0]}")
    channels = x[-1] if channel_last else x[1]
    out = tuple(grid[1:-1])
    return ((x[0],) + out + (channels,) if channel_last else (x[0], channels) + out,)


def warp_by_flow(spec, data, flow):
    if len(data) != 4:
        raise spec.shape_error("data", "(N, C, H, W)", data)
    if tuple(flow) != (data[0], 2, data[2], data[3]):
        raise spec.shape_error("flow", f"({data[0]}, 2, {data[2]}, {data[3]})", flow)
    return (tuple(data),)


def _fill_augmentation(spec, in_shapes, args):
    out = dict(args)
    if out["shape"] is None:
        out["shape"] = tuple(in_shapes[0])
    return out


def image_augmentation(spec, x, *, shape, pad, min_scale, max_scale, angle, aspect_ratio,
                       distortion, flip_lr, flip_ud, brightness, brightness_each, contrast,
                       contrast_center, contrast_each, noise, seed):
    if not 2 <= len(shape) <= len(x):
        raise spec.value_error("shape", f"2 to {len(x)} sizes ending with (H, W)", shape)
    check_positive(spec, "shape", shape)
    lead = len(x) - len(shape)
    if tuple(shape[:-2]) != tuple(x[lead:-2]):
        raise spec.value_error("shape", f"sizes ending in (H, W) after {tuple(x[lead:-2])}",
                               shape, why="only the last two (image) axes are resized")
    if len(pad) != 2:
        raise spec.value_error("pad", "two paddings (H, W)", pad)
    check_nonnegative(spec, "pad", pad)
    if not 0 < min_scale <= max_scale:
        raise spec.value_error("min_scale", f"in (0, max_scale={max_scale}]", min_scale)
    if aspect_ratio <= 0 or contrast <= 0:
        raise spec.value_error("contrast" if contrast <= 0 else "aspect_ratio",
                               "a positive ratio", contrast if contrast <= 0 else aspect_ratio)
    check_nonnegative(spec, "noise", (noise,))
    return (tuple(x[:lead]) + tuple(shape),)


SPECS = [
    FunctionSpec(
        "AffineGrid", "affine_grid", CATEGORY, (Input("theta"),),
        (Arg("size", "ints"), Arg("align_corners", "bool", False)),
        (Output("grid"),), affine_grid, Needs(),
        doc="Source grid theta @ (x, y[, z], 1) of a normalised [-1, 1] target grid of "
            "`size`; shape (B, H, W, 2) or (B, D, H, W, 3)."),
    FunctionSpec(
        "WarpByGrid", "warp_by_grid", CATEGORY, (Input("x"), Input("grid")),
        (Arg("mode", "str", "linear", choices=("linear", "nearest")),
         Arg("padding_mode", "str", "zero", choices=("zero", "repeat", "reflect")),
         Arg("align_corners", "bool", False), Arg("channel_last", "bool", False)),
        (Output("y"),), warp_by_grid, Needs(inputs=("x", "grid")),
        doc="Samples x at the normalised grid positions (x, y[, z] in [-1, 1]); the "
            "nearest mode has a zero gradient with respect to the grid."),
    FunctionSpec(
        "WarpByFlow", "warp_by_flow", CATEGORY, (Input("data"), Input("flow")),
        (), (Output("warped_image"),), warp_by_flow, Needs(inputs=("data", "flow")),
        doc="Bilinear sampling of data at (x + flow[:, 0], y + flow[:, 1]), clamped to "
            "the image border."),
    FunctionSpec(
        "ImageAugmentation", "image_augmentation", "Stochasticity", (Input("x"),),
        (Arg("shape", "ints?", None), Arg("pad", "ints", (0, 0)),
         Arg("min_scale", "float", 1.0), Arg("max_scale", "float", 1.0),
         Arg("angle", "float", 0.0), Arg("aspect_ratio", "float", 1.0),
         Arg("distortion", "float", 0.0), Arg("flip_lr", "bool", False),
         Arg("flip_ud", "bool", False), Arg("brightness", "float", 0.0),
         Arg("brightness_each", "bool", False), Arg("contrast", "float", 1.0),
         Arg("contrast_center", "float", 0.0), Arg("contrast_each", "bool", False),
         Arg("noise", "float", 0.0), Arg("seed", "int", -1)),
        (Output("y"),), image_augmentation, Needs(), differentiable=False, stochastic=True,
        resolve_args=_fill_augmentation,
        doc="Random per-image scaling, rotation, aspect change, distortion, flips, "
            "brightness, contrast and noise; the output image is `shape` (H, W last)."),
]
