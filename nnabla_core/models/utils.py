"""Where models are stored and downloaded from (``nnabla.models.utils``)."""
from __future__ import annotations

import os

from ..logger import logger
from ..utils.download import get_data_home

__all__ = ["get_model_home", "get_model_url_base", "get_model_url_base_from_env",
           "pretrained_from_env"]

DEFAULT_URL_BASE = "https://nnabla.org/pretrained-models/nnp_models/"


def get_model_home():
    """The folder of downloaded models, ``<data home>/nnp_models`` (created when missing)."""
    home = os.path.join(get_data_home(), "nnp_models")
    os.makedirs(home, exist_ok=True)
    return home


def get_model_url_base_from_env():
    """The environment variable ``NNABLA_MODELS_URL_BASE``, or None when it is not set."""
    return os.environ.get("NNABLA_MODELS_URL_BASE", None)


def get_model_url_base():
    """The URL models are downloaded from (``NNABLA_MODELS_URL_BASE`` when set)."""
    url_base = get_model_url_base_from_env()
    if url_base is not None:
        logger.info(f"NNBLA_MODELS_URL_BASE is set as {url_base}.")
        return url_base
    return DEFAULT_URL_BASE


def pretrained_from_env():
    """False when the environment variable ``NNABLA_MODELS_PRETRAINED`` is ``0``,
    ``false``, ``no`` or ``off`` (models are then built with fresh parameters); True
    otherwise.

    Raises:
        ValueError: for another value.
    """
    value = os.environ.get("NNABLA_MODELS_PRETRAINED", "1").strip().lower()
    if value in ("0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on", ""):
        return True
    raise ValueError(f"nnabla.models: environment variable NNABLA_MODELS_PRETRAINED is "
                     f"{value!r}; expected 0 or 1")
