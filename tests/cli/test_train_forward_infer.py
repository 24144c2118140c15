"""nnabla_cli train / forward / infer on a digits project written with nnabla.utils.save."""
import csv
import json
import os
import shutil
import subprocess
import sys
import zipfile

import nnabla as nn
import numpy as np
import pytest
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "cli")
from nnabla.utils.nnp_graph import NnpLoader


def _report(path):
    epochs, current = {}, None
    for line in open(path):
        if not line.startswith(" "):
            current = int(line.strip().rstrip(":"))
            epochs[current] = {}
        else:
            key, value = line.strip().split(":")
            epochs[current][key] = float(value)
    return epochs


@pytest.fixture(scope="module")
def trained(project, tmp_path_factory):
    from nnabla.utils.cli.cli import main
    out = tmp_path_factory.mktemp("trained")
    assert main(["train", "-c", str(project / "model.nnp"), "-o", str(out)]) == 0
    nn.clear_parameters()
    return out


def test_train_writes_nnablas_output_layout(trained):
    layout = json.load(open(os.path.join(DATA, "train_layout.json")))
    expected = [f.replace("results_current_2", "results_current_3") for f in layout["files"]]
    assert sorted(os.listdir(trained)) == expected
    assert sorted(zipfile.ZipFile(trained / "results.nnp").namelist()) == \
        layout["results_members"]
    report = _report(trained / "monitoring_report.yml")
    assert sorted(report) == [0, 1, 2]
    assert all(sorted(r) == layout["monitoring_report"]["0"] for r in report.values())


def test_training_lowers_cost_and_validation_error(trained):
    report = _report(trained / "monitoring_report.yml")
    assert report[2]["cost"] < report[0]["cost"] - 0.5
    assert report[2]["valid_error"] < report[0]["valid_error"]
    assert report[2]["valid_error"] < 0.3


def _run_runtime(nnp, x):
    nn.clear_parameters()
    net = NnpLoader(str(nnp)).get_network("runtime", batch_size=len(x))
    net.inputs["x"].d = x
    net.outputs["prob"].forward()
    result = np.array(net.outputs["prob"].d)
    nn.clear_parameters()
    return result


def test_forward_csv_holds_the_networks_outputs(trained, project, cli, tmp_path):
    code, _, _ = cli("forward", "-c", trained / "results.nnp", "-d", project / "valid.csv",
                     "-o", tmp_path / "fwd")
    assert code == 0
    rows = list(csv.reader(open(tmp_path / "fwd" / "output_result.csv")))
    header, rows = rows[0], rows[1:]
    assert header[-10:] == [f"prob__{i}" for i in range(10)] and header[64] == "y"
    x = np.array([[float(v) for v in r[:64]] for r in rows], dtype=np.float32)
    got = np.array([[float(v) for v in r[65:]] for r in rows])
    np.testing.assert_allclose(got, _run_runtime(trained / "results.nnp", x), rtol=1e-5,
                               atol=1e-7)
    accuracy = np.mean(got.argmax(1) == np.array([float(r[64]) for r in rows]))
    assert accuracy > 0.7


def test_resume_continues_from_the_last_checkpoint(trained, project, cli, tmp_path):
    out = tmp_path / "resumed"
    out.mkdir()
    # the epoch-3 parameters presented as the checkpoint of epoch 2: only epoch 3 runs
    (out / "results_current_2.nnp").write_bytes((trained / "results_current_3.nnp").read_bytes())
    code, _, _ = cli("train", "-r", "-c", project / "model.nnp", "-o", out)
    assert code == 0
    report, first = _report(out / "monitoring_report.yml"), _report(
        trained / "monitoring_report.yml")
    assert list(report) == [2]
    assert report[2]["cost"] < first[1]["cost"]       # started from trained parameters
    layout = json.load(open(os.path.join(DATA, "train_layout.json")))
    assert sorted(os.listdir(out)) == [f.replace("results_current_2", "results_current_3")
                                       for f in layout["files"]]


def test_forward_matches_nnablas_output_on_the_same_files(recorded, cli):
    code, _, _ = cli("forward", "-c", recorded / "model.nnp", "-d", recorded / "valid.csv",
                     "-o", recorded / "fwd")
    assert code == 0
    ours = list(csv.reader(open(recorded / "fwd" / "output_result.csv")))
    theirs = list(csv.reader(open(recorded / "forward_output_result.csv")))
    assert ours[0] == theirs[0] and len(ours) == len(theirs) == 65
    np.testing.assert_allclose(np.array(ours[1:], dtype=float), np.array(theirs[1:], dtype=float),
                               rtol=1e-5, atol=1e-7)


def test_infer_writes_nnablas_binary_output(recorded, cli):
    code, _, _ = cli("infer", "-c", recorded / "model.nnp", "-o", recorded / "ours",
                     recorded / "infer_input.bin")
    assert code == 0
    np.testing.assert_allclose(np.fromfile(recorded / "ours_0.bin", np.float32),
                               np.fromfile(recorded / "infer_output_0.bin", np.float32),
                               rtol=1e-5, atol=1e-7)


def test_forward_and_infer_through_the_console_script(recorded):
    script = [sys.executable, "-m", "nnabla"]
    done = subprocess.run(script + ["infer", "-c", "model.nnp", "-o", "sub", "infer_input.bin"],
                          cwd=recorded, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("NNabla command line interface (Version:")
    np.testing.assert_allclose(np.fromfile(recorded / "sub_0.bin", np.float32),
                               np.fromfile(recorded / "infer_output_0.bin", np.float32),
                               rtol=1e-5)


def test_train_without_training_config_fails_clearly(recorded, cli, tmp_path):
    nn.clear_parameters()
    x = nn.Variable((2, 3))
    y = nn.functions.relu(x)
    from nnabla.utils.save import save
    save(str(tmp_path / "plain.nnp"), {"networks": [{"name": "n", "batch_size": 2,
                                                     "outputs": {"y": y}, "names": {"x": x}}]})
    code, _, err = cli("train", "-c", tmp_path / "plain.nnp", "-o", tmp_path / "o")
    assert code == 255 and "has no training_config" in err


MPIEXEC = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or shutil.which("mpiexec")


@pytest.mark.skipif(MPIEXEC is None, reason="needs mpiexec (extra 'mpi' of nnabla-ext-cpu)")
def test_train_with_mpi_flag_in_two_processes(project, tmp_path):
    command = [MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-n", "2", sys.executable,
               "-m", "nnabla", "-m", "train", "-c", str(project / "model.nnp"), "-o",
               str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report = _report(tmp_path / "monitoring_report.yml")     # written by rank 0 only
    assert sorted(report) == [0, 1, 2] and report[2]["cost"] < report[0]["cost"]
    assert (tmp_path / "results.nnp").exists()


def test_relative_dataset_uris_are_opened_from_the_working_directory(cli, recorded, tmp_path,
                                                                      monkeypatch):
    # The recorded model names its datasets "train.csv" and "valid.csv"; nnabla 1.39 opens
    # them relative to the working directory (not the .nnp's folder), as checked when
    # recording (tools/record_cli_reference.py).
    shutil.copyfile(recorded / "valid.csv", recorded / "train.csv")
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("train", "-c", recorded / "model.nnp", "-o", tmp_path / "elsewhere")
    assert code != 0 and "train.csv" in err
    monkeypatch.chdir(recorded)
    code, _, _ = cli("train", "-c", "model.nnp", "-o", tmp_path / "here")
    assert code == 0 and (tmp_path / "here" / "results.nnp").exists()
