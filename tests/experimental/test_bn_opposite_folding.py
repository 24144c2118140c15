"""Opposite batch-normalization folding (BN before a convolution or affine) against
nnabla 1.39's recorded results (tools/record_bn_opposite_folding.py into
tests/data/graph_converters/bn_opposite_folding.json).

Where nnabla 1.39 folds a BN, the converted graph here has the same functions; its output
is the float network's (nnabla's is not: README, "Deliberate differences"). A BN whose output
also feeds another function (a residual Add2) stays here; nnabla 1.39 removes it from every
branch.
"""
import json
import os

import numpy as np
import pytest

import nnabla as nn
import nnabla.experimental.graph_converters as GC
import nnabla.functions as F
import nnabla.parametric_functions as PF

from bn_opposite_cases import CASES, run_case

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "graph_converters",
                    "bn_opposite_folding.json")


@pytest.fixture(scope="module")
def recorded():
    with open(DATA) as f:
        return json.load(f)["cases"]


@pytest.fixture(autouse=True)
def _fresh_parameters():
    nn.clear_parameters()
    yield
    nn.clear_parameters()


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_network_and_parameters_as_recorded(recorded, name):
    ours, ref = run_case(nn, F, PF, GC, name), recorded[name]
    assert sorted(ours["params"]) == sorted(ref["params"])
    for key, value in ref["params"].items():
        np.testing.assert_array_equal(np.array(ours["params"][key], np.float32),
                                      np.array(value, np.float32), err_msg=key)
    assert ours["types_before"] == ref["types_before"]
    np.testing.assert_allclose(ours["output_before"], ref["output_before"],
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["chain_conv", "chain_affine"])
def test_single_reader_bn_folds_as_nnabla_and_keeps_the_output(recorded, name):
    ours, ref = run_case(nn, F, PF, GC, name), recorded[name]
    assert "BatchNormalization" not in ours["types_after"]
    assert ours["types_after"] == ref["types_after"]
    np.testing.assert_allclose(ours["output_after"], ours["output_before"],
                               rtol=1e-5, atol=1e-5)


def test_bn_feeding_a_residual_add_stays(recorded):
    ours, ref = run_case(nn, F, PF, GC, "residual_fork"), recorded["residual_fork"]
    # nnabla 1.39 drops the BN from both branches (the Add2 then adds the raw input)
    assert ref["types_after"] == ["Convolution", "Add2", "ReLU"]
    assert ours["types_after"] == ["BatchNormalization", "Convolution", "Add2", "ReLU"]
    np.testing.assert_allclose(ours["output_after"], ours["output_before"],
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_nnabla_139_opposite_folding_changes_the_output(recorded, name):
    """The deliberate difference: nnabla 1.39's converted graphs compute something else than
    the float network (its folded bias is ``b + sum(c0 * c1 * W)`` instead of
    ``b + sum(c1 * W)``; a BN before the graph's last affine is dropped without folding; a
    forked BN is dropped from every branch)."""
    ref = recorded[name]
    diff = np.abs(np.array(ref["output_after"]) - np.array(ref["output_before"])).max()
    assert diff > 0.1, diff
    ours = run_case(nn, F, PF, GC, name)
    np.testing.assert_allclose(ours["output_after"], ref["output_before"],
                               rtol=1e-5, atol=1e-5)
