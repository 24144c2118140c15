"""The cpu plugin's native x + v and x * v (``_native.scalar_add``, ``scalar_multiply``),
which the AddScalar and MulScalar kernels run: bit for bit numpy's ufunc, on the native
loop (small C-contiguous float32 arrays) and on the fallback (everything else)."""
import numpy as np
import pytest
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer
from nnabla_ext.cpu import _native
from nnabla_ext.cpu.kernels import CPU_KERNELS, native

import nnabla as nn
import nnabla.functions as F

PAIRS = [(_native.scalar_add, np.add), (_native.scalar_multiply, np.multiply)]
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, 3.4e38, -3.4e38, 1.0,
            -1.0]


def _same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _values(shape, dtype=np.float32, seed=0):
    x = np.asarray(np.random.RandomState(seed).randn(*shape) * 1e3).astype(dtype)
    flat = x.reshape(-1)        # a view: x is C-contiguous
    with np.errstate(over="ignore"):
        flat[:len(SPECIALS)] = np.array(SPECIALS, np.float64).astype(dtype)[:flat.size]
    return x


@pytest.mark.parametrize("native_f, ufunc", PAIRS)
@pytest.mark.parametrize("shape", [(), (1,), (16,), (3, 5, 7), (128, 128)])
@pytest.mark.parametrize("v", SPECIALS + [0.1, -2.5])
def test_the_native_loop_gives_numpys_bits(native_f, ufunc, shape, v):
    x = _values(shape)
    s = np.asarray(v, np.float32)
    with np.errstate(all="ignore"):     # the specials overflow and make NaNs
        y = native_f(x, s)
        expected = ufunc(x, s)
    assert type(y) is type(expected) and y is not x     # 0-d: a numpy scalar, as numpy
    assert _same_bits(np.asarray(y), np.asarray(expected))
    assert np.asarray(y).flags.c_contiguous


@pytest.mark.parametrize("native_f, ufunc", PAIRS)
def test_floating_point_errors_are_reported_as_numpy_reports_them(native_f, ufunc):
    name = ufunc.__name__
    x, s = np.full(16, 3e38, np.float32), np.asarray(3e38, np.float32)
    with pytest.warns(RuntimeWarning, match=f"overflow encountered in {name}"):
        y = native_f(x, s)
    assert np.isinf(y).all()
    with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="overflow"):
        native_f(x, s)
    with np.errstate(all="ignore"):
        assert _same_bits(native_f(x, s), ufunc(x, s))
    nan = np.asarray(np.inf, np.float32)
    with np.errstate(invalid="raise"), pytest.raises(FloatingPointError, match="invalid"):
        native_f(np.full(4, -np.inf if name == "add" else 0.0, np.float32), nan)
    ok = np.ones(16, np.float32)
    with np.errstate(all="raise"):      # no flag raised: the native loop's result stands
        assert _same_bits(native_f(ok, np.asarray(2.0, np.float32)),
                          ufunc(ok, np.float32(2.0)))


@pytest.mark.parametrize("native_f, ufunc", PAIRS)
@pytest.mark.parametrize("case", ["float64", "float16", "int32", "strided", "fortran",
                                  "large", "python_scalar", "swapped", "subclass"])
def test_other_operands_go_to_numpy(native_f, ufunc, case):
    x, s = _values((40, 30)), np.asarray(1.5, np.float32)
    if case in ("float64", "float16", "int32"):
        with np.errstate(all="ignore"):
            x = x.astype(case)
    elif case == "strided":
        x = x[:, ::3]
    elif case == "fortran":
        x = np.asfortranarray(x)
    elif case == "large":
        x = _values((300, 300))
    elif case == "python_scalar":
        s = 1.5
    elif case == "swapped":
        x = x.astype(">f4")
    elif case == "subclass":
        x = x.view(np.matrix)
    with np.errstate(all="ignore"):
        y = native_f(x, s)
        expected = ufunc(x, s)
    assert type(y) is type(expected) and _same_bits(np.asarray(y), np.asarray(expected))


def test_misuse_is_refused_with_a_message():
    with pytest.raises(TypeError, match=r"scalar_add\(x, v\) takes 2 arguments \(1 given\)"):
        _native.scalar_add(np.zeros(3, np.float32))
    with pytest.raises(TypeError):      # numpy's own refusal
        _native.scalar_multiply("a", object())


def _kernel(name, shape, val):
    spec = SPECS[name]
    bound, out_shapes = infer(spec, [shape], bind_args(spec, {"val": val}))
    return CPU_KERNELS[name](spec, bound, [shape], out_shapes)


@pytest.mark.parametrize("name, ufunc", [("AddScalar", np.add), ("MulScalar", np.multiply)])
def test_the_cpu_scalar_kernels_run_it(name, ufunc):
    assert CPU_KERNELS[name] is getattr(native, name)
    x = _values((4, 8))
    kernel = _kernel(name, x.shape, 0.3)
    kernel.setup()
    f, v = kernel.forward_ufunc
    assert f is native.AddScalar.native_ufunc if name == "AddScalar" else \
        f is native.MulScalar.native_ufunc
    (y,) = kernel.forward([x])
    assert _same_bits(y, ufunc(x, np.float32(0.3))) and _same_bits(f(x, v), y)


def test_add_and_mul_scalar_through_every_path_match_numpy():
    x0 = _values((16,))
    a = nn.NdArray.from_numpy_array(x0)
    expected = np.multiply(np.add(x0, np.float32(2.0)), np.float32(0.5))
    imperative = F.mul_scalar(F.add_scalar(a, 2.0), 0.5).data
    x = nn.Variable.from_numpy_array(x0)
    with nn.auto_forward():
        dynamic = F.mul_scalar(F.add_scalar(x, 2.0), 0.5).d
    y = F.mul_scalar(F.add_scalar(x, 2.0), 0.5)
    y.forward()
    for result in (imperative, dynamic, y.d):
        assert _same_bits(result, expected)
