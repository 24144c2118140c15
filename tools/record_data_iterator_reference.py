"""Record nnabla 1.39's data-iterator orders and cache files into tests/data/data_iterator/.

Run with the interpreter of an environment that has nnabla 1.39 (and pillow):

    $NNABLA_REFERENCE_PYTHON tools/record_data_iterator_reference.py

It writes ``orders.json`` (the labels of the first batches of several iterator
configurations, single-threaded so that positions are deterministic) and
``nnabla_cache/`` (the cache directory nnabla writes for a small CSV data set, read back
by tests/utils/test_data_source.py).
"""
import json
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "data", "data_iterator")
sys.path.insert(0, os.path.join(HERE, "..", "tests", "utils"))
from data_iterator_cases import CASES, write_csv_dataset  # noqa: E402


def labels(iterator, n_batches):
    return [iterator.next()[-1].ravel().round().astype(int).tolist() for _ in range(n_batches)]


def main():
    from nnabla.config import nnabla_config
    import nnabla.utils.data_iterator as D
    from nnabla.utils.create_cache import CreateCache
    from nnabla.utils.data_source_implements import CsvDataSource

    nnabla_config.set("DATA_ITERATOR", "data_source_file_cache_size", "3")
    os.makedirs(OUT, exist_ok=True)
    folder = tempfile.mkdtemp()
    csv_path = write_csv_dataset(folder, 7)
    recorded = {}
    for name, case in CASES.items():
        iterator = case(D, CsvDataSource, csv_path, folder)
        recorded[name] = labels(iterator, 6)
        iterator.close()
    with open(os.path.join(OUT, "orders.json"), "w") as f:
        json.dump(recorded, f, indent=1)
    cache = os.path.join(OUT, "nnabla_cache")
    shutil.rmtree(cache, ignore_errors=True)
    os.makedirs(cache)
    CreateCache(csv_path, shuffle=True, rng=np.random.RandomState(5)).create(cache,
                                                                          normalize=False)
    os.remove(os.path.join(cache, "original.csv"))  # it names the temporary folder's files
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
