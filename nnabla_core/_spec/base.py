"""The declarative form of a function's interface.

Every nnabla function is described once, as a :class:`FunctionSpec`; the public
``nnabla.functions`` wrappers, argument validation, ``function_info`` and the
backend coverage report are all derived from these entries.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable


class FunctionArgumentError(ValueError, RuntimeError):
    """A bad shape or value given to a function.

    A ``ValueError`` as Python expects, and a ``RuntimeError`` as nnabla raises from
    a function's setup, so code written against either catches it.
    """


class MissingInputsError(FunctionArgumentError, AssertionError):
    """A variadic function (concatenate, stack, add_n, sink, ...) called without inputs.

    Also an ``AssertionError``, which is what nnabla raises for it.
    """


class _Required:
    """Marker for an argument without a default."""

    def __repr__(self):
        return "REQUIRED"


REQUIRED = _Required()


@dataclass(frozen=True)
class Input:
    """One input of a function.

    ``variadic`` takes any number of variables (concatenate, stack, add_n);
    ``integer`` inputs reach kernels as int64 arrays (labels, indices);
    ``stored_dtype`` inputs reach kernels in the type they are stored in (bit operations
    on uint8, integer modulo), instead of the compute type;
    ``parameter`` marks inputs a parametric function creates (weights).
    """

    name: str
    optional: bool = False
    variadic: bool = False
    parameter: bool = False
    integer: bool = False
    stored_dtype: bool = False


@dataclass(frozen=True)
class Arg:
    """One argument. ``kind`` names a coercion rule in :mod:`nnabla._spec.args`."""

    name: str
    kind: str
    default: Any = REQUIRED
    choices: tuple = ()


@dataclass(frozen=True)
class Output:
    """One output; ``dtype`` fixes its storage type (e.g. ``'uint64'`` indices)."""

    name: str
    variadic: bool = False
    dtype: str | None = None


@dataclass(frozen=True)
class Needs:
    """Which input and output data the backward pass reads (by name)."""

    inputs: tuple = ()
    outputs: tuple = ()


ALL_INPUTS = Needs(inputs=("*",))


@dataclass
class FunctionSpec:
    """The interface of one function, as nnabla defines it."""

    name: str
    snake: str
    category: str
    inputs: tuple
    args: tuple
    outputs: tuple
    infer_shape: Callable
    backward_needs: Needs = field(default_factory=Needs)
    doc: str = ""
    mutates: tuple = ()          # inputs a forward pass updates (running statistics)
    backward_mutates: tuple = ()     # inputs whose data a backward pass writes (VATNoise's w)
    differentiable: bool = True
    stochastic: bool = False
    # fills input-dependent defaults: (spec, in_shapes, args) -> args
    resolve_args: Callable | None = None
    # Output shapes known only from the data (nonzero, unique, bool_gather): infer_shape
    # returns a placeholder and the forward pass resizes the outputs to what the kernel made.
    dynamic_shape: bool = False
    # Inputs whose values size those outputs (BoolGather's mask): with their data present
    # when the graph is built, the kernel runs then to size the outputs, as nnabla's setup
    # reads them. Empty: every input's data is needed.
    sized_by: tuple = ()
    # The graph passes never release this function's inputs (nnabla's
    # prohibit_clear_input_buffers; Sink's inputs are the results a caller asked for).
    keeps_inputs: bool = False

    def __post_init__(self):
        self.arg_names = tuple(a.name for a in self.args)
        self.input_names = tuple(i.name for i in self.inputs)
        self._need_in = self._indices(self.backward_needs.inputs, self.inputs)
        self._need_out = self._indices(self.backward_needs.outputs, self.outputs)
        self._mutated = self._indices(self.mutates, self.inputs)
        self._backward_mutated = self._indices(self.backward_mutates, self.inputs)
        self._integer_inputs = tuple(i.name for i in self.inputs if i.integer)
        self.variadic_input = any(i.variadic for i in self.inputs)

    @staticmethod
    def _indices(names, entries):
        if "*" in names:
            return "*"
        known = [e.name for e in entries]
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(f"spec names unknown entries {unknown}; known {known}")
        return tuple(known.index(n) for n in names)

    @property
    def api_name(self):
        return f"F.{self.snake}"

    def needed_inputs(self, n_inputs):
        """Positions of the inputs whose data the backward pass reads."""
        return tuple(range(n_inputs)) if self._need_in == "*" else self._need_in

    def needed_outputs(self, n_outputs):
        return tuple(range(n_outputs)) if self._need_out == "*" else self._need_out

    # Errors that name the function, the argument, the expectation and the value.
    def shape_error(self, arg, expected, given, why=""):
        msg = f"{self.api_name}: argument '{arg}' has shape {tuple(given)}; expected {expected}"
        return FunctionArgumentError(msg + (f": {why}" if why else ""))

    def value_error(self, arg, expected, given, why=""):
        msg = f"{self.api_name}: argument '{arg}' is {given!r}; expected {expected}"
        return FunctionArgumentError(msg + (f": {why}" if why else ""))

    def missing_inputs_error(self, arg):
        return MissingInputsError(f"{self.api_name}: argument '{arg}' has no variables; "
                                  f"expected at least one input")

    def type_error(self, arg, expected, given):
        return TypeError(f"{self.api_name}: argument '{arg}' is of type "
                         f"{type(given).__name__} ({given!r}); expected {expected}")


def prod(shape):
    return math.prod(shape)
