"""``pprint``: print the functions of a graph with their shapes and statistics."""
from __future__ import annotations

import numpy as np

import nnabla as nn

from ._graph_info import function_rank, parameter_scope_of

_STATISTICS = (("Med", np.median), ("Ave", np.mean), ("Std", np.std), ("Min", np.min),
               ("Max", np.max))


class PrettyPrinter:
    """Callback for ``Variable.visit`` printing each function of a graph.

    Args:
        summary (bool): Also print the median, mean, standard deviation, minimum and
            maximum of the inputs' and outputs' data and gradients.
        hidden (bool): Keep each function's name, inputs and outputs in :attr:`functions`.

    Attributes:
        functions (list of dict): With ``hidden``, one dict per function with ``name``,
            ``inputs`` and ``outputs``.
    """

    def __init__(self, summary=False, hidden=False):
        self._summary = summary
        self._hidden = hidden
        self._ranks = {}
        self.functions = []

    def get_scope_name(self, x):
        """The parameter scope of ``x`` when it is a registered parameter, else None."""
        return parameter_scope_of(x, nn.get_parameters())

    def _print_statistics(self, title, arrays):
        print(f"\t{title}:")
        for label, statistic in _STATISTICS:
            print(f"\t\t{label}: ", [statistic(a) for a in arrays])

    def __call__(self, f):
        scope = self.get_scope_name(f.inputs[1]) if len(f.inputs) > 1 else None
        name = f"{scope}/{f.name}({f.info.type_name})" if scope \
            else f"{f.name}({f.info.type_name})"
        print(name)
        print(f"\tDepth = {function_rank(f, self._ranks)}")
        print("\tArgs:", [f"{k}={v}" for k, v in f.info.args.items()])
        print("\tInputs:", [i.shape for i in f.inputs])
        print("\tOutputs:", [o.shape for o in f.outputs])
        print("\tBackward Inputs:", [i.need_grad for i in f.inputs])
        if self._summary:
            self._print_statistics("Input Data", [i.d for i in f.inputs])
            self._print_statistics("Output Data", [o.d for o in f.outputs])
            self._print_statistics("Input Grads", [i.g for i in f.inputs])
            self._print_statistics("Output Grads", [o.g for o in f.outputs])
        if self._hidden:
            self.functions.append(dict(name=name, inputs=list(f.inputs),
                                       outputs=list(f.outputs)))


def pprint(v, forward=False, backward=False, summary=False, hidden=False, printer=False):
    """Print the functions of the graph ending at ``v``, in execution order.

    Each function shows its parameter scope and name, depth, arguments, input and output
    shapes and which inputs need gradients.

    Args:
        v (nnabla.Variable): Root (last) variable of the graph.
        forward (bool): Run ``v.forward()`` first.
        backward (bool): Run ``v.backward()`` first.
        summary (bool): Also print statistics of data and gradients.
        hidden (bool): Keep each function's inputs and outputs in the printer.
        printer (bool): Return the :class:`PrettyPrinter`.

    Returns:
        PrettyPrinter or None: The printer when ``printer`` is True.

    Example:
        >>> import nnabla as nn, nnabla.functions as F
        >>> x = nn.Variable((2, 3))
        >>> pprint(F.relu(x))  # doctest: +NORMALIZE_WHITESPACE
        ReLU(ReLU)
            Depth = 0
            Args: ['inplace=False']
            Inputs: [(2, 3)]
            Outputs: [(2, 3)]
            Backward Inputs: [False]
    """
    if forward:
        v.forward()
    if backward:
        v.backward()
    pretty_printer = PrettyPrinter(summary, hidden)
    v.visit(pretty_printer)
    return pretty_printer if printer else None

