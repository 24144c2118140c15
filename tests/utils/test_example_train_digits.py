"""Smoke test of examples/train_digits.py: a short run trains, evaluates and saves."""
import importlib.util
import os

import h5py

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "train_digits.py")


def load_example():
    spec = importlib.util.spec_from_file_location("train_digits", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_short_training_run_saves_the_tutorial_cnn_parameters(tmp_path, capsys):
    out = tmp_path / "params.h5"
    status = load_example().main(["--epochs", "2", "--no-progress", "--min-accuracy", "0.5",
                                  "--out", str(out)])
    printed = capsys.readouterr().out
    assert status == 0 and "held-out accuracy" in printed and "train loss" in printed
    with h5py.File(out, "r") as params:
        assert params["cnn/conv1/conv/W"].shape == (4, 1, 3, 3)
        assert params["cnn/classifier/affine/W"].shape == (32, 10)
