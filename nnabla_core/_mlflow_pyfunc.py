"""The ``python_function`` model of the nnabla MLflow flavour: runs an ``.nnp`` network.

Used by :mod:`nnabla.mlflow_save_load_model` (its ``_load_pyfunc``); needs no MLflow itself.
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

import nnabla as nn


class _NnablaModelWrapper:
    """The ``python_function`` model: runs the model's first ``.nnp`` network.

    Args:
        nnabla_model (str): path of the parameter file.
        nnp_files (list of str): paths of the ``.nnp`` files (may be empty).
    """

    def __init__(self, nnabla_model, nnp_files=()):
        self.nnabla_model = nnabla_model
        self.nnp_files = list(nnp_files)
        self._runtime = None
        self._networks = {}  # batch size -> (input variables, output variables)

    def predict(self, data, params=None):
        """Runs the network on ``data`` (axis 0 is the batch).

        Args:
            data: a dict input name -> array, or (for a network with one input) an array,
                a list or a pandas DataFrame (its rows, reshaped to the input's shape);
                ``None`` predicts nothing and returns ``None`` (as nnabla 1.39 does).
            params: not supported (``None`` or empty).

        Returns:
            numpy.ndarray for a network with one output, else a dict name -> array.

        Raises:
            ValueError: for missing or unknown inputs, inconsistent batch sizes or shapes,
                params, or a model saved without ``.nnp`` files.
        """
        where = "nnabla.mlflow_save_load_model predict"
        if params:
            raise ValueError(f"{where}: argument 'params' is not supported; given {params!r}")
        if data is None:
            return None
        if not self.nnp_files:
            raise ValueError(f"{where}: the model was saved without a network; "
                             f"log it with nnp=['<network>.nnp'] to predict")
        input_names, output_names = self._runtime_network()
        arrays, from_frame = _input_arrays(where, data, input_names)
        batch_sizes = {name: a.shape[0] for name, a in arrays.items()}
        if len(set(batch_sizes.values())) != 1:
            raise ValueError(f"{where}: the inputs have different batch sizes (axis 0): "
                             f"{batch_sizes}")
        inputs, outputs = self._network(next(iter(batch_sizes.values())), input_names,
                                        output_names)
        for name, array in arrays.items():
            inputs[name].d = _fit_shape(where, name, array, inputs[name].shape, from_frame)
        nn.forward_all([outputs[name] for name in output_names], clear_no_need_grad=True)
        results = {name: np.array(outputs[name].d) for name in output_names}
        return results[output_names[0]] if len(results) == 1 else results

    def _runtime_network(self):
        """(input names, output names) of the network predict runs."""
        if self._runtime is None:
            from .utils.nnp_graph import NnpLoader
            loader = NnpLoader(self.nnp_files[0])
            if loader.proto.executor:
                executor = loader.proto.executor[0]
                name = executor.network_name
                inputs = [v.variable_name for v in executor.data_variable]
                outputs = [v.variable_name for v in executor.output_variable]
            else:
                name = loader.get_network_names()[0]
                inputs = outputs = None  # the network's own
            self._runtime = (loader, name, inputs, outputs)
        loader, name, inputs, outputs = self._runtime
        if inputs is None:
            inputs, outputs = self._network(None, None, None)
            self._runtime = (loader, name, list(inputs), list(outputs))
        return self._runtime[2], self._runtime[3]

    def _network(self, batch_size, input_names, output_names):
        """(inputs, outputs) variables by name of the network built at ``batch_size``."""
        if batch_size not in self._networks:
            loader, name = self._runtime[:2]
            # a scope of its own: predicting does not touch the caller's parameters
            with nn.parameter_scope("", OrderedDict()):
                network = loader.get_network(name, batch_size=batch_size)
            names_in = input_names or list(network.inputs)
            names_out = output_names or list(network.outputs)
            self._networks[batch_size] = ({n: network.variables[n] for n in names_in},
                                          {n: network.variables[n] for n in names_out})
        return self._networks[batch_size]


def _input_arrays(where, data, input_names):
    """(name -> array, whether data was a DataFrame) from predict's ``data``."""
    frame = type(data).__name__ == "DataFrame" and hasattr(data, "to_numpy")
    if frame and set(data.columns) == set(input_names):
        data = {name: np.stack(list(data[name].to_numpy())) for name in input_names}
    if isinstance(data, dict):
        missing = [n for n in input_names if n not in data]
        unknown = [n for n in data if n not in input_names]
        if missing or unknown:
            raise ValueError(f"{where}: argument 'data' must have the inputs {input_names}; "
                             f"missing {missing}, unknown {unknown}")
        arrays = {n: np.asarray(data[n]) for n in input_names}
    elif len(input_names) != 1:
        raise ValueError(f"{where}: the network has inputs {input_names}: give 'data' as a "
                         f"dict name -> array; given {type(data).__name__}")
    else:
        arrays = {input_names[0]: np.asarray(data.to_numpy() if frame else data)}
    for name, array in arrays.items():
        if array.ndim == 0 or array.dtype.kind not in "biuf":
            raise ValueError(f"{where}: input {name!r} must be a numeric array with a batch "
                             f"axis; given dtype {array.dtype}, shape {array.shape}")
    return arrays, frame


def _fit_shape(where, name, array, shape, from_frame):
    if array.shape != tuple(shape):
        if from_frame and array.size == int(np.prod(shape)):
            return array.reshape(shape)  # a DataFrame row holds one flattened sample
        raise ValueError(f"{where}: input {name!r} has shape {array.shape}; expected "
                         f"{tuple(shape)}: the batch (axis 0), then the network's "
                         f"{tuple(shape[1:])}")
    return array
