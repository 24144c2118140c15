"""Tests of nnabla.utils.data_iterator: order, epochs, callbacks, slicing, dtypes.

The expected index sequences were recorded from nnabla 1.39 (use_thread=False, where
``position`` is not one prefetched batch ahead).
"""
import os
import sys

import numpy as np
import pytest
from nnabla.utils.data_iterator import DataIterator, data_iterator, data_iterator_simple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "tutorial_data"))


def load_index(i):
    return np.full((2,), i, dtype=np.float64), np.array([i], dtype=np.int32)


def labels_of(iterator, n_batches):
    return [iterator.next()[1].ravel().tolist() for _ in range(n_batches)]


def flat_labels_of(iterator, n_batches):
    return [label for batch in labels_of(iterator, n_batches) for label in batch]


def test_batches_are_stacked_examples_with_their_dtype():
    x, y = data_iterator_simple(load_index, 10, 4).next()
    assert (x.shape, x.dtype, y.shape, y.dtype) == ((4, 2), np.float64, (4, 1), np.int32)
    np.testing.assert_array_equal(x[:, 0], [0, 1, 2, 3])


def test_properties_describe_the_iterator():
    it = data_iterator_simple(load_index, 10, 4, use_thread=False)
    assert (it.size, it.batch_size, it.variables, it.position, it.epoch) == (
        10, 4, ["x0", "x1"], 0, 0)


def test_unshuffled_batches_wrap_around_and_count_epochs():
    it = data_iterator_simple(load_index, 10, 4, use_thread=False)
    seen = [(it.next()[1].ravel().tolist(), it.position, it.epoch) for _ in range(5)]
    assert seen == [([0, 1, 2, 3], 4, 0), ([4, 5, 6, 7], 8, 0), ([8, 9, 0, 1], 2, 1),
                    ([2, 3, 4, 5], 6, 1), ([6, 7, 8, 9], 0, 2)]


def test_default_shuffle_matches_nnabla_and_ignores_global_seed():
    np.random.seed(0)
    it = data_iterator_simple(load_index, 10, 4, shuffle=True)
    assert labels_of(it, 7) == [[5, 3, 2, 4], [0, 6, 1, 9], [7, 8, 5, 3], [1, 3, 7, 5],
                                [2, 8, 9, 0], [8, 2, 0, 3], [1, 4, 5, 6]]


def test_shuffle_with_given_rng_matches_nnabla():
    it = data_iterator_simple(load_index, 10, 4, shuffle=True, rng=np.random.RandomState(0))
    assert labels_of(it, 3) == [[2, 8, 4, 9], [1, 6, 7, 3], [0, 5, 2, 8]]


def test_each_shuffled_epoch_is_a_permutation_when_batches_divide_the_size():
    it = data_iterator_simple(load_index, 12, 4, shuffle=True)
    for _ in range(3):
        epoch = flat_labels_of(it, 3)
        assert sorted(epoch) == list(range(12))


def test_epoch_callbacks_run_in_the_batch_that_ends_the_epoch():
    events = []
    it = data_iterator_simple(load_index, 10, 4, epoch_end_callbacks=[
        lambda e: events.append(("end", e))])
    it.register_epoch_begin_callback(lambda e: events.append(("begin", e)))
    it.register_epoch_end_callback(lambda e: events.append(("end2", e)))
    labels_of(it, 2)
    assert events == []
    labels_of(it, 1)
    assert events == [("end", 0), ("end2", 0), ("begin", 1)]


def test_tutorial_loop_sees_each_epoch_once():
    it = data_iterator_simple(load_index, 10, 4)
    iterations = []
    for epoch in range(3):
        count = 0
        while it.epoch == epoch:
            it.next()
            count += 1
        iterations.append(count)
    assert iterations == [3, 2, 3]


def test_batch_larger_than_the_data_wraps_several_times():
    it = data_iterator_simple(load_index, 3, 5)
    assert labels_of(it, 2) == [[0, 1, 2, 0, 1], [2, 0, 1, 2, 0]]
    assert it.epoch == 3


@pytest.mark.parametrize("use_thread", [False, True])
def test_stop_exhausted_raises_and_stays_exhausted(use_thread):
    it = data_iterator_simple(load_index, 10, 4, stop_exhausted=True, use_thread=use_thread)
    assert [b[1].ravel().tolist() for b in it] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert (it.epoch, it.position) == (0, 8)
    with pytest.raises(StopIteration):
        it.next()
    it.close()


def test_stop_exhausted_with_exact_fit_yields_every_batch():
    it = data_iterator_simple(load_index, 10, 5, stop_exhausted=True)
    assert len(list(it)) == 2 and (it.epoch, it.position) == (0, 10)


def test_threaded_iterator_gives_the_same_batches_and_reads_one_batch_ahead():
    threaded = data_iterator_simple(load_index, 10, 4, shuffle=True)
    plain = data_iterator_simple(load_index, 10, 4, shuffle=True, use_thread=False)
    assert labels_of(threaded, 6) == labels_of(plain, 6)
    threaded.close()
    assert (threaded.epoch, threaded.position) == (2, 8)   # batch 7 was read ahead


@pytest.mark.parametrize("use_thread", [False, True])
def test_load_errors_reach_the_caller_of_next(use_thread):
    def broken(i):
        if i == 5:
            raise OSError("disk on fire")
        return load_index(i)
    it = data_iterator_simple(broken, 10, 4, use_thread=use_thread)
    it.next()
    with pytest.raises(OSError, match="disk on fire"):
        it.next()


@pytest.mark.parametrize("size, pos, drop_last, expected", [
    (10, 0, False, [0, 1, 2, 3]), (10, 2, False, [6, 7, 8, 9]), (11, 2, False, [7, 8, 9, 10]),
    (10, 2, True, [6, 7, 8]), (9, 1, False, [3, 4, 5])])
def test_slice_by_count_matches_nnabla(size, pos, drop_last, expected):
    part = data_iterator_simple(load_index, size, 1).slice(
        rng=None, num_of_slices=3, slice_pos=pos, drop_last=drop_last)
    assert part.size == len(expected)
    assert flat_labels_of(part, part.size) == expected


def test_slice_by_range_keeps_batch_size_and_wraps_inside_the_slice():
    part = data_iterator_simple(load_index, 10, 3).slice(rng=None, slice_start=2, slice_end=8)
    assert (part.size, part.batch_size) == (6, 3)
    assert labels_of(part, 3) == [[2, 3, 4], [5, 6, 7], [2, 3, 4]]


def test_shuffled_slice_takes_its_range_of_the_shuffled_order():
    part = data_iterator_simple(load_index, 10, 3, shuffle=True).slice(
        rng=np.random.RandomState(1), slice_start=2, slice_end=8)
    expected = np.random.RandomState(313).permutation(10)[2:8]
    assert flat_labels_of(part, 2) == expected.tolist()


@pytest.mark.parametrize("kwargs", [
    {"slice_start": 5, "slice_end": 5}, {"slice_start": 0}, {"num_of_slices": 3, "slice_pos": 3}])
def test_bad_slice_arguments_raise(kwargs):
    with pytest.raises(ValueError, match="slice"):
        data_iterator_simple(load_index, 10, 3).slice(rng=None, **kwargs)


@pytest.mark.parametrize("batch_size", [0, -1, 2.5])
def test_bad_batch_size_raises(batch_size):
    with pytest.raises(ValueError, match="batch_size"):
        data_iterator_simple(load_index, 10, batch_size)


def test_load_func_must_return_a_tuple():
    with pytest.raises(TypeError, match="load_func"):
        data_iterator_simple(lambda i: i, 5, 2).next()


def test_file_cache_in_a_given_directory_is_kept(tmp_path):
    it = data_iterator_simple(load_index, 10, 4, with_memory_cache=True, with_file_cache=True,
                              cache_dir=str(tmp_path), use_thread=False)
    assert labels_of(it, 1) == [[0, 1, 2, 3]]
    it.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    # a SimpleDataSource has no order of its own, so there is no order.csv (as in nnabla)
    assert names == ["cache_00000000_00000009.npy", "cache_index.csv", "cache_info.csv"]


def test_data_iterator_wraps_a_data_source_and_works_as_context_manager():
    source = data_iterator_simple(load_index, 6, 2)._data_source
    with data_iterator(source, 3, with_memory_cache=False) as it:
        assert isinstance(it, DataIterator) and labels_of(it, 2) == [[0, 1, 2], [3, 4, 5]]


def test_tiny_digits_iterator_gives_images_and_labels():
    import tiny_digits

    digits = tiny_digits.load_digits(n_class=10)
    images, labels = tiny_digits.data_iterator_tiny_digits(digits, batch_size=64).next()
    assert images.shape == (64, 1, 8, 8) and images.dtype == np.float32
    assert labels.shape == (64, 1) and labels.dtype.kind == "i"
    np.testing.assert_array_equal(labels.ravel(), digits.target[:64])
