"""nnabla.utils.rnn's sequence packing helpers against numpy: pad, pack, unpack, the
batch reordering of enforce_sorted=False, gradients through pad_sequence, errors."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.utils.rnn as rnn_utils

LENGTHS = [2, 4, 1, 3]


def _sequences(rng, rest=(3,)):
    return [rng.randn(n, *rest).astype(np.float32) for n in LENGTHS]


def _padded(arrays, batch_first, value=0.0):
    T = max(len(a) for a in arrays)
    out = np.full((len(arrays), T) + arrays[0].shape[1:], value, np.float32)
    for b, a in enumerate(arrays):
        out[b, :len(a)] = a
    return out if batch_first else out.swapaxes(0, 1)


@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_sequence_matches_numpy_and_passes_gradients(batch_first):
    rng = np.random.RandomState(0)
    arrays = _sequences(rng)
    seqs = [nn.Variable.from_numpy_array(a, need_grad=True) for a in arrays]
    with nn.auto_forward():
        padded = rnn_utils.pad_sequence(seqs, batch_first, padding_value=-1.5)
    np.testing.assert_array_equal(padded.d, _padded(arrays, batch_first, -1.5))
    for s in seqs:
        s.grad.zero()
    dy = rng.randn(*padded.shape).astype(np.float32)
    padded.backward(dy)
    dy_b = dy if batch_first else dy.swapaxes(0, 1)
    for b, s in enumerate(seqs):
        np.testing.assert_array_equal(s.g, dy_b[b, :LENGTHS[b]])


def test_unsorted_batches_are_packed_longest_first_and_unpacked_in_input_order():
    rng = np.random.RandomState(1)
    arrays = _sequences(rng, rest=())
    seqs = [nn.Variable.from_numpy_array(a) for a in arrays]
    with nn.auto_forward():
        packed = rnn_utils.pack_sequence(seqs, enforce_sorted=False)
        padded, lengths = rnn_utils.pad_packed_sequence(packed, batch_first=True)
    order = [1, 3, 0, 2]                       # lengths 4, 3, 2, 1
    np.testing.assert_array_equal(packed.sorted_indices.d, order)
    np.testing.assert_array_equal(packed.unsorted_indices.d, np.argsort(order))
    np.testing.assert_array_equal(packed.batch_sizes.d, [4, 3, 2, 1])
    by_step = [arrays[b][t] for t in range(4) for b in order if t < LENGTHS[b]]
    np.testing.assert_array_equal(packed.data.d, by_step)
    np.testing.assert_array_equal(padded.d, _padded(arrays, True))
    np.testing.assert_array_equal(lengths.d, LENGTHS)


def test_total_length_pads_further_and_must_cover_the_longest():
    arrays = [np.ones((3, 2), np.float32), np.ones((1, 2), np.float32)]
    seqs = [nn.Variable.from_numpy_array(a) for a in arrays]
    with nn.auto_forward():
        packed = rnn_utils.pack_sequence(seqs)
        padded, _ = rnn_utils.pad_packed_sequence(packed, total_length=5)
        assert padded.shape == (5, 2, 2)
        np.testing.assert_array_equal(padded.d[3:], 0)
        with pytest.raises(ValueError, match="total_length"):
            rnn_utils.pad_packed_sequence(packed, total_length=2)


def test_pad_sequence_rejects_empty_and_mismatched_inputs():
    with pytest.raises(ValueError, match="empty"):
        rnn_utils.pad_sequence([])
    bad = [nn.Variable((2, 3)), nn.Variable((2, 4))]
    with pytest.raises(ValueError, match=r"sequence 1 has shape \(2, 4\)"):
        rnn_utils.pad_sequence(bad)
