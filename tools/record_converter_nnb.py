"""Record what nnabla 1.39's converter writes, for tests/converter and the NNB tables.

Run with an interpreter that has nnabla 1.39 (``NNABLA_REFERENCE_PYTHON``)::

    $NNABLA_REFERENCE_PYTHON tools/record_converter_nnb.py

It writes

- ``nnabla_core/utils/converter/nnablart/_nnb_tables.py``: nnabla's NNB API levels (function
  id and argument code of each function type per level) and the accepted values of string
  arguments, the facts the NNB format is made of;
- ``tests/data/converter/nnb/<model>.nnp``: small models saved by nnabla (fixed seeds);
- ``tests/data/converter/nnb/<model>[.<variant>].nnb``: nnabla's ``convert_files`` NNB output
  for them (batch size 1; the ``b3`` variant at batch size 3, ``api1`` at API level 1);
- ``tests/data/converter/nnb/<model>.converted.nntxt``: the network text of nnabla's NNP -> NNP
  conversion (``nnabla_cli convert a.nnp b.nnp``);
- ``tests/data/converter/nnb/<model>.dump[.FV].txt``: what ``nnabla_cli dump [-F -V]``
  prints, and ``<model>.settings.yaml``: ``nnabla_cli nnb_template``'s settings file;
- ``tests/data/converter/nnabla_function_arguments.json``: each function's argument names
  and types in nnabla's function table (what NNB packing follows), and
  ``nnabla_function_outputs.json``: the outputs that table lists.
"""
import argparse
import json
import os
import pprint
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
DATA = os.path.join(ROOT, "tests", "data", "converter")


def _atomic_write(path, data):
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path + ".tmp", mode) as stream:
        stream.write(data)
    os.replace(path + ".tmp", path)


def _models():
    import numpy as np

    import nnabla as nn
    import nnabla.functions as F
    import nnabla.parametric_functions as PF

    def mlp():
        x = nn.Variable((2, 6))
        h = F.tanh(PF.affine(x, 5, name="fc1"))
        return x, F.softmax(PF.affine(h, 3, name="fc2"))

    def cnn():
        x = nn.Variable((2, 3, 8, 8))
        h = PF.convolution(x, 4, (3, 3), pad=(1, 1), name="c1")
        h = F.relu(PF.batch_normalization(h, batch_stat=False, name="bn1"))
        h = F.max_pooling(h, (2, 2))
        h = PF.convolution(h, 6, (3, 3), stride=(2, 2), name="c2", with_bias=False)
        h = F.average_pooling(F.leaky_relu(h, 0.2), (2, 2))
        return x, PF.affine(h, 10, name="fc")

    def arrays():
        x = nn.Variable((2, 3, 4))
        h = F.pad(x, (1, 1), mode="constant", constant_value=0.5)
        h = F.transpose(h, (0, 2, 1))
        h = F.concatenate(h, F.sigmoid(h), axis=1)
        h = F.reshape(h, (2, -1))
        return x, F.sum(F.mul_scalar(h, 0.5), axis=1, keepdims=True)

    return {"mlp": mlp, "cnn": cnn, "arrays": arrays}, np, nn


def _save_model(path, build, nn, np):
    from nnabla.utils.save import save

    nn.clear_parameters()
    np.random.seed(313)
    x, y = build()
    for p in nn.get_parameters(grad_only=False).values():
        p.d = np.random.RandomState(len(p.name) if hasattr(p, "name") else 0).randn(*p.shape)
    save(path, {"networks": [{"name": "net", "batch_size": 2, "outputs": {"y": y},
                              "names": {"x": x}}],
                "executors": [{"name": "runtime", "network": "net", "data": ["x"],
                               "output": ["y"]}]})


def _convert_args(export_format, **overrides):
    args = argparse.Namespace(
        import_format="NNP", export_format=export_format, nnp_no_expand_network=False,
        nnp_import_executor_index=None, nnp_exclude_preprocess=False, batch_size=1,
        split=None, define_version=None, config=None, nnp_parameter_nntxt=False,
        nnp_parameter_h5=False, nnp_exclude_parameter=False, nnp_version=None, api=-1,
        settings=None, default_variable_type=["FLOAT32"], outputs=None, inputs=None,
        ir_version=-1, channel_last=False, quantization=False, dataset=None, force=False,
        enable_optimize_pb=False)
    for key, value in overrides.items():
        setattr(args, key, value)
    return args


def _dump_args(**flags):
    args = argparse.Namespace(import_format="NNP", nnp_no_expand_network=False,
                              nnp_import_executor_index=None, dump_verbose=False,
                              dump_functions=False, dump_variables=False, dump_limit=-1,
                              dump_variable_name=None)
    for key, value in flags.items():
        setattr(args, key, value)
    return args


def _captured(function, *args):
    """What ``function(*args)`` prints, without nnabla's progress lines."""
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        function(*args)
    skip = ("Importing", "Expanding", " Expanding")
    return "".join(line for line in buffer.getvalue().splitlines(True)
                   if not line.startswith(skip))


def _record_tables(converter):
    levels = {level: dict(entries)
              for level, entries in converter.get_api_level_info().api_level_dict.items()}
    strings, arguments = {}, {}
    for name, info in converter.get_function_info().items():
        arguments[name] = [[a, arg["type"]] for a, arg in info.get("arguments", {}).items()]
        for a, arg in info.get("arguments", {}).items():
            if arg["type"] == "string" and arg.get("available_values"):
                strings[f"{name}.{a}"] = list(arg["available_values"])
    module = ('"""NNB facts recorded from nnabla 1.39.0 by tools/record_converter_nnb.py.\n\n'
              "``API_LEVELS[level]`` maps ``<FunctionType>_<argument code>`` to the function id "
              "the nnabla C\nruntime knows (a level adds to the previous ones); "
              "``STRING_VALUES['<Type>.<arg>']`` lists\nthe values a string argument may take, "
              "stored in NNB as their index.\n\"\"\"\n\n")
    module += "API_LEVELS = " + pprint.pformat(levels, width=99, compact=True) + "\n\n"
    module += "STRING_VALUES = " + pprint.pformat(strings, width=99, compact=True) + "\n"
    _atomic_write(os.path.join(ROOT, "nnabla_core", "utils", "converter", "nnablart",
                               "_nnb_tables.py"), module)
    _atomic_write(os.path.join(DATA, "nnabla_function_arguments.json"),
                  json.dumps(arguments, indent=0, sort_keys=True) + "\n")
    outputs = {name: list(info["outputs"]) for name, info in
               converter.get_function_info().items()}
    _atomic_write(os.path.join(DATA, "nnabla_function_outputs.json"),
                  json.dumps(outputs, indent=0, sort_keys=True) + "\n")


def main():
    import nnabla.utils.converter as converter

    os.makedirs(os.path.join(DATA, "nnb"), exist_ok=True)
    _record_tables(converter)
    models, np, nn = _models()
    for name, build in models.items():
        nnp = os.path.join(DATA, "nnb", f"{name}.nnp")
        _save_model(nnp, build, nn, np)
        with tempfile.TemporaryDirectory() as folder:
            for variant, overrides in (("", {}), (".b3", {"batch_size": 3}),
                                       (".api1", {"api": 1})):
                out = os.path.join(folder, "out.nnb")
                try:
                    converter.convert_files(_convert_args("NNB", **overrides), [nnp], out)
                except ValueError as error:     # e.g. a function unknown at API level 1
                    print(f"{name}{variant}: {error}")
                    continue
                with open(out, "rb") as stream:
                    _atomic_write(os.path.join(DATA, "nnb", f"{name}{variant}.nnb"),
                                  stream.read())
            for variant, flags in (("", {}), (".FV", {"dump_functions": True,
                                                      "dump_variables": True})):
                text = _captured(converter.dump_files,
                                 _dump_args(**flags), [nnp])
                _atomic_write(os.path.join(DATA, "nnb", f"{name}.dump{variant}.txt"), text)
            settings = os.path.join(folder, "settings.yaml")
            converter.nnb_template(_convert_args("NNB", batch_size=-1), [nnp], settings)
            with open(settings) as stream:
                _atomic_write(os.path.join(DATA, "nnb", f"{name}.settings.yaml"),
                              stream.read())
            out = os.path.join(folder, "out.nnp")
            converter.convert_files(_convert_args("NNP"), [nnp], out)
            with zipfile.ZipFile(out) as archive:
                text = archive.read("network.nntxt").decode()
            _atomic_write(os.path.join(DATA, "nnb", f"{name}.converted.nntxt"), text)
        print("recorded", name)


if __name__ == "__main__":
    sys.exit(main())
