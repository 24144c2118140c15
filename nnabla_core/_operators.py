"""The methods of Variable and NdArray that run functions: arithmetic operators, indexing
and ``Variable.reshape``.

They sit above the dispatcher, so :func:`install` attaches them to the classes once every
module is loaded (``nnabla/__init__``); the classes themselves never import the dispatcher.
The mapping follows nnabla exactly: ``x - 1`` is AddScalar(-1), ``x / 2`` is
MulScalar(0.5), ``-x`` is MulScalar(-1) and ``+x`` returns ``x``.
"""
from __future__ import annotations

import numbers

import numpy as np

from ._indexing import getitem, setitem
from ._dispatch import call_function as _call
from ._nd_array import NdArray
from ._spec.args import check_value
from ._variable import Variable


def _is_scalar(v):
    return isinstance(v, (numbers.Number, np.number)) and not isinstance(v, (bool, np.bool_))


def _arrayish(cls, v):
    return isinstance(v, (NdArray, Variable))


def _binary(scalar_name, scalar_of, array_name, reflected_scalar=None):
    def op(self, other):
        if _is_scalar(other):
            return _call(scalar_name, self, val=scalar_of(other))
        if _arrayish(type(self), other):
            return _call(array_name, self, other)
        return NotImplemented

    def rop(self, other):
        if _is_scalar(other):
            name, val = reflected_scalar(other)
            return _call(name, self, val=val)
        if _arrayish(type(self), other):
            return _call(array_name, other, self)
        return NotImplemented
    return op, rop


_add, _radd = _binary("AddScalar", float, "Add2", lambda v: ("AddScalar", float(v)))
_sub, _rsub = _binary("AddScalar", lambda v: -float(v), "Sub2",
                      lambda v: ("RSubScalar", float(v)))
_mul, _rmul = _binary("MulScalar", float, "Mul2", lambda v: ("MulScalar", float(v)))
_div, _rdiv = _binary("MulScalar", lambda v: 1.0 / float(v), "Div2",
                      lambda v: ("RDivScalar", float(v)))
_pow, _rpow = _binary("PowScalar", float, "Pow2", lambda v: ("RPowScalar", float(v)))


def _neg(self):
    return _call("MulScalar", self, val=-1.0)


def _pos(self):
    return self


def _abs(self):
    return _call("Abs", self)


class MatmulOperandError(ValueError, AssertionError):
    """A bad operand of ``@``; an AssertionError too, as nnabla raises one here."""


def _matmul_operands(x, y):
    for position, v in (("left", x), ("right", y)):
        if not isinstance(v, (NdArray, Variable)):
            raise MatmulOperandError(f"matmul (@): the {position} operand is of type "
                                     f"{type(v).__name__}; expected nnabla.Variable or "
                                     "nnabla.NdArray")
        if len(v.shape) == 0:
            raise MatmulOperandError(f"matmul (@): the {position} operand is 0-dimensional; "
                                     "expected at least 1 dimension (use * for scalars)")


def _matmul(x, y):
    """``x @ y`` with numpy's matmul rules, built from nnabla's functions as nnabla does.

    1-D @ 1-D is ``sum(x * y)``; 2-D operands (a 1-D one promoted to a row or a column,
    the added axis removed afterwards) use ``affine``; otherwise ``batch_matmul`` with the
    operand of fewer dimensions reshaped with leading 1s, the batch axes broadcast.

    Raises:
        MatmulOperandError (a ValueError and AssertionError): an operand that is not a
        Variable/NdArray, or is 0-dimensional.
    """
    _matmul_operands(x, y)
    if isinstance(x, NdArray) or isinstance(y, NdArray):
        # one NdArray makes the product imperative: a Variable takes part through its data
        x = x.data if isinstance(x, Variable) else x
        y = y.data if isinstance(y, Variable) else y
    nx, ny = len(x.shape), len(y.shape)
    if nx == 1 and ny == 1:
        return _call("Sum", _call("Mul2", x, y), axes=(0,), keep_dims=False)
    if nx <= 2 and ny <= 2:
        a = x if nx == 2 else _call("Reshape", x, shape=(1, x.shape[0]), inplace=True)
        b = y if ny == 2 else _call("Reshape", y, shape=(y.shape[0], 1), inplace=True)
        h = _call("Affine", a, b, None)
        shape = h.shape[1:] if nx == 1 else (h.shape[:1] if ny == 1 else None)
        return h if shape is None else _call("Reshape", h, shape=shape, inplace=True)
    a_shape = tuple(x.shape) if nx > 1 else (1,) + tuple(x.shape)
    b_shape = tuple(y.shape) if ny > 1 else tuple(y.shape) + (1,)
    a_shape = (1,) * (len(b_shape) - len(a_shape)) + a_shape
    b_shape = (1,) * (len(a_shape) - len(b_shape)) + b_shape
    a = x if a_shape == x.shape else _call("Reshape", x, shape=a_shape, inplace=True)
    b = y if b_shape == y.shape else _call("Reshape", y, shape=b_shape, inplace=True)
    h = _call("BatchMatmul", a, b)
    if nx == 1:
        return _call("Reshape", h, shape=h.shape[:-2] + h.shape[-1:], inplace=True)
    if ny == 1:
        return _call("Reshape", h, shape=h.shape[:-1], inplace=True)
    return h


def _rmatmul(self, other):
    return _matmul(other, self)


def _compare(array_name, scalar_name):
    def op(self, other):
        if _is_scalar(other):
            return _call(scalar_name, self, val=float(other))
        return _call(array_name, self, other)
    return op


def _inplace(op):
    def iop(self, other):
        result = op(self, other)
        if result is NotImplemented:
            return result
        self._array.assign(result._array)
        return self
    return iop


def _reshape(self, shape, unlink=False):
    """A variable of ``shape`` sharing this one's data: writing through either changes both.

    Linked (an in-place ``F.reshape``, whose gradient flows back) unless ``unlink``; an
    unlinked one also shares the grad.
    """
    if not isinstance(shape, tuple):    # a tuple is checked by F.reshape / nn.Variable
        shape = check_value(f"{type(self).__name__}.reshape", "shape", "ints", shape)
    node = self._node
    if unlink:
        v = Variable(shape, need_grad=self.need_grad)
        if v.size != self.size:
            raise ValueError(f"Variable.reshape: argument 'shape' is {shape}, of {v.size} "
                             f"elements; expected {self.size} elements, as {tuple(self.shape)}")
        v._node.data = node.data.window(shape)
        v._node.grad = node.grad.window(shape)
        return v
    return _call("Reshape", self, shape=shape, inplace=True)    # shares (nnabla._graph.link)


def install_all():
    """Attach the function-running methods to NdArray and Variable."""
    install(NdArray, inplace=True)
    install(Variable, inplace=False)
    for cls in (NdArray, Variable):
        cls.__getitem__ = getitem
        cls.__setitem__ = setitem
    Variable.reshape = _reshape


def install(cls, inplace):
    table = {
        "__add__": _add, "__radd__": _radd, "__sub__": _sub, "__rsub__": _rsub,
        "__mul__": _mul, "__rmul__": _rmul, "__truediv__": _div, "__rtruediv__": _rdiv,
        "__pow__": _pow, "__rpow__": _rpow, "__neg__": _neg, "__pos__": _pos,
        "__abs__": _abs, "__matmul__": _matmul, "__rmatmul__": _rmatmul,
        "__lt__": _compare("Less", "LessScalar"),
        "__le__": _compare("LessEqual", "LessEqualScalar"),
        "__gt__": _compare("Greater", "GreaterScalar"),
        "__ge__": _compare("GreaterEqual", "GreaterEqualScalar"),
    }
    if inplace:
        table.update({"__iadd__": _inplace(_add), "__isub__": _inplace(_sub),
                      "__imul__": _inplace(_mul), "__itruediv__": _inplace(_div),
                      "__ipow__": _inplace(_pow)})
    for name, fn in table.items():
        setattr(cls, name, fn)
    cls.__array_priority__ = 1000   # numpy defers `ndarray op Variable` to us
