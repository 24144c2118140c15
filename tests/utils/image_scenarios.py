"""Calls of ``nnabla.utils.image_utils`` whose outcome nnabla 1.39 gives for each set of
installed image libraries (tools/record_image_backends.py runs :func:`run` there and stores
the outcomes in tests/data/image_utils/; tests/utils/test_image_utils.py runs it here).

This module is run by both interpreters: it needs only numpy, pillow and pypng (to write the
input files and read saved files back), and the image_utils module it is given.
"""
import os
import tempfile

import numpy as np

# The backend sets compared: the modules hidden from image_utils for each.
COMBINATIONS = {"pillow": ("png", "cv2"), "pillow+pypng": ("cv2",), "pillow+cv2": ("png",),
                "all": ()}
BACKEND_OF_MODULE = {"png": "PngBackend", "cv2": "Cv2Backend"}
EXTENSIONS = (".png", ".bmp", ".dib", ".jpg", ".jpeg", ".tif", ".tiff", ".gif", ".pgm",
              ".ppm", ".pbm", ".sr", ".ras", ".ico", ".eps", ".webp", ".exr", "")
OPERATORS = ("load", "save", "resize")


def input_images():
    """The arrays of the input files, by file stem (deterministic)."""
    rng = np.random.RandomState(7)
    return {"rgb8": rng.randint(0, 256, (4, 5, 3)).astype(np.uint8),
            "rgba8": rng.randint(0, 256, (4, 5, 4)).astype(np.uint8),
            "gray8": rng.randint(0, 256, (4, 5)).astype(np.uint8),
            "gray16": rng.randint(0, 65536, (4, 5)).astype(np.uint16),
            "rgb16": rng.randint(0, 65536, (4, 5, 3)).astype(np.uint16)}


INPUT_FILES = ("rgb8.png", "rgba8.png", "gray8.png", "gray16.png", "rgb16.png", "rgb8.bmp",
               "gray8.bmp", "rgb8.tif")


def write_inputs(folder):
    """Write :data:`INPUT_FILES` with pillow (8 bits) and pypng (16 bits)."""
    import png
    from PIL import Image

    images = input_images()
    for name in INPUT_FILES:
        stem, ext = os.path.splitext(name)
        img, path = images[stem], os.path.join(folder, name)
        if img.dtype == np.uint16:
            planes = 1 if img.ndim == 2 else img.shape[-1]
            writer = png.Writer(img.shape[1], img.shape[0], greyscale=planes == 1,
                                bitdepth=16)
            with open(path, "wb") as stream:
                writer.write(stream, img.reshape(img.shape[0], -1).tolist())
        else:
            Image.fromarray(img).save(path)


LOADS = [(name, kwargs) for name in INPUT_FILES
         for kwargs in ({}, {"as_uint16": True}, {"grayscale": True})] + [
    ("rgb8.png", {"num_channels": 4}),
    ("rgb8.png", {"grayscale": True, "num_channels": 1}),
    ("rgb8.png", {"grayscale": True, "num_channels": 3}),
    ("gray8.png", {"num_channels": 3}),
    ("rgba8.png", {"num_channels": 3}),
    ("rgb8.png", {"channel_first": True}),
    ("rgb8.png", {"size": (3, 2), "interpolate": "nearest"}),
    ("gray16.png", {"as_uint16": True, "size": (10, 8), "interpolate": "nearest"}),
    ("rgb8.bmp", {"size": (3, 2), "interpolate": "nearest", "channel_first": True}),
]

SAVES = [("rgb8", ".png", {}), ("gray8", ".png", {}), ("rgb8", ".png", {"as_uint16": True}),
         ("gray16", ".png", {}), ("gray16", ".png", {"as_uint16": True}),
         ("rgb16", ".png", {"as_uint16": True}), ("float", ".png", {}),
         ("float", ".png", {"as_uint16": True}), ("rgb8", ".bmp", {}),
         ("gray8", ".bmp", {}), ("rgb8", ".tif", {}), ("rgb8chw", ".png", {"channel_first": True})]

RESIZES = [("rgb8", {"interpolate": "nearest"}), ("gray16", {"interpolate": "nearest"}),
           ("rgb8chw", {"interpolate": "nearest", "channel_first": True}),
           ("rgb8", {"interpolate": "bilinear"}), ("rgb8", {"interpolate": "box"})]


def _array(name):
    images = input_images()
    if name == "float":
        return images["rgb8"] / 255.0
    if name == "rgb8chw":
        return images["rgb8"].transpose(2, 0, 1).copy()
    return images[name]


def _describe(array):
    array = np.asarray(array)
    return {"dtype": str(array.dtype), "shape": list(array.shape), "values": array.tolist()}


def _read_back(path):
    """A saved file as its reader sees it: pypng's bit depth and planes for PNG, pillow's
    mode otherwise; and the pixels."""
    if path.endswith(".png"):
        import png

        width, height, rows, info = png.Reader(filename=path).asDirect()
        pixels = np.vstack([np.asarray(row) for row in rows])
        return {"bitdepth": info["bitdepth"], "planes": info["planes"],
                "values": pixels.reshape(height, width, -1).tolist()}
    from PIL import Image

    with Image.open(path) as image:
        return {"mode": image.mode, "values": np.asarray(image).tolist()}


def _outcome(call, served):
    try:
        result = call()
    except Exception as error:  # noqa: BLE001 - the outcome recorded is the error's class
        return {"error": type(error).__name__, "message": str(error)[:300]}
    return {"backend": served(), "result": None if result is None else _describe(result)}


def scenario_id(operator, *parts):
    return " ".join([operator] + [str(p) for p in parts])


def run(image_utils, inputs, reset, served):
    """The outcome of every call, by :func:`scenario_id`.

    Args:
        image_utils: the ``nnabla.utils.image_utils`` module under test.
        inputs (str): the folder holding :data:`INPUT_FILES`.
        reset (callable): forget any backend choice cached by an earlier call.
        served (callable): the name of the backend that served the last call.
    """
    outcomes = {}
    for name, kwargs in LOADS:
        reset()
        path = os.path.join(inputs, name)
        outcomes[scenario_id("load", name, sorted(kwargs.items()))] = _outcome(
            lambda: image_utils.imread(path, **kwargs), served)
    with tempfile.TemporaryDirectory() as work:
        for index, (name, ext, kwargs) in enumerate(SAVES):
            reset()
            path = os.path.join(work, f"{index}{ext}")
            outcome = _outcome(lambda: image_utils.imsave(path, _array(name), **kwargs), served)
            if "error" not in outcome:
                outcome["file"] = _read_back(path)
            outcomes[scenario_id("save", name, ext, sorted(kwargs.items()))] = outcome
    for name, kwargs in RESIZES:
        reset()
        outcomes[scenario_id("resize", name, sorted(kwargs.items()))] = _outcome(
            lambda: image_utils.imresize(_array(name), (10, 3), **kwargs), served)
    return outcomes
