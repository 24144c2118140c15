"""Record what nnabla 1.39's ``nnabla_cli`` prints and writes, for tests/cli.

Run with this project's development interpreter (it writes the model with our
``nnabla.utils.save``) and point ``--reference`` (or ``NNABLA_REFERENCE_PYTHON``) at an
interpreter that has nnabla 1.39:

    python tools/record_cli_reference.py --reference $NNABLA_REFERENCE_PYTHON tests/data/cli

It writes into the destination folder:

* ``model.nnp``, ``valid.csv``: a small digits project (tests/cli/digits_project.py; 64
  validation rows, the stored parameters seeded; its datasets are the relative uris
  ``train.csv`` and ``valid.csv``, which nnabla opens relative to the working directory);
* ``version.txt``: nnabla's ``nnabla_cli version`` output;
* ``function_info.txt``: ``nnabla_cli function_info`` (sorted: nnabla prints a set);
* ``function_info_model.txt``: ``nnabla_cli function_info model.nnp`` (sorted);
* ``decode/``: ``nnabla_cli decode_param -p model.nnp -o decode``;
* ``forward_output_result.csv``: ``nnabla_cli forward -c model.nnp -d valid.csv``;
* ``infer_input.bin``, ``infer_output_0.bin``: ``nnabla_cli infer`` of the first example;
* ``train_layout.json``: after ``nnabla_cli train`` for 2 epochs, the output file names,
  the members of ``results.nnp`` and the keys of ``monitoring_report.yml`` per epoch.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cli"))


def _cli(reference, *args, cwd):
    code = "import sys; from nnabla.utils.cli.cli import main; sys.argv[0] = 'nnabla_cli'; main()"
    result = subprocess.run([reference, "-c", code, *args], cwd=cwd, capture_output=True,
                            text=True)
    # nnabla exits with -1 after `version` even when it worked, so only the output counts
    return result.stdout


def _body(stdout):
    """The output without nnabla's banner line and its import messages (lines with a
    space, such as ``Importing model.nnp``, except the version line)."""
    return [line for line in stdout.splitlines() if not line.startswith("NNabla command line")
            and (" " not in line.strip() or line.startswith("Version:"))]


def _monitoring_keys(path):
    epochs, current = {}, None
    with open(path) as stream:
        for line in stream:
            if not line.startswith(" "):
                current = line.strip().rstrip(":")
                epochs[current] = []
            else:
                epochs[current].append(line.strip().split(":")[0])
    return epochs


def _train_layout(reference, work):
    import digits_project

    folder = os.path.join(work, "train")
    os.makedirs(folder)
    model = digits_project.make_project(folder, max_epoch=2)
    os.makedirs(os.path.join(folder, "out"))
    _cli(reference, "train", "-c", model, "-o", "out", cwd=folder)
    out = os.path.join(folder, "out")
    with zipfile.ZipFile(os.path.join(out, "results.nnp")) as archive:
        members = sorted(archive.namelist())
    return {"files": sorted(os.listdir(out)), "results_members": members,
            "monitoring_report": _monitoring_keys(os.path.join(out, "monitoring_report.yml"))}


def record(reference, destination):
    import numpy as np

    import digits_project

    destination = os.path.abspath(destination)
    os.makedirs(destination, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        # relative dataset uris: the recorded model names no path of this machine
        digits_project.make_project(work, max_epoch=1, relative_uris=True)
        (_, _), (vx, vy) = digits_project.digits(n_train=640, n_valid=64)
        digits_project.write_csv(os.path.join(work, "valid.csv"), vx, vy)
        for name in ("model.nnp", "valid.csv"):
            shutil.copyfile(os.path.join(work, name), os.path.join(destination, name))
        texts = {"version.txt": _body(_cli(reference, "version", cwd=work)),
                 "function_info.txt": sorted(_body(_cli(reference, "function_info", cwd=work))),
                 "function_info_model.txt": sorted(_body(_cli(reference, "function_info",
                                                              "model.nnp", cwd=work)))}
        for name, lines in texts.items():
            with open(os.path.join(destination, name), "w") as stream:
                stream.write("\n".join(lines) + "\n")
        _cli(reference, "decode_param", "-p", "model.nnp", "-o", "decode", cwd=work)
        shutil.rmtree(os.path.join(destination, "decode"), ignore_errors=True)
        shutil.copytree(os.path.join(work, "decode"), os.path.join(destination, "decode"))
        os.makedirs(os.path.join(work, "fwd"))   # nnabla does not create it
        _cli(reference, "forward", "-c", "model.nnp", "-d", "valid.csv", "-o", "fwd", cwd=work)
        shutil.copyfile(os.path.join(work, "fwd", "output_result.csv"),
                        os.path.join(destination, "forward_output_result.csv"))
        vx[:1].astype(np.float32).tofile(os.path.join(destination, "infer_input.bin"))
        _cli(reference, "infer", "-c", "model.nnp", "-o", os.path.join(work, "infer_output"),
             os.path.join(destination, "infer_input.bin"), cwd=work)
        shutil.copyfile(os.path.join(work, "infer_output_0.bin"),
                        os.path.join(destination, "infer_output_0.bin"))
        with open(os.path.join(destination, "train_layout.json"), "w") as stream:
            json.dump(_train_layout(reference, work), stream, indent=1, sort_keys=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("destination")
    parser.add_argument("--reference", default=os.environ.get("NNABLA_REFERENCE_PYTHON"),
                        help="interpreter with nnabla 1.39 (default: $NNABLA_REFERENCE_PYTHON)")
    args = parser.parse_args()
    if not args.reference:
        parser.error("give --reference or set NNABLA_REFERENCE_PYTHON")
    record(args.reference, args.destination)


if __name__ == "__main__":
    main()
