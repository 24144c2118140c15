"""Edits of a proto network (``nn.graph_def``) in place: renaming variables, removing
pass-through functions.

A proto network names its variables (``network.variables``, an ordered dict by name); a
variable knows the function that makes it (``parent``, a function name) and those that
read it (``required``, function names), and each function lists its ``inputs`` and
``outputs`` by name. These helpers keep all of those, and the network's ``inputs`` and
``outputs``, consistent.

Example:
    >>> import nnabla as nn, nnabla.functions as F
    >>> from nnabla.core.graph_optimizer import rename_variable
    >>> x = nn.Variable((2, 3))
    >>> y = F.relu(x)
    >>> g = nn.graph_def.create_graph_from_variable("net", y, names={"x": x, "y": y})
    >>> rename_variable(g.networks["net"], {"y": "relu_out"})
    >>> g.networks["net"].outputs
    ['relu_out']
"""
from __future__ import annotations

from ..logger import logger


def _variable(network, name, api):
    """The variable (or parameter) ``name`` of ``network``."""
    if name in network.variables:
        return network.variables[name]
    if name in network.parameters:
        return network.parameters[name]
    raise ValueError(f"{api}: variable {name!r} is not in network {network.name!r}")


def _replace_name(names, old, new):
    """``names`` (a list) with every ``old`` replaced by ``new``, in place."""
    for i, n in enumerate(names):
        if n == old:
            names[i] = new


def _rename_dict_key(mapping, old, new):
    """Renames key ``old`` of an ordered dict to ``new``, keeping its position."""
    items = [(new if k == old else k, v) for k, v in mapping.items()]
    mapping.clear()
    mapping.update(items)


def rename_variable(proto_network, renames):
    """Renames variables of ``proto_network`` in place.

    Every reference follows: the producing function's outputs, the consuming functions'
    inputs and the network's ``inputs`` and ``outputs``.

    Args:
        proto_network (nnabla.core.graph_def.ProtoNetwork): the network to edit.
        renames (dict): ``{old_name: new_name}``.

    Raises:
        TypeError: ``renames`` is not a dict of str to str.
        ValueError: an old name is not a variable of the network, or a new name is
            already used by another variable (nothing is renamed then).
    """
    api = "nnabla.core.graph_optimizer.rename_variable"
    if not isinstance(renames, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in renames.items()):
        raise TypeError(f"{api}: argument 'renames' is {renames!r}; expected a dict "
                        "{old_name: new_name} of strings")
    variables = proto_network.variables
    for old, new in renames.items():
        if old not in variables:
            raise ValueError(f"{api}: variable {old!r} is not in network "
                             f"{proto_network.name!r} (variables: {list(variables)})")
        if new != old and new in variables and new not in renames:
            raise ValueError(f"{api}: the new name {new!r} of {old!r} is already a variable "
                             f"of network {proto_network.name!r}")
    targets = list(renames.values())
    if len(set(targets)) != len(targets):
        raise ValueError(f"{api}: argument 'renames' maps two variables to one name: "
                         f"{renames!r}")
    # Two passes through temporary names, so swaps (a -> b, b -> a) work.
    staged = {}
    for i, (old, new) in enumerate(renames.items()):
        temp = f"\0rename{i}"
        _rename(proto_network, old, temp)
        staged[temp] = new
    for temp, new in staged.items():
        _rename(proto_network, temp, new)


def _rename(network, old, new):
    pv = network.variables[old]
    pv.name = new
    _rename_dict_key(network.variables, old, new)
    if pv.parent in network.functions:
        _replace_name(network.functions[pv.parent].outputs, old, new)
    for f_name in pv.required:
        if f_name in network.functions:
            _replace_name(network.functions[f_name].inputs, old, new)
    _replace_name(network.inputs, old, new)
    _replace_name(network.outputs, old, new)


def remove_function(pf, renamed):
    """Removes the one-input pass-through function ``pf`` (an ``Identity``) from its network.

    Its input and output become one variable: when the output feeds other functions, they
    read the input instead (the input's name stays); otherwise (the output ends the
    network) the function making the input writes the output directly (the output's name
    stays). ``renamed`` (a dict) records ``{removed name: kept name}``.

    Args:
        pf (nnabla.core.graph_def.ProtoFunction): the function, in its network.
        renamed (dict): updated in place.

    Raises:
        ValueError: ``pf`` does not have exactly one input and one output.
    """
    api = "nnabla.core.graph_optimizer.remove_function"
    network = pf.owner()
    if len(pf.inputs) != 1 or len(pf.outputs) != 1:
        raise ValueError(f"{api}: function {pf.name!r} ({pf.type}) has {len(pf.inputs)} "
                         f"inputs and {len(pf.outputs)} outputs; expected one of each")
    in_name, out_name = pf.inputs[0], pf.outputs[0]
    src = _variable(network, in_name, api)
    dst = _variable(network, out_name, api)
    other_readers = [f for f in src.required if f != pf.name]
    if dst.required:                 # keep the input; consumers of the output read it
        for f_name in dst.required:
            _replace_name(network.functions[f_name].inputs, out_name, in_name)
        src.required = other_readers + list(dst.required)
        _replace_name(network.outputs, out_name, in_name)
        del network.variables[out_name]
        renamed[out_name] = in_name
        logger.info(f"{api}: variable {out_name!r} removed, {in_name!r} kept")
    else:                            # keep the output; the input's maker writes it
        if src.parent in network.functions:
            _replace_name(network.functions[src.parent].outputs, in_name, out_name)
        for f_name in other_readers:
            _replace_name(network.functions[f_name].inputs, in_name, out_name)
        dst.parent = src.parent
        dst.need_grad = src.need_grad
        dst.required = other_readers
        _replace_name(network.inputs, in_name, out_name)
        if in_name in network.variables:
            del network.variables[in_name]
        renamed[in_name] = out_name
        logger.info(f"{api}: variable {in_name!r} removed, {out_name!r} kept")
    del network.functions[pf.name]
    logger.info(f"{api}: function {pf.name!r} removed")


class IdentityRemover:
    """A callable removing each ``Identity`` function it is given (see
    :func:`remove_function`), e.g. from ``network.execute_on_proto``-style walks.

    Args:
        renamed (dict, optional): receives ``{removed name: kept name}``.
        is_required (callable, optional): ``is_required(pf)``; an Identity it returns
            False for is kept.
    """

    def __init__(self, renamed=None, is_required=None):
        self.renamed = {} if renamed is None else renamed
        self.is_required = is_required

    def __call__(self, pf):
        if pf.type != "Identity":
            return
        if self.is_required is not None and not self.is_required(pf):
            return
        remove_function(pf, self.renamed)
