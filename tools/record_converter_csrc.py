"""Record the C sources nnabla 1.39's converter writes (``nnabla_cli convert -O CSRC``).

Run with an interpreter that has nnabla 1.39 (``NNABLA_REFERENCE_PYTHON``)::

    $NNABLA_REFERENCE_PYTHON tools/record_converter_csrc.py

For each model ``tests/data/converter/nnb/<model>.nnp`` (saved by nnabla 1.39, see
``tools/record_converter_nnb.py``), and ``tests/data/converter/csrc/generator.nnp`` (saved
here: an input ``z`` of the executor is a generator variable, which nnabla's ``save`` makes
a ``Constant`` of 0, so its values are deterministic), and each batch-size variant it writes
nnabla's
``convert_files`` CSRC output into ``tests/data/converter/csrc/<model><variant>/``:
``<network>_inference.h``/``.c``, ``<network>_parameters.h``/``.c`` (when the network has
parameters), ``<network>_example.c`` and ``GNUmakefile``. Variants: ``""`` batch size 1 (the
CLI's default), ``.b3`` batch size 3, ``.bfile`` batch size -1 (the file's). nnabla's output
for these is deterministic (checked: it converts every case twice and compares).
"""
import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
DATA = os.path.join(ROOT, "tests", "data", "converter")
MODELS = ("mlp", "cnn", "arrays")
VARIANTS = {"": 1, ".b3": 3, ".bfile": -1}


def _convert_args(batch_size):
    return argparse.Namespace(
        import_format="NNP", export_format="CSRC", nnp_no_expand_network=False,
        nnp_import_executor_index=None, nnp_exclude_preprocess=False, batch_size=batch_size,
        split=None, define_version=None, config=None, nnp_parameter_nntxt=False,
        nnp_parameter_h5=False, nnp_exclude_parameter=False, nnp_version=None, api=-1,
        settings=None, default_variable_type=["FLOAT32"], outputs=None, inputs=None,
        ir_version=-1, channel_last=False, quantization=False, dataset=None, force=False,
        enable_optimize_pb=False)


def _save_generator_model(path):
    """A model whose executor has a generator variable: y = tanh(affine(x)) + z."""
    import numpy as np

    import nnabla as nn
    import nnabla.functions as F
    import nnabla.parametric_functions as PF
    from nnabla.utils.save import save

    nn.clear_parameters()
    x = nn.Variable((2, 4))
    z = nn.Variable((2, 3))
    y = F.tanh(PF.affine(x, 3, name="fc")) + z
    rng = np.random.RandomState(7)
    for p in nn.get_parameters(grad_only=False).values():
        p.d = rng.randn(*p.shape)
    save(path, {"networks": [{"name": "gen", "batch_size": 2, "outputs": {"y": y},
                              "names": {"x": x, "z": z}}],
                "executors": [{"name": "runtime", "network": "gen", "data": ["x"],
                               "generator_variables": ["z"], "output": ["y"]}]})


def _convert(converter, nnp, batch_size, folder):
    os.makedirs(folder)
    converter.convert_files(_convert_args(batch_size), [nnp], folder)
    files = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as stream:
            files[name] = stream.read()
    return files


def main():
    import nnabla
    import nnabla.utils.converter as converter

    assert nnabla.__version__ == "1.39.0", nnabla.__version__
    out_root = os.path.join(DATA, "csrc")
    os.makedirs(out_root, exist_ok=True)
    _save_generator_model(os.path.join(out_root, "generator.nnp"))
    for model in MODELS + ("generator",):
        folder = "csrc" if model == "generator" else "nnb"
        nnp = os.path.join(DATA, folder, f"{model}.nnp")
        for variant, batch_size in VARIANTS.items():
            with tempfile.TemporaryDirectory() as tmp:
                first = _convert(converter, nnp, batch_size, os.path.join(tmp, "a"))
                second = _convert(converter, nnp, batch_size, os.path.join(tmp, "b"))
                if first != second:
                    raise SystemExit(f"{model}{variant}: nnabla's output differs between runs")
                target = os.path.join(out_root, f"{model}{variant}")
                staging = target + ".new"
                shutil.rmtree(staging, ignore_errors=True)
                os.makedirs(staging)
                for name, data in first.items():
                    with open(os.path.join(staging, name), "wb") as stream:
                        stream.write(data)
                shutil.rmtree(target, ignore_errors=True)
                os.replace(staging, target)
            print("recorded", f"{model}{variant}", sorted(first))


if __name__ == "__main__":
    sys.exit(main())
