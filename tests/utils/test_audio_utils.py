"""Tests of nnabla.utils.audio_utils and the audio/image loaders of data_source_loader."""
import io
import wave

import numpy as np
import pytest

from nnabla.utils import audio_utils
from nnabla.utils.data_source_loader import ResourceFileReader, load, load_image, load_wav

needs_pydub = pytest.mark.skipif("pydub" not in audio_utils.get_available_backends(),
                                 reason="the pydub backend is not installed (pip install pydub)")


def write_wav_with_stdlib(path, samples):
    with wave.open(str(path), "wb") as w:
        w.setnchannels(samples.shape[1])
        w.setsampwidth(samples.dtype.itemsize)
        w.setframerate(8000)
        w.writeframes(samples.tobytes())


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.float32])
def test_minmax_auto_scale_maps_min_and_max_to_the_type_limits(dtype):
    audio = np.array([[-2.0], [0.0], [6.0]])
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else np.finfo(dtype)
    expected = ((audio + 2.0) / 8.0 * (np.float64(info.max) - info.min) + info.min)
    out = audio_utils.minmax_auto_scale(audio, dtype)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, expected.astype(dtype))


def test_minmax_auto_scale_refuses_wide_types():
    with pytest.raises(ValueError, match="itemsize"):
        audio_utils.minmax_auto_scale(np.zeros((2, 1)), np.float64)


@needs_pydub
@pytest.mark.parametrize("dtype", [np.int16, np.int32])
def test_auread_reads_what_the_wave_module_wrote(tmp_path, dtype):
    samples = np.random.RandomState(0).randint(0, 100, size=(50, 2)).astype(dtype)
    write_wav_with_stdlib(tmp_path / "a.wav", samples)
    read = audio_utils.auread(str(tmp_path / "a.wav"))
    assert read.dtype == dtype
    np.testing.assert_array_equal(read, samples)
    with open(tmp_path / "a.wav", "rb") as f:
        first = audio_utils.auread(io.BytesIO(f.read()), channel_first=True)
    np.testing.assert_array_equal(first, samples.T)


@needs_pydub
def test_eight_bit_samples_are_shifted_by_128_as_in_nnabla(tmp_path):
    # pydub reads unsigned 8-bit WAV samples as int8; nnabla 1.39 casts them to uint8
    samples = np.array([[0, 10], [128, 200]], dtype=np.uint8)
    write_wav_with_stdlib(tmp_path / "u.wav", samples)
    read = audio_utils.auread(str(tmp_path / "u.wav"))
    np.testing.assert_array_equal(read, (samples.astype(np.int16) + 128) % 256)
    audio_utils.ausave(str(tmp_path / "v.wav"), read)
    np.testing.assert_array_equal(audio_utils.auread(str(tmp_path / "v.wav")), read)


@needs_pydub
def test_ausave_round_trip_and_float_refusal(tmp_path):
    samples = np.arange(-20, 20, dtype=np.int16).reshape(20, 2)
    audio_utils.ausave(str(tmp_path / "b.wav"), samples.T, channel_first=True)
    with wave.open(str(tmp_path / "b.wav")) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (2, 2, 48000)
        np.testing.assert_array_equal(np.frombuffer(w.readframes(20), np.int16).reshape(20, 2),
                                      samples)
    with pytest.raises(ValueError, match="float"):
        audio_utils.ausave(str(tmp_path / "c.wav"), samples.astype(np.float32))


@needs_pydub
def test_auresize_gives_the_requested_shape():
    audio = np.random.RandomState(1).randint(-1000, 1000, size=(1000, 2)).astype(np.int16)
    assert audio_utils.auresize(audio, (500, 1)).shape == (500, 1)
    with pytest.raises(ValueError, match="channels"):
        audio_utils.auresize(audio, (500, 3))


def test_unknown_backend_and_text_streams_are_refused():
    with pytest.raises(ValueError):
        audio_utils.set_backend("not_installed_module")
    with pytest.raises(ValueError, match="binary"):
        ResourceFileReader(io.StringIO("abc"))


def test_wav_loader_of_scipy_gives_samples_by_channels(tmp_path):
    samples = np.arange(12, dtype=np.int16).reshape(6, 2)
    write_wav_with_stdlib(tmp_path / "d.wav", samples)
    np.testing.assert_array_equal(load_wav(str(tmp_path / "d.wav")), samples)
    mono = samples[:, :1].copy()
    write_wav_with_stdlib(tmp_path / "m.wav", mono)
    assert load_wav(str(tmp_path / "m.wav")).shape == (6, 1)


def test_load_image_is_channel_first_and_normalizes(tmp_path):
    from nnabla.utils.image_utils import imsave
    img = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)
    imsave(str(tmp_path / "i.png"), img)
    with open(tmp_path / "i.png", "rb") as f:
        raw = load_image(f)
    np.testing.assert_array_equal(raw, img.transpose(2, 0, 1))
    with open(tmp_path / "i.png", "rb") as f:
        np.testing.assert_allclose(load_image(f, normalize=True), img.transpose(2, 0, 1) / 255.0)
    with open(tmp_path / "i.png", "rb") as f:
        half = load_image(f, shape=(3, 2, 3))
    from nnabla.utils.image_utils import imresize
    np.testing.assert_array_equal(half, imresize(img, (3, 2)).transpose(2, 0, 1))
    with open(tmp_path / "i.png", "rb") as f, pytest.raises(ValueError, match="channel"):
        load_image(f, shape=(1, 4, 6))


def test_unknown_extensions_are_refused():
    with pytest.raises(ValueError, match=r'"\.xyz" is not supported'):
        load(".xyz")
