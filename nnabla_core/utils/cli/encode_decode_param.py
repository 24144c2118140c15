"""``nnabla_cli decode_param`` / ``encode_param``: parameters <-> plain-text files.

``decode_param -p PARAM -o DIR`` writes one ``DIR/<name>.txt`` per parameter, the name
URL-quoted (spaces and ``/`` kept) with ``/`` replaced by ``~``; the file's first line is the
shape as Python prints a tuple, then one value per line. ``encode_param -i DIR -p PARAM``
reads such files back (as float32) and saves the parameter file (any format
``nn.save_parameters`` writes).
"""
from __future__ import annotations

import ast
import os
import urllib.parse

import numpy as np

from ...parameter import (clear_parameters, get_parameters, load_parameters, save_parameters,
                          set_parameter)
from .utility import logger


def save_param_in_txt(x, filepath):
    """Write array ``x`` as text: its shape, then one value per line."""
    with open(filepath, "w") as output:
        print(tuple(x.shape), file=output)
        np.array(x).tofile(output, sep="\n")


def load_param_in_txt(name, filepath):
    """Read a file written by :func:`save_param_in_txt` into parameter ``name``.

    Raises:
        ValueError: when the first line is not a shape or the values do not fill it.
    """
    import nnabla as nn

    with open(filepath) as stream:
        lines = stream.read().split("\n")
    try:
        shape = tuple(ast.literal_eval(lines.pop(0)))
    except (ValueError, SyntaxError, TypeError):
        raise ValueError(f"encode_param: {filepath!r}: the first line must be the shape, "
                         f"e.g. '(3, 4)'") from None
    values = np.array([v for v in " ".join(lines).split() if v], dtype=np.float32)
    if values.size != int(np.prod(shape)):
        raise ValueError(f"encode_param: {filepath!r} has {values.size} values; shape {shape} "
                         f"needs {int(np.prod(shape))}")
    variable = nn.Variable(shape, need_grad=True)
    variable.d = values.reshape(shape)
    set_parameter(name, variable)


def param_file_name(key):
    """The text file name of parameter ``key`` (``conv/W`` -> ``conv~W.txt``)."""
    return urllib.parse.quote(key, safe="/ ").replace("/", "~") + ".txt"


def decode_param_command(args, **kwargs):
    """Write every parameter of ``args.param`` as text into ``args.outdir``."""
    if not args.param:
        raise ValueError("nnabla_cli decode_param: -p/--param (the parameter file) is required")
    os.makedirs(args.outdir, exist_ok=True)
    logger.log(99, "Loading parameters...")
    load_parameters(args.param)
    for key, variable in get_parameters(grad_only=False).items():
        logger.log(99, key)
        save_param_in_txt(variable.d, os.path.join(args.outdir, param_file_name(key)))
    logger.log(99, "Decode Parameter Completed.")
    return True


def encode_param_command(args, **kwargs):
    """Read the text files of ``args.indir`` and save them as ``args.param``."""
    if not args.param:
        raise ValueError("nnabla_cli encode_param: -p/--param (the output file) is required")
    names = sorted(f for f in os.listdir(args.indir)
                   if os.path.isfile(os.path.join(args.indir, f)))
    logger.log(99, "Loading parameters...")
    clear_parameters()
    for file_name in names:
        key = urllib.parse.unquote(os.path.splitext(file_name)[0].replace("~", "/"))
        logger.log(99, key)
        load_param_in_txt(key, os.path.join(args.indir, file_name))
    logger.log(99, "Saving parameters...")
    save_parameters(args.param)
    logger.log(99, "Encode Parameter Completed.")
    return True


def add_decode_param_command(subparsers):
    """Register ``decode_param``."""
    p = subparsers.add_parser("decode_param", help="Decode parameter to plain text.")
    p.add_argument("-p", "--param", help="path to parameter file", required=False)
    p.add_argument("-o", "--outdir", help="output directory", required=True)
    p.set_defaults(func=decode_param_command)


def add_encode_param_command(subparsers):
    """Register ``encode_param``."""
    p = subparsers.add_parser("encode_param", help="Encode plain text to parameter format.")
    p.add_argument("-i", "--indir", help="input directory", required=True)
    p.add_argument("-p", "--param", help="path to parameter file", required=False)
    p.set_defaults(func=encode_param_command)
