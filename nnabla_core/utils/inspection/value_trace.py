"""``NanInfTracer``: find the first function whose outputs (or gradients) hold NaN/inf."""
from __future__ import annotations

from collections import OrderedDict
from contextlib import contextmanager

import nnabla.functions as F

from ._graph_info import function_rank
from .base import FunctionHookCallbackBase


def _number_to_order(n):
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(n, f"{n}th")


def _error_trace(history, exec_name):
    print(f"Error during {exec_name} propagation")
    for function in history[:-1]:
        print(f"\t{function}")
    print(f"\t{history[-1]} <-- ERROR")


class NanInfTracer(FunctionHookCallbackBase):
    """Function hooks that record whether any function produced NaN or inf.

    Pass :attr:`forward_post_hook` to ``forward`` (it checks each function's outputs) and
    :attr:`backward_post_hook` to ``backward`` (it checks the gradients of each function's
    inputs); :meth:`check`, or leaving a :meth:`trace` block, raises ``ValueError`` naming
    the first function, in execution order, with a NaN or inf.

    Args:
        trace_nan (bool): Look for NaN.
        trace_inf (bool): Look for inf.
        need_details (bool): Put the function's type, shapes and arguments in the message.

    Example:
        >>> import numpy as np, nnabla as nn, nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([1.0, 0.0]))
        >>> y = F.log(x)
        >>> tracer = NanInfTracer()
        >>> y.forward(function_post_hook=tracer.forward_post_hook)
        >>> try:
        ...     tracer.check()
        ... except ValueError as error:
        ...     print(str(error).splitlines()[0])  # doctest: +ELLIPSIS
        Error during forward propagation
        ...
        The 0th output of the function 'Log' (rank: 0) has nan or inf as its values.
    """

    def __init__(self, trace_nan=True, trace_inf=True, need_details=True):
        super().__init__()
        self.trace_nan = trace_nan
        self.trace_inf = trace_inf
        self.need_details = need_details
        self.key_to_stat_fwd = OrderedDict()
        self.key_to_stat_bwd = OrderedDict()
        self._ranks = {}
        general = "The {} output of the function '{}' (rank: {}) has nan or inf as its values."
        detail = ("\n        Function details: \n            function type: {}\n"
                  "            shapes of inputs: {} \n            shapes of outputs: {}\n"
                  "            function args: {}\n        ") if need_details else ""
        self._msg = general + detail
        self._msg_keys = ["name", "rank", "function_type", "input_shapes", "output_shapes",
                          "function_args"]

    def _add_key(self, f, key_to_stat):
        if f in key_to_stat:
            return
        stat = {"name": f.name, "function_type": None, "function_args": None,
                "input_shapes": None, "output_shapes": None}
        if self.need_details:
            stat.update({"function_type": f.info.type_name,
                         "function_args": str(f.info.args),
                         "input_shapes": [str(x.shape) for x in f.inputs],
                         "output_shapes": [str(x.shape) for x in f.outputs]})
        key_to_stat[f] = stat

    def _record(self, f, key_to_stat, arrays):
        self._add_key(f, key_to_stat)
        nan = [F.sum(F.isnan(a)) for a in arrays] if self.trace_nan else []
        inf = [F.sum(F.isinf(a)) for a in arrays] if self.trace_inf else []
        self._ranks = {}
        key_to_stat[f].update({"inf": inf, "nan": nan, "rank": function_rank(f, self._ranks)})

    @property
    def pre_hook(self):
        """None: nothing is done before a function runs."""
        return None

    @property
    def post_hook(self):
        """Not defined: use :attr:`forward_post_hook` or :attr:`backward_post_hook`."""
        raise NotImplementedError("NanInfTracer has no post_hook; pass forward_post_hook to "
                                  "forward() and backward_post_hook to backward()")

    @property
    def forward_post_hook(self):
        """callable or None: The ``function_post_hook`` for ``forward``."""
        if not (self.trace_nan or self.trace_inf):
            return None
        return lambda f: self._record(f, self.key_to_stat_fwd, [o.data for o in f.outputs])

    @property
    def backward_post_hook(self):
        """callable or None: The ``function_post_hook`` for ``backward``."""
        if not (self.trace_nan or self.trace_inf):
            return None
        return lambda f: self._record(f, self.key_to_stat_bwd, [i.grad for i in f.inputs])

    @contextmanager
    def trace(self):
        """Context manager that calls :meth:`check` when the block ends."""
        yield self
        self.check()

    def _first_bad_index(self, stat):
        for key, wanted in (("nan", self.trace_nan), ("inf", self.trace_inf)):
            if wanted:
                for i, count in enumerate(stat.get(key, [])):
                    if count.data > 0:
                        return i
        return None

    def _check_impl(self, key_to_stat, exec_name):
        history = []
        for f, stat in key_to_stat.items():
            history.append(f)
            index = self._first_bad_index(stat)
            if index is not None:
                _error_trace(history, exec_name)
                raise ValueError(self._msg.format(_number_to_order(index),
                                                  *[stat[key] for key in self._msg_keys]))

    def check(self):
        """Raise ``ValueError`` if a recorded forward output or backward gradient held NaN
        or inf (forward is checked first)."""
        self._check_impl(self.key_to_stat_fwd, "forward")
        self._check_impl(self.key_to_stat_bwd, "backward")
