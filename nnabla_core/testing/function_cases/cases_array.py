"""Cases of the array-manipulation functions, with independent numpy references."""
import numpy as np
from .case import Case, Fixed, Int, Normal

S = (2, 3, 4)


def _slice_ref(x, start=None, stop=None, step=None):
    n = x.ndim
    start, stop, step = (v or () for v in (start, stop, step))
    index = [slice(None)] * n
    for k in range(1, max(len(start), len(stop), len(step)) + 1):
        index[n - k] = slice(start[-k] if start else None, stop[-k] if stop else None,
                             step[-k] if step else None)
    return x[tuple(index)]


def _pad_ref(x, pad_width, mode="constant", constant_value=0):
    pairs = [(0, 0)] * (x.ndim - len(pad_width) // 2) + [
        (pad_width[i], pad_width[i + 1]) for i in range(0, len(pad_width), 2)]
    if mode == "constant":
        return np.pad(x, pairs, constant_values=constant_value)
    return np.pad(x, pairs, mode={"reflect": "reflect", "repeat": "edge"}[mode])


def _shift_ref(x, shifts, border_mode="nearest"):
    shifts = (0,) * (x.ndim - len(shifts)) + tuple(shifts)
    mode = "edge" if border_mode == "nearest" else "symmetric"
    for ax, s in enumerate(shifts):
        a, n = abs(s), x.shape[ax]
        padded = np.pad(x, [(a, a) if i == ax else (0, 0) for i in range(x.ndim)], mode=mode)
        x = np.take(padded, np.arange(n) + a - s, axis=ax)
    return x


def _one_hot_ref(x, shape):
    y = np.zeros(x.shape[:-1] + tuple(shape), np.float32)
    for pos in np.ndindex(*x.shape[:-1]):
        y[pos + tuple(x[pos])] = 1
    return y


def _sort_ref(x, axis=-1, reverse=False, with_index=False, only_index=False):
    idx = np.argsort(x, axis=axis)
    if reverse:
        idx = np.flip(idx, axis=axis)
    y = np.take_along_axis(x, idx, axis=axis)
    if only_index:
        return idx
    return (y, idx) if with_index else y


def _gather_ref(x, idx, axis=0, batch_dims=0):
    if batch_dims == 0:
        return np.take(x, idx, axis=axis)
    return np.stack([_gather_ref(x[b], idx[b], axis - 1, batch_dims - 1)
                     for b in range(x.shape[0])])


def _scatter_nd_ref(data, idx, out=None, shape=None, add=False):
    y = np.zeros(shape) if out is None else out.copy()
    flat_idx = idx.reshape(idx.shape[0], -1)
    flat_data = data.reshape((flat_idx.shape[1],) + data.shape[idx.ndim - 1:])
    for j in range(flat_idx.shape[1]):
        pos = tuple(flat_idx[:, j])
        y[pos] = y[pos] + flat_data[j] if add else flat_data[j]
    return y


def _scatter_add_ref(x0, idx, x1, axis=0):
    y = x0.copy()
    for pos in np.ndindex(*idx.shape):
        target = list(pos)
        target[axis] = idx[pos]
        y[tuple(target)] += x1[pos]
    return y


def _well_conditioned(n=3, batch=2, seed=0):
    rng = np.random.RandomState(seed)
    return Fixed(rng.randn(batch, n, n) * 0.3 + np.eye(n) * 2)


CONCAT = [Normal((2, 3, 4)), Normal((2, 1, 4)), Normal((2, 2, 4))]

CASES = [
    Case("Concatenate", [CONCAT], {"axis": 1}, ref=lambda xs, axis: np.concatenate(xs, axis)),
    Case("Concatenate", [[Normal(S), Normal((2, 3, 2))]], {},
         ref=lambda xs: np.concatenate(xs, -1), id="default-last-axis"),
    Case("Concatenate", [CONCAT], {"axis": -2}, ref=lambda xs, axis: np.concatenate(xs, axis),
         id="negative-axis"),
    Case("Split", [Normal(S)], {"axis": 1},
         ref=lambda x, axis: tuple(np.moveaxis(x, axis, 0))),
    Case("Split", [Normal(S)], {"axis": -1},
         ref=lambda x, axis: tuple(np.moveaxis(x, axis, 0)), id="negative-axis"),
    Case("Stack", [[Normal(S), Normal(S), Normal(S)]], {"axis": 1},
         ref=lambda xs, axis: np.stack(xs, axis)),
    Case("Stack", [[Normal(S), Normal(S)]], {"axis": -1},
         ref=lambda xs, axis: np.stack(xs, axis), id="new-last-axis"),
    Case("Slice", [Normal(S)], {"start": (0, 1, 1), "stop": (2, 3, 4), "step": (1, 1, 2)},
         ref=_slice_ref),
    Case("Slice", [Normal(S)], {"start": (1, -1, 3), "stop": (2, -4, -5), "step": (1, -1, -2)},
         ref=_slice_ref, id="negative"),
    Case("Slice", [Normal(S)], {"start": (1,), "stop": (10,)}, ref=_slice_ref,
         id="short-trailing-clipped"),
    Case("Pad", [Normal(S)], {"pad_width": (1, 2), "constant_value": 0.5}, ref=_pad_ref),
    Case("Pad", [Normal(S)], {"pad_width": (1, 0, 2, 3), "mode": "reflect"}, ref=_pad_ref,
         id="reflect"),
    Case("Pad", [Normal((2, 3))], {"pad_width": (3, 1, 5, 6), "mode": "reflect"}, ref=_pad_ref,
         id="reflect-wider-than-input"),
    Case("Pad", [Normal(S)], {"pad_width": (2, 1, 0, 3), "mode": "repeat"}, ref=_pad_ref,
         id="repeat"),
    Case("Transpose", [Normal(S)], {"axes": (2, 0, 1)},
         ref=lambda x, axes: np.transpose(x, axes)),
    Case("Reshape", [Normal(S)], {"shape": (4, -1)}, ref=lambda x, shape: x.reshape(shape)),
    Case("Reshape", [Normal(S)], {"shape": (6, 2, 2), "inplace": False},
         ref=lambda x, shape, inplace: x.reshape(shape), id="not-inplace"),
    Case("Broadcast", [Normal((3, 1))], {"shape": (2, 3, 4)},
         ref=lambda x, shape: np.broadcast_to(x, shape)),
    Case("BroadcastTo", [Normal(S), Normal((3, 4))], {}, grad=False,
         ref=lambda x, y: np.broadcast_to(y, x.shape)),
    Case("BroadcastTo", [Normal((2, 3, 4, 5)), Normal((3, 4))], {"axis": 1}, grad=False,
         ref=lambda x, y, axis: np.broadcast_to(y[:, :, None], x.shape), id="axis"),
    Case("Tile", [Normal((2, 3))], {"reps": (2,)}, ref=lambda x, reps: np.tile(x, reps)),
    Case("Tile", [Normal((2, 3))], {"reps": (2, 1, 3)}, ref=lambda x, reps: np.tile(x, reps),
         id="more-reps-than-axes"),
    Case("Flip", [Normal(S)], {}, ref=lambda x: x[..., ::-1]),
    Case("Flip", [Normal(S)], {"axes": (0, -2)}, ref=lambda x, axes: x[::-1, ::-1],
         id="axes"),
    Case("OneHot", [Fixed(np.array([[1, 2], [3, 0], [0, 2]]))], {"shape": (4, 3)},
         ref=_one_hot_ref, grad=False),
    Case("Shift", [Normal(S)], {"shifts": (1, -2)}, ref=_shift_ref),
    Case("Shift", [Normal(S)], {"shifts": (0, 4, -7), "border_mode": "reflect"},
         ref=_shift_ref, id="reflect"),
    Case("Shift", [Normal(S)], {"shifts": (5, -1)}, ref=_shift_ref, id="beyond-the-axis"),
    Case("Sort", [Normal(S)], {"axis": 1, "with_index": True}, ref=_sort_ref),
    Case("Sort", [Normal(S)], {"reverse": True}, ref=_sort_ref, id="reverse"),
    Case("Sort", [Normal(S)], {"only_index": True}, ref=_sort_ref, grad=False, id="only-index"),
    Case("MatrixDiag", [Normal(S)], ref=lambda x: x[..., None] * np.eye(4)),
    Case("MatrixDiagPart", [Normal((2, 3, 3))],
         ref=lambda x: np.einsum("...ii->...i", x)),
    Case("Trilu", [Normal((2, 3, 4))], {"k": 1}, ref=lambda x, k: np.triu(x, k)),
    Case("Trilu", [Normal((3, 4))], {"k": -1, "upper": False},
         ref=lambda x, k, upper: np.tril(x, k), id="lower"),
    Case("Meshgrid", [[Normal((2,)), Normal((3,)), Normal((4,))]], {},
         ref=lambda xs: tuple(np.meshgrid(*xs))),
    Case("Meshgrid", [[Normal((2,)), Normal((3,))]], {"ij_indexing": True},
         ref=lambda xs, ij_indexing: tuple(np.meshgrid(*xs, indexing="ij")), id="ij"),
    Case("BatchDet", [_well_conditioned()], ref=np.linalg.det),
    Case("BatchInv", [_well_conditioned()], ref=np.linalg.inv, atol=1e-4),
    Case("BatchLogdet", [_well_conditioned()], ref=lambda x: np.log(np.abs(np.linalg.det(x)))),
    Case("Gather", [Normal(S), Int((2, 5), 0, 3)], {"axis": 1}, ref=_gather_ref),
    Case("Gather", [Normal(S), Int((2, 5), 0, 4)], {"axis": 2, "batch_dims": 1},
         ref=_gather_ref, id="batch-dims"),
    Case("GatherNd", [Normal(S), Fixed(np.array([[0, 1, 1], [2, -1, 0]]))],
         ref=lambda x, idx: x[tuple(idx)]),
    Case("ScatterNd", [Normal((3, 4)), Fixed(np.array([[0, 2, 4]])), None], {"shape": (5, 4)},
         ref=_scatter_nd_ref),
    Case("ScatterNd", [Normal((4,)), Fixed(np.array([[0, 2, 0, 1], [1, 1, 1, 0]])), None],
         {"shape": (3, 2), "add": True}, ref=_scatter_nd_ref, id="add-duplicates"),
    Case("ScatterNd", [Normal((2,)), Fixed(np.array([[0, 3]])), Normal((5,))], {},
         ref=_scatter_nd_ref, grad=False, id="out"),
    Case("ScatterAdd", [Normal((2, 5)), Fixed(np.array([[0, 1, 1], [4, 0, 4]])),
                        Normal((2, 4))], {"axis": 1}, ref=_scatter_add_ref),
    Case("Shape", [Normal((2, 3, 4, 5))], {}, ref=lambda x: np.array(x.shape, np.float32),
         grad=False),
    Case("Shape", [Normal((2, 3, 4, 5))], {"start": 1, "end": -1},
         ref=lambda x, start, end: np.array(x.shape[start:end], np.float32), grad=False,
         id="range"),
    Case("Assign", [Normal(S), Normal(S)], ref=lambda dst, src: src, grad=False),
]
