"""nnabla_cli's other subcommands: outputs compared with nnabla 1.39's (tests/data/cli), numpy
and the files they must write."""
import csv
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import warnings

import nnabla as nn
import numpy as np
import pytest
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "cli")


def test_version_prints_nnablas_format(cli):
    code, out, _ = cli("version")
    recorded = open(os.path.join(DATA, "version.txt")).read().strip()
    pattern = r"Version:(\S+), Build:\S+"
    assert code == 0 and re.fullmatch(pattern, recorded)
    banner, line = out.splitlines()
    assert re.fullmatch(pattern, line)
    assert re.match(pattern, recorded).group(1) == re.match(pattern, line).group(1)
    assert banner == f"NNabla command line interface ({line})"


def test_function_info_lists_nnablas_functions(cli, recorded):
    code, out, _ = cli("function_info")
    expected = open(os.path.join(DATA, "function_info.txt")).read().split()
    assert code == 0 and out.splitlines()[1:] == expected
    code, out, _ = cli("function_info", recorded / "model.nnp")
    assert out.splitlines()[1:] == open(os.path.join(DATA, "function_info_model.txt")).read(
    ).split()


def test_function_info_filters_and_writes(cli, tmp_path):
    config = tmp_path / "target.txt"
    config.write_text("; functions of the target\nAffine, FLOAT32\nReLU\nNoSuchFunction\n")
    code, _, _ = cli("function_info", "-c", config, "-x", "ReLU", "-o", tmp_path / "out.txt")
    assert code == 0 and (tmp_path / "out.txt").read_text() == "Affine"


def test_decode_param_writes_nnablas_text_files(cli, recorded, tmp_path):
    code, _, _ = cli("decode_param", "-p", recorded / "model.nnp", "-o", tmp_path / "dec")
    assert code == 0
    assert sorted(os.listdir(tmp_path / "dec")) == sorted(os.listdir(recorded / "decode"))
    for name in os.listdir(recorded / "decode"):
        assert (tmp_path / "dec" / name).read_text() == (recorded / "decode" / name).read_text()


def test_encode_param_round_trips_decoded_parameters(cli, recorded, tmp_path):
    code, _, _ = cli("encode_param", "-i", recorded / "decode", "-p", tmp_path / "p.h5")
    assert code == 0
    nn.load_parameters(str(tmp_path / "p.h5"))
    encoded = {k: np.array(v.d) for k, v in nn.get_parameters(grad_only=False).items()}
    nn.clear_parameters()
    nn.load_parameters(str(recorded / "model.nnp"))
    for name, variable in nn.get_parameters(grad_only=False).items():
        # the text holds the stored values; encode_param reads them as float32 (as nnabla)
        np.testing.assert_allclose(encoded[name], variable.d, rtol=1e-6, atol=1e-9)
    nn.clear_parameters()


def test_profile_writes_one_timing_per_step(cli, project, tmp_path, monkeypatch):
    from nnabla.utils.cli import profile
    monkeypatch.setattr(profile, "MIN_TIME", 0.0)
    monkeypatch.setattr(profile, "MIN_COUNT", 2)
    code, _, _ = cli("profile", "-c", project / "model.nnp", "-o", tmp_path)
    assert code == 0
    rows = list(csv.reader(open(tmp_path / "profile.csv")))
    assert rows[0] == ["time in ms", "optimizer 'optimizer' with network 'training'"]
    names = [r[0] for r in rows[1:]]
    for expected in ("load_dataset", "let_data (x to x)", "let_data (y to y)",
                     "forward_function (Affine : Affine)", "forward_all", "backward_all",
                     "update (Adam)", "monitor_loss"):
        assert expected in names
    assert all(float(r[1]) >= 0 for r in rows[1:])


def test_profile_runs_the_preparation_before_each_call_untimed():
    from types import SimpleNamespace

    from nnabla.utils.cli.profile import profile
    order = []
    config = SimpleNamespace(min_time=0.0, min_count=3)
    result = profile(config, "step", lambda: order.append("run"), {}, lambda: None,
                     prepare=lambda: (order.append("prepare"), time.sleep(0.05)))
    assert order == ["prepare", "run"] * 4  # one warm-up, then min_count timed runs
    assert result["step"] < 25  # ms: the 50 ms preparation is not in the timing


def test_compare_with_cpu_finds_no_difference_between_cpu_runs(cli, project, tmp_path):
    code, _, _ = cli("compare_with_cpu", "-c", project / "model.nnp", "-c2",
                     project / "model.nnp", "-o", tmp_path)
    assert code == 0
    rows = list(csv.reader(open(tmp_path / "compare_with_cpu.csv")))
    assert rows[0] == ["1-Correl", "optimizer 'optimizer' with network 'training'"]
    names = [r[0] for r in rows[1:]]
    assert "forward_function (Affine, Affine_out)" in names
    assert "update (Adam, fc/affine/W)" in names
    assert all(float(r[1]) == 0.0 for r in rows[1:])


def test_calc_norm_diff_is_relative_standard_deviation():
    from nnabla.utils.cli.compare_with_cpu import calc_norm_diff
    a, b = np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 4.0])
    norm, std1, std2, diff = calc_norm_diff(a, b)
    assert norm == pytest.approx(np.std(a - b) / max(np.std(a), np.std(b)))


def test_conv_dataset_writes_a_cache_that_reads_back(cli, recorded, tmp_path):
    destination = tmp_path / "valid.cache"
    code, out, _ = cli("conv_dataset", recorded / "valid.csv", destination)
    assert code == 0 and "Number of Data: 64" in out
    assert {"cache_index.csv", "cache_info.csv", "order.csv", "original.csv"} <= set(
        os.listdir(destination))
    from nnabla.utils.data_iterator import data_iterator_cache
    with data_iterator_cache(str(destination), 64, normalize=False) as it:
        x, y = it.next()
    rows = np.array(list(csv.reader(open(recorded / "valid.csv")))[1:], dtype=float)
    np.testing.assert_allclose(x, rows[:, :64], rtol=1e-6)
    code, out, _ = cli("conv_dataset", recorded / "valid.csv", destination)
    assert code == 255 and "-F" in out


def test_forward_reads_a_cache_dataset(cli, recorded, tmp_path):
    cli("conv_dataset", recorded / "valid.csv", tmp_path / "v.cache")
    code, _, _ = cli("forward", "-c", recorded / "model.nnp", "-d", tmp_path / "v.cache",
                     "-o", tmp_path / "fwd")
    assert code == 0
    ours = np.array(list(csv.reader(open(tmp_path / "fwd" / "output_result.csv")))[1:],
                    dtype=float)
    theirs = np.array(list(csv.reader(open(recorded / "forward_output_result.csv")))[1:],
                      dtype=float)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-7)


def _image_dataset(folder):
    from nnabla.utils.image_utils import imsave
    rng = np.random.RandomState(0)
    for label in ("cat", "dog"):
        (folder / label).mkdir(parents=True)
        for i in range(3):
            imsave(str(folder / label / f"{i}.png"),
                   rng.randint(0, 255, (12, 16, 3)).astype(np.uint8))


def test_create_tar_packs_index_and_data_files(cli, tmp_path):
    _image_dataset(tmp_path / "src")
    (tmp_path / "src" / "d.csv").write_text("x:image,y:label\ncat/0.png,0\ndog/1.png,1\n")
    code, _, _ = cli("create_tar", tmp_path / "src" / "d.csv", tmp_path / "d.tar")
    assert code == 0
    with tarfile.open(tmp_path / "d.tar") as tar:
        assert tar.getnames() == ["index.csv", "data/000000000000_0.png",
                                  "data/000000000001_1.png"]
        index = tar.extractfile("index.csv").read().decode().splitlines()
    assert index == ["x:image,y:label", "data/000000000000_0.png,0", "data/000000000001_1.png,1"]


def test_upload_fails_clearly_without_network(cli, tmp_path):
    (tmp_path / "d.tar").write_bytes(b"")
    code, _, err = cli("upload", "-e", "http://127.0.0.1:9", "token", tmp_path / "d.tar")
    assert code == 255 and "cannot reach http://127.0.0.1:9" in err


def test_create_image_classification_dataset(cli, tmp_path):
    _image_dataset(tmp_path / "src")
    code, _, _ = cli("create_image_classification_dataset", "-i", tmp_path / "src", "-o",
                     tmp_path / "out", "-c", 1, "-w", 8, "-g", 8, "-m", "padding", "-s", "false",
                     "-f1", "train.csv", "-f2", "test.csv", "-r2", 50)
    assert code == 0
    train = list(csv.reader(open(tmp_path / "out" / "train.csv")))
    test = list(csv.reader(open(tmp_path / "out" / "test.csv")))
    assert train[0] == test[0] == ["x:image", "y:label"]
    assert train[1:] == [["./cat/0.png", "0"], ["./cat/1.png", "0"], ["./cat/2.png", "0"]]
    assert [r[1] for r in test[1:]] == ["1", "1", "1"]
    from nnabla.utils.image_utils import imread
    assert imread(str(tmp_path / "out" / "dog" / "2.png")).shape == (8, 8)


def test_create_object_detection_dataset(cli, tmp_path):
    from nnabla.utils.image_utils import imsave
    src = tmp_path / "src"
    src.mkdir()
    for i in range(4):
        imsave(str(src / f"{i}.png"), np.zeros((16, 16, 3), np.uint8))
        (src / f"{i}.txt").write_text(f"{i % 2} 0.3 0.3 0.2 0.2\n1 0.8 0.7 0.4 0.5\n")
    code, _, _ = cli("create_object_detection_dataset", "-i", src, "-o", tmp_path / "out",
                     "-n", 2, "-c", 3, "-w", 16, "-g", 16, "-a", 2, "-d", 4, "-m", "trimming",
                     "-s", "false", "-f1", "train.csv")
    assert code == 0
    rows = list(csv.reader(open(tmp_path / "out" / "train.csv")))
    assert rows[0] == ["x:image", "y:label", "r:region"] and len(rows) == 5
    label = np.loadtxt(tmp_path / "out" / "data" / "1_label.csv", delimiter=",")
    assert label.shape == (2 * 4, 4)
    # the small box's centre (0.3, 0.3) is in grid cell (1, 1) of the smaller anchor
    assert label.reshape(2, 4, 4)[0, 1, 1] == 1
    assert label.reshape(2, 4, 4)[1, 2, 3] == 1       # the large box: cell (x 3, y 2)
    region = np.loadtxt(tmp_path / "out" / "data" / "1_region.csv", delimiter=",")
    np.testing.assert_allclose(region.reshape(2, 4, 4, 4)[0, 1, 1],
                               [(0.3 - 0.375) * 4 + 0.5, (0.3 - 0.375) * 4 + 0.5,
                                np.log(0.8), np.log(0.8)], atol=1e-6)


def _monitor_files(folder):
    from nnabla.monitor import Monitor, MonitorSeries, MonitorTimeElapsed
    monitor = Monitor(str(folder))
    series = MonitorSeries("loss", monitor, interval=1)
    timer = MonitorTimeElapsed("time", monitor, interval=1)
    for i in range(3):
        series.add(i, 1.0 / (i + 1))
        timer.add(i)
    return folder / "loss.series.txt", folder / "time.timer.txt"


def test_plot_series_and_timer_save_figures(cli, tmp_path):
    pytest.importorskip("matplotlib", reason="plot_* need matplotlib (extra 'utils')")
    series, timer = _monitor_files(tmp_path)
    code, _, _ = cli("plot_series", series, "-o", tmp_path / "s.png", "-l", "run", "-T", 2)
    assert code == 0 and (tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"
    code, _, _ = cli("plot_timer", timer, "-e", "-u", "m", "-o", tmp_path / "t.png")
    assert code == 0 and (tmp_path / "t.png").stat().st_size > 0


def test_draw_graph_writes_the_dot_source(cli, recorded, tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    out = tmp_path / "drawn"
    code, _, _ = cli("draw_graph", "-o", out, "-n", "runtime", recorded / "model.nnp")
    assert code == 0 and os.listdir(out) == ["runtime.dot"]
    source = (out / "runtime.dot").read_text()
    assert source.startswith('digraph "runtime"') and 'label="Softmax"' in source
    assert 'label="fc/affine/W\\n(64, 10)"' in source and source.count("->") == 6
    code, _, err = cli("draw_graph", "-o", out, "-n", "nope", recorded / "model.nnp")
    assert code == 255 and "no network 'nope'" in err


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz's dot is not installed")
def test_draw_graph_renders_with_dot(cli, recorded, tmp_path):
    code, _, _ = cli("draw_graph", "-o", tmp_path, "-f", "svg", recorded / "model.nnp")
    assert code == 0 and sorted(os.listdir(tmp_path)) == ["runtime.svg", "training.svg",
                                                         "validation.svg"]


def test_converter_commands_say_what_is_missing(cli, recorded, tmp_path, monkeypatch):
    import nnabla.utils.converter as converter
    for name in ("convert_files", "dump_files", "nnb_template", "formats"):
        monkeypatch.delattr(converter, name, raising=False)
    for argv, needs in ((["convert", recorded / "model.nnp", tmp_path / "m.onnx"],
                         "convert_files"),
                        (["dump", recorded / "model.nnp"], "dump_files"),
                        (["nnb_template", recorded / "model.nnp", tmp_path / "t.yaml"],
                         "nnb_template")):
        code, _, err = cli(*argv)
        assert code == 255 and f"not available yet: it needs nnabla.utils.converter.{needs}" in err
    code, out, _ = cli("convert", recorded / "model.nnp", tmp_path / "m.xyz")
    assert code == 255


def test_optimize_rejects_mismatched_formats(cli, recorded, tmp_path):
    code, _, err = cli("optimize", recorded / "model.nnp", tmp_path / "m.pb")
    assert code == 255 and "Input or output file format error." in err


def test_plugins_and_mpi_flag(cli):
    with warnings.catch_warnings():
        # activating every plugin warns once for each one that cannot load here
        warnings.simplefilter("ignore")
        code, out, _ = cli("plugins")
    assert code == 0 and "cpu" in out
    pytest.importorskip("mpi4py", reason="-m needs MPI (extra 'mpi' of nnabla-ext-cpu)")
    code, out, err = cli("-m", "version")
    assert code == 0 and "Version:" in out, err


def test_missing_subcommand_prints_help_and_fails(cli):
    code, _, err = cli()
    assert code == 255 and "usage: nnabla_cli" in err


def test_subprocess_function_info_and_decode(recorded):
    out = subprocess.run([sys.executable, "-m", "nnabla", "function_info"], capture_output=True,
                         text=True, check=True).stdout
    assert out.splitlines()[1:] == open(os.path.join(DATA, "function_info.txt")).read().split()
    subprocess.run([sys.executable, "-m", "nnabla", "decode_param", "-p", "model.nnp", "-o",
                    "dec2"], cwd=recorded, capture_output=True, check=True)
    assert (recorded / "dec2" / "fc~affine~b.txt").read_text() == \
        (recorded / "decode" / "fc~affine~b.txt").read_text()


def test_docstring_examples_run():
    import doctest

    from nnabla.utils.cli import utility
    assert doctest.testmod(utility).failed == 0
