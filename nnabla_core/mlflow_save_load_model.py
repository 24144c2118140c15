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

import os
import posixpath
import shutil
import tempfile

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

from ._mlflow_pyfunc import _NnablaModelWrapper
from ._mlflow_runs import get_runid_by_name, unique_run_name

__all__ = ["FLAVOR_NAME", "get_default_conda_env", "get_default_pip_requirements",
           "get_runid_by_name", "load_model", "log_model", "save_model", "unique_run_name"]

FLAVOR_NAME = "nnabla"
_EXTRA_FILES_KEY = "extra_files"
_NNP_FILES_KEY = "nnp_files"
_CHECKPOINT_FILES_KEY = "checkpoint_files"
_CONFIG_FILE_KEY = "config_file"
_MODEL_DATA_SUBPATH = "model"
_LOADER_MODULE = "nnabla.mlflow_save_load_model"
# what load_model(..., model=...) can return
_LOAD_CHOICES = (None, "model", "MLmodel", "nnp", "checkpoint")


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
    existed = os.path.isdir(path)
    _validate_and_prepare_target_save_path(path)  # refuses a non-empty folder; creates it
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(path)}.tmp-", dir=os.path.dirname(path))
    try:
        _write_model_dir(tmp, source, mlflow_model, file_lists, config_file, conda_env,
                         code_paths, signature, input_example, pip_requirements,
                         extra_pip_requirements, metadata)
        os.rmdir(path)  # empty: the complete directory replaces it in one rename
        os.rename(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if not existed and os.path.isdir(path) and not os.listdir(path):
            os.rmdir(path)
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
