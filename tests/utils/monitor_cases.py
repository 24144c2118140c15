"""A fixed monitoring scenario run the same way on this package and on nnabla 1.39.

``tools/record_monitor_files.py`` runs :func:`run_scenario` under nnabla 1.39 into
``tests/data/monitor/nnabla/``; ``tests/utils/test_monitor_files.py`` runs it here and
compares the files (series text byte for byte, images pixel for pixel, timer files by their
columns). Only the public nnabla API is used.
"""
import numpy as np


def run_scenario(nnabla_monitor, root):
    """Write series, timer, image and tiled-image files under ``root``."""
    M = nnabla_monitor
    rng = np.random.RandomState(12)
    monitor = M.Monitor(root)
    series = M.MonitorSeries("Training loss", monitor, interval=3, verbose=False)
    vector = M.MonitorSeries("error", monitor, interval=2, verbose=False)
    timer = M.MonitorTimeElapsed("Epoch time", monitor, interval=2, verbose=False)
    image = M.MonitorImage("images", monitor, interval=2, num_images=2)
    gray = M.MonitorImage("gray", monitor, interval=3, num_images=3)
    tile = M.MonitorImageTile("tile", monitor, interval=2, num_images=5)
    tile_norm = M.MonitorImageTile("tile01", monitor, interval=4, num_images=4,
                                   normalize_method=lambda x: np.clip(x, 0, 1))
    for i in range(8):
        series.add(i, float(rng.randn() * 10 ** rng.randint(-4, 5)))
        vector.add(i, rng.rand(3, 2).astype(np.float32))
        timer.add(i)
        image.add(i, rng.randn(3, 3, 5, 4))
        gray.add(i, rng.rand(4, 1, 6, 6).astype(np.float32))
        tile.add(i, rng.randn(7, 3, 4, 4))
        tile_norm.add(i, rng.rand(4, 1, 3, 3) * 1.4 - 0.2)
