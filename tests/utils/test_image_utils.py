"""Tests of nnabla.utils.image_utils on its pillow backend: round trips, sizes, dtypes, errors.

Files are checked against pillow read directly, and resizes against numpy references.
"""
import doctest
import io
import json
import logging
import os
import sys
from collections import OrderedDict

import nnabla.utils.image_utils as image_utils
import numpy as np
import pytest
from nnabla.utils.image_utils import imread, imresize, imsave
from nnabla.utils.image_utils.backend_events.common import BackendRefusal
from nnabla.utils.image_utils.backend_events.image_utils_backend import ImageUtilsBackend
from nnabla.utils.image_utils.backend_manager import ImageUtilsBackendManager, backend_manager
from PIL import Image

sys.path.insert(0, os.path.dirname(__file__))
import image_scenarios  # noqa: E402

RNG = np.random.RandomState(0)
RGB = RNG.randint(0, 256, (6, 10, 3)).astype(np.uint8)


@pytest.fixture(autouse=True)
def automatic_backend():
    image_utils.set_backend(None)
    yield
    image_utils.set_backend(None)


def pil_pixels(path):
    with Image.open(path) as image:
        return image.mode, np.array(image)


ROUND_TRIPS = [(ext, shape, mode) for ext in (".png", ".bmp", ".tif")
               for shape, mode in (((6, 10), "L"), ((6, 10, 3), "RGB"), ((6, 10, 4), "RGBA"))
               if (ext, mode) != (".bmp", "RGBA")]  # pillow's BMP writer has no alpha


@pytest.mark.parametrize("ext,shape,mode", ROUND_TRIPS)
def test_uint8_images_round_trip_exactly(tmp_path, ext, shape, mode):
    img = RNG.randint(0, 256, shape).astype(np.uint8)
    path = str(tmp_path / f"x{ext}")
    imsave(path, img)
    assert pil_pixels(path)[0] == mode
    read = imread(path)
    assert read.dtype == np.uint8
    np.testing.assert_array_equal(read, img)
    if not {"PngBackend", "Cv2Backend"} & set(image_utils.get_available_backends()):
        assert image_utils.get_backend() == "PilBackend"    # pillow alone: it is the one


def test_float_images_in_0_1_are_saved_times_255_truncated(tmp_path):
    img = RNG.rand(6, 10, 3)
    path = str(tmp_path / "f.png")
    imsave(path, img)
    np.testing.assert_array_equal(pil_pixels(path)[1],
                                  (img.astype(np.float32) * 255).astype(np.uint8))


def test_channel_first_saves_and_reads_chw(tmp_path):
    path = str(tmp_path / "c.png")
    imsave(path, RGB.transpose(2, 0, 1), channel_first=True)
    np.testing.assert_array_equal(pil_pixels(path)[1], RGB)
    np.testing.assert_array_equal(imread(path, channel_first=True), RGB.transpose(2, 0, 1))


def test_single_channel_images_are_saved_gray(tmp_path):
    path = str(tmp_path / "g.png")
    imsave(path, RGB[..., :1])
    mode, pixels = pil_pixels(path)
    assert mode == "L"
    np.testing.assert_array_equal(pixels, RGB[..., 0])
    np.testing.assert_array_equal(imread(path), RGB[..., 0])


def test_grayscale_and_num_channels(tmp_path):
    path = str(tmp_path / "rgb.png")
    imsave(path, RGB)
    luma = RGB.astype(np.float64) @ [0.299, 0.587, 0.114]  # ITU-R 601-2, as pillow's "L"
    gray = imread(path, grayscale=True)
    assert gray.shape == (6, 10) and np.abs(gray - luma).max() <= 1
    for num_channels in (1, 3, 4):
        read = imread(path, grayscale=True, num_channels=num_channels)
        assert read.shape == (6, 10, num_channels) and read.flags.writeable
        np.testing.assert_array_equal(read, np.repeat(gray[..., None], num_channels, -1))
    assert imread(path, grayscale=True, num_channels=0).shape == (6, 10)
    rgba = imread(path, num_channels=4)
    np.testing.assert_array_equal(rgba[..., :3], RGB)
    assert np.all(rgba[..., 3] == 255)


def test_gray_files_read_as_rgb_with_three_channels(tmp_path):
    path = str(tmp_path / "l.png")
    imsave(path, RGB[..., 0])
    np.testing.assert_array_equal(imread(path, num_channels=3), np.stack([RGB[..., 0]] * 3, -1))


@pytest.mark.parametrize("grayscale,num_channels", [(False, 0), (False, 1), (True, 2),
                                                    (False, 5)])
def test_impossible_num_channels_raise_value_error(tmp_path, grayscale, num_channels):
    path = str(tmp_path / "x.png")
    imsave(path, RGB)
    with pytest.raises(ValueError, match="num_channels"):
        imread(path, grayscale=grayscale, num_channels=num_channels)


@pytest.mark.parametrize("channel_first", [False, True])
def test_imread_size_is_width_height(tmp_path, channel_first):
    path = str(tmp_path / "x.png")
    imsave(path, RGB)
    read = imread(path, size=(16, 4), channel_first=channel_first)
    assert read.shape == ((3, 4, 16) if channel_first else (4, 16, 3))


def test_palette_images_read_as_colours_or_as_indices(tmp_path):
    path = str(tmp_path / "p.png")
    indices = RNG.randint(0, 4, (5, 5)).astype(np.uint8)
    palette = [255, 0, 0, 0, 255, 0, 0, 0, 255, 9, 9, 9]
    image = Image.fromarray(indices).convert("P")
    image.putpalette(palette + [0] * (768 - len(palette)))
    image.save(path)
    colours = np.array(palette).reshape(4, 3)[indices]
    np.testing.assert_array_equal(imread(path), colours)
    np.testing.assert_array_equal(imread(path, return_palette_indices=True), indices)


def test_file_objects_are_read_with_or_without_a_name(tmp_path):
    path = str(tmp_path / "x.png")
    imsave(path, RGB)
    with open(path, "rb") as file:
        np.testing.assert_array_equal(imread(file), RGB)
    with open(path, "rb") as file:
        np.testing.assert_array_equal(imread(io.BytesIO(file.read())), RGB)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(6, 10), (6, 10, 1), (6, 10, 3), (1, 1, 3)])
def test_imresize_gives_height_width_order_and_keeps_integer_dtypes(dtype, shape):
    img = (RNG.rand(*shape) * 200).astype(dtype)
    resized = imresize(img, (7, 5))
    assert resized.shape == (5, 7) + shape[2:]
    assert resized.dtype == (np.float32 if dtype == np.float64 else dtype)
    chw = imresize(img.transpose(2, 0, 1) if img.ndim == 3 else img, (7, 5),
                   channel_first=True)
    assert chw.shape == ((shape[2:] + (5, 7)) if img.ndim == 3 else (5, 7))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_nearest_upscaling_by_two_repeats_pixels(dtype):
    img = (RNG.rand(3, 4, 3) * 250).astype(dtype)
    resized = imresize(img, (8, 6), interpolate="nearest")
    np.testing.assert_array_equal(resized, img.repeat(2, axis=0).repeat(2, axis=1))


@pytest.mark.parametrize("interpolate", ["nearest", "box", "bilinear", "hamming", "bicubic",
                                         "lanczos"])
def test_every_pillow_interpolation_keeps_a_constant_image(interpolate):
    img = np.full((4, 5, 3), 77, np.uint8)
    np.testing.assert_array_equal(imresize(img, (9, 3), interpolate=interpolate),
                                  np.full((3, 9, 3), 77, np.uint8))


def test_bicubic_overshoot_is_clipped_for_uint16():
    img = np.zeros((4, 4), np.uint16)
    img[:, 2:] = 65535
    resized = imresize(img, (16, 4), interpolate="bicubic")
    assert resized.dtype == np.uint16 and resized[0, 0] == 0 and resized[0, -1] == 65535


@pytest.mark.parametrize("img,kwargs,match", [
    (np.full((4, 4), 1.5), {}, r"\[0, 1\]"),
    (np.full((4, 4), -0.5), {}, r"\[0, 1\]"),
    (np.full((4, 4), 0.5), {"auto_scale": False}, "auto_scale"),
    (np.zeros((4, 4, 5), np.uint8), {}, "channels"),
    (np.zeros((2, 4, 4, 3), np.uint8), {}, "shape"),
])
def test_imsave_rejects_what_nnabla_rejects(tmp_path, img, kwargs, match):
    with pytest.raises(ValueError, match=match):
        imsave(str(tmp_path / "x.png"), img, **kwargs)


@pytest.mark.parametrize("img,kwargs", [(np.zeros((4, 4), np.uint16), {}),
                                        (np.zeros((4, 4), np.uint8), {"as_uint16": True})])
def test_sixteen_bit_saves_with_pillow_alone_name_the_missing_libraries(tmp_path, monkeypatch,
                                                                        img, kwargs):
    monkeypatch.setattr(backend_manager, "_backends", OrderedDict(
        PilBackend=backend_manager._backends["PilBackend"]))
    with pytest.raises(ValueError, match="pypng or opencv"):
        imsave(str(tmp_path / "x.png"), img, **kwargs)


def test_a_uint16_image_needs_as_uint16_whatever_the_backend(tmp_path, combination):
    with pytest.raises(ValueError, match="as_uint16"):
        imsave(str(tmp_path / "x.png"), np.zeros((4, 4), np.uint16))


def test_imresize_rejects_bad_arguments():
    with pytest.raises(ValueError, match="interpolate"):
        imresize(RGB, (4, 4), interpolate="cubic")
    with pytest.raises(ValueError, match="size"):
        imresize(RGB, 4)
    with pytest.raises(ValueError, match="numpy.ndarray"):
        imresize(RGB.tolist(), (4, 4))


def test_imread_errors_name_the_file(tmp_path, combination):
    for name in ("broken.png", "broken.bmp", "broken.tif"):
        broken = tmp_path / name
        broken.write_bytes(b"not an image")
        with pytest.raises(OSError, match=name):      # also a ValueError, as nnabla's
            imread(str(broken))
    with pytest.raises(FileNotFoundError, match="absent.png"):
        imread(str(tmp_path / "absent.png"))
    (tmp_path / "x.webp").write_bytes(b"RIFF")
    with pytest.raises(ValueError, match=r"'\.webp'"):
        imread(str(tmp_path / "x.webp"))
    if combination == "pillow":     # pypng and OpenCV read 8-bit files x256 (recorded cases)
        imsave(str(tmp_path / "x.png"), RGB)
        with pytest.raises(ValueError, match="as_uint16"):
            imread(str(tmp_path / "x.png"), as_uint16=True)


def test_backends_can_be_listed_pinned_and_unpinned(tmp_path):
    assert "PilBackend" in image_utils.get_available_backends()
    image_utils.set_backend("PilBackend")
    assert image_utils.get_backend() == "PilBackend"
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logging.getLogger("nnabla").addHandler(handler)
    try:
        image_utils.set_backend("NoSuchBackend")  # nnabla goes back to automatic
    finally:
        logging.getLogger("nnabla").removeHandler(handler)
    assert "NoSuchBackend" in records[0].getMessage()
    imsave(str(tmp_path / "x.png"), RGB)
    assert image_utils.get_backend() == "PilBackend"


class _Recorder(ImageUtilsBackend):
    def __init__(self, state, refuse):
        self.state, self.refuse, self.calls = state, refuse, []

    def accept(self, path, ext, operator):
        return self.state

    def imread(self, path, **kwargs):
        self.calls.append(path.read(2))
        if self.refuse:
            raise BackendRefusal("cannot")
        return "read"


def test_recommended_backends_go_first_and_refusals_pass_to_the_next():
    ok, recommended, never = _Recorder("OK", False), _Recorder("Recommended", True), \
        _Recorder("NG", False)
    manager = ImageUtilsBackendManager(OrderedDict(ok=ok, rec=recommended, never=never))
    source = io.BytesIO(b"abcd")
    assert manager.call("load", source, "imread", source) == "read"
    assert (recommended.calls, ok.calls, never.calls) == ([b"ab"], [b"ab"], [])
    assert manager.get_backend() == "ok"
    ok.refuse = True
    with pytest.raises(ValueError, match="rec: cannot; ok: cannot"):
        manager.call("load", source, "imread", source)


def test_without_any_image_library_the_error_names_the_extra():
    with pytest.raises(ImportError, match=r"nnabla\[utils\]"):
        ImageUtilsBackendManager(OrderedDict()).call("resize", RGB, "imresize", RGB, (2, 2))


@pytest.mark.parametrize("img", [np.zeros((3, 3)), np.full((3, 3), 10.0), np.full((3, 3), -10.0),
                                 RNG.rand(3, 3) * 10, RNG.rand(3, 3) * -10])
@pytest.mark.parametrize("as_uint16", [False, True])
def test_minmax_auto_scale_stretches_to_the_integer_range(img, as_uint16):
    high, dtype = (65535, np.uint16) if as_uint16 else (255, np.uint8)
    scaled = image_utils.minmax_auto_scale(img, as_uint16)
    assert scaled.dtype == dtype
    span = img.max() - img.min()
    if span:
        expected = ((img - img.min()) / span * high).astype(dtype)
    else:
        expected = np.full(img.shape, 0 if img.min() == 0 else high, dtype)
    np.testing.assert_array_equal(scaled, expected)
    back = image_utils.backend_events.common.rescale_pixel_intensity(
        scaled, scaled.min(), scaled.max(), img.min(), img.max(), img.dtype)
    np.testing.assert_allclose(back, img, atol=1 / 2 ** 4)


def test_aliases_and_docstring_examples():
    assert image_utils.imwrite is imsave and image_utils.imload is imread
    assert doctest.testmod(image_utils).failed == 0
    assert doctest.testmod(image_utils.backend_events.common).failed == 0


# -- against nnabla 1.39, for each set of installed image libraries ---------------------------
RECORDED_DIR = os.path.join(os.path.dirname(__file__), "..", "data", "image_utils")
RECORDED = json.load(open(os.path.join(RECORDED_DIR, "nnabla_1.39_backends.json")))


@pytest.fixture(params=sorted(image_scenarios.COMBINATIONS))
def combination(request, monkeypatch):
    """Only the backends of one combination are available (the others hidden)."""
    hidden = {image_scenarios.BACKEND_OF_MODULE[m]
              for m in image_scenarios.COMBINATIONS[request.param]}
    installed = backend_manager.get_available_backends()
    missing = set(image_scenarios.BACKEND_OF_MODULE.values()) - hidden - set(installed)
    if missing:
        pytest.skip(f"{request.param}: {sorted(missing)} not installed (pip install pypng "
                    "opencv-python-headless, as `nox -s tests` does)")
    kept = OrderedDict((n, b) for n, b in backend_manager._backends.items() if n not in hidden)
    monkeypatch.setattr(backend_manager, "_backends", kept)
    return request.param


def _deliberate(scenario, expected):
    """nnabla reads a 16-bit gray file without as_uint16 through pillow, which truncates each
    value to its low 8 bits; we refuse it instead (README, deliberate differences). (A 16-bit
    RGB file is opened by pillow as 8-bit RGB, its high bytes, in both.)"""
    return (scenario.startswith("load gray16.png")
            and "as_uint16" not in scenario and "error" not in expected)


def test_backend_availability_matches_nnabla(combination):
    expected = RECORDED["combinations"][combination]["available"]
    assert sorted(image_utils.get_available_backends()) == sorted(expected)


def test_each_backend_accepts_what_nnablas_accepts(combination):
    recorded = RECORDED["combinations"][combination]["accept"]
    png_path = os.path.join(RECORDED_DIR, "rgb8.png")
    for name, table in recorded.items():
        backend = backend_manager._backends[name]
        ours = {op: {ext: backend.accept(png_path if ext == ".png" else "absent" + ext, ext, op)
                     for ext in exts} for op, exts in table.items()}
        assert ours == table, name


def test_calls_are_served_as_nnabla_serves_them(combination):
    recorded = RECORDED["combinations"][combination]["outcomes"]
    ours = image_scenarios.run(image_utils, RECORDED_DIR, lambda: None, image_utils.get_backend)
    assert sorted(ours) == sorted(recorded)
    differences = []
    for scenario, expected in recorded.items():
        got = ours[scenario]
        if _deliberate(scenario, expected):
            assert got.get("error") in ("ValueError", "ImageReadError"), (scenario, got)
            assert "as_uint16" in got["message"]
        elif "error" in expected:
            if expected["error"] != got.get("error") and not (
                    got.get("error") in ("BackendRefusal", "ImageReadError")
                    and expected["error"] == "ValueError"):
                differences.append((scenario, expected["error"], got))
        elif got.get("backend") != expected["backend"]:
            differences.append((scenario, expected["backend"], got.get("backend", got)))
        else:
            tolerance = 1 if "bilinear" in scenario or "box" in scenario else 0
            for key in ("result", "file"):
                if expected.get(key) is None:
                    continue
                exp, act = expected[key], got[key]
                if {k: v for k, v in exp.items() if k != "values"} != \
                        {k: v for k, v in act.items() if k != "values"} or not np.allclose(
                        exp["values"], act["values"], rtol=0, atol=tolerance):
                    differences.append((scenario, key, exp, act))
    assert differences == []
