"""Iterator configurations whose first batches tests/data/data_iterator/orders.json records
from nnabla 1.39 (tools/record_data_iterator_reference.py); shared by the recorder and the
tests. Each case returns an iterator whose last variable is the example's label."""
import os

import numpy as np


def write_csv_dataset(folder, size):
    """A CSV data set of ``size`` rows: a .npy file (3 values = label) and the label."""
    path = os.path.join(folder, "data.csv")
    with open(path, "w") as f:
        f.write("x:data,y\n")
        for n in range(size):
            np.save(os.path.join(folder, f"x{n}.npy"), np.full((3,), n, dtype=np.float32))
            f.write(f"x{n}.npy,{n}\n")
    return path


def _load(i):
    return np.full((2,), i, dtype=np.float32), np.array([i])


CASES = {
    "simple_memory_cache_shuffle": lambda D, Csv, csv_path, folder: D.data_iterator_simple(
        _load, 7, 3, shuffle=True, with_memory_cache=True, use_thread=False),
    "simple_file_cache_shuffle": lambda D, Csv, csv_path, folder: D.data_iterator_simple(
        _load, 7, 3, shuffle=True, with_memory_cache=False, with_file_cache=True,
        use_thread=False),
    "simple_both_caches_shuffle": lambda D, Csv, csv_path, folder: D.data_iterator_simple(
        _load, 7, 3, shuffle=True, with_memory_cache=True, with_file_cache=True,
        use_thread=False),
    "csv_dataset_shuffle": lambda D, Csv, csv_path, folder: D.data_iterator_csv_dataset(
        csv_path, 3, shuffle=True, use_thread=False),
    "csv_dataset_no_cache_shuffle": lambda D, Csv, csv_path, folder:
        D.data_iterator_csv_dataset(csv_path, 3, shuffle=True, with_memory_cache=False,
                                    with_file_cache=False, use_thread=False),
    "concat_shuffle": lambda D, Csv, csv_path, folder: D.data_iterator_concat_datasets(
        [Csv(csv_path), Csv(csv_path)], 4, shuffle=True, use_thread=False),
    "slice_of_shuffled": lambda D, Csv, csv_path, folder: D.data_iterator_simple(
        _load, 7, 2, shuffle=True, use_thread=False).slice(None, num_of_slices=3, slice_pos=1),
}
