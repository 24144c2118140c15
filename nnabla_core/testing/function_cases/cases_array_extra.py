"""Cases of top-k, einsum, unique/nonzero, mask functions, packed sequences and Cholesky.

References are plain numpy written for these tests. Functions whose nnabla gradient
is not the numerical one (top_k_grad, top_k_data without reduce, the symmetric
Cholesky gradient) have ``grad=False`` here and their own tests in
``test_array_extra.py``.
"""
import builtins

import numpy as np
from .case import Case, Fixed, Int, Normal


def _distinct(shape, seed=0):
    """Distinct values 0.1 apart (half-exact), so the top-k choice is unambiguous."""
    n = int(np.prod(shape))
    v = np.arange(n, dtype=np.float64) * 0.1
    v[::2] *= -1
    np.random.RandomState(seed).shuffle(v)
    return Fixed(v.reshape(shape).astype(np.float32))


def _top_k_data_ref(x, k, abs=False, reduce=True, base_axis=1, largest=True,
                    with_index=False):
    ba = base_axis % x.ndim
    rows = x.reshape(int(np.prod(x.shape[:ba])), -1)
    key = np.abs(rows) if abs else rows
    order = np.argsort(-key if largest else key, axis=1)[:, :k]
    picked = np.take_along_axis(rows, order, axis=1)
    if reduce:
        y = picked.reshape(x.shape[:ba] + (k,))
    else:
        y = np.zeros_like(rows)
        np.put_along_axis(y, order, picked, axis=1)
        y = y.reshape(x.shape)
    return (y, order.reshape(y.shape)) if with_index else y


def _einsum_ref(xs, equation):
    return np.einsum(equation, *xs)


def _unique_ref(x, flatten=True, axis=None, sorted=True, with_index=False,
                with_inverse=False, with_counts=False):
    data = x.reshape(-1) if flatten else np.moveaxis(x, axis, 0)
    keys = [tuple(np.ravel(data[i])) for i in range(data.shape[0])]
    first = {}
    for i, key in enumerate(keys):
        first.setdefault(key, i)
    ordered = builtins.sorted(first) if sorted else list(first)
    rank = {key: r for r, key in enumerate(ordered)}
    index = np.array([first[key] for key in ordered])
    y = data[index] if flatten else np.moveaxis(data[index], 0, axis)
    out = (y,)
    if with_index:
        out += (index,)
    if with_inverse:
        out += (np.array([rank[key] for key in keys]),)
    if with_counts:
        out += (np.array([keys.count(key) for key in ordered]),)
    return out if len(out) > 1 else y


def _bool_scatter_ref(x, mask, output=None):
    y = np.zeros(mask.shape + x.shape[1:]) if output is None else output.copy()
    y[mask != 0] = x
    return y


def _pack_ref(padded, lengths, batch_first=False):
    steps = padded.swapaxes(0, 1) if batch_first else padded
    rows, sizes = [], []
    for t in range(int(max(lengths))):
        b = int(np.sum(lengths > t))
        sizes.append(b)
        rows.append(steps[t, :b])
    return np.concatenate(rows), np.array(sizes)


def _pad_ref(packed, batch_sizes, batch_first=False, padding_value=0.0, total_length=-1):
    t = max(len(batch_sizes), total_length)
    b = int(batch_sizes[0])
    out = np.full((t, b) + packed.shape[1:], padding_value)
    start = 0
    for step, size in enumerate(batch_sizes):
        out[step, :size] = packed[start:start + size]
        start += size
    lengths = np.array([np.sum(batch_sizes > i) for i in range(b)])
    return (out.swapaxes(0, 1) if batch_first else out), lengths


def _spd(batch, n, seed=0):
    a = np.random.RandomState(seed).randn(batch, n, n)
    return Fixed((a @ a.transpose(0, 2, 1) + n * np.eye(n)).astype(np.float32))


def _cholesky_ref(x, upper=False):
    low = np.linalg.cholesky(x)
    return low.transpose(0, 2, 1) if upper else low


SCATTER_MASK = Fixed(np.array([[1, 0, 1], [0, 1, 1]]))
U = np.array([[1.0, 0.0, 2.0, 0.0], [0.0, 0.0, 3.0, -1.0]], np.float32)
REPEATS = Fixed(np.array([[3., 1., 3., 2.], [1., 2., 2., 0.], [3., 1., 3., 2.]]))
EINSUM = [
    ("matmul", [(3, 4), (4, 5)], "ij,jk->ik"),
    ("diagonal", [(4, 4)], "ii->i"),
    ("trace", [(2, 3, 4, 4)], "abii"),
    ("ellipsis-diagonal", [(4, 2, 3, 4)], "i...i->...i"),
    ("broadcast-batch", [(1, 3, 4, 5), (2, 1, 5, 6)], "...ij,...jk->...ik"),
    ("implicit", [(4, 2, 3, 5), (2, 3, 5, 6)], "i...j,...jk"),
    ("sum-out", [(2, 3, 4, 2, 5), (2, 4, 3, 2)], "bjibw,zkjb->ikb"),
    ("transpose", [(2, 3, 4, 5)], "ij...->j...i"),
    ("four", [(1, 2, 3, 4), (2, 1, 4, 2), (2, 2, 1, 3), (3, 2, 3, 1)],
     "zabc,aycd,daxe,bdfw->bef"),
    ("inner", [(5,), (5,)], "i,i"),
]

CASES = [
    Case("TopKData", [_distinct((4, 5, 6))], {"k": 5}, ref=_top_k_data_ref),
    Case("TopKData", [_distinct((4, 5, 6))], {"k": 3, "abs": True, "largest": False,
                                              "base_axis": 0, "with_index": True},
         ref=_top_k_data_ref, id="abs-smallest-index"),
    Case("TopKData", [_distinct((4, 5, 6))], {"k": 2, "base_axis": -1, "with_index": True},
         ref=_top_k_data_ref, id="last-axis"),
    Case("TopKData", [_distinct((4, 5, 6))], {"k": 4, "reduce": False, "base_axis": 2},
         ref=_top_k_data_ref, grad=False, id="no-reduce"),
    Case("TopKGrad", [Normal((4, 5, 6))], {"k": 3, "abs": True}, ref=lambda x, **a: x,
         grad=False),
    *[Case("Einsum", [[Normal(s) for s in shapes]], {"equation": eq}, ref=_einsum_ref,
           atol=1e-4, id=name) for name, shapes, eq in EINSUM],
    Case("Unique", [REPEATS], {}, ref=_unique_ref, grad=False),
    Case("Unique", [REPEATS], {"sorted": False, "with_index": True, "with_inverse": True,
                               "with_counts": True}, ref=_unique_ref, grad=False,
         id="unsorted-all"),
    Case("Unique", [REPEATS], {"flatten": False, "axis": 0, "with_inverse": True,
                               "with_counts": True}, ref=_unique_ref, grad=False, id="rows"),
    Case("Unique", [REPEATS], {"flatten": False, "axis": -1, "sorted": False,
                               "with_index": True}, ref=_unique_ref, grad=False,
         id="columns-unsorted"),
    Case("NonZero", [Fixed(U)], {}, ref=lambda x: np.array(np.nonzero(x)), grad=False),
    Case("NonZero", [Fixed(np.zeros((2, 3)))], {}, ref=lambda x: np.zeros((2, 0)),
         grad=False, id="all-zero"),
    Case("BoolGather", [Normal((2, 3, 2)), Int((2, 3), 0, 2)], {},
         ref=lambda x, m: x[m != 0]),
    Case("BoolGather", [Normal((3, 4)), Int((3, 4), 0, 2)], {},
         ref=lambda x, m: x[m != 0], id="same-shape"),
    Case("BoolScatter", [Normal((4, 2)), SCATTER_MASK, None], {}, ref=_bool_scatter_ref),
    Case("BoolScatter", [Normal((4, 2)), SCATTER_MASK, Normal((2, 3, 2))], {},
         ref=_bool_scatter_ref, id="into-output"),
    Case("BoolFill", [Normal((2, 3, 2, 2)), Int((1, 2, 1), 0, 2)], {"value": -1.5},
         ref=lambda x, m, value: np.where(m != 0, value, x)),
    Case("BoolFill", [Normal((2, 3)), Int((3,), 0, 2)], {},
         ref=lambda x, m, value=0: np.where(m != 0, value, x), id="broadcast-row"),
    Case("PackPaddedSequence", [Normal((4, 3, 2)), Fixed(np.array([4, 2, 1]))], {},
         ref=_pack_ref),
    Case("PackPaddedSequence", [Normal((5, 4)), Fixed(np.array([4, 3, 3, 2, 2]))],
         {"batch_first": True}, ref=_pack_ref, id="batch-first"),
    Case("PadPackedSequence", [Normal((10, 2)), Fixed(np.array([5, 3, 1, 1]))], {},
         ref=_pad_ref),
    # padding_value honoured: a deliberate difference from nnabla 1.39 (README.md)
    Case("PadPackedSequence", [Normal((10,)), Fixed(np.array([5, 3, 1, 1]))],
         {"batch_first": True, "padding_value": -1.0, "total_length": 6}, ref=_pad_ref,
         id="batch-first-total-length"),
    Case("PadPackedSequence", [Normal((10, 2)), Fixed(np.array([5, 3, 1, 1]))],
         {"total_length": 3}, ref=_pad_ref, id="short-total-length"),
    Case("BatchCholesky", [_spd(2, 4)], {}, ref=_cholesky_ref, grad=False),
    Case("BatchCholesky", [_spd(3, 3, seed=1)], {"upper": True}, ref=_cholesky_ref,
         grad=False, id="upper"),
]
