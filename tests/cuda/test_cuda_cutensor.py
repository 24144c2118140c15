"""Transpose by cuTENSOR: one handle per device, one plan per (device, dtype, shape, axes),
results equal to numpy's; on the emulation the binding is nnabla_ext.cuda._host_cutensor,
which checks what the kernel passes (modes, extents, alignment) as the library does."""
import ctypes

import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
from nnabla.ext_utils import get_extension_context
from nnabla_ext.cuda import _host_cutensor
from nnabla_ext.cuda._namespace import DeviceNamespace
from nnabla_ext.cuda.emulation import cupy as emulated
from nnabla_ext.cuda.kernels import transpose

XP = DeviceNamespace(emulated)
SHAPES_AXES = [((2, 3, 4), (2, 0, 1)), ((5, 6), (1, 0)), ((2, 3, 4), (0, 2, 1)),
               ((3, 1, 2, 4), (3, 2, 1, 0)), ((7, 5), (1, 0))]


def test_a_thousand_mixed_transposes_build_one_handle_and_one_plan_per_shape():
    get_extension_context("cuda")
    transpose.clear()
    before, created = dict(transpose.COUNTS), dict(_host_cutensor.CREATED)
    rng = np.random.RandomState(0)
    data = {shape: rng.randn(*shape).astype(np.float32) for shape, _ in SHAPES_AXES}
    with nn.context_scope(get_extension_context("cuda")), nn.auto_forward():
        for i in range(1000):
            shape, axes = SHAPES_AXES[i % len(SHAPES_AXES)]
            y = F.transpose(nn.Variable.from_numpy_array(data[shape]), axes)
            if i < len(SHAPES_AXES):
                np.testing.assert_array_equal(y.d, data[shape].transpose(axes))
    plans = transpose.COUNTS["plans"] - before["plans"]
    assert plans == len(SHAPES_AXES) == _host_cutensor.CREATED["plans"] - created["plans"]
    assert transpose.COUNTS["hits"] - before["hits"] == 1000 - plans
    assert transpose.COUNTS["handles"] == 1 == len(transpose._handles)   # one device
    assert _host_cutensor.CREATED["handles"] - created["handles"] == transpose.COUNTS[
        "handles"] - before["handles"]
    assert transpose.COUNTS["strided_copies"] == before["strided_copies"]


def test_transpose_gradients_permute_back_and_match_the_cpu():
    rng = np.random.RandomState(1)
    x, dy = rng.randn(2, 3, 4, 5), rng.randn(4, 2, 5, 3)
    results = []
    for name in ("cpu", "cuda"):
        with nn.context_scope(get_extension_context(name)):
            xv = nn.Variable.from_numpy_array(x, need_grad=True)
            y = F.transpose(xv, (2, 0, 3, 1))
            y.forward()
            y.backward(dy)
            results.append((y.d.copy(), xv.g.copy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_half_precision_uses_cutensor_and_other_types_a_strided_copy():
    get_extension_context("cuda")
    before = dict(transpose.COUNTS)
    h = np.arange(24, dtype=np.float16).reshape(2, 3, 4)
    out = transpose.permute(XP, XP.asarray(h), (1, 2, 0))
    np.testing.assert_array_equal(out.get(), h.transpose(1, 2, 0))
    assert transpose.COUNTS["strided_copies"] == before["strided_copies"]
    i = np.arange(6, dtype=np.int32).reshape(2, 3)
    np.testing.assert_array_equal(transpose.permute(XP, XP.asarray(i), (1, 0)).get(), i.T)
    assert transpose.COUNTS["strided_copies"] == before["strided_copies"] + 1


def test_an_unaligned_view_is_copied_to_aligned_memory_first():
    get_extension_context("cuda")
    base = XP.asarray(np.arange(40, dtype=np.float32))
    view = base[1:25].reshape(2, 3, 4)               # 4 bytes past an aligned address
    out = transpose.permute(XP, view, (2, 1, 0))
    np.testing.assert_array_equal(out.get(), np.arange(1, 25, dtype=np.float32).reshape(
        2, 3, 4).transpose(2, 1, 0))
    assert transpose._pointer(out) % transpose.ALIGNMENT == 0


def test_without_the_library_transposes_are_strided_copies(monkeypatch):
    get_extension_context("cuda")
    monkeypatch.setattr(transpose, "library", lambda: None)
    before = dict(transpose.COUNTS)
    x = np.random.RandomState(2).randn(3, 4, 5).astype(np.float32)
    out = transpose.permute(XP, XP.asarray(x), (1, 2, 0))
    np.testing.assert_array_equal(out.get(), x.transpose(1, 2, 0))
    assert out.flags.c_contiguous
    assert transpose.COUNTS["strided_copies"] == before["strided_copies"] + 1
    assert transpose.COUNTS["plans"] == before["plans"]


def test_the_emulated_binding_checks_modes_and_alignment_like_the_library():
    lib = _host_cutensor
    h = lib.create()
    ext = np.array([2, 3], np.int64)
    strides = np.array([3, 1], np.int64)
    desc = lib.createTensorDescriptor(h, 2, ext.ctypes.data, strides.ctypes.data, 0, 256)
    modes, wrong = np.array([0, 1], np.int32), np.array([0, 2], np.int32)
    with pytest.raises(lib.CuTensorError, match="modes or extents"):
        lib.createPermutation(h, desc, modes.ctypes.data, lib.OP_IDENTITY, desc,
                              wrong.ctypes.data, lib.COMPUTE_DESC_32F)
    op = lib.createPermutation(h, desc, modes.ctypes.data, lib.OP_IDENTITY, desc,
                               modes.ctypes.data, lib.COMPUTE_DESC_32F)
    plan = lib.createPlan(h, op, lib.createPlanPreference(h, lib.ALGO_DEFAULT, 0), 0)
    buf = np.zeros(64, np.float32)
    aligned = (-buf.ctypes.data % 256) // 4
    a = buf[aligned + 1:aligned + 7]                 # 4 bytes off
    alpha = ctypes.c_float(1.0)
    with pytest.raises(lib.CuTensorError, match="not aligned"):
        lib.permute(h, plan, ctypes.addressof(alpha), a.ctypes.data, a.ctypes.data)
    with pytest.raises(lib.CuTensorError, match="not a live plan"):
        lib.permute(h, 10 ** 9, ctypes.addressof(alpha), a.ctypes.data, a.ctypes.data)


def test_double_precision_permutes_with_a_double_scalar():
    get_extension_context("cuda")
    x = np.random.RandomState(4).randn(3, 2, 5)
    out = transpose.permute(XP, XP.asarray(x), (2, 0, 1))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out.get(), x.transpose(2, 0, 1))
