"""``nnabla.utils.callback``: hooks for tools that drive nnabla's command-line training.

The modules named in the ``[CALLBACK]`` section of ``nnabla.conf``, as
``util_callback_module = [package.module_a, package.module_b]``, are imported once. Each
function below calls the function of the same name in the first of them that defines it, and
otherwise returns nnabla's default (given in its docstring).
"""
from __future__ import annotations

import importlib

from nnabla.config import nnabla_config
from nnabla.logger import logger


def _configured_module_names():
    if not nnabla_config.has_option("CALLBACK", "util_callback_module"):
        return []
    listed = nnabla_config.get("CALLBACK", "util_callback_module")
    return [name for name in listed.strip("[]").replace(" ", "").split(",") if name]


def _import_callback_modules():
    modules = []
    for name in _configured_module_names():
        try:
            modules.append(importlib.import_module(name))
        except ImportError as error:
            logger.warning(f"nnabla.utils.callback: skipped callback module {name!r}: {error}")
    return modules


callback_list = _import_callback_modules()


def _get_callback(func_name):
    """The first callback module that defines ``func_name``, or None."""
    for module in callback_list:
        if hasattr(module, func_name):
            return module
    return None


def _dispatch(func_name, default, *args):
    module = _get_callback(func_name)
    return default if module is None else getattr(module, func_name)(*args)


def alternative_cli(args):
    """A replacement command-line entry point's result; default None."""
    return _dispatch("alternative_cli", None, args)


def get_callback_version():
    """The callback modules' version string; default None."""
    return _dispatch("get_callback_version", None)


def get_best_from_status(args):
    """The best (iteration, error) recorded in the status; default (None, None)."""
    return _dispatch("get_best_from_status", (None, None), args)


def update_time_train(prediction=None):
    """Report the training time (and its prediction); default does nothing."""
    _dispatch("update_time_train", None, prediction)


def save_train_snapshot():
    """Save a training snapshot; default does nothing."""
    _dispatch("save_train_snapshot", None)


def update_status(state=None, start=False, start_time=None):
    """Report the training status; default does nothing."""
    _dispatch("update_status", None, state, start, start_time)


def add_train_command_arg(subparser):
    """Add arguments to the ``train`` command's parser; default does nothing."""
    _dispatch("add_train_command_arg", None, subparser)


def get_timelimit(args):
    """The training time limit in seconds; default -1 (no limit)."""
    return _dispatch("get_timelimit", -1, args)


def process_evaluation_result(outdir, filename):
    """Post-process an evaluation result file; default does nothing."""
    _dispatch("process_evaluation_result", None, outdir, filename)


def update_forward_time():
    """Report the forward time; default does nothing."""
    _dispatch("update_forward_time", None)


def check_training_time(args, config, timeinfo, epoch, last_epoch):
    """Whether training may go on; default True."""
    return _dispatch("check_training_time", True, args, config, timeinfo, epoch, last_epoch)


def result_base(base, suffix, outdir):
    """The base path of result files; default None."""
    return _dispatch("result_base", None, base, suffix, outdir)


def update_progress(text):
    """Report progress text; default does nothing."""
    _dispatch("update_progress", None, text)


def get_load_image_func(ext):
    """A loader function for images with extension ``ext``; default None."""
    return _dispatch("get_load_image_func", None, ext)
