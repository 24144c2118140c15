"""``nnabla_cli convert``, ``dump`` and ``nnb_template``: file format conversion.

The options are nnabla 1.39's. The conversions themselves are done by
``nnabla.utils.converter`` (``convert_files``, ``dump_files``, ``nnb_template`` and the
``formats`` table of import/export names); the format of each file is resolved from its
extension as nnabla does (``.nnp``/``.nntxt`` -> NNP, ``.onnx`` -> ONNX, ``.nnb`` -> NNB,
``.pb`` -> TF_PB, ``.tflite`` -> TFLITE; an output without extension needs ``-O CSRC`` or
``-O SAVED_MODEL``).
"""
from __future__ import annotations

import os

from ._converter import ConverterUnavailable, converter_function
from .utility import logger

_IMPORT_EXTENSIONS = {".nnp": "NNP", ".nntxt": "NNP", ".onnx": "ONNX", ".pb": "TF_PB",
                      ".ckpt": "TF_CKPT_V1", ".meta": "TF_CKPT_V2", ".tflite": "TFLITE"}
_EXPORT_EXTENSIONS = {".nnp": "NNP", ".nnb": "NNB", ".onnx": "ONNX", ".pb": "TF_PB",
                      ".tflite": "TFLITE"}
IMPORT_NAMES = ["NNP", "ONNX", "TF_PB", "TF_CKPT_V1", "TF_CKPT_V2", "TFLITE", "SAVED_MODEL"]
EXPORT_NAMES = ["NNP", "NNB", "CSRC", "ONNX", "SAVED_MODEL", "TFLITE", "TF_PB"]


def _formats():
    try:
        return converter_function("formats", "convert")
    except ConverterUnavailable:
        return None


def resolve_file_format(args, import_files, export_file=None):
    """Set ``args.import_format``/``args.export_format`` from the file extensions."""
    if len(import_files) == 1:
        ext = os.path.splitext(import_files[0])[1]
        if ext in _IMPORT_EXTENSIONS:
            args.import_format = _IMPORT_EXTENSIONS[ext]
        elif ext == "" and os.path.isdir(import_files[0]):
            args.import_format = "SAVED_MODEL"
    if export_file is None:
        args.export_format = ""
        return
    ext = os.path.splitext(export_file)[1]
    if ext in _EXPORT_EXTENSIONS:
        args.export_format = _EXPORT_EXTENSIONS[ext]
    elif ext == "":
        logger.warning("The export file format is 'CSRC' or 'SAVED_MODEL' that argument "
                       "'--export-format' will have to be set!!!")
        if args.export_format not in ("CSRC", "SAVED_MODEL"):
            raise ValueError(f"nnabla_cli convert: output {export_file!r} has no extension; "
                             f"give -O CSRC or -O SAVED_MODEL")


def _supported(kind, name):
    formats = _formats()
    names = getattr(formats, f"{kind}_name", None) if formats is not None else None
    if names is None:
        names = IMPORT_NAMES if kind == "import" else EXPORT_NAMES
    if name not in names:
        print(f"{kind.capitalize()} format ({name}) is not supported.")
        return False
    return True


def dump_command(args):
    """Print the networks of ``args.files`` (by ``nnabla.utils.converter.dump_files``)."""
    resolve_file_format(args, args.files)
    if not _supported("import", args.import_format):
        return False
    converter_function("dump_files", "dump")(args, args.files)
    return True


def nnb_template_command(args):
    """Write the NNB settings template for the input file (last argument: the YAML file)."""
    if len(args.files) < 2:
        print("Input and Output arg is mandatory.")
        return False
    output = args.files.pop()
    resolve_file_format(args, args.files)
    if not _supported("import", args.import_format):
        return False
    converter_function("nnb_template", "nnb_template")(args, args.files, output)
    return True


def convert_command(args):
    """Convert ``args.files[:-1]`` into ``args.files[-1]``."""
    if len(args.files) < 2:
        print("Input and Output arg is mandatory.")
        return False
    output = args.files.pop()
    resolve_file_format(args, args.files, output)
    if not _supported("import", args.import_format) or \
            not _supported("export", args.export_format):
        return False
    converter_function("convert_files", f"convert ({args.import_format} -> "
                                        f"{args.export_format})")(args, args.files, output)
    return True


def _add_import_arguments(p):
    p.add_argument("-I", "--import-format", type=str, default="NNP",
                   help=f"[import] import format. (one of [{','.join(IMPORT_NAMES)}])")
    p.add_argument("-E", "--nnp-import-executor-index", type=int, default=None,
                   help="[import][NNP] import only specified executor.")
    p.add_argument("--nnp-exclude-preprocess", action="store_true",
                   help="[import][NNP] EXPERIMENTAL exclude preprocess functions when import.")
    p.add_argument("--nnp-no-expand-network", action="store_true",
                   help="[import][NNP] expand network with repeat or recurrent.")


def _add_dump(subparsers):
    p = subparsers.add_parser("dump", help="Dump network with supported format.")
    p.add_argument("-v", "--dump-verbose", action="store_true", help="[dump] verbose output.")
    p.add_argument("-F", "--dump-functions", action="store_true",
                   help="[dump] dump function list.")
    p.add_argument("-V", "--dump-variables", action="store_true",
                   help="[dump] dump variable list.")
    p.add_argument("--dump-limit", type=int, default=-1, help="[dump] limit num of items.")
    p.add_argument("-n", "--dump-variable-name", type=str, default=None,
                   help="[dump] Specific variable name to display.")
    p.add_argument("files", metavar="FILE", type=str, nargs="+",
                   help="File or directory name(s) to convert.")
    _add_import_arguments(p)
    p.set_defaults(func=dump_command)


def _add_nnb_template(subparsers):
    p = subparsers.add_parser("nnb_template", help="Generate NNB config file template.")
    p.add_argument("files", metavar="FILE", type=str, nargs="+",
                   help="File to generate NNB config file template. The last is setting yaml "
                        "file.")
    _add_import_arguments(p)
    p.add_argument("-b", "--batch-size", type=int, default=-1,
                   help="[export] overwrite batch size.")
    p.add_argument("-T", "--default-variable-type", type=str, nargs=1, default=["FLOAT32"],
                   help="Default type of variable")
    p.add_argument("--api", type=int, default=-1,
                   help="Set API Level to convert to, default is highest API Level.")
    p.set_defaults(func=nnb_template_command)


def _add_export_arguments(p):
    p.add_argument("-O", "--export-format", type=str, default="NNP",
                   help=f"[export] export format. (one of [{','.join(EXPORT_NAMES)}]), the "
                        f"export file format is 'CSRC' or 'SAVED_MODEL' that argument "
                        f"'--export-format' will have to be set!!!")
    p.add_argument("-f", "--force", action="store_true", help="[export] overwrite output file.")
    p.add_argument("-b", "--batch-size", type=int, default=1,
                   help="[export] overwrite batch size.")
    p.add_argument("-S", "--split", type=str, default=None,
                   help='[export] This option need to set  "-E" option.Split executor with '
                        'specified index. (eg. "1-9", "1-2,5-")')
    p.add_argument("-d", "--define_version", type=str, default=None,
                   help="[export][ONNX] define onnx opset version. e.g. opset_6\n"
                        "[export][ONNX] define convert to onnx for SNPE. e.g. opset_snpe\n"
                        "[export][ONNX] define convert to onnx for TensorRT. e.g. "
                        "opset_tensorrt\n[export][NNB] define binary format version. e.g. nnb_3")
    p.add_argument("--enable-optimize-pb", action="store_true",
                   help="[export][tensorflow] enable optimization when export to pb or tflite.")
    p.add_argument("--channel-last", action="store_true",
                   help="[export][TFLite] Specify the data_format of the NNP network, "
                        "data_format default is channel_first")
    p.add_argument("--quantization", action="store_true",
                   help="[export][TFLite] export to INT8 quantized tflite model.")
    p.add_argument("--dataset", type=str, default=None,
                   help="[export][TFLite] Specify the path of represent dataset which will be "
                        "passed to INT8 quantized tflite converter.")
    p.add_argument("--ir_version", type=int, default=-1,
                   help="[export] Set ONNX IR version to convert to, default is the latest "
                        "supported IR version corresponding to the current ONNX version.")
    p.add_argument("-c", "--config", type=str, default=None,
                   help="[export] config target function list.")
    p.add_argument("--nnp-parameter-h5", action="store_true",
                   help="[export][NNP] store parameter with h5 format")
    p.add_argument("--nnp-parameter-nntxt", action="store_true",
                   help="[export][NNP] store parameter into nntxt")
    p.add_argument("--nnp-exclude-parameter", action="store_true",
                   help="[export][NNP] output without parameter")
    p.add_argument("--nnp-version", type=str, default=None,
                   help="[export][NNP] specify the version of nnp (e.g. 1.25.0)")
    p.add_argument("-T", "--default-variable-type", type=str, nargs=1, default=["FLOAT32"],
                   help="Default type of variable")
    p.add_argument("-s", "--settings", type=str, nargs=1, default=None,
                   help="Settings in YAML format file.")
    p.add_argument("--api", type=int, default=-1,
                   help="Set API Level to convert to, default is highest API Level.")


def add_convert_command(subparsers):
    """Register ``dump``, ``nnb_template`` and ``convert``."""
    _add_dump(subparsers)
    _add_nnb_template(subparsers)
    p = subparsers.add_parser("convert", help="File format converter.")
    p.add_argument("files", metavar="FILE", type=str, nargs="+",
                   help="File or directory name(s) to convert. (When convert ckpt format of "
                        "the tensorflow model, If the version of the checkpoint is V1, need to "
                        "enter the `.ckpt` file, otherwise need to enter the `.meta` file.)")
    p.add_argument("--outputs", type=str, default=None,
                   help="[import][tensorflow] The name(s) of the output nodes, comma "
                        "separated. Only needed when convert CKPT format.")
    p.add_argument("--inputs", type=str, default=None,
                   help="[import][tensorflow] The name(s) of the input nodes, comma "
                        "separated. Only needed when convert CKPT format.")
    _add_import_arguments(p)
    _add_export_arguments(p)
    p.set_defaults(func=convert_command)
