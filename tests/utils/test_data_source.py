"""Tests of nnabla.utils.data_source*, create_cache and the CSV/cache iterators.

Orders and the cache directory are compared with what nnabla 1.39 gives and writes
(tests/data/data_iterator, recorded by tools/record_data_iterator_reference.py).
"""
import csv
import json
import os
import shutil

import numpy as np
import pytest
from nnabla.config import nnabla_config

import nnabla.utils.data_iterator as D
from nnabla.utils.create_cache import CreateCache
from nnabla.utils.data_source_implements import CacheDataSource, CsvDataSource
from data_iterator_cases import CASES, write_csv_dataset

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "data_iterator")


@pytest.fixture
def cache_size_3():
    previous = nnabla_config.get("DATA_ITERATOR", "data_source_file_cache_size")
    nnabla_config.set("DATA_ITERATOR", "data_source_file_cache_size", "3")
    yield
    nnabla_config.set("DATA_ITERATOR", "data_source_file_cache_size", previous)


@pytest.fixture
def dataset(tmp_path):
    return write_csv_dataset(str(tmp_path), 7)


@pytest.mark.parametrize("name", sorted(CASES))
def test_iterator_orders_match_nnabla(name, dataset, cache_size_3):
    with open(os.path.join(DATA, "orders.json")) as f:
        expected = json.load(f)[name]
    iterator = CASES[name](D, CsvDataSource, dataset, os.path.dirname(dataset))
    got = [iterator.next()[-1].ravel().round().astype(int).tolist() for _ in range(6)]
    iterator.close()
    assert got == expected


def test_csv_source_loads_npy_cells_and_numbers(dataset):
    source = CsvDataSource(dataset)
    x, y = source.next()
    assert source.variables == ("x", "y") and source.size == 7
    np.testing.assert_array_equal(x, np.zeros(3, np.float32))
    assert y == [0.0]


def test_create_cache_writes_what_nnabla_writes(dataset, tmp_path, cache_size_3):
    out = tmp_path / "cache"
    CreateCache(dataset, shuffle=True, rng=np.random.RandomState(5)).create(str(out),
                                                                           normalize=False)
    reference = sorted(os.listdir(os.path.join(DATA, "nnabla_cache")))
    assert sorted(os.listdir(out)) == sorted(reference + ["original.csv"])
    for name in reference:
        ours, theirs = str(out / name), os.path.join(DATA, "nnabla_cache", name)
        if name.endswith(".csv"):
            assert open(ours).read() == open(theirs).read()
            continue
        with open(ours, "rb") as a, open(theirs, "rb") as b:
            for _ in range(2):
                x, y = np.load(a), np.load(b)
                assert x.dtype == y.dtype
                np.testing.assert_array_equal(x, y)
    assert open(out / "original.csv").read() == open(dataset).read()


def test_cache_source_reads_a_cache_nnabla_wrote():
    source = CacheDataSource(os.path.join(DATA, "nnabla_cache"))
    assert source.variables == ["x", "y"] and source.size == 7
    with open(os.path.join(DATA, "nnabla_cache", "order.csv")) as f:
        stored = [int(row[1]) for row in csv.reader(f)]
    for position in range(7):
        x, y = source.next()
        np.testing.assert_array_equal(x, np.full(3, stored[position], np.float32))
        assert y.tolist() == [float(stored[position])]
    source.close()


def test_cache_iterator_shuffles_files_then_examples():
    it = D.data_iterator_cache(os.path.join(DATA, "nnabla_cache"), 7, shuffle=True,
                               use_thread=False, with_memory_cache=False)
    rng = np.random.RandomState(313)
    lengths = [3, 3, 1]
    for f in rng.permutation(3):   # the source's own reset draws a first order
        rng.permutation(lengths[f])
    files = rng.permutation(3)     # the iterator's reset draws the first epoch's
    order_csv = [int(r[1]) for r in csv.reader(open(os.path.join(DATA, "nnabla_cache",
                                                                 "order.csv")))]
    expected = [order_csv[3 * f + j] for f in files for j in rng.permutation(lengths[f])]
    assert it.next()[1].ravel().astype(int).tolist() == expected
    it.close()


def test_row_with_a_missing_column_names_the_line(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("x,y\n1,2\n3\n")
    with pytest.raises(ValueError, match=r"line 3 has 1 column"):
        CsvDataSource(str(path))


def test_missing_file_names_the_line_and_the_file(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("x,y\nmissing.png,0\n")
    with pytest.raises(FileNotFoundError, match=r"line 2.*missing\.png"):
        D.data_iterator_csv_dataset(str(path), 1, with_file_cache=False, use_thread=False)


def test_undecodable_image_names_the_file(tmp_path):
    (tmp_path / "broken.png").write_bytes(b"not an image")
    path = tmp_path / "d.csv"
    path.write_text("x,y\nbroken.png,0\n")
    with pytest.raises(ValueError, match=r"broken\.png"):
        CsvDataSource(str(path)).next()


def test_cache_of_another_layout_is_refused_with_the_file_name(tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(os.path.join(DATA, "nnabla_cache"), cache)
    (cache / "cache_info.csv").write_text("x\ny\nz\n")
    with pytest.raises(ValueError, match=r"cache_00000000_00000002\.npy.*another version"):
        CacheDataSource(str(cache))
    (cache / "cache_info.csv").write_text("x\ny\n")
    os.remove(cache / "cache_00000003_00000005.npy")
    with pytest.raises(FileNotFoundError, match="cache_00000003_00000005.npy"):
        CacheDataSource(str(cache))


def test_interrupted_cache_writing_leaves_no_partial_file(dataset, tmp_path, monkeypatch,
                                                          cache_size_3):
    saved = []

    def interrupted_save(f, array, *args, **kwargs):
        saved.append(array)
        if len(saved) == 3:   # second file, after its first array
            raise KeyboardInterrupt
        return np.lib.format.write_array(f, np.asanyarray(array))
    monkeypatch.setattr(np, "save", interrupted_save)
    out = tmp_path / "cache"
    with pytest.raises(KeyboardInterrupt):
        CreateCache(dataset, num_of_threads=1).create(str(out))
    # the interrupted second file is gone; the files written whole remain, nothing else
    assert sorted(os.listdir(out)) == ["cache_00000000_00000002.npy",
                                       "cache_00000006_00000006.npy"]


def test_file_cache_of_an_iterator_is_removed_when_closed(tmp_path, monkeypatch):
    monkeypatch.setitem(nnabla_config["DATA_ITERATOR"], "data_source_file_cache_location",
                        str(tmp_path))
    it = D.data_iterator_simple(lambda i: (np.array([i]),), 5, 2, with_file_cache=True,
                                use_thread=False)
    assert len(os.listdir(tmp_path)) == 1
    assert it.next()[0].ravel().tolist() == [0, 1]
    it.close()
    assert os.listdir(tmp_path) == []


def test_memory_cache_reads_through_when_the_data_is_too_large(monkeypatch):
    monkeypatch.setitem(nnabla_config["DATA_ITERATOR"], "data_source_buffer_max_size", "8")
    calls = []

    def load(i):
        calls.append(i)
        return (np.full((4,), i, np.float32),)
    it = D.data_iterator_simple(load, 3, 3, with_memory_cache=True, use_thread=False)
    it.next()
    it.next()
    # the source's and the cache's probes of example 0, then two uncached epochs
    assert calls == [0, 0, 0, 1, 2, 0, 1, 2]


def test_concat_of_sources_with_other_variables_is_refused(dataset, tmp_path):
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="variables"):
        D.data_iterator_concat_datasets([CsvDataSource(dataset), CsvDataSource(str(other))], 2)
