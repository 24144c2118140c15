"""Build computation graphs from NNP files (``nnabla.utils.nnp_graph``).

:class:`NnpLoader` reads a model file; :meth:`NnpLoader.get_network` builds one of its
networks at a chosen batch size as an :class:`NnpNetwork` (``inputs``, ``outputs``,
``variables``), optionally edited first by an :class:`NnpNetworkPass` (replace an input,
drop or bypass functions, change function arguments, stop at a variable, freeze
parameters), which is how ``nnabla.models`` adapts pretrained networks.

Example:
    >>> import io, numpy as np, nnabla as nn, nnabla.parametric_functions as PF
    >>> from nnabla.utils.save import save
    >>> from nnabla.utils.nnp_graph import NnpLoader
    >>> nn.clear_parameters()
    >>> x = nn.Variable((2, 3))
    >>> y = PF.affine(x, 4, name="fc")
    >>> buffer = io.BytesIO()
    >>> save(buffer, {"networks": [{"name": "net", "batch_size": 2, "outputs": {"y": y},
    ...                              "names": {"x": x}}]}, extension=".nnp")
    >>> _ = buffer.seek(0)
    >>> net = NnpLoader(buffer, extension=".nnp").get_network("net", batch_size=5)
    >>> net.inputs["x"].shape, net.outputs["y"].shape
    ((5, 3), (5, 4))
    >>> nn.clear_parameters()
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .. import parameter as _parameter
from ._nnp_network import NetworkGraph
from ._nnp_reader import read_model

__all__ = ["NnpLoader", "NnpNetwork", "NnpNetworkPass"]


class NnpNetwork:
    """A network built from an NNP file (made by :meth:`NnpLoader.get_network`).

    Attributes:
        variables (dict): name -> :class:`nnabla.Variable`, buffers and parameters.
        inputs (dict): name -> input variable (fill its ``d`` before forward).
        outputs (dict): name -> output variable.
        proto_network: the network description the graph was built from.
    """

    def __init__(self, graph, batch_size, scope):
        graph.build(batch_size=batch_size, rng=np.random.RandomState(1223),
                    allow_missing=True, scope=scope)
        self.proto_network = graph
        for name, var in list(graph.variables.items()) + list(graph.parameters.items()):
            if var.variable_instance is not None:
                var.variable_instance.name = name
        self._inputs = {k: graph.variables[k].variable_instance for k in graph.inputs}
        self._outputs = {k: graph.variables[k].variable_instance for k in graph.outputs}
        # variables a pass cut off (no writer, no reader left) are not part of the network
        self._variables = {k: v.variable_instance for k, v in
                           list(graph.variables.items()) + list(graph.parameters.items())
                           if v.parent is not None or v.required}
        for name, var in graph.parameters.items():
            if var.variable_instance is not None:
                _parameter.set_parameter(name, var.variable_instance)

    @property
    def inputs(self):
        return self._inputs

    @property
    def outputs(self):
        return self._outputs

    @property
    def variables(self):
        return self._variables


class NnpLoader:
    """Reads an NNP model (``.nnp``, ``.nntxt``/``.prototxt``, ``.protobuf``).

    Parameters are read into ``scope`` (a private ``OrderedDict`` when None) and published
    to the current parameter scope by :meth:`get_network`.

    Args:
        filepath (str, os.PathLike or file object): the model file.
        scope (OrderedDict, optional): where to keep the loaded parameters.
        extension (str): format of a file object (``'.nnp'``, ``'.nntxt'`` ...).

    Raises:
        FileNotFoundError, ValueError: for a missing or invalid file (naming it).
    """

    def __init__(self, filepath, scope=None, extension=".nntxt"):
        self._params = scope if scope is not None else OrderedDict()
        self.proto, _ = read_model(filepath, extension=extension, scope=self._params)
        self.network_dict = OrderedDict((n.name, n) for n in self.proto.network)
        self._where = f"{filepath!r}: " if isinstance(filepath, str) else ""

    def get_network_names(self):
        """Names of the networks in the file, in file order."""
        return list(self.network_dict)

    def get_network(self, name, batch_size=None, callback=None):
        """Build network ``name``.

        Args:
            name (str): one of :meth:`get_network_names`.
            batch_size (int, optional): the batch size (default: the file's).
            callback (NnpNetworkPass, optional): edits applied before building.

        Returns:
            NnpNetwork
        """
        if name not in self.network_dict:
            raise ValueError(f"NnpLoader.get_network: no network {name!r}; the file has "
                             f"{self.get_network_names()}")
        message = type(self.network_dict[name])()
        message.CopyFrom(self.network_dict[name])
        graph = NetworkGraph(message, self._where)
        if callback is not None:
            callback._apply(graph, self._params)
        return NnpNetwork(graph, batch_size, self._params)


class _VariableDelegate:
    """A variable as network-pass callbacks see it."""

    def __init__(self, graph, var):
        self._graph, self._var = graph, var

    proto = property(lambda self: self._var.proto)
    name = property(lambda self: self._var.name)

    @property
    def parent(self):
        name = self._var.parent
        return None if name is None else _FunctionDelegate(self._graph,
                                                           self._graph.functions[name])

    @parent.setter
    def parent(self, function):
        self._var.parent = None if function is None else function.name

    @property
    def referrers(self):
        return {n: _FunctionDelegate(self._graph, self._graph.functions[n])
                for n in self._var.required}

    @property
    def num_referrers(self):
        return len(self._var.required)

    def rewire_on(self, var):
        """Take ``var``'s place: its producer now writes this variable."""
        producer = var.parent
        if self.parent is not None:
            self.parent.disable()
        if producer is not None:
            outputs = producer.proto.output
            outputs[:] = [self.name if o == var.name else o for o in outputs]
        self._var.variable_instance = var.variable
        self._graph.refresh()

    stop = property(lambda self: self._var.stop,
                    lambda self, value: setattr(self._var, "stop", value))
    need_grad = property(lambda self: self._var.need_grad,
                         lambda self, value: setattr(self._var, "need_grad", value))
    variable = property(lambda self: self._var.variable_instance,
                        lambda self, value: setattr(self._var, "variable_instance", value))


class _FunctionDelegate:
    """A function as network-pass callbacks see it."""

    def __init__(self, graph, function):
        self._graph, self._function = graph, function

    proto = property(lambda self: self._function.proto)
    name = property(lambda self: self._function.name)
    disabled = property(lambda self: self._function.disabled)

    @property
    def inputs(self):
        return [_VariableDelegate(self._graph, self._graph.get(n)) for n in self.proto.input]

    @property
    def outputs(self):
        return [_VariableDelegate(self._graph, self._graph.get(n)) for n in self.proto.output]

    def disable(self):
        """Remove this function from the network."""
        self._function.disabled = True
        self._graph.refresh()


class NnpNetworkPass:
    """Edits applied to a network while :meth:`NnpLoader.get_network` builds it.

    Args:
        verbose (int): 1 prints each edit, 2 more.

    Example:
        >>> from nnabla.utils.nnp_graph import NnpNetworkPass
        >>> callback = NnpNetworkPass()
        >>> callback.remove_and_rewire("Dropout")
        >>> callback.set_batch_normalization_batch_stat_all(False)
        >>> callback.fix_parameters()
    """

    def _no_verbose(self, *args, **kwargs):
        pass

    def _verbose(self, *args, **kwargs):
        print(*args, **kwargs)

    def __init__(self, verbose=0):
        self._variable_callbacks = {}
        self._function_callbacks_by_name = {}
        self._function_callbacks_by_type = {}
        self._passes_by_name = {}
        self._passes_by_type = {}
        self._fix_parameters = False
        self._use_up_to_variables = set()
        self.verbose = self._verbose if verbose else self._no_verbose
        self.verbose2 = self._verbose if verbose > 1 else self._no_verbose

    # -- registration ---------------------------------------------------------------------
    def on_function_pass_by_name(self, name):
        """Decorator: ``callback(f, variables, param_scope)`` runs on function ``name``
        while the network is walked in forward order."""
        def register(callback):
            self._passes_by_name[name] = callback
            return callback
        return register

    def on_function_pass_by_type(self, name):
        """Like :meth:`on_function_pass_by_name`, for every function of type ``name``."""
        def register(callback):
            self._passes_by_type[name] = callback
            return callback
        return register

    def on_generate_variable(self, name):
        """Decorator: ``callback(v)`` returns the (edited) variable ``name``."""
        def register(callback):
            self._variable_callbacks[name] = callback
            return callback
        return register

    def on_generate_function_by_name(self, name):
        """Decorator: ``callback(f)`` returns the (edited) function ``name``."""
        def register(callback):
            self._function_callbacks_by_name[name] = callback
            return callback
        return register

    def on_generate_function_by_type(self, name):
        """Decorator: ``callback(f)`` returns the (edited) function of type ``name``."""
        def register(callback):
            self._function_callbacks_by_type[name] = callback
            return callback
        return register

    # -- ready-made edits -----------------------------------------------------------------
    def drop_function(self, *names):
        """Remove the functions ``names``."""
        def drop(f, variables, param_scope):
            self.verbose(f"Pass: Deleting {f.name}.")
            f.disable()
        for name in names:
            self.on_function_pass_by_name(name)(drop)

    def fix_parameters(self):
        """Build every parameter with ``need_grad=False``."""
        self._fix_parameters = True

    def use_up_to(self, *names):
        """Stop the network at the variables ``names`` (their readers are left out)."""
        self._use_up_to_variables.update(names)

    def remove_and_rewire(self, name, i=0, o=0):
        """Remove function ``name``; its output ``o`` is replaced by its input ``i``."""
        @self.on_function_pass_by_name(name)
        def bypass(f, variables, param_scope):
            fi, fo = f.inputs[i], f.outputs[o]
            self.verbose(f"Removing {f.name} and rewire input={fi.name} and output={fo.name}.")
            fo.rewire_on(fi)
            graph = getattr(f, "_graph", None)
            if graph is not None:
                _rename(graph, fo.name, fi.name)
            else:               # another loader's delegate: rename through the message
                fo.proto.name = fi.name

    def set_variable(self, name, input_var):
        """Use ``input_var`` (an ``nnabla.Variable``) as variable ``name``."""
        @self.on_generate_variable(name)
        def replace(v):
            self.verbose(f"Replace {name} by {input_var}.")
            v.proto.shape.dim[:] = input_var.shape
            v.variable = input_var
            input_var.name = v.name
            return v

    def force_average_pooling_global(self, name, by_type=False):
        """Make the average pooling ``name`` (or of type ``name``) pool its whole input."""
        register = (self.on_generate_function_by_type if by_type
                    else self.on_generate_function_by_name)

        @register(name)
        def global_pooling(f):
            pool_shape = f.inputs[0].proto.shape.dim[2:]
            self.verbose(f"Change strides of {f.name} to {list(pool_shape)}.")
            param = f.proto.average_pooling_param
            param.kernel.dim[:] = pool_shape
            param.stride.dim[:] = pool_shape
            return f

    def check_average_pooling_global(self, name, by_type=False):
        """Raise unless the average pooling ``name`` pools its whole input."""
        register = (self.on_generate_function_by_type if by_type
                    else self.on_generate_function_by_name)

        @register(name)
        def check(f):
            pool_shape = list(f.inputs[0].proto.shape.dim[2:])
            param = f.proto.average_pooling_param
            if list(param.kernel.dim) != pool_shape or list(param.stride.dim) != pool_shape:
                raise ValueError(
                    f"Stride configuration of average pooling is not for global pooling. "
                    f"Given image shape is {pool_shape}, whereas pooling window size is "
                    f"{list(param.kernel.dim)} and its stride is {list(param.stride.dim)}. "
                    f"Consider using force_global_pooling=True")
            return f

    def set_batch_normalization_batch_stat_all(self, batch_stat):
        """Set ``batch_stat`` of every BatchNormalization."""
        @self.on_generate_function_by_type("BatchNormalization")
        def set_batch_stat(f):
            self.verbose(f"Setting batch_stat={batch_stat} at {f.name}.")
            f.proto.batch_normalization_param.batch_stat = batch_stat
            return f

    # -- nnabla's per-item hooks (what a graph builder calls for each variable/function) --
    def _apply_function_pass_by_name(self, f, variables, param_scope):
        callback = self._passes_by_name.get(f.name)
        return f if callback is None else callback(f, variables, param_scope)

    def _apply_function_pass_by_type(self, f, variables, param_scope):
        callback = self._passes_by_type.get(f.proto.type)
        return f if callback is None else callback(f, variables, param_scope)

    def _apply_generate_variable(self, v):
        if v.name in self._variable_callbacks:
            v = self._variable_callbacks[v.name](v)
        if self._fix_parameters:
            v.need_grad = False
        return v

    def _apply_generate_function_by_name(self, f):
        callback = self._function_callbacks_by_name.get(f.name)
        return f if callback is None else callback(f)

    def _apply_generate_function_by_type(self, f):
        callback = self._function_callbacks_by_type.get(f.proto.type)
        return f if callback is None else callback(f)

    def _apply_use_up_to(self, variables):
        for v in variables:
            if v.name in self._use_up_to_variables:
                self.verbose(f"Stopping at {v.name}.")
                v.stop = True

    # -- application (called by NnpLoader.get_network) -----------------------------------
    def _apply(self, graph, scope=None):
        """Apply the registered edits to ``graph``; function passes get ``scope`` (the
        loader's parameters; the current scope when None) as their ``param_scope``."""
        scope = scope if scope is not None else _parameter.current_scope
        graph.check_shapes = False
        for var in graph.all_variables():
            if var.name in self._variable_callbacks:
                self._variable_callbacks[var.name](_VariableDelegate(graph, var))
            if self._fix_parameters:
                var.need_grad = False
        for function in list(graph.functions.values()):
            delegate = _FunctionDelegate(graph, function)
            if function.type in self._function_callbacks_by_type:
                self._function_callbacks_by_type[function.type](delegate)
            if function.name in self._function_callbacks_by_name:
                self._function_callbacks_by_name[function.name](delegate)
        graph.refresh()
        variables = [_VariableDelegate(graph, v) for v in graph.all_variables()]
        for function in graph.forward_sequence():
            if function.disabled:
                continue
            for passes, key in ((self._passes_by_type, function.type),
                                (self._passes_by_name, function.name)):
                if key in passes and not function.disabled:
                    passes[key](_FunctionDelegate(graph, function), variables, scope)
        _apply_renames(graph)
        for name in self._use_up_to_variables:
            var = graph.variables.get(name) or graph.parameters.get(name)
            if var is not None and var.required:
                self.verbose(f"Stopping at {name}.")
                var.stop = True


def _rename(graph, old, new):
    """Record that variable ``old`` is to be called ``new`` (applied after the passes)."""
    pending = getattr(graph, "_renames", {})
    pending[old] = new
    graph._renames = pending


def _apply_renames(graph):
    renames = getattr(graph, "_renames", {})
    if not renames:
        return
    for old, new in renames.items():
        var = graph.variables.pop(old)
        kept = graph.variables.get(new)
        for f in graph.functions.values():
            f.proto.output[:] = [new if n == old else n for n in f.proto.output]
            f.proto.input[:] = [new if n == old else n for n in f.proto.input]
        if kept is not None:
            kept.variable_instance = kept.variable_instance or var.variable_instance
        else:
            var.proto.name = new
            graph.variables[new] = var
    graph._renames = {}
    graph.refresh()
