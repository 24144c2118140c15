"""Function instances before they join a graph: nnabla's low-level ``nnabla.function.<Type>``.

``nnabla.function.Split(ctx, axis)`` gives a :class:`FunctionInstance`: a function type with
its arguments and context, not yet bound to inputs. It is used either

- by calling it on inputs (``f(x)``), which adds it to the graph like ``F.split`` does, or
- through nnabla's explicit protocol, which code such as NNP loaders written for nnabla
  uses: ``f.setup(inputs, outputs)`` shapes ``outputs`` for ``inputs``, then
  ``f.forward(inputs, outputs)`` and ``f.backward(inputs, outputs, accum)`` compute on the
  given variables.

As in nnabla, the constructor takes the context and then every argument of the function
(no defaults), by position or by name; ``inputs`` list the present inputs only (a
convolution without bias passes two).

Example:
    >>> import numpy as np, nnabla as nn, nnabla.function as F
    >>> split = F.Split(nn.get_current_context(), axis=1)
    >>> x = nn.Variable.from_numpy_array(np.arange(6.0).reshape(2, 3))
    >>> outputs = [nn.Variable() for _ in range(3)]
    >>> split.setup([x], outputs)
    >>> [o.shape for o in outputs]
    [(2,), (2,), (2,)]
    >>> split.forward([x], outputs)
    >>> outputs[1].d.tolist()
    [1.0, 4.0]
"""
from __future__ import annotations

import inspect

from . import _dispatch
from ._spec import SPECS
from .auto_forward import auto_forward as _auto_forward
from .context import context_scope
from .function import FunctionInfo


class FunctionInstance:
    """A function type with its arguments and context, bound to inputs on first use.

    Attributes:
        name (str): the function type (``'Split'``).
        arguments, args (dict): its arguments.
        context (Context): the context it runs in.
    """

    def __init__(self, ctx, spec, arguments, where=""):
        self.ctx, self.spec, self.arguments, self._where = ctx, spec, dict(arguments), where
        self._bound = None          # the graph Function that setup() created
        self.tags = {}

    @property
    def name(self):
        return self.spec.name

    @property
    def args(self):
        return self.arguments

    @property
    def context(self):
        return self.ctx

    @property
    def info(self):
        return FunctionInfo(self.spec.name, self.arguments)

    def min_outputs(self):
        return len(self.spec.outputs)

    def __repr__(self):
        return f"{self.spec.name}({self.arguments})"

    def _placed(self, inputs):
        from .utils._nnp_functions import place_inputs

        return place_inputs(self.spec, self.arguments, list(inputs), where=self._where)

    def __call__(self, *inputs, n_outputs=-1, auto_forward=True, outputs=None):
        """The outputs of the function on ``inputs`` (Variables or NdArrays; absent optional
        inputs left out), in this instance's context; run at once if ``auto_forward``
        (the default, as nnabla's function instances)."""
        placed = self._placed(inputs)
        with context_scope(self.ctx), _auto_forward(bool(auto_forward)):
            return _dispatch.call(self.spec, tuple(placed), dict(self.arguments), n_outputs,
                                  outputs)

    # -- nnabla's explicit protocol --------------------------------------------------------
    def setup(self, inputs, outputs):
        """Bind to ``inputs`` (present ones, as nnabla lists them) and give ``outputs``
        their shapes.

        Raises:
            ValueError: if the inputs do not fit the function (naming it and the input).
        """
        n_outputs = len(outputs)
        bound = self._bound
        if bound is None or len(inputs) != sum(n is not None for n in bound.in_nodes) \
                or n_outputs != len(bound.out_refs):
            with context_scope(self.ctx), _auto_forward(False):
                result = _dispatch.call(self.spec, tuple(self._placed(inputs)),
                                        dict(self.arguments), n_outputs if
                                        self.spec.outputs[-1].variadic else -1)
            result = result if isinstance(result, tuple) else (result,)
            if len(result) != n_outputs:
                raise ValueError(f"{self.spec.api_name}: setup got {n_outputs} outputs; the "
                                 f"function gives {len(result)}")
            self._bound = bound = result[0].parent
        bound.setup(inputs, outputs)

    def _function(self):
        if self._bound is None:
            raise RuntimeError(f"{self.spec.api_name}: call setup(inputs, outputs) before "
                               f"forward or backward")
        return self._bound

    def forward(self, inputs, outputs):
        """Compute ``outputs``' data from ``inputs``' data (after :meth:`setup`)."""
        self._function().forward(inputs, outputs)

    def backward(self, inputs, outputs, accum=None):
        """Back-propagate ``outputs``' grads into the grads of the ``inputs`` that need one;
        ``accum[i]`` adds to input ``i``'s grad (every input adds without ``accum``)."""
        self._function().backward(inputs, outputs, accum)

    def grad_depends_output_data(self, i, o):
        return o in self.spec.needed_outputs(len(self.spec.outputs))

    def grad_depends_input_data(self, i, j):
        return j in self.spec.needed_inputs(len(self.spec.inputs))


def constructor(spec):
    """nnabla's ``nnabla.function.<Type>(ctx, <every argument>)`` for ``spec``."""
    params = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += [inspect.Parameter(a.name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
               for a in spec.args]
    signature = inspect.Signature(params)

    def make(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"nnabla.function.{spec.name}{signature}: {error}") from None
        values = dict(bound.arguments)
        ctx = values.pop("ctx")
        return FunctionInstance(ctx, spec, values, f"nnabla.function.{spec.name}: ")

    make.__name__ = make.__qualname__ = spec.name
    make.__module__ = "nnabla.function"
    make.__signature__ = signature
    make.__doc__ = (f"A {spec.name} function instance in context ``ctx`` (see "
                    f"``nnabla.functions.{spec.snake}`` for the arguments); call it on "
                    f"inputs, or use setup/forward/backward.")
    return make


def install(module):
    """Give ``module`` (``nnabla.function``) nnabla's low-level classes as attributes:
    ``nnabla.function.Split(ctx, axis)`` and so on for every function type, each made on
    first use. Called by ``nnabla/__init__`` so that ``nnabla.function`` (an engine module)
    imports nothing above it."""
    def __getattr__(name):
        spec = SPECS.get(name)
        if spec is None:
            raise AttributeError(f"module 'nnabla.function' has no attribute {name!r}")
        make = constructor(spec)
        setattr(module, name, make)
        return make

    def __dir__():
        return sorted(set(vars(module)) | set(SPECS))

    module.__getattr__ = __getattr__
    module.__dir__ = __dir__
