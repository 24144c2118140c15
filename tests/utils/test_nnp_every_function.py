"""Every function type without random output, through .nnp files both ways with nnabla 1.39
(tests/data/nnp/every_function, recorded by tools/record_nnp_every_function.py): nnabla 1.39
loaded the file we wrote for each type and reproduced our outputs (its recorded differences),
and the file nnabla then saved loads here and gives nnabla's outputs."""
import json
import pathlib

import numpy as np
import pytest

import nnabla as nn
from nnabla._spec import SPECS
from nnabla.utils.nnp_graph import NnpLoader

DATA = pathlib.Path(__file__).resolve().parent.parent / "data" / "nnp" / "every_function"
SUMMARY = json.loads((DATA / "summary.json").read_text())["types"]

# Types nnabla 1.39 could not load or run from our file, and why (nnabla's limits, recorded).
NNABLA_CANNOT = {
    "AddN": "nnabla requires identical input shapes; the case broadcasts",
    "MulN": "nnabla requires identical input shapes; the case broadcasts",
    "BitShift": "nnabla's CPU kernel refuses int64 inputs",
    "BoolGather": "nnabla's process dies (SIGFPE) running it from a file",
    "FFT": "nnabla's CPU extension does not implement it",
    "IFFT": "nnabla's CPU extension does not implement it",
    "SyncBatchNormalization": "needs a communicator object",
    "Unique": "nnabla runs it only under auto_forward",
}
# Types whose forward updates state stored in the file, so a second run differs.
STATEFUL = {"MeanSubtraction": "updates its running mean", "SpectralNorm": "advances u"}
# Output sizes that depend on the data: nnabla sizes them when a loaded network is built,
# before any data is set (so they come out empty there); ours follow the data on forward.
DATA_SIZED = {"NonZero", "ONNXNonMaxSuppression", "PackPaddedSequence", "PadPackedSequence"}
CHECKED = sorted(set(SUMMARY) - set(NNABLA_CANNOT) - set(STATEFUL) - DATA_SIZED)


def test_every_deterministic_function_type_was_recorded():
    expected = {n for n, s in SPECS.items() if not s.stochastic and s.inputs} - {"Sink"}
    assert set(SUMMARY) == expected
    assert len(CHECKED) > 190


def test_the_types_nnabla_could_not_run_are_the_known_ones():
    failed = {name for name, result in SUMMARY.items() if "error" in result}
    assert failed == set(NNABLA_CANNOT)
    resized = {name for name, result in SUMMARY.items() if "output_shapes_nnabla_ours" in result}
    assert resized == DATA_SIZED


@pytest.mark.parametrize("name", CHECKED)
def test_nnabla_reproduced_the_outputs_of_our_file(name):
    assert SUMMARY[name]["max_abs_difference_from_ours"] <= 1e-5


@pytest.mark.parametrize("name", CHECKED)
def test_the_file_nnabla_saved_gives_its_outputs_here(name):
    nn.clear_parameters()
    recorded = np.load(DATA / f"{name}.npz")
    net = NnpLoader(str(DATA / f"{name}.nnp")).get_network("net", batch_size=1)
    for key, var in net.inputs.items():
        var.d = recorded[key]
    for key in sorted(net.outputs):
        out = net.outputs[key]
        out.forward()
        expected = recorded[key]
        assert out.shape == expected.shape
        np.testing.assert_allclose(out.d.astype(np.float64), expected, rtol=1e-5, atol=1e-5)
