"""Run names for the nnabla MLflow flavour: :func:`get_runid_by_name`, :func:`unique_run_name`.

Re-exported by :mod:`nnabla.mlflow_save_load_model` (import MLflow through that module, which
names the extra to install when it is missing).
"""
from __future__ import annotations

import logging

_logger = logging.getLogger("nnabla.mlflow_save_load_model")


def _unique_name(name, taken):
    if name not in taken:
        return name
    index = 1
    while f"{name}-{index}" in taken:
        index += 1
    return f"{name}-{index}"


def _search(client, experiment_id, run_name, operator):
    """Runs of the experiment (newest first) whose name is ``run_name`` ('=') or starts with
    it ('LIKE'), filtered by the store when the name can be quoted, and exactly here."""
    if "'" in run_name:  # not expressible in a filter string: fetch every run
        where = ""
    else:
        pattern = run_name + ("%" if operator == "LIKE" else "")
        where = f"tags.\"mlflow.runName\" {operator} '{pattern}'"
    runs, token = [], None
    while True:
        page = client.search_runs([experiment_id], filter_string=where,
                                  order_by=["attributes.start_time DESC"], page_token=token)
        runs += [r for r in page if (r.data.tags.get("mlflow.runName") or "").startswith(
            run_name)]
        token = page.token
        if not token:
            return runs


def _runs_named(client, experiment_id, run_name):
    """Runs of the experiment named ``run_name``, the newest first."""
    return [r for r in _search(client, experiment_id, run_name, "=")
            if r.data.tags.get("mlflow.runName") == run_name]


def _run_names(client, experiment_id, run_name):
    """Names of the experiment's runs that start with ``run_name``."""
    return {r.data.tags.get("mlflow.runName")
            for r in _search(client, experiment_id, run_name, "LIKE")}


_original_start_run = None


def unique_run_name():
    """Makes ``mlflow.start_run(run_name=...)`` add ``-1``, ``-2``, ... to a name taken.

    For the rest of the process (calling it again changes nothing), a new run whose name
    another run of its experiment has is renamed to the first free ``<name>-<n>``.
    """
    import mlflow
    global _original_start_run
    if _original_start_run is not None and mlflow.start_run is not _original_start_run:
        return
    original = _original_start_run = mlflow.start_run

    def start_run(run_id=None, experiment_id=None, run_name=None, *args, **kwargs):
        if run_name is not None and run_id is None:
            from mlflow.tracking.fluent import _get_experiment_id
            client = mlflow.MlflowClient()
            taken = _run_names(client, experiment_id or _get_experiment_id(), run_name)
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
    import mlflow
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
