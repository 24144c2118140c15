"""Record the C sources nnabla 1.39's converter writes (``nnabla_cli convert -O CSRC``).

Run with an interpreter that has nnabla 1.39 (``NNABLA_REFERENCE_PYTHON``)::

    $NNABLA_REFERENCE_PYTHON tools/record_converter_csrc.py

Models: ``tests/data/converter/nnb/{mlp,cnn,arrays}.nnp`` (saved by nnabla 1.39, see
``tools/record_converter_nnb.py``) and two saved here by nnabla 1.39 into
``tests/data/converter/csrc/``: ``generator.nnp`` (an input ``z`` of the executor is a
generator variable, which nnabla's ``save`` makes a ``Constant`` of 0, so its values are
deterministic) and ``functions.nnp`` (many function types and argument kinds). For each
model and batch-size variant it writes nnabla's ``convert_files`` CSRC output into
``tests/data/converter/csrc/<model><variant>/``:
``<network>_inference.h``/``.c``, ``<network>_parameters.h``/``.c`` (when the network has
parameters), ``<network>_example.c`` and ``GNUmakefile``. Variants: ``""`` batch size 1 (the
CLI's default), ``.b3`` batch size 3, ``.bfile`` batch size -1 (the file's). nnabla's output
for these is deterministic (checked: it converts every case twice and compares). It also
records what nnabla prints converting ``cnn`` and writing its NNB settings template
(``cnn.bfile.stdout.txt``, ``cnn.nnb_template.stdout.txt``).
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


def _save_functions_model(path):
    """A model of many function types and argument kinds (grouped convolution,
    deconvolution, pooling, interpolate and pad with string modes, slice, split and stack,
    transpose, flip, reductions, scalar and elementwise arithmetic, prelu, broadcast,
    softmax)."""
    import numpy as np

    import nnabla as nn
    import nnabla.functions as F
    import nnabla.parametric_functions as PF
    from nnabla.utils.save import save

    nn.clear_parameters()
    x = nn.Variable((2, 4, 8, 8))
    h = PF.convolution(x, 8, (3, 3), pad=(1, 1), group=2, name="c1")
    h = PF.deconvolution(h, 4, (2, 2), stride=(2, 2), name="d1")
    h = F.max_pooling(h, (2, 2), stride=(2, 2))
    h = F.average_pooling(h, (2, 2), ignore_border=False, including_pad=False)
    h = F.interpolate(h, output_size=(8, 8), mode="nearest")
    h = F.pad(h, (1, 1, 1, 1), mode="reflect")
    h = F.slice(h, start=(0, 0, 1, 1), stop=(2, 4, 9, 9), step=(1, 1, 1, 1))
    h = F.stack(*F.split(h, axis=1), axis=1)
    h = F.flip(F.transpose(h, (0, 2, 3, 1)), axes=[1])
    h = F.elu(F.leaky_relu(h, alpha=0.3), alpha=1.5)
    h = PF.prelu(F.reshape(h, (2, -1)), base_axis=1, name="pr")
    h = F.sum(h, axis=1, keepdims=True) + F.mean(h, axis=[1], keepdims=True) * F.max(
        h, axis=1, keepdims=True)
    h = F.pow_scalar(h, 2.0) + F.r_sub_scalar(h, 1.5)
    h = F.sigmoid(h) * F.swish(h) + F.softplus(h, beta=2.0)
    y = F.softmax(F.broadcast(h, (2, 5)), axis=1)
    rng = np.random.RandomState(11)
    for p in nn.get_parameters(grad_only=False).values():
        p.d = rng.randn(*p.shape)
    save(path, {"networks": [{"name": "many", "batch_size": 2, "outputs": {"y": y},
                              "names": {"x": x}}],
                "executors": [{"name": "runtime", "network": "many", "data": ["x"],
                               "output": ["y"]}]})


def _convert(converter, nnp, batch_size, folder):
    os.makedirs(folder)
    converter.convert_files(_convert_args(batch_size), [nnp], folder)
    files = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as stream:
            files[name] = stream.read()
    return files


def _record_console(converter, out_root):
    """What nnabla prints while converting (``cnn.bfile.stdout.txt``) and writing the NNB
    settings template (``cnn.nnb_template.stdout.txt``) for ``nnb/cnn.nnp``, given relative
    to ``tests/data/converter`` (the path is part of the text)."""
    import contextlib
    import io

    here = os.getcwd()
    os.chdir(DATA)
    try:
        for name, run in (
                ("cnn.bfile.stdout.txt", lambda tmp: converter.convert_files(
                    _convert_args(-1), ["nnb/cnn.nnp"], tmp)),
                ("cnn.nnb_template.stdout.txt", lambda tmp: converter.nnb_template(
                    _convert_args(-1), ["nnb/cnn.nnp"], os.path.join(tmp, "s.yaml")))):
            buffer = io.StringIO()
            with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(buffer):
                run(tmp)
            with open(os.path.join(out_root, name), "w") as stream:
                stream.write(buffer.getvalue())
            print("recorded", name)
    finally:
        os.chdir(here)


def main():
    import nnabla
    import nnabla.utils.converter as converter

    assert nnabla.__version__ == "1.39.0", nnabla.__version__
    out_root = os.path.join(DATA, "csrc")
    os.makedirs(out_root, exist_ok=True)
    _save_generator_model(os.path.join(out_root, "generator.nnp"))
    _save_functions_model(os.path.join(out_root, "functions.nnp"))
    own = ("generator", "functions")
    for model in MODELS + own:
        folder = "csrc" if model in own else "nnb"
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
    _record_console(converter, out_root)


if __name__ == "__main__":
    sys.exit(main())
