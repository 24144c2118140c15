"""Tutorials that need downloads, devices or tools we do not have (skipped, with the reason),
and the "Function list and converter" guide's first command.

The graph-converters tutorial (ResNet-50) runs verbatim with ``NNABLA_MODELS_PRETRAINED=0``
in tests/experimental/test_graph_converters.py
(``test_graph_converters_tutorial_runs_verbatim_without_download`` and
``test_tutorial_resnet50_conversions_keep_the_output``)."""
import subprocess
import sys

import pytest


@pytest.mark.skip(reason="needs ResNet18 weights from nnabla.org and the Caltech101 download")
def test_models_finetuning_tutorial():
    """nnabla-python-docs.txt line 1406: NNabla Models Finetuning Tutorial."""


@pytest.mark.skip(reason="needs an IPython MPI cluster and several CUDA devices")
def test_data_parallel_distributed_training():
    """nnabla-python-docs.txt line 2266: C.MultiProcessCommunicator and all_reduce."""


def test_nnabla_cli_function_info_lists_one_function_name_per_line():
    out = subprocess.run([sys.executable, "-m", "nnabla.cli", "function_info"], check=True,
                         capture_output=True, text=True).stdout
    lines = out.splitlines()
    assert lines[0].startswith("NNabla command line interface (Version:")
    assert {"LSTM", "Sub2", "Mul2", "GreaterEqual", "Sigmoid", "Affine"} <= set(lines[1:])
