"""Record what nnabla 1.39's converter does with ``nnabla_cli convert -E 0 -S <ranges>``.

Run with an interpreter that has nnabla 1.39 (``NNABLA_REFERENCE_PYTHON``)::

    $NNABLA_REFERENCE_PYTHON tools/record_converter_split.py

For ``tests/data/converter/nnb/mlp.nnp`` (given relative to ``tests/data/converter``, as the
path is part of what nnabla prints) and the ranges ``0-1,2-`` it writes into
``tests/data/converter/split/``: ``mlp.stdout.txt``, what ``convert_files`` prints (progress,
one "Shrink"/"Output to" pair per range and the YAML summary of each part's inputs and
outputs), and ``mlp_<start>_<end>.nntxt``, the network text of each part it writes.
"""
import argparse
import contextlib
import io
import os
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data", "converter")
RANGES = "0-1,2-"


def _args():
    return argparse.Namespace(
        import_format="NNP", export_format="NNP", nnp_no_expand_network=False,
        nnp_import_executor_index=0, nnp_exclude_preprocess=False, batch_size=1,
        split=RANGES, define_version=None, config=None, nnp_parameter_nntxt=False,
        nnp_parameter_h5=False, nnp_exclude_parameter=False, nnp_version=None, api=-1,
        settings=None, default_variable_type=["FLOAT32"], outputs=None, inputs=None,
        ir_version=-1, channel_last=False, quantization=False, dataset=None, force=False,
        enable_optimize_pb=False)


def _write(path, text):
    with open(path + ".tmp", "w") as stream:
        stream.write(text)
    os.replace(path + ".tmp", path)


def main():
    import nnabla
    import nnabla.utils.converter as converter

    assert nnabla.__version__ == "1.39.0", nnabla.__version__
    out_root = os.path.join(DATA, "split")
    os.makedirs(out_root, exist_ok=True)
    here = os.getcwd()
    os.chdir(DATA)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                converter.convert_files(_args(), ["nnb/mlp.nnp"], os.path.join(tmp, "mlp.nnp"))
            _write(os.path.join(out_root, "mlp.stdout.txt"),
                   buffer.getvalue().replace(tmp, "<out>"))
            for name in sorted(os.listdir(tmp)):
                with zipfile.ZipFile(os.path.join(tmp, name)) as archive:
                    text = archive.read("network.nntxt").decode()
                _write(os.path.join(out_root, os.path.splitext(name)[0] + ".nntxt"), text)
                print("recorded", name)
    finally:
        os.chdir(here)


if __name__ == "__main__":
    sys.exit(main())
