"""The MLflow flavour of nnabla models (``nnabla.mlflow_save_load_model``).

An nnabla model in MLflow is a parameter file (``.h5`` written by ``nn.save_parameters``),
optionally with ``.nnp`` network files (written by :func:`nnabla.utils.save.save`),
training checkpoints, a configuration file and extra files. :func:`save_model` writes them as
an MLflow model directory, :func:`log_model` logs that directory as artifacts of the active
run (``runs:/<run id>/<path>``), and :func:`load_model` gives back local paths to the files.
The model also has MLflow's generic ``python_function`` flavour:
``mlflow.pyfunc.load_model(uri).predict(data)`` runs the first ``.nnp`` file's runtime network
(its first executor's network, else its first network) on ``data`` with
:mod:`nnabla.utils.nnp_graph`.

The MLmodel file's ``nnabla`` section has the keys nnabla 1.39 writes: ``model_data``
(folder of the parameter file), ``nnabla_version``, ``code`` and, for what was given, the
lists ``nnp_files``, ``checkpoint_files`` and ``extra_files`` of ``{"path": ...}`` entries
relative to the model directory. A configuration file is copied to the model directory's
top level (and named under ``config_file``).

MLflow is an optional dependency: ``pip install 'nnabla[mlflow]'``.

Example:
    >>> import mlflow, nnabla.mlflow_save_load_model as nnabla_mlflow   # doctest: +SKIP
    >>> with mlflow.start_run():                                         # doctest: +SKIP
    ...     info = nnabla_mlflow.log_model("params.h5", "model_dir", nnp=["model_dir/net.nnp"])
    >>> nnabla_mlflow.load_model(info.model_uri)         # local copy of params.h5  # doctest: +SKIP
    >>> mlflow.pyfunc.load_model(info.model_uri).predict({"x": x})      # doctest: +SKIP
"""
from __future__ import annotations

import logging
import os
import posixpath
import shutil
import tempfile
from collections import OrderedDict

import numpy as np

try:
    import mlflow
    import yaml
    from mlflow import pyfunc
    from mlflow.models import Model, infer_signature
    from mlflow.models.model import MLMODEL_FILE_NAME
    from mlflow.models.utils import _save_example
    from mlflow.tracking.artifact_utils import _download_artifact_from_uri
    from mlflow.utils.environment import (
        _CONDA_ENV_FILE_NAME,
        _CONSTRAINTS_FILE_NAME,
        _PYTHON_ENV_FILE_NAME,
        _REQUIREMENTS_FILE_NAME,
        _mlflow_conda_env,
        _process_conda_env,
        _process_pip_requirements,
        _PythonEnv,
        _validate_env_arguments,
    )
    from mlflow.utils.model_utils import (
        _add_code_from_conf_to_system_path,
        _get_flavor_configuration,
        _validate_and_copy_code_paths,
        _validate_and_prepare_target_save_path,
    )
    from mlflow.utils.requirements_utils import _get_pinned_requirement
except ImportError as error:  # mlflow is an optional extra
    # a missing package stays a ModuleNotFoundError naming it (error.name), as Python's own
    raise type(error)(
        "nnabla.mlflow_save_load_model needs MLflow: pip install 'nnabla[mlflow]' "
        f"(or pip install mlflow); import failed: {error}", name=error.name) from error

import nnabla as nn

FLAVOR_NAME = "nnabla"
_EXTRA_FILES_KEY = "extra_files"
_NNP_FILES_KEY = "nnp_files"
_CHECKPOINT_FILES_KEY = "checkpoint_files"
_CONFIG_FILE_KEY = "config_file"
_MODEL_DATA_SUBPATH = "model"
_LOADER_MODULE = "nnabla.mlflow_save_load_model"
# what load_model(..., model=...) can return
_LOAD_CHOICES = (None, "model", "MLmodel", "nnp", "checkpoint")

_logger = logging.getLogger(__name__)


def get_default_pip_requirements():
    """The pip requirements every model of this flavour has at least.

    Returns:
        list of str: nnabla pinned to the installed version.
    """
    return [_get_pinned_requirement("nnabla")]


def get_default_conda_env():
    """The conda environment of a model saved without ``conda_env`` or pip requirements.

    Returns:
        dict: a conda environment (python, pip, mlflow and :func:`get_default_pip_requirements`).
    """
    return _mlflow_conda_env(additional_pip_deps=get_default_pip_requirements())


def log_model(nnabla_model_name, path, nnp=None, checkpoint=None, config_file=None,
              extra_files=None, conda_env=None, code_paths=None, signature=None,
              input_example=None, pip_requirements=None, extra_pip_requirements=None,
              metadata=None):
    """Logs an nnabla model as artifacts of the active MLflow run (one is started if none is).

    The parameter file is ``os.path.join(path, nnabla_model_name)``, and the model is logged
    under the run's artifact path ``path`` (as nnabla 1.39 does, ``path`` is both).

    Args:
        nnabla_model_name (str): file name of the parameter file (e.g. ``'params.h5'``).
        path (str): relative folder of that file, and the model's artifact path in the run.
        nnp (list of str, optional): paths or artifact URIs of ``.nnp`` network files.
        checkpoint (list of str, optional): paths or URIs of checkpoint files.
        config_file (str, optional): path of a configuration file.
        extra_files (list of str, optional): paths or URIs of other files to keep.
        conda_env (dict or str, optional): conda environment (a dict or a YAML file).
        code_paths (list of str, optional): Python files or folders put on ``sys.path``
            when the model is loaded.
        signature (mlflow.models.ModelSignature, optional): the model's signature
            (``False``: none; ``None``: inferred from ``input_example`` when given).
        input_example (optional): an example input of the pyfunc model.
        pip_requirements (list or str, optional): pip requirements replacing the defaults.
        extra_pip_requirements (list or str, optional): pip requirements added to them.
        metadata (dict, optional): custom metadata stored in the MLmodel file.

    Returns:
        mlflow.models.model.ModelInfo: ``model_uri`` is ``runs:/<run id>/<path>``.

    Raises:
        TypeError, ValueError, FileNotFoundError: for a bad argument (named), before anything
            is logged.
    """
    where = "nnabla.mlflow_save_load_model.log_model"
    artifact_path = _check_artifact_path(where, path)
    source = _check_file(where, "nnabla_model_name", os.path.join(path, nnabla_model_name))
    run = mlflow.active_run() or mlflow.start_run()
    mlflow_model = Model(artifact_path=artifact_path, run_id=run.info.run_id)
    with tempfile.TemporaryDirectory(prefix="nnabla-mlflow-") as tmp:
        local = os.path.join(tmp, "model")
        _save(where, source, local, mlflow_model, nnp=nnp, checkpoint=checkpoint,
              config_file=config_file, extra_files=extra_files, conda_env=conda_env,
              code_paths=code_paths, signature=signature, input_example=input_example,
              pip_requirements=pip_requirements,
              extra_pip_requirements=extra_pip_requirements, metadata=metadata)
        mlflow.log_artifacts(local, artifact_path)
    return mlflow_model.get_model_info()


def save_model(nnabla_model_name, path, nnp=None, checkpoint=None, config_file=None,
               extra_files=None, conda_env=None, code_paths=None, mlflow_model=None,
               signature=None, input_example=None, pip_requirements=None,
               extra_pip_requirements=None, metadata=None):
    """Writes an nnabla model as an MLflow model directory ``path``.

    The parameter file is ``os.path.join(mlflow_model.artifact_path, nnabla_model_name)``
    when ``mlflow_model`` has an artifact path (how :func:`log_model` calls it in nnabla
    1.39), else ``nnabla_model_name`` itself. The directory is written under a temporary name
    and renamed into place.

    Args:
        nnabla_model_name (str): the parameter file (see above).
        path (str): the model directory to write; must not exist or be empty.
        mlflow_model (mlflow.models.Model, optional): the MLflow model the ``nnabla`` and
            ``python_function`` flavours are added to.
        nnp, checkpoint, config_file, extra_files, conda_env, code_paths, signature,
        input_example, pip_requirements, extra_pip_requirements, metadata: as in
            :func:`log_model`.

    Raises:
        TypeError, ValueError, FileNotFoundError: for a bad argument (named), before anything
            is written.
        mlflow.exceptions.MlflowException: if ``path`` exists and is not empty.
    """
    where = "nnabla.mlflow_save_load_model.save_model"
    if mlflow_model is None:
        mlflow_model = Model()
    folder = getattr(mlflow_model, "artifact_path", None)
    source = os.path.join(folder, nnabla_model_name) if folder else nnabla_model_name
    source = _check_file(where, "nnabla_model_name", source)
    _save(where, source, path, mlflow_model, nnp=nnp, checkpoint=checkpoint,
          config_file=config_file, extra_files=extra_files, conda_env=conda_env,
          code_paths=code_paths, signature=signature, input_example=input_example,
          pip_requirements=pip_requirements, extra_pip_requirements=extra_pip_requirements,
          metadata=metadata)


def _save(where, source, path, mlflow_model, nnp, checkpoint, config_file, extra_files,
          conda_env, code_paths, signature, input_example, pip_requirements,
          extra_pip_requirements, metadata):
    """save_model's work, once the parameter file ``source`` is known."""
    _validate_env_arguments(conda_env, pip_requirements, extra_pip_requirements)
    file_lists = {key: _check_file_list(where, argument, files) for key, argument, files in (
        (_NNP_FILES_KEY, "nnp", nnp), (_CHECKPOINT_FILES_KEY, "checkpoint", checkpoint),
        (_EXTRA_FILES_KEY, "extra_files", extra_files))}
    if config_file is not None:
        config_file = _check_file(where, "config_file", config_file)
        _check_config_name(where, os.path.basename(config_file))
    path = os.path.abspath(path)
    _validate_and_prepare_target_save_path(path)
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(path)}.tmp-", dir=os.path.dirname(path))
    try:
        _write_model_dir(tmp, source, mlflow_model, file_lists, config_file, conda_env,
                         code_paths, signature, input_example, pip_requirements,
                         extra_pip_requirements, metadata)
        if os.path.isdir(path):
            os.rmdir(path)  # empty (checked above)
        os.rename(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _write_model_dir(path, source, mlflow_model, file_lists, config_file, conda_env,
                     code_paths, signature, input_example, pip_requirements,
                     extra_pip_requirements, metadata):
    """Fills the (new, empty) model directory ``path``."""
    code_subpath = _validate_and_copy_code_paths(code_paths, path)
    os.makedirs(os.path.join(path, _MODEL_DATA_SUBPATH))
    shutil.copy(source, os.path.join(path, _MODEL_DATA_SUBPATH))
    artifacts = {}
    if config_file is not None:
        shutil.copy(config_file, path)
        artifacts[_CONFIG_FILE_KEY] = os.path.basename(config_file)
    for key, files in file_lists.items():
        if files:
            os.makedirs(os.path.join(path, key))
            for uri in files:
                _download_artifact_from_uri(artifact_uri=uri,
                                            output_path=os.path.join(path, key))
            artifacts[key] = [{"path": posixpath.join(key, _basename(uri))} for uri in files]
    mlflow_model.add_flavor(FLAVOR_NAME, model_data=_MODEL_DATA_SUBPATH,
                            nnabla_version=str(nn.__version__), code=code_subpath,
                            **artifacts)
    pyfunc.add_to_model(mlflow_model, loader_module=_LOADER_MODULE, data=_MODEL_DATA_SUBPATH,
                        code=code_subpath, conda_env=_CONDA_ENV_FILE_NAME,
                        python_env=_PYTHON_ENV_FILE_NAME)
    if signature is None and input_example is not None:
        signature = _infer_signature(path, artifacts.get(_NNP_FILES_KEY), input_example)
    if signature:  # False: no signature
        mlflow_model.signature = signature
    if input_example is not None:
        _save_example(mlflow_model, input_example, path)
    if metadata is not None:
        mlflow_model.metadata = metadata
    mlflow_model.save(os.path.join(path, MLMODEL_FILE_NAME))
    _write_environment(path, conda_env, pip_requirements, extra_pip_requirements)


def _write_environment(path, conda_env, pip_requirements, extra_pip_requirements):
    # the pyfunc loader imports nnabla, numpy and mlflow only: no import-capturing subprocess
    if conda_env is None:
        defaults = get_default_pip_requirements() if pip_requirements is None else None
        conda_env, pip_requirements, pip_constraints = _process_pip_requirements(
            defaults, pip_requirements, extra_pip_requirements)
    else:
        conda_env, pip_requirements, pip_constraints = _process_conda_env(conda_env)
    with open(os.path.join(path, _CONDA_ENV_FILE_NAME), "w") as f:
        yaml.safe_dump(conda_env, stream=f, default_flow_style=False)
    if pip_constraints:
        with open(os.path.join(path, _CONSTRAINTS_FILE_NAME), "w") as f:
            f.write("\n".join(pip_constraints))
    with open(os.path.join(path, _REQUIREMENTS_FILE_NAME), "w") as f:
        f.write("\n".join(pip_requirements))
    _PythonEnv.current().to_yaml(os.path.join(path, _PYTHON_ENV_FILE_NAME))


def _infer_signature(path, nnp_entries, input_example):
    """Signature from an input example, with the outputs when the model has a network."""
    if not nnp_entries:
        return infer_signature(input_example)
    wrapper = _NnablaModelWrapper(
        _parameter_file("", os.path.join(path, _MODEL_DATA_SUBPATH)),
        [os.path.join(path, *entry["path"].split("/")) for entry in nnp_entries])
    return infer_signature(input_example, wrapper.predict(input_example))


def _basename(uri):
    return posixpath.basename(uri.rstrip("/").replace("\\", "/"))


def _check_artifact_path(where, path):
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{where}: argument 'path' must be a str (a relative folder); "
                        f"given {type(path).__name__}")
    path = os.fspath(path)
    parts = path.replace("\\", "/").split("/")
    if os.path.isabs(path) or ".." in parts:
        raise ValueError(f"{where}: argument 'path' is the model's artifact path in the run, "
                         f"so it must be relative and stay inside it; given {path!r}")
    return posixpath.normpath(path.replace("\\", "/"))


def _check_file(where, argument, path):
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{where}: argument {argument!r} must be a file path (str); "
                        f"given {type(path).__name__}")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{where}: argument {argument!r}: no file {os.fspath(path)!r}")
    return os.fspath(path)


def _check_file_list(where, argument, files):
    if files is None:
        return []
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise TypeError(f"{where}: argument {argument!r} must be a list of paths or URIs "
                        f"(str); given {files!r}")
    names = [_basename(f) for f in files]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"{where}: argument {argument!r} has several files named "
                         f"{duplicates}; they would overwrite each other in the model")
    return list(files)


def _check_config_name(where, name):
    reserved = {MLMODEL_FILE_NAME, _CONDA_ENV_FILE_NAME, _PYTHON_ENV_FILE_NAME,
                _REQUIREMENTS_FILE_NAME, _CONSTRAINTS_FILE_NAME, _MODEL_DATA_SUBPATH, "code",
                _NNP_FILES_KEY, _CHECKPOINT_FILES_KEY, _EXTRA_FILES_KEY,
                "input_example.json", "serving_input_example.json"}
    if name in reserved:
        raise ValueError(f"{where}: argument 'config_file' is named {name!r}, a name the "
                         f"model directory uses itself; rename the file")


def load_model(model_uri, dst_path=None, **kwargs):
    """Downloads an MLflow model of the ``nnabla`` flavour and gives local paths to its files.

    Args:
        model_uri (str): the model's URI (a local path, ``runs:/<run id>/<path>``,
            ``models:/<name>/<version>``, ...).
        dst_path (str, optional): an existing local folder to download to (default: a new
            temporary folder).
        model (str, optional, keyword only): what to return: ``'model'`` (default) the
            parameter file's path, ``'MLmodel'`` the local model directory, ``'nnp'`` or
            ``'checkpoint'`` the list of those files' paths (in the order they were given).

    Returns:
        str or list of str: local path(s).

    Raises:
        TypeError: for another keyword argument.
        ValueError: for another ``model`` value.
        FileNotFoundError: if the model has no files of the asked kind.
    """
    where = "nnabla.mlflow_save_load_model.load_model"
    unknown = sorted(set(kwargs) - {"model"})
    if unknown:
        raise TypeError(f"{where}: unexpected keyword argument(s) {unknown}; "
                        f"only 'model' is accepted")
    kind = kwargs.get("model")
    if kind not in _LOAD_CHOICES:
        raise ValueError(f"{where}: argument 'model' must be one of {list(_LOAD_CHOICES)}; "
                         f"given {kind!r}")
    local_path = _download_artifact_from_uri(artifact_uri=model_uri, output_path=dst_path)
    conf = _get_flavor_configuration(model_path=local_path, flavor_name=FLAVOR_NAME)
    _add_code_from_conf_to_system_path(local_path, conf)
    if kind == "MLmodel":
        return local_path
    if kind in ("nnp", "checkpoint"):
        key = _NNP_FILES_KEY if kind == "nnp" else _CHECKPOINT_FILES_KEY
        if not conf.get(key):
            raise FileNotFoundError(f"{where}: the model at {model_uri!r} was saved without "
                                    f"{kind} files (log_model(..., {kind}=[...]))")
        return [os.path.join(local_path, *entry["path"].split("/")) for entry in conf[key]]
    return _parameter_file(where, os.path.join(local_path, conf["model_data"]))


def _parameter_file(where, folder):
    names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    if len(names) != 1:
        raise FileNotFoundError(f"{where}: expected one parameter file in {folder!r}; "
                                f"found {names}")
    return os.path.join(folder, names[0])


def _load_pyfunc(path):
    """Loader of the ``python_function`` flavour, called by ``mlflow.pyfunc.load_model``.

    Args:
        path (str): the local model directory's ``model_data`` folder.

    Returns:
        _NnablaModelWrapper
    """
    model_dir = os.path.dirname(os.path.abspath(path))
    conf = _get_flavor_configuration(model_path=model_dir, flavor_name=FLAVOR_NAME)
    nnabla_model = _parameter_file("nnabla.mlflow_save_load_model",
                                   os.path.join(model_dir, conf["model_data"]))
    nnp_files = [os.path.join(model_dir, *entry["path"].split("/"))
                 for entry in conf.get(_NNP_FILES_KEY) or []]
    return _NnablaModelWrapper(nnabla_model, nnp_files)


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
                         f"{tuple(shape)} (batch, {tuple(shape[1:])})")
    return array


def _unique_name(name, taken):
    if name not in taken:
        return name
    index = 1
    while f"{name}-{index}" in taken:
        index += 1
    return f"{name}-{index}"


def _runs_named(client, experiment_id, run_name):
    """Runs of the experiment named ``run_name``, the newest first."""
    runs, token = [], None
    while True:
        page = client.search_runs([experiment_id], order_by=["attributes.start_time DESC"],
                                  page_token=token)
        runs += [r for r in page if r.data.tags.get("mlflow.runName") == run_name]
        token = page.token
        if not token:
            return runs


def _run_names(client, experiment_id):
    names, token = set(), None
    while True:
        page = client.search_runs([experiment_id], page_token=token)
        names.update(r.data.tags.get("mlflow.runName") for r in page)
        token = page.token
        if not token:
            return names


_original_start_run = None


def unique_run_name():
    """Makes ``mlflow.start_run(run_name=...)`` add ``-1``, ``-2``, ... to a name taken.

    For the rest of the process (calling it again changes nothing), a new run whose name
    another run of its experiment has is renamed to the first free ``<name>-<n>``.
    """
    global _original_start_run
    if _original_start_run is not None and mlflow.start_run is not _original_start_run:
        return
    original = _original_start_run = mlflow.start_run

    def start_run(run_id=None, experiment_id=None, run_name=None, *args, **kwargs):
        if run_name is not None and run_id is None:
            from mlflow.tracking.fluent import _get_experiment_id
            client = mlflow.MlflowClient()
            taken = _run_names(client, experiment_id or _get_experiment_id())
            new_name = _unique_name(run_name, taken)
            if new_name != run_name:
                _logger.info("run name %r is taken; using %r", run_name, new_name)
            run_name = new_name
        return original(run_id, experiment_id, run_name, *args, **kwargs)

    start_run.__doc__ = original.__doc__
    mlflow.start_run = start_run


def get_runid_by_name(run_name, experiment_name=None):
    """The id of the newest run named ``run_name``.

    Args:
        run_name (str): the run's name.
        experiment_name (str, optional): its experiment (default: the current one).

    Returns:
        str or None: the run id, or None if no run has that name.

    Raises:
        ValueError: if no experiment is named ``experiment_name``.
    """
    from mlflow.tracking.fluent import _get_experiment_id
    client = mlflow.MlflowClient()
    if experiment_name is None:
        experiment_id = _get_experiment_id()
    else:
        experiment = client.get_experiment_by_name(experiment_name)
        if experiment is None:
            raise ValueError("nnabla.mlflow_save_load_model.get_runid_by_name: no experiment "
                             f"named {experiment_name!r} (argument 'experiment_name')")
        experiment_id = experiment.experiment_id
    runs = _runs_named(client, experiment_id, run_name)
    return runs[0].info.run_id if runs else None
