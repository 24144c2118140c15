"""plugins/nnabla_ext_cuda/tools/upstream/list_context_ext.py: the contexts nnabla's upstream
tests get from ``list_context`` when that folder is on ``PYTHONPATH`` (emulation here)."""
import importlib.util
import pathlib

import pytest

PATH = (pathlib.Path(__file__).resolve().parents[2] / "plugins" / "nnabla_ext_cuda" / "tools"
        / "upstream" / "list_context_ext.py")


def _module():
    spec = importlib.util.spec_from_file_location("list_context_ext", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_default_is_the_cudnn_context(monkeypatch):
    monkeypatch.delenv("NNABLA_UPSTREAM_CONTEXTS", raising=False)
    (ctx, name), = _module().list("Convolution")
    assert name == "Convolution"
    assert ctx.backend == ["cudnn:float", "cuda:float", "cpu:float"]


def test_a_list_of_backends_and_type_configs(monkeypatch):
    monkeypatch.setenv("NNABLA_UPSTREAM_CONTEXTS", "cpu, cuda:half")
    contexts = [ctx for ctx, _ in _module().list("Adam")]
    assert [c.backend[0] for c in contexts] == ["cpu:float", "cuda:half"]


def test_an_unknown_backend_raises(monkeypatch):
    monkeypatch.setenv("NNABLA_UPSTREAM_CONTEXTS", "nosuch")
    with pytest.raises(Exception, match="nosuch"):
        _module().list("Adam")
