"""Tests of nnabla.utils.callback: nnabla's defaults, and dispatch to configured modules."""
import importlib
from types import SimpleNamespace

import nnabla.utils.callback as callback
from nnabla.config import nnabla_config


def test_without_callback_modules_every_hook_returns_nnablas_default():
    assert callback.callback_list == []
    assert callback.get_best_from_status(None) == (None, None)
    assert callback.get_timelimit(None) == -1
    assert callback.check_training_time(None, None, None, 0, 1) is True
    assert callback.get_load_image_func(".png") is None
    assert callback.update_progress("text") is None


def test_the_first_module_defining_a_hook_answers(monkeypatch):
    first = SimpleNamespace(get_timelimit=lambda args: 60)
    second = SimpleNamespace(get_timelimit=lambda args: 1, result_base=lambda *a: "/base")
    monkeypatch.setattr(callback, "callback_list", [first, second])
    assert callback.get_timelimit(None) == 60
    assert callback.result_base("b", "s", "o") == "/base"
    assert callback.get_callback_version() is None


def test_modules_listed_in_nnabla_conf_are_imported():
    nnabla_config.add_section("CALLBACK")
    nnabla_config.set("CALLBACK", "util_callback_module", "[json, no_such_module_here]")
    try:
        importlib.reload(callback)
        assert [module.__name__ for module in callback.callback_list] == ["json"]
    finally:
        nnabla_config.remove_section("CALLBACK")
        importlib.reload(callback)
