"""The contexts nnabla's upstream tests run on (``python/test``): put this folder on
``PYTHONPATH`` and their ``list_context(func_name)`` (``nbla_test_utils``) returns, for every
function and solver test, the contexts named by ``NNABLA_UPSTREAM_CONTEXTS`` (default
``cudnn``; a comma-separated list of ``backend[:type_config]``, e.g. ``cpu,cuda,cudnn:half``)
instead of nnabla's default CPU context, as nnabla-ext-cuda's own ``list_context_ext`` does::

    PYTHONPATH=$PWD/plugins/nnabla_ext_cuda/tools/upstream \\
        python tools/upstream_conformance.py NNABLA_GIT_DIR --groups function solver

The test compares the device's outputs and gradients with its numpy reference, so each
function and solver update is checked on the device. Function names are returned as given
(our functions carry nnabla's plain names).
"""
import os

ENV = "NNABLA_UPSTREAM_CONTEXTS"


def contexts():
    """``[Context]`` of ``NNABLA_UPSTREAM_CONTEXTS``; raises when a backend is unavailable
    (nnabla's ``list_context`` then prints the reason and falls back to the CPU, so check
    the printed output, or ``python -m nnabla plugins``)."""
    from nnabla.ext_utils import get_extension_context
    out = []
    for item in os.environ.get(ENV, "cudnn").split(","):
        backend, _, type_config = item.strip().partition(":")
        out.append(get_extension_context(backend, type_config=type_config or "float"))
    return out


def list(func_name):  # noqa: A001 - the name nnabla's nbla_test_utils calls
    """``[(context, func_name)]`` for every context of :func:`contexts`."""
    return [(ctx, func_name) for ctx in contexts()]
