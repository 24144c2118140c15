"""``nnabla_cli forward`` and ``nnabla_cli infer``: run an NNP file's executors.

``forward`` runs every executor over a CSV dataset (or a cache directory) and writes
``<outdir>/output_result.csv``: the dataset's columns followed by the outputs. An output
of one value per example is one column named after the executor's output data name; a
vector output gives columns ``<name>__0``, ``<name>__1``, ...; a 2-D output per example is
written to a CSV file and a 3-D one (1 or 3 channels) to a PNG under ``--result_outdir``,
and the column holds its path.

``infer`` reads raw binary input files (``float32`` unless ``-t``), runs the executors and
writes each output as raw float32 to ``<output>_<index>.bin``.
"""
from __future__ import annotations

import copy
import csv
import os
from functools import partial
from types import SimpleNamespace

import numpy as np

from ..._atomic import atomic_path
from .. import callback
from .. import load as _load
from ..data_iterator import data_iterator_cache, data_iterator_csv_dataset
from .utility import (compute_full_path, configure_progress, is_float, let_data_to_variable,
                      logger, progress, progress_bar)


def _column_kind(d):
    """``(type, columns)`` of an output of one example (nnabla's rule)."""
    if d.ndim == 2:
        return ".csv", 1
    if d.ndim == 3:
        return ".png", 1 if d.shape[0] in (1, 3) else d.shape[0]
    return "col", int(np.prod(d.shape))


def _write_file(path, vtype, d, dim_index):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if vtype == ".png":
        from ..image_utils import imsave

        x = np.array(d, dtype=np.float32) * 255.0
        if x.shape[0] > 3 or x.shape[0] == 2:
            x = x[dim_index]
        elif x.shape[0] == 3:
            x = x.transpose(1, 2, 0)
        else:
            x = x.reshape(x.shape[1], x.shape[2])
        imsave(path, x.clip(0, 255).astype(np.uint8))
        return
    with open(path, "w", newline="") as stream:
        csv.writer(stream, lineterminator="\n").writerows(np.array(d))


def _example_outputs(args, index, result, values, names, output_image):
    """Row fragments (one per example in the batch) for the outputs ``values``."""
    rows = []
    for output_index, (batch, (given_type, name)) in enumerate(zip(values, names),
                                                               start=len(result.names_done)):
        for example, d in enumerate(batch):
            if len(result.kinds) <= output_index:
                # nnabla infers the column layout only for outputs without a stored type
                kind = ("", 0) if given_type else _column_kind(d)
                result.kinds.append((name,) + kind)
            while len(rows) <= example:
                rows.append([])
            _, vtype, dim = result.kinds[output_index]
            if vtype == "col" or not output_image:
                rows[example].extend(np.ravel(d).tolist())
                continue
            for dim_index in range(dim):
                file_index = index + example
                file_name = f"{output_index}_{file_index // 1000:04d}" + os.path.sep
                if dim > 1:
                    file_name += f"{dim_index}_"
                file_name += f"{file_index}{vtype}"
                _write_file(os.path.join(args.outdir, args.result_outdir, file_name), vtype, d,
                            dim_index)
                rows[example].append(os.path.join(".", args.result_outdir, file_name))
    return rows


def _evaluate(e):
    """Run executor ``e`` ``num_evaluations`` times; the outputs as its repeat type says."""
    outputs = list(e.output_assign)
    total = [np.zeros(o.variable_instance.shape) for o in outputs]
    squares = [np.zeros(o.variable_instance.shape) for o in outputs]
    for _ in range(e.num_evaluations):
        e.forward_target.forward(clear_buffer=True)
        if e.need_back_propagation:
            e.backward_target.backward(clear_buffer=True)
        for k, o in enumerate(outputs):
            if e.repeat_evaluation_type == "last":
                total[k] = np.array(o.variable_instance.d)
            else:
                total[k] = total[k] + o.variable_instance.d
                squares[k] = squares[k] + o.variable_instance.d ** 2
    if e.repeat_evaluation_type == "last":
        return total
    n = e.num_evaluations
    if e.repeat_evaluation_type == "std":
        return [np.nan_to_num(np.sqrt(s / n - (t / n) ** 2)) for s, t in zip(squares, total)]
    return [t / n for t in total]


def forward_batch(args, index, executors, data, variables, output_image=True):
    """Set a batch, run every executor; ``(result, rows)`` (rows: outputs per example)."""
    result = SimpleNamespace(kinds=[], names_done=[])
    rows = None
    for e in executors:
        for var, data_name in e.dataset_assign.items():
            if data_name not in variables:
                raise ValueError(f"nnabla_cli forward: executor {e.name!r} needs data "
                                 f"{data_name!r}; the dataset has {list(variables)}")
            value = np.asarray(data[variables.index(data_name)])
            let_data_to_variable(var.variable_instance, value.reshape(
                var.variable_instance.shape), data_name=data_name, variable_name=var.name)
        for var, generator in e.generator_assign.items():
            var.variable_instance.d = generator(var.variable_instance.shape)
        values = _evaluate(e)
        found = _example_outputs(args, index, result, values, list(e.output_assign.values()),
                                 output_image)
        result.names_done += list(e.output_assign.values())
        rows = found if rows is None else [a + b for a, b in zip(rows, found)]
    return result, rows


def _load_info(args):
    files = [args.config] + ([args.param] if args.param else [])
    batch_size = args.batch_size if args.batch_size >= 1 else None
    return _load.load(files, prepare_data_iterator=False, batch_size=batch_size)


def read_csv_rows(filename):
    """``(header, rows)`` of a CSV file (UTF-8, optional BOM), empty rows dropped."""
    with open(filename, newline="", encoding="utf-8-sig") as stream:
        rows = [row for row in csv.reader(stream) if row]
    if not rows:
        raise ValueError(f"nnabla_cli forward: {filename!r} is empty (no header row)")
    return rows[0], rows[1:]


def _dataset_rows(args):
    """``(header, rows, orders, iterator factory)`` of the ``-d`` dataset."""
    ext = os.path.splitext(args.dataset)[1].lower()
    if ext == ".csv":
        header, rows = read_csv_rows(args.dataset)
        root = os.path.abspath(os.path.dirname(args.dataset)) if args.replace_path else "."
        rows = [[x if header[i].startswith("#") or is_float(x) else compute_full_path(root, x)
                 for i, x in enumerate(row)] for row in rows]
        return header, rows, list(range(len(rows))), partial(
            data_iterator_csv_dataset, with_memory_cache=False, with_file_cache=False)
    if ext == ".cache":
        header, rows = read_csv_rows(os.path.join(args.dataset, "original.csv"))
        rows = [[x if is_float(x) else compute_full_path(".", x) for x in row] for row in rows]
        with open(os.path.join(args.dataset, "order.csv"), newline="") as stream:
            orders = dict((int(a), int(b)) for a, b in csv.reader(stream))
        return header, rows, [orders[i] for i in range(len(rows))], data_iterator_cache
    raise ValueError(f'nnabla_cli forward: unsupported extension "{ext}" in "{args.dataset}"; '
                     f"expected .csv or .cache")


def _normalize(args, info):
    normalize = True
    for d in info.datasets.values():
        if args.dataset in (d.uri, d.cache_dir):
            normalize = d.normalize
    return normalize and not any(e.no_image_normalization for e in info.executors.values())


def forward_command(args):
    """Evaluate ``args.config`` over ``args.dataset`` into ``args.outdir/args.outfile``."""
    callback.update_status(args)
    if not args.dataset:
        raise ValueError("nnabla_cli forward: -d/--dataset (a .csv file or .cache folder) is "
                         "required")
    os.makedirs(args.outdir, exist_ok=True)
    configure_progress(os.path.join(args.outdir, "progress.txt"))
    info = _load_info(args)
    executors = list(info.executors.values())
    if not executors:
        raise ValueError(f"nnabla_cli forward: {args.config!r} has no executor")
    header, rows, orders, make = _dataset_rows(args)
    batch_size = executors[0].network.batch_size
    callback.update_status(("data.max", len(rows)))
    path = os.path.join(args.outdir, args.outfile)
    index = 0
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as stream, \
            progress_bar(len(rows), "Forward") as bar, \
            make(args.dataset, batch_size, shuffle=False,
                 normalize=_normalize(args, info)) as iterator:
        writer = csv.writer(stream, lineterminator="\n")
        while index < iterator.size:
            result, outputs = forward_batch(args, index, executors, iterator.next(),
                                            iterator.variables)
            if index == 0:
                header = header + _output_header(result, executors[-1])
                writer.writerow(header)
            for i, output in enumerate(outputs):
                if index + i < len(rows):
                    writer.writerow(copy.deepcopy(rows[orders[index + i]]) + output)
            index += len(outputs)
            bar.update(min(index, len(rows)) - bar.n)
            progress("Forward", min(index, len(rows)) / max(len(rows), 1))
            logger.log(99, f"data {min(index, len(rows))} / {len(rows)}")
    callback.process_evaluation_result(args.outdir, path)
    logger.log(99, "Forward Completed.")
    progress(None)
    callback.update_status(("output_result.csv_header", ",".join(header)))
    callback.update_status("finished")
    return True


def _output_header(result, last_executor):
    names = []
    for name, _, dim in result.kinds:
        if dim == 1:
            names.append("Uncertainty(Std)" if last_executor.repeat_evaluation_type == "std"
                         else name)
        else:
            names += [f"{name}__{d}" for d in range(dim)]
    return names


def infer(info, input_data):
    """Run ``info``'s executors on arrays (one per data variable, in executor order).

    Returns:
        (result, outputs): ``outputs[i]`` is the flattened outputs of example ``i``.
    """
    args = SimpleNamespace(outdir="", result_outdir="")
    executors = list(info.executors.values())
    data, names = [], []
    for e in executors:
        for var, data_name in e.dataset_assign.items():
            data.append(np.asarray(input_data[len(data)]).reshape(var.variable_instance.shape))
            names.append(data_name)
    return forward_batch(args, 0, executors, data, names, output_image=False)


def infer_command(args):
    """Run ``args.config`` on raw binary inputs; write ``<output>_<i>.bin`` (float32)."""
    os.environ["NNABLA_CUDNN_ALGORITHM_BY_HEURISTIC"] = "1"
    types = {"uint8": np.uint8, "int32": np.int32, "float32": np.float32}
    if args.data_type not in types:
        logger.critical('Type is one of ("uint8", "int32" or "float32").')
        return False
    info = _load_info(args)
    inputs = []
    for filename in args.inputs:
        dtype = types[args.data_type]
        if args.data_type == "float32":
            dtype = np.int32 if "int32" in filename else np.uint8 if "uint8" in filename \
                else np.float32
        inputs.append(np.fromfile(filename, dtype))
    _, outputs = infer(info, inputs)
    if args.output is not None:
        for i, o in enumerate(outputs):
            np.array(o).astype(np.float32).tofile(f"{args.output}_{i}.bin")
    return True


def add_infer_command(subparsers):
    """Register ``infer``."""
    p = subparsers.add_parser("infer", help="Do inference with NNP and binary data file input.")
    p.add_argument("-c", "--config", help="path to nntxt", required=True)
    p.add_argument("-o", "--output", help="output file prefix", required=False)
    p.add_argument("-p", "--param", help="path to parameter file", required=False)
    p.add_argument("-t", "--data_type", help="Parameter type (uint8, int32 or float32)",
                   default="float32", required=False)
    p.add_argument("-b", "--batch_size", type=int, default=1,
                   help="Batch size to use batch size in nnp file set -1.")
    p.add_argument("inputs", nargs="+")
    p.set_defaults(func=infer_command)


def add_forward_command(subparsers):
    """Register ``forward``."""
    p = subparsers.add_parser("forward", help="Do evaluation with NNP and test dataset.")
    p.add_argument("-c", "--config", help="path to nntxt", required=True)
    p.add_argument("-p", "--param", help="path to parameter file", required=False)
    p.add_argument("-d", "--dataset", help="path to CSV dataset", required=False)
    p.add_argument("-o", "--outdir", help="output directory", required=True)
    p.add_argument("-f", "--outfile", help="output file name", default="output_result.csv")
    p.add_argument("--replace_path", action="store_true",
                   help="replace data path in the dataset with absolute path")
    p.add_argument("--result_outdir", help="output result directory", type=str, default="")
    p.add_argument("-b", "--batch_size", type=int, default=-1,
                   help="Batch size to use batch size in nnp file set -1.")
    p.set_defaults(func=forward_command)
