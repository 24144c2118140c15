"""Tests of nnabla.monitor: the exact files nnabla's monitors write, logging and plots.

The expected lines follow nnabla 1.39's file formats: ``"<index> <mean:g>"`` in
``<name>.series.txt``, ``"<index> <lap> <iterations> <total>"`` (Python float repr) in
``<name>.timer.txt``, and the PNG names ``<index:06d>-<j:03d>.png`` / ``<index:06d>.png``.
"""
import doctest
import logging
import os
import sys
from types import SimpleNamespace

import nnabla as nn
import nnabla.monitor
import numpy as np
import pytest
from nnabla.monitor import (Monitor, MonitorImage, MonitorImageTile, MonitorSeries,
                            MonitorTimeElapsed, plot_series, plot_time_elapsed, tile_images)
from PIL import Image


@pytest.fixture
def monitor(tmp_path):
    return Monitor(str(tmp_path / "run" / "monitor"))


@pytest.fixture
def log_records():
    """The records nnabla's logger emits during the test (it does not propagate)."""
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("nnabla")
    logger.addHandler(handler)
    yield records
    logger.removeHandler(handler)


def read_lines(path):
    with open(path) as file:
        return file.read().splitlines()


def read_png(path):
    with Image.open(path) as image:
        return image.mode, np.array(image)


def min_max(x):
    return (x - x.min()) / (x.max() - x.min())


def to_uint8(x):
    """nnabla's imsave of a [0, 1] image: float32, times 255, truncated."""
    return (x.astype(np.float32) * 255).astype(np.uint8)


def tile_reference(images, padsize=1, padval=0):
    """Tiles placed one by one on a square canvas: an independent tile_images."""
    batch, channels, height, width = images.shape
    n = int(np.ceil(np.sqrt(batch)))
    canvas = np.full((n * (height + padsize), n * (width + padsize), channels), padval,
                     dtype=images.dtype)
    for k in range(batch):
        top, left = (k // n) * (height + padsize), (k % n) * (width + padsize)
        canvas[top:top + height, left:left + width] = images[k].transpose(1, 2, 0)
    return canvas[..., 0] if channels == 1 else canvas


def test_monitor_creates_its_folder_with_parents(tmp_path):
    monitor = Monitor(str(tmp_path / "a" / "b"))
    assert os.path.isdir(monitor.save_path) and monitor.save_path == str(tmp_path / "a" / "b")
    Monitor(monitor.save_path)  # an existing folder is fine


def test_series_file_holds_the_mean_of_each_interval_in_g_format(monitor):
    series = MonitorSeries("Training loss", monitor, interval=3, verbose=False)
    for i, value in enumerate([1, 2, 3.5, 0.25, 0.5, 0.75, 1e-7, 2e-7, 3e-7, 9]):
        series.add(i, value)
    path = os.path.join(monitor.save_path, "Training-loss.series.txt")
    assert series.sp == path
    assert read_lines(path) == ["2 2.16667", "5 0.5", "8 2e-07"]
    assert series.buf == [9]  # index 9 waits for the next interval


def test_series_flushes_once_the_index_is_an_interval_past_the_last_flush(monitor):
    series = MonitorSeries("loss", monitor, interval=10, verbose=False)
    for index, value in [(0, 1.0), (5, 2.0), (6, 3.0), (20, 6.0), (25, 7.0), (30, 8.0)]:
        series.add(index, value)
    assert read_lines(series.sp) == ["20 3", "30 7.5"]


def test_series_averages_arrays_over_all_their_elements(monitor):
    series = MonitorSeries("err", monitor, interval=2, verbose=False)
    series.add(0, np.array([1.0, 2.0], dtype=np.float32))
    series.add(1, np.array([3.0, 10.0], dtype=np.float32))
    assert read_lines(series.sp) == ["1 4"]


def test_series_logs_each_flush_with_the_full_mean(monitor, log_records):
    series = MonitorSeries("Training loss", monitor, interval=3)
    for i, value in enumerate([1, 2, 3.5]):
        series.add(i, value)
    assert [r.getMessage() for r in log_records] == [
        f"iter=2 {{Training loss}}={np.mean([1, 2, 3.5])}"]
    assert log_records[0].levelno == logging.INFO


def test_series_without_a_monitor_only_logs_and_verbose_false_is_silent(log_records):
    MonitorSeries("quiet", interval=1, verbose=False).add(0, 1.0)
    loud = MonitorSeries("loud", interval=1)
    loud.add(0, 0.5)
    assert loud.sp is None
    assert [r.getMessage() for r in log_records] == ["iter=0 {loud}=0.5"]


def test_a_new_monitor_of_the_same_name_starts_an_empty_file(monitor):
    MonitorSeries("loss", monitor, verbose=False).add(0, 1.0)
    second = MonitorSeries("loss", monitor, verbose=False)
    assert read_lines(second.sp) == []


def test_timer_file_has_lap_iterations_and_total(monitor, monkeypatch, log_records):
    clock = iter([10.0, 10.5, 11.25, 13.0])
    monkeypatch.setattr(nnabla.monitor, "time", SimpleNamespace(time=lambda: next(clock)))
    timer = MonitorTimeElapsed("Epoch time", monitor, interval=2)
    for i in range(6):
        timer.add(i)
    path = os.path.join(monitor.save_path, "Epoch-time.timer.txt")
    assert read_lines(path) == ["1 0.5 2 0.5", "3 0.75 2 1.25", "5 1.75 2 3.0"]
    assert log_records[0].getMessage() == "iter=1 {Epoch time}=0.5[sec/2iter] 0.5[sec]"


def test_timer_default_interval_is_100(monitor):
    timer = MonitorTimeElapsed("time", monitor, verbose=False)
    for i in range(250):
        timer.add(i)
    assert [line.split()[0] for line in read_lines(timer.sp)] == ["99", "199"]


def test_image_monitor_saves_min_max_normalized_pngs_at_due_indices(monitor):
    x = np.random.RandomState(0).randn(4, 3, 5, 6)
    images = MonitorImage("gen images", monitor, interval=3, num_images=2, verbose=False)
    for i in range(6):
        images.add(i, x)
    folder = os.path.join(monitor.save_path, "gen-images")
    assert sorted(os.listdir(folder)) == [f"{i:06d}-{j:03d}.png" for i in (0, 2, 5)
                                          for j in (0, 1)]
    expected = to_uint8(min_max(x[:2]))  # normalized together
    for j in (0, 1):
        mode, pixels = read_png(os.path.join(folder, f"000005-{j:03d}.png"))
        assert mode == "RGB"
        np.testing.assert_array_equal(pixels, expected[j].transpose(1, 2, 0))


def test_image_monitor_channels_gray_two_and_more_than_three(monitor):
    images = MonitorImage("c", monitor, num_images=16, verbose=False)
    gray = np.random.rand(2, 3, 1, 4, 4)  # leading axes are flattened: 6 images
    images.add(0, gray)
    assert len(os.listdir(images.save_dir)) == 6
    mode, pixels = read_png(os.path.join(images.save_dir, "000000-005.png"))
    assert mode == "L"
    np.testing.assert_array_equal(pixels, to_uint8(min_max(gray.reshape(6, 4, 4))[5]))
    images.add(0, np.random.rand(1, 2, 4, 4))
    assert np.all(read_png(os.path.join(images.save_dir, "000000-000.png"))[1][..., 2] == 255)
    five = np.random.rand(1, 5, 4, 4)
    images.add(0, five)
    np.testing.assert_array_equal(read_png(os.path.join(images.save_dir, "000000-000.png"))[1],
                                  to_uint8(min_max(five)[0, :3]).transpose(1, 2, 0))


def test_image_tile_monitor_saves_one_tiled_png(monitor, log_records):
    x = np.random.RandomState(1).rand(5, 3, 4, 4).astype(np.float32)
    tiles = MonitorImageTile("tile", monitor, interval=2, num_images=3)
    tiles.add(1, nn.Variable.from_numpy_array(x))
    tiles.add(2, x)  # (2 + 1) % 2 != 0: not due
    path = os.path.join(monitor.save_path, "tile", "000001.png")
    assert os.listdir(tiles.save_dir) == ["000001.png"]
    expected = to_uint8(tile_reference(min_max(x[:3])))
    mode, pixels = read_png(path)
    assert mode == "RGB"
    np.testing.assert_array_equal(pixels, expected)
    assert log_records[0].getMessage() == f"iter=1 {{tile}} is written to {path}."


def test_image_monitor_takes_ndarrays_and_custom_normalizers(monitor):
    images = MonitorImage("n", monitor, verbose=False, normalize_method=lambda x: x * 0 + 1.0)
    images.add(0, nn.NdArray.from_numpy_array(np.zeros((1, 1, 3, 3), np.float32)))
    assert np.all(read_png(os.path.join(images.save_dir, "000000-000.png"))[1] == 255)


def test_image_monitor_rejects_other_types_and_shapes(monitor):
    images = MonitorImage("bad", monitor, verbose=False)
    with pytest.raises(TypeError, match="numpy.ndarray"):
        images.add(0, [[[0.0]]])
    with pytest.raises(ValueError, match=r"\(N, \.\.\., C, H, W\)"):
        images.add(0, np.zeros((4, 4)))


@pytest.mark.parametrize("shape", [(1, 1, 8, 8), (3, 1, 2, 2), (5, 3, 4, 7), (64, 1, 8, 8),
                                   (10, 2, 3, 3)])
@pytest.mark.parametrize("padsize,padval", [(1, 0), (0, 0), (2, 0.5)])
def test_tile_images_matches_placing_tiles_on_a_square_grid(shape, padsize, padval):
    images = np.random.RandomState(2).rand(*shape)
    tiled = tile_images(images, padsize=padsize, padval=padval)
    np.testing.assert_array_equal(tiled, tile_reference(images, padsize, padval))


def test_tile_images_of_the_tutorial_digits_is_72_by_72():
    assert tile_images(np.zeros((64, 1, 8, 8))).shape == (72, 72)
    with pytest.raises(ValueError, match=r"\(B, C, H, W\)"):
        tile_images(np.zeros((8, 8, 8)))


@pytest.fixture
def pyplot():
    import matplotlib   # a test dependency: noxfile.py TEST_DEPS
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.figure()
    yield plt
    plt.close("all")


def test_plot_series_reads_nnabla_written_series_files(tmp_path, pyplot):
    path = tmp_path / "Training-loss.series.txt"
    path.write_text("199 1.50216\n399 0.22023\n599 0.0659928\n")
    plot_series(str(path), plot_kwargs={"label": "loss"})
    line = pyplot.gca().lines[-1]
    assert line.get_label() == "loss"
    np.testing.assert_array_equal(line.get_xdata(), [199, 399, 599])
    np.testing.assert_array_equal(line.get_ydata(),
                                  np.float32([1.50216, 0.22023, 0.0659928]))


@pytest.mark.parametrize("elapsed,unit,expected", [
    (False, "s", [0.5, 0.75]), (True, "s", [0.5, 1.25]), (True, "m", [0.5 / 60, 1.25 / 60]),
    (False, "h", [0.5 / 3600, 0.75 / 3600]), (False, "d", [0.5 / 86400, 0.75 / 86400])])
def test_plot_time_elapsed_picks_the_column_and_unit(tmp_path, pyplot, elapsed, unit,
                                                     expected):
    path = tmp_path / "time.timer.txt"
    path.write_text("1 0.5 2 0.5\n3 0.75 2 1.25\n")
    plot_time_elapsed(str(path), elapsed=elapsed, unit=unit)
    line = pyplot.gca().lines[-1]
    np.testing.assert_array_equal(line.get_xdata(), [1, 3])
    np.testing.assert_allclose(line.get_ydata(), expected, rtol=1e-6)


def test_plot_time_elapsed_rejects_unknown_units(tmp_path):
    with pytest.raises(ValueError, match="'s', 'm', 'h', 'd'"):
        plot_time_elapsed(str(tmp_path / "missing.timer.txt"), unit="w")


def test_plots_without_matplotlib_name_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"nnabla\[utils\]"):
        plot_series(str(tmp_path / "x.series.txt"))


def test_docstring_examples_run():
    assert doctest.testmod(nnabla.monitor).failed == 0
